-- A writer session opens: count it in the file's stamp (migration 060) and return the new number.
UPDATE warehouse_stamp
SET generation = generation + 1, written_at = CAST($now AS TIMESTAMP)
RETURNING generation
