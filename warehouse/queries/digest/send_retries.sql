-- Earlier digest days whose send failed or was cut short: the next run retries them, oldest first.
SELECT digest_date
FROM digest_sends
WHERE digest_date < $today AND status IN ('failed', 'sending')
ORDER BY digest_date
