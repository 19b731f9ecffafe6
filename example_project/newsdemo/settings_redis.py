"""Settings profile: one crawl spread over many processes and hosts through one Redis.

The spider and the rest of the settings are the project's (``newsdemo.settings``); this
profile adds scrapy-redis's shared scheduler queue, duplicate filter and stats. Every
process started with it takes requests from the same Redis queue, so each page is
fetched and extracted by exactly one of them, wherever it was found:

    SCRAPY_SETTINGS_MODULE=newsdemo.settings_redis scrapy crawl news -O part-1.jsonl \\
        -s REDIS_URL=redis://127.0.0.1:6379/0

See README.md ("Many processes and hosts") for a whole run.
"""

from newsdemo.settings import *  # noqa: F403  (the project's settings, ADDONS included)

# The shared frontier: requests are queued in Redis (key news:requests), seen URLs are
# remembered there (news:dupefilter), stats are summed there (news:stats).
SCHEDULER = "scrapy_redis.scheduler.Scheduler"
DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
STATS_CLASS = "scrapy_redis.stats.RedisStatsCollector"
REDIS_URL = "redis://127.0.0.1:6379/0"  # override per host: -s REDIS_URL=redis://host:6379/0
# A process that finishes must not flush the queue, duplicate filter and stats the other
# processes are still using: they stay in Redis until deleted (see README.md).
SCHEDULER_PERSIST = True

# WaitForPeers (newsdemo/extensions.py): a process whose share of the queue is empty for a
# moment (another one is still fetching the page that will add links) waits up to
# PEERS_IDLE_TIMEOUT seconds for new requests before it stops.
# LogStats is off: with scrapy-redis 0.9.1's collector it fails when the spider closes
# (the start time is stored as a float and read back with int(): rmax/scrapy-redis#303).
# The running totals are in Redis: redis-cli hgetall news:stats.
EXTENSIONS = {
    "newsdemo.extensions.WaitForPeers": 500,
    "scrapy.extensions.logstats.LogStats": None,
}
PEERS_IDLE_TIMEOUT = 10.0

# The site memory (README.md, "Site memory") can live in this Redis too
# (TAGRATIO_SITE_MEMORY_BACKEND = "redis": every process learns from all pages), but a
# page's text then depends on which pages of its site were crawled before it, by any
# process. Off here, so every page comes out the same whichever process extracts it.
TAGRATIO_SITE_MEMORY = False
