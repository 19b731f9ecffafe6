"""scrapy-tagratio: main-content extraction by text density and tag ratios, and
overview-page detection, for Scrapy.

>>> from scrapy_tagratio import extract
>>> extract("<html><body><p>" + "Some text. " * 30 + "</p></body></html>").text[:10]
'Some text.'
"""

from .algorithms import ALGORITHMS, DEFAULT_ALGORITHM
from .api import extract
from .errors import ExtractionError
from .metadata import Metadata
from .overview import OverviewDetector, OverviewVerdict
from .result import Block, Extraction
from .site_memory import SiteMemory

__all__ = [
    "ALGORITHMS",
    "DEFAULT_ALGORITHM",
    "Addon",
    "Block",
    "Extraction",
    "ExtractionError",
    "Metadata",
    "OverviewDetector",
    "OverviewVerdict",
    "SiteMemory",
    "extract",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # The Scrapy add-on is imported lazily so that the core library does not import Scrapy.
    if name == "Addon":
        from .addon import Addon

        return Addon
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
