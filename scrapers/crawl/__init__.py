"""The crawl engine around the Scrapy project: crawls in a child process, supervised and summarized."""
