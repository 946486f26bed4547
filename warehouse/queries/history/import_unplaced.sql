-- Refused rows that say no platform or day (an empty provider, a date that is no date) belong to the
-- file's first run: kept under it, never dropped. Params: $platform, $day (YYYY-MM-DD).
UPDATE import_rows
SET platform = coalesce(platform, $platform), day = coalesce(day, $day)
WHERE reason IS NOT NULL AND (platform IS NULL OR day IS NULL);
