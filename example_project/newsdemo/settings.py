"""Settings of the example project. The one line that matters is ADDONS."""

BOT_NAME = "newsdemo"
SPIDER_MODULES = ["newsdemo.spiders"]
NEWSPIDER_MODULE = "newsdemo.spiders"

# scrapy-tagratio: extract the main text of every page, drop the items of overview pages
# (home page, section fronts) while still following their links.
ADDONS = {"scrapy_tagratio.Addon": 100}
# The main text as Markdown (headings, lists, tables); the default is plain text.
TAGRATIO_TEXT_FORMAT = "markdown"
# The other TAGRATIO_* settings keep their defaults here; for example:
# TAGRATIO_ALGORITHM = "cetr"
# TAGRATIO_OVERVIEW_ACTION = "tag"   # keep overview pages' items, marked is_overview
# TAGRATIO_WORKERS = 2               # extract in two worker processes
# TAGRATIO_METADATA_FIELD = "metadata"  # headline, authors, dates, ... in their own field
#                                       # (declare it in items.py); default: in "tagratio"

# Polite defaults for live sites (-a start_url=...); the bundled site is read from disk.
ROBOTSTXT_OBEY = True
USER_AGENT = "scrapy-tagratio-example (+https://github.com/scrapy-tagratio)"
CONCURRENT_REQUESTS_PER_DOMAIN = 4
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.25
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
DEPTH_LIMIT = 3
CLOSESPIDER_PAGECOUNT = 200

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
