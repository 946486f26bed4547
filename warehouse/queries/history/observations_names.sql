-- What a daily observations CSV names, for the names its reader resolves in Python before it reads
-- the rows (scrapers.history.observations.lookups): how many rows the file has, its providers (a
-- blank one is none) and its GPU names. Params: $path; $columns, the header's columns (each read as text).
SELECT
    count(*) AS rows_in_file,
    list(DISTINCT provider) FILTER (NOT regexp_full_match(coalesce(provider, ''), '\s*')) AS providers,
    list(DISTINCT gpu_model) FILTER (gpu_model IS NOT NULL) AS gpu_names
FROM read_csv(
    $path, header = true, auto_detect = false, columns = $columns, delim = ',', quote = '"', escape = '"'
)
