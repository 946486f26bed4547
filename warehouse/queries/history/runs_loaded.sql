-- The crawl_runs rows of the runs of one history import (registered frame import_runs), in its order.
SELECT r.crawl_id, c.platform, r.day, c.status, c.error, c.offers_loaded, c.items_rejected
FROM import_runs AS r
JOIN crawl_runs AS c USING (crawl_id)
ORDER BY r.day, r.platform
