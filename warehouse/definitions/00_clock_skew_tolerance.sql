-- How far ahead of this host's clock a run may be dated and still count as now (latest_runs, the
-- freshness check, the loader's note on a crawl dated ahead): the skew of hosts kept by NTP is well
-- under a second; a minute covers a host that is not, and a summary written just before a leap.
CREATE OR REPLACE MACRO clock_skew_tolerance() AS INTERVAL 1 MINUTE;
