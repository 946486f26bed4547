-- Whether a plan day has begun anywhere: the first time zone to reach a date is UTC+14 (Kiribati),
-- so a day after that zone's date now (with clock_skew_tolerance()) was planned under a clock that
-- ran ahead and has since moved back. "The latest plans" (plans/for_date, plans/for_gpu,
-- jobs/for_date) are those of the newest day that has begun: a day dated ahead keeps its rows, and
-- is read when asked for by its date, but never stands as today's.
CREATE OR REPLACE MACRO plan_day_reached(plan_date) AS
    plan_date <= CAST(CAST(now() AT TIME ZONE 'UTC' AS TIMESTAMP) + INTERVAL 14 HOUR + clock_skew_tolerance() AS DATE);
