"""CETR: content extraction via tag ratios (Weninger, Hsu and Han, WWW 2010; Weninger and
Hsu, "Web content extraction through histogram clustering").

Read beside ``cetr-www2010-summary.txt`` and ``ttr-histogram-clustering.txt``:

* **Tag ratio** of a source line: its non-tag characters divided by its tags; a line
  without tags scores its character count (the table: ``James Smith`` between two tags
  11/2 = 5.5, 37 characters and no tag 37, 41 characters and two ``<br>`` 20.5).
* **Re-wrap** (the FAQ): code on one line gets a newline after about 60 characters,
  moved past the end of a tag when the 60th character falls inside one.
* **Smoothing** (Eq. 1-3), Gaussian with ``sigma = 3``: ``h'``. **Derivative** (Eq. 4):
  the mean of the next ``q = 3`` values minus the value, itself smoothed, absolute
  value: ``g'`` (both in :mod:`scrapy_tagratio.signal`).
* **Partitioning** of the points ``(h', g')``: threshold ``h' >= lam * std(h')``, or
  k-means (origin-anchored), 1-D k-means, farthest-first, EM, each in distance or density
  mode (:mod:`scrapy_tagratio.clustering`); the cluster whose centroid is closest to the
  origin is non-content.
* **Output**: content lines stripped of their tags and joined.

Readings where the papers leave room:

* **Source.** The source view of :class:`~scrapy_tagratio.document.Document`: the body's
  source cleaned by the rule of every algorithm (scripts, styles, comments, hidden
  elements and embedded objects dropped before anything is counted,
  :mod:`scrapy_tagratio.cleaning`).
* **Which characters count.** The table counts every character of the text, the spaces
  between words and those beside tags included (``Sunday. <br><br> Jones`` gives 41),
  but lines are shown without their indentation. So: non-space characters count one each,
  and a run of white space (HTML's space, tab, CR, LF, FF) counts one if the line has a
  non-space text character before it and after it; indentation and trailing space count
  nothing. Source characters are counted (``&amp;`` is five). (The DOM methods count
  text pieces collapsed and stripped instead, see :mod:`.cetd`.)
* **Lines.** A newline inside a tag (attributes over several lines) does not end the line:
  the tag belongs whole to the line where it starts, so every line holds whole tags and
  its text can be stripped of them. Lines without any tag or text character (blank
  lines) are not histogram buckets.
* **Re-wrap per line, not per page.** Any line longer than ``wrap_above`` characters is cut
  into pieces of about ``wrap`` characters, so a page whose head spans many lines and
  whose body is one huge line (React and other generated pages) is cut too. A newline
  put into a word would cut it in two, so the break moves on to the next white space or
  block tag when one comes within ``wrap`` characters (text without spaces, as Chinese,
  is cut where the count ends). Consecutive content pieces are output as one run.
* **Threshold** is the population standard deviation; Eq. 2 normalises over the whole
  kernel, the edges of Eq. 3 and Eq. 4 as :mod:`scrapy_tagratio.signal` says.
* **Clustering scale.** The clusterers measure distance on the raw ``(h', g')``; Weka,
  which the paper ran, scales each attribute to [0, 1] first (see the defaults below).
* **Distance mode by default.** The paper's winner is density-mode farthest-first; on the
  development pages distance mode scores higher (see the defaults below):
  ``mode="density"`` is the paper's choice.

Defaults, chosen on the development pages of trafilatura-eval by the corpus's snippet F1:
distance-mode farthest-first on the raw ``(h', g')`` scored highest, above the paper's
density-mode farthest-first, the threshold, k-means, 1-D k-means and EM, and above either
mode with both axes scaled to [0, 1] as Weka does; the seed moves it little. Of the
re-wrap limits tried, cutting lines above 200 characters scored best (above 60, the
paper's, and 1000 lower); dropping blank lines made no real difference.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..clustering import CLUSTERINGS, MODES, partition
from ..document import BLOCK_TAGS, Document, SourceView, strip_tags
from ..result import BlockScores
from ..signal import gaussian_smooth, moving_average_derivative
from .base import Algorithm, Labelling, bad_parameter, check_choice, check_range

__all__ = ["CETR", "LineTable", "histogram_points", "line_table", "tag_ratios", "wrap_breaks"]


@dataclass(frozen=True, eq=False)
class LineTable:
    """The page's lines: ``[starts[i], ends[i])`` spans of the source text (ends exclude the
    newline), the text characters and tags counted on each, and of those characters the
    ones inside an ``<a>``."""

    starts: np.ndarray
    ends: np.ndarray
    chars: np.ndarray
    tags: np.ndarray
    link_chars: np.ndarray

    def __len__(self) -> int:
        return int(self.starts.shape[0])


def wrap_breaks(
    starts: np.ndarray,
    ends: np.ndarray,
    tag_starts: np.ndarray,
    tag_ends: np.ndarray,
    word_breaks: np.ndarray,
    *,
    wrap: int,
    wrap_above: int,
) -> np.ndarray:
    """Break positions that cut every line ``[starts[i], ends[i])`` longer than
    ``wrap_above`` into pieces: a break ``wrap`` characters after the previous one, moved
    to the end of the tag it falls inside, then on to the next of the sorted
    ``word_breaks`` (positions that cut no word) if one comes within ``wrap`` characters.
    Linear in the number of pieces."""
    long_lines = np.flatnonzero(ends - starts > wrap_above)
    if not long_lines.size:
        return np.zeros(0, dtype=np.int64)
    long_starts, long_ends = starts[long_lines], ends[long_lines]
    # Only word breaks inside a long line can move a cut (one at or past the line's end
    # never does), so the lists searched below hold no others.
    line = np.searchsorted(long_starts, word_breaks, side="right") - 1
    in_long = (line >= 0) & (word_breaks < long_ends[np.maximum(line, 0)])
    word_list = word_breaks[in_long].tolist()
    tag_start_list = tag_starts.tolist()
    tag_end_list = tag_ends.tolist()
    breaks: list[int] = []
    for start, end in zip(long_starts.tolist(), long_ends.tolist(), strict=True):
        cut = start + wrap
        while cut < end:
            inside = bisect_right(tag_start_list, cut) - 1
            if inside >= 0 and tag_start_list[inside] < cut < tag_end_list[inside]:
                cut = tag_end_list[inside]
            word = bisect_left(word_list, cut)
            if word < len(word_list) and word_list[word] < min(cut + wrap, end):
                cut = word_list[word]
            if cut >= end:
                break
            breaks.append(cut)
            cut += wrap
    return np.asarray(breaks, dtype=np.int64)


def line_table(source: SourceView, *, wrap: int = 60, wrap_above: int = 200) -> LineTable:
    """Split the cleaned source into lines (newlines outside tags, then the re-wrap) and
    count text characters and tags per line, vectorised over characters."""
    text = source.text
    size = len(text)
    if not size:
        none = np.zeros(0, dtype=np.int64)
        return LineTable(none, none, none, none, none)
    in_tag = source.is_tag_char()
    code = source.code_points
    # HTML's ASCII white space: space, tab, LF, FF, CR.
    white = (code == 0x20) | ((code >= 0x09) & (code <= 0x0D) & (code != 0x0B))
    newline = (code == 0x0A) & ~in_tag
    newlines = np.flatnonzero(newline)
    physical_starts = np.concatenate(([0], newlines + 1))
    physical_ends = np.concatenate((newlines, [size]))
    is_text = ~(in_tag | newline)
    solid = is_text & ~white
    spaces = is_text & white
    # A break before a space or at the edge of a block tag cuts no word (inline tags do
    # not part words: "foo<b>bar</b>" reads "foobar").
    block = source.tags_named(BLOCK_TAGS)
    boundary = np.concatenate((spaces, [False]))
    boundary[source.tag_starts[block]] = True
    boundary[source.tag_ends[block]] = True
    word_breaks = np.flatnonzero(boundary)
    breaks = wrap_breaks(
        physical_starts,
        physical_ends,
        source.tag_starts,
        source.tag_ends,
        word_breaks,
        wrap=wrap,
        wrap_above=wrap_above,
    )
    starts = np.sort(np.concatenate((physical_starts, breaks)))
    ends = np.concatenate((starts[1:], [size]))
    ends[newline[np.maximum(ends - 1, 0)] & (ends > 0)] -= 1  # the newline is no text
    # Every white-space run between two solid characters of its line counts one.
    run_starts = np.flatnonzero(spaces[1:] & ~spaces[:-1]) + 1
    if spaces[0]:
        run_starts = np.concatenate(([0], run_starts))
    run_line = np.searchsorted(starts, run_starts, side="right") - 1
    solid_at = np.flatnonzero(solid)
    first = np.searchsorted(solid_at, starts)  # index of each line's first solid character
    after = np.searchsorted(solid_at, ends)  # ... and one past its last
    padded = np.concatenate((solid_at, [size]))  # valid to index also on lines without any
    inner = (
        (after > first)[run_line]
        & (run_starts > padded[first[run_line]])
        & (run_starts < padded[after[run_line] - 1])
    )
    n_lines = len(starts)
    inner_line = run_line[inner]
    in_link = source.anchor_depth_mask()
    link_at = np.flatnonzero(solid & in_link)
    link_runs = inner_line[in_link[run_starts[inner]]]
    return LineTable(
        starts=starts,
        ends=ends,
        chars=after - first + np.bincount(inner_line, minlength=n_lines),
        tags=np.bincount(
            np.searchsorted(starts, source.tag_starts, side="right") - 1, minlength=n_lines
        ),
        link_chars=np.searchsorted(link_at, ends)
        - np.searchsorted(link_at, starts)
        + np.bincount(link_runs, minlength=n_lines),
    )


def tag_ratios(chars: np.ndarray, tags: np.ndarray) -> np.ndarray:
    """Text-to-tag ratio per line: chars / tags, or chars where a line has no tag."""
    return chars / np.maximum(tags, 1)


def histogram_points(ratios: np.ndarray, sigma: float = 3.0, q: int = 3) -> np.ndarray:
    """``(n, 2)`` points ``(h', g')``: the smoothed histogram (Eq. 1-3) and the absolute
    value of its smoothed moving-average derivative (Eq. 4)."""
    smoothed = gaussian_smooth(ratios, sigma)
    slope = np.abs(gaussian_smooth(moving_average_derivative(smoothed, q), sigma))
    return np.column_stack((smoothed, slope))


def _content_runs(document: Document, lines: LineTable, content: np.ndarray) -> list[str]:
    """Source of each run of consecutive content lines, newlines read as spaces (so the
    pieces of a re-wrapped line join up again)."""
    idx = np.flatnonzero(content)
    if not idx.size:
        return []
    first = idx[np.concatenate(([True], idx[1:] != idx[:-1] + 1))]
    last = idx[np.concatenate((idx[1:] != idx[:-1] + 1, [True]))]
    text = document.source.text
    return [
        text[s:e].replace("\n", " ")
        for s, e in zip(lines.starts[first].tolist(), lines.ends[last].tolist(), strict=True)
    ]


@dataclass(frozen=True)
class CETR(Algorithm):
    """CETR: per-line tag ratios, smoothed, partitioned in two dimensions."""

    name: ClassVar[str] = "cetr"
    summary: ClassVar[str] = (
        "CETR, per-line tag ratios smoothed and clustered in 2-D (Weninger et al. 2010)"
    )

    #: Partitioning: ``threshold``, ``kmeans`` (origin-anchored), ``kmeans-1d`` (on h'
    #: alone), ``farthest-first`` or ``em``.
    clustering: str = "farthest-first"
    #: ``distance`` (the clusterer's own assignment) or ``density`` (Gaussians per cluster).
    mode: str = "distance"
    #: Number of clusters (the paper: 3; one non-content cluster).
    k: int = 3
    #: Threshold coefficient on std(h') (threshold partitioning; 1 in the paper).
    lam: float = 1.0
    #: Seed of the clusterers' random choices.
    seed: int = 1
    #: Gaussian smoothing sigma; the kernel radius is ceil(sigma) (Eq. 1-3).
    sigma: float = 3.0
    #: Look-ahead of the derivative (Eq. 4).
    q: int = 3
    #: Re-wrap: pieces of about this many characters ...
    wrap: int = 60
    #: ... cut from every line longer than this.
    wrap_above: int = 200

    def validate(self) -> None:
        check_choice("clustering", self.clustering, CLUSTERINGS)
        check_choice("mode", self.mode, MODES)
        if self.clustering == "threshold" and self.mode != "distance":
            raise bad_parameter(
                f"parameter 'mode' must be 'distance' with clustering 'threshold' "
                f"(density mode needs a clusterer), got {self.mode!r}"
            )
        check_range("k", self.k, 2, 20, integer=True)
        check_range("lam", self.lam, 0.0, 100.0)
        check_range("seed", self.seed, 0, 2**32 - 1, integer=True)
        check_range("sigma", self.sigma, 0.0, 100.0, low_inclusive=False)
        check_range("q", self.q, 1, 100, integer=True)
        check_range("wrap", self.wrap, 1, 1_000_000, integer=True)
        check_range("wrap_above", self.wrap_above, self.wrap, 10_000_000, integer=True)

    def run(self, document: Document) -> Labelling:
        lines = line_table(document.source, wrap=self.wrap, wrap_above=self.wrap_above)
        document.check_deadline("CETR's line table")
        kept = (lines.chars > 0) | (lines.tags > 0)
        ratios = tag_ratios(lines.chars[kept], lines.tags[kept])
        points = histogram_points(ratios, self.sigma, self.q)
        in_kept, threshold = partition(
            points, self.clustering, mode=self.mode, k=self.k, lam=self.lam, seed=self.seed
        )
        document.check_deadline("CETR's clustering")
        content = np.zeros(len(lines), dtype=bool)
        content[kept] = in_kept
        scores = np.zeros(len(lines))
        scores[kept] = points[:, 0]
        return Labelling(
            text=strip_tags(_content_runs(document, lines, content)),
            block_scores=BlockScores(
                kind="line", scores=scores, labels=content, text_lengths=lines.chars
            ),
            threshold=threshold,
            content_chars=int(lines.chars[content].sum()),
            link_chars=int(lines.link_chars[content].sum()),
            total_chars=int(lines.chars.sum()),
        )
