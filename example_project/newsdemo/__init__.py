"""The scrapy-tagratio example project: crawls a news site, keeps the articles."""
