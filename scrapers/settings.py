"""Scrapy settings for every gpuplan spider (SCRAPY_SETTINGS_MODULE=scrapers.settings).

The runner adds per-crawl settings on the command line (feeds, report file,
offline replay); nothing here reads the environment.
"""

BOT_NAME = "gpuplan"
SPIDER_MODULES = ["scrapers.spiders"]
NEWSPIDER_MODULE = "scrapers.spiders"

# Honest: who we are. We never pose as a browser; a platform that refuses this agent fails the
# crawl with its HTTP status (see scrapers/README.md for the ones whose public clients send one).
USER_AGENT = "gpuplan/0.1 (GPU rental price tracker)"
# Where a platform can reach whoever runs this crawler (a URL or an e-mail address):
# `scrapers.middlewares.ContactUserAgentMiddleware` appends it to USER_AGENT ("; +<contact>").
# gpuplan sets it from GPUPLAN_CRAWLER_CONTACT; with plain Scrapy, `-s GPUPLAN_CONTACT=...`.
GPUPLAN_CONTACT = ""

# Spiders call documented APIs, once a day, a handful of requests each; robots.txt
# governs crawling web pages. Spiders that read a web page opt in themselves.
ROBOTSTXT_OBEY = False
COOKIES_ENABLED = False  # no spider needs a session; cookies would only track us

# Politeness: one request at a time per host, AutoThrottle adapts the delay to
# the server's latency (floor DOWNLOAD_DELAY, ceiling AUTOTHROTTLE_MAX_DELAY).
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 0.5
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0  # a crawl is a few requests; Scrapy's 5 s default would dominate it
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0

# An answer's HTTP Date header is when the platform quoted (offers' observed_at), unless it is further
# than this from the crawler's clock: a clock a day off is broken (a Date of 2099 would date today's
# offers to then, one of 1970 finds no FX rate), and the crawler's own clock stands in, said in the
# crawl's summary. A replayed snapshot keeps its recorded Date.
GPUPLAN_CLOCK_TOLERANCE_S = 86_400
# A platform API answers in seconds; 30 s without an answer is a failure to retry.
DOWNLOAD_TIMEOUT = 30
# The largest answer a crawl takes, compressed or not: Scrapy checks it as a body downloads and as
# it decompresses (HttpCompressionMiddleware, since 2.11.1), and refuses past it without a retry; the
# AWS spider's gzip without a Content-Encoding is held to it too (`parsing.gunzipped`). Scrapy's 1 GiB
# default lets one decompression bomb take a gigabyte of a crawl process shared by every platform.
# The largest answers read are SkyPilot's catalog CSVs: skypilot-catalog catalogs/v8/aws/vms.csv is
# 3.65 MB (@ 00148f2), gcp/vms.csv 2.24 MB (@ 006059e); 64 MiB is over 17 times that.
DOWNLOAD_MAXSIZE = 64 * 1024 * 1024
RETRY_ENABLED = True
RETRY_TIMES = 3  # 4 attempts: enough to ride out a short outage within a minute
RETRY_HTTP_CODES = [408, 429, 500, 502, 503, 504, 522, 524]
RETRY_BACKOFF_BASE_S = 2.0  # waits 2, 4, 8 s between attempts
# A 429 without Retry-After: the platform's interval is not told (Vast's is per endpoint and caller,
# undisclosed), and seconds later is still inside it; ask again 15, 30, 30 s later (about a minute).
RETRY_RATE_LIMITED_BASE_S = 15.0
RETRY_BACKOFF_MAX_S = 30.0
RETRY_AFTER_MAX_S = 120.0  # a server asking for a longer pause fails the crawl now, with that reason

DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
    "scrapers.middlewares.ContactUserAgentMiddleware": 500,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "scrapers.middlewares.BackoffRetryMiddleware": 550,
    # Every request, a retry and a followed redirect too, on the platform's site or not sent.
    "scrapers.middlewares.SiteRuleMiddleware": 540,
    # Signs each request as it goes out, a retry too (it passes every process_request again).
    "scrapers.middlewares.SigningMiddleware": 560,
    # Sees a redirect before Scrapy's RedirectMiddleware (600) follows it: only within the platform's site.
    "scrapers.middlewares.PlatformHostsMiddleware": 650,
}
# A crawl asks the web over HTTP(S) only: a link in an answer must never read a local file
# (Scrapy's file handler has no size cap: file:///dev/zero fills the crawl process), a data: URI,
# S3 or FTP. The quotes spider, which reads the user's own file, enables "file" for itself alone.
DOWNLOAD_HANDLERS = {"file": None, "data": None, "s3": None, "ftp": None}
# Closest to the spider, so it sees a callback's exception first.
# ReadSourcesMiddleware sits next to the spider (above CrawlErrorMiddleware): it sees a callback's
# exception pass, so an answer that raised is never counted as read.
SPIDER_MIDDLEWARES = {
    "scrapers.middlewares.CrawlErrorMiddleware": 1000,
    "scrapers.coverage.ReadSourcesMiddleware": 1100,
}
ITEM_PIPELINES = {"scrapers.pipelines.OfferChecks": 100}
EXTENSIONS = {"scrapers.extensions.CrawlReport": 500}

FEED_EXPORT_ENCODING = "utf-8"

# Off: a telnet console and Scrapy 2.19's remote-code HTTP server have no place
# in an unattended daily job.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False

LOG_LEVEL = "INFO"
