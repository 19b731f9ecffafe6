"""Score histograms like the papers' figures (CETR Fig. 1-3, CETD Fig. 3-4).

One bar per block (source line, character/token run or DOM node) in page order, coloured
by its content label, with the threshold as a horizontal line. Needs matplotlib (the
``plot`` extra); it is imported only here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import ExtractionError
from .result import Extraction

__all__ = ["plot_scores"]


def plot_scores(extraction: Extraction, path: str | Path) -> Path:
    """Draw ``extraction``'s per-block scores to ``path`` (PNG) and return the path."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ExtractionError(
            "plotting needs matplotlib: pip install 'scrapy-tagratio[plot]'"
        ) from exc
    scores = extraction.block_scores
    if scores is None or len(scores) == 0:
        raise ExtractionError("this extraction has no per-block scores to plot")
    values = np.nan_to_num(scores.scores.astype(float), nan=0.0, posinf=0.0, neginf=0.0)
    positions = np.arange(values.size)
    labels = scores.labels.astype(bool)
    figure, axes = plt.subplots(figsize=(12, 4))
    axes.bar(positions[~labels], values[~labels], width=1.0, color="#b0b0b0", label="non-content")
    axes.bar(positions[labels], values[labels], width=1.0, color="#1f77b4", label="content")
    if extraction.threshold is not None and np.isfinite(extraction.threshold):
        axes.axhline(extraction.threshold, color="#d62728", linewidth=1, label="threshold")
    axes.set_xlabel(f"{scores.kind} (page order)")
    axes.set_ylabel("score")
    axes.set_title(f"{extraction.algorithm}: {extraction.url or ''}".strip(": "))
    axes.legend(loc="upper right")
    figure.tight_layout()
    out = Path(path)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return out
