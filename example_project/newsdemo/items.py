"""The article item: a declared Scrapy item needs the fields scrapy-tagratio fills."""

import scrapy


class ArticleItem(scrapy.Item):
    url = scrapy.Field()
    title = scrapy.Field()
    #: Main text found by scrapy-tagratio (TAGRATIO_TEXT_FIELD), as Markdown here
    #: (TAGRATIO_TEXT_FORMAT).
    main_text = scrapy.Field()
    #: Extraction.figures(): algorithm, parameters, page figures, is_overview, and the
    #: page's metadata (headline, authors, published, language, ...) (TAGRATIO_SCORES_FIELD).
    tagratio = scrapy.Field()
