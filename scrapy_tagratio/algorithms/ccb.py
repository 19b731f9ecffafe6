"""CCB, ACCB and TCCB: content code blurring (Gottron 2008).

Read beside ``ccb-content-code-blurring.txt`` (section III):

* Content code vector (III-A, III-B): the page as a sequence of atomic elements, each 1.0
  (content) or 0.0 (code). CCB: one element per character of the source, characters
  inside a tag are code, all others content. ACCB (III-C): the same, with the characters
  of anchor tags (``<a ...>``, ``</a>``) left out of the vector entirely; the anchor's text
  stays content. TCCB: one element per token, "each tag and each word" one token (code and
  content); a word is a maximal run of non-space characters between tags, see the
  readings below for scripts written without spaces.
* Blurring (III-B): each round replaces every entry by a Gaussian-weighted average of its
  neighbourhood, the next round blurs the result again; "stopped as soon as the values
  start to settle" (III-C: "a low rate of changes in the ... extracted text").
* Extraction (III-C): content elements whose final value is above the threshold ``t``;
  in the character versions whole words are extracted. Parameters (IV-A): ``t = 0.75``,
  range 40 for CCB/ACCB, 25 for TCCB.

Readings where the paper is silent, chosen on development pages of ``trafilatura-eval``
by the corpus's snippet F1:

* **Source.** The source view of :class:`~scrapy_tagratio.document.Document`: the body's
  source cleaned by the rule of every algorithm (scripts, styles, comments, hidden
  elements, embedded objects dropped, :mod:`scrapy_tagratio.cleaning`).
* **Content.** Everything outside tags is content, white space included (the paper: "all
  the tags ... correspond to code while everything else is content"). Collapsing runs of
  white space to one element scored lower.
* **TCCB's words in scripts without spaces.** In CJK ideographs, Japanese kana, Thai, Lao and
  Khmer every character is a token of its own (:data:`_UNSPACED_RANGES`): these scripts
  do not put spaces between words, so a "maximal run of non-space characters" would be a
  whole clause or paragraph, one content token against every tag, and such text would
  blur away as code-like. Other characters form words as above.
* **Range and sigma.** The "range" is the half-width of the symmetric neighbourhood: the
  kernel is :func:`~scrapy_tagratio.signal.gaussian_kernel` with radius ``blur_range``
  and ``sigma = blur_range / 3``, the usual truncation of an image-processing Gaussian
  filter at three standard deviations (99.7 % of the weight inside the range).
  ``sigma = range / 2`` or ``= range`` scored lower.
* **Edges.** The average runs over the neighbours that exist, so "if all the elements in
  a neighbourhood started with a value of 1, also the neighbourhood average will be 1"
  (III-B) holds at the ends of the page too, as in CETR's smoothing.
* **Settling.** After each round the content elements above ``t`` form the extracted set;
  the iteration stops after the first round in which at most ``settle`` (default 1 %) of
  the content elements changed label, and after ``max_rounds`` rounds at the latest
  (III-C: "a low rate of changes"). ``settle = 0`` is the strict reading "until the set is
  unchanged", which on many pages never happens: the set keeps shrinking as the blur
  widens (CCB and TCCB scored lower with it than with 1 %). Counting the changes against the
  extracted set instead of all content elements also scored lower.
* **Whole words.** A word (non-space characters of the text, inline tags such as ``<b>``
  not splitting it, white space and block tags doing) is extracted if any of its
  characters is: "words are always extracted entirely". Requiring most or all of its
  characters lost recall.
* **Output.** The source between the first and last word of each run of extracted words,
  tags stripped by :func:`~scrapy_tagratio.document.strip_tags` (inline tags vanish, block
  tags break lines); runs are separated by newlines.
* **Figures.** ``content_chars``/``total_chars`` count visible (non-space) characters of
  content elements, extracted/all; ``link_chars`` those of them inside ``<a>``. One block
  per maximal run of content-labelled or other elements (``"char-run"``, ``"token"``) with
  its mean blurred value.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..document import BLOCK_TAGS, Document, SourceView, span_run_lengths, strip_tags
from ..result import BlockKind, BlockScores
from ..signal import gaussian_kernel
from .base import Algorithm, Labelling, check_bool, check_choice, check_range

__all__ = [
    "ACCB",
    "CCB",
    "TCCB",
    "ContentCodeVector",
    "blur_rounds",
    "char_vector",
    "settled_labels",
    "token_vector",
    "whole_words",
]

#: White space as HTML and ``str.split()`` treat it, as a lookup table over code points.
_SPACE = np.zeros(0x3002, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]] = True
_SPACE[0x2000:0x200B] = True


@dataclass(frozen=True, eq=False)
class ContentCodeVector:
    """The content code vector and what maps it back to the source.

    ``values`` holds one entry per atomic element (1.0 content, 0.0 code), ``starts``/
    ``ends`` each element's ``[start, end)`` span in :attr:`SourceView.text`. ``word``
    gives, per element, the index of the word it belongs to (-1 for code and white space);
    ``word_starts``/``word_ends`` are the words' source spans, in order. ``weight`` is the
    number of visible characters an element stands for (1 per non-space content character,
    the word's length per word token, 0 for code and white space), ``in_link`` whether it
    lies inside an ``<a>`` element.
    """

    values: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    word: np.ndarray
    word_starts: np.ndarray
    word_ends: np.ndarray
    weight: np.ndarray
    in_link: np.ndarray

    def __len__(self) -> int:
        return int(self.values.shape[0])


def _tags_named(source: SourceView, names: frozenset[str]) -> np.ndarray:
    """Per tag, whether its name is in ``names``; one extra False entry for index -1, so
    the result can be indexed with :meth:`SourceView.tag_of` directly."""
    return np.append(source.tags_named(names), False)


def _is_space(source: SourceView) -> np.ndarray:
    """Boolean per character: white space."""
    return _SPACE[np.minimum(source.code_points, _SPACE.size - 1)]


def _spans(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[start, end)`` of the maximal runs of True in a boolean array."""
    edges = np.diff(np.concatenate(([0], flags.view(np.int8), [0])))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def _rendered_words(source: SourceView, tag_of: np.ndarray) -> tuple[np.ndarray, ...]:
    """Words as a browser renders them: runs of non-space content characters, joined
    across inline tags (``foo<b>bar</b>`` is one word); white space and block tags
    separate words. Returns the word of each character (-1 for code and white space), the
    words' ``[start, end)`` spans, and the word characters."""
    n = len(source.text)
    content = tag_of < 0
    is_space = content & _is_space(source)
    word_char = content & ~is_space
    breaks = np.cumsum(is_space | _tags_named(source, BLOCK_TAGS)[tag_of])
    positions = np.flatnonzero(word_char)
    new_word = np.ones(positions.size, dtype=bool)
    new_word[1:] = breaks[positions[1:] - 1] > breaks[positions[:-1]]
    word = np.full(n, -1, dtype=np.int64)
    word[positions] = np.cumsum(new_word) - 1
    last_char = np.append(new_word[1:], True)[: positions.size]  # the next starts a word
    return word, positions[new_word], positions[last_char] + 1, word_char


def char_vector(source: SourceView, *, ignore_anchors: bool = False) -> ContentCodeVector:
    """CCB's content code vector, one element per source character (ACCB: without the
    characters of anchor tags). Words are grouped across inline tags for whole-word output.
    """
    tag_of = source.tag_of()
    word, word_starts, word_ends, word_char = _rendered_words(source, tag_of)
    content = tag_of < 0
    in_link = source.anchor_depth_mask()
    if ignore_anchors:
        index = np.flatnonzero(~_tags_named(source, frozenset({"a"}))[tag_of])
        content, word, word_char, in_link = (a[index] for a in (content, word, word_char, in_link))
    else:
        index = np.arange(len(source.text))
    return ContentCodeVector(
        values=content.astype(np.float64),
        starts=index,
        ends=index + 1,
        word=word,
        word_starts=word_starts,
        word_ends=word_ends,
        weight=word_char.astype(np.int64),
        in_link=in_link,
    )


def _is_unspaced(source: SourceView) -> np.ndarray:
    """Boolean per character: a letter of a script written without spaces between words
    (Chinese, Japanese kana, Thai, Lao, Khmer), where each character counts as a word."""
    codes = source.code_points
    unspaced = np.zeros(codes.shape, dtype=bool)
    for low, high in _UNSPACED_RANGES:
        unspaced |= (codes >= low) & (codes <= high)
    return unspaced


_UNSPACED_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3134F),  # CJK extensions B-G
)


def token_vector(source: SourceView) -> ContentCodeVector:
    """TCCB's content code vector: one code token per tag, one content token per word
    (maximal run of non-space characters between tags; in scripts written without spaces,
    each character), in source order. For whole-word output a token belongs to the word
    a browser renders it in (``Doe</a>,`` is one word of two tokens)."""
    rendered, word_starts, word_ends, word_char = _rendered_words(source, source.tag_of())
    unspaced = word_char & _is_unspaced(source)
    before = np.concatenate(([False], word_char[:-1] & ~unspaced[:-1]))
    after = np.concatenate((word_char[1:] & ~unspaced[1:], [False]))
    token_starts = np.flatnonzero(word_char & (~before | unspaced))
    token_ends = np.flatnonzero(word_char & (~after | unspaced)) + 1
    starts = np.concatenate((source.tag_starts.astype(np.int64), token_starts))
    order = np.argsort(starts, kind="stable")
    starts = starts[order]
    ends = np.concatenate((source.tag_ends.astype(np.int64), token_ends))[order]
    is_word = order >= source.tag_starts.size
    return ContentCodeVector(
        values=is_word.astype(np.float64),
        starts=starts,
        ends=ends,
        word=np.where(is_word, rendered[starts], -1),
        word_starts=word_starts,
        word_ends=word_ends,
        weight=np.where(is_word, ends - starts, 0),
        in_link=source.anchor_depth_mask()[starts],
    )


def _fast_length(n: int) -> int:
    """Smallest ``2**a * 3**b * 5**c >= n``: an FFT length pocketfft handles fast."""
    best = 1 << max(0, n - 1).bit_length()
    odd = 1
    while odd < best:
        odd3 = odd
        while odd3 < best:
            twos = max(0, math.ceil(math.log2(n / odd3)))
            best = min(best, odd3 << twos)
            odd3 *= 3
        odd *= 5
    return best


def _kernel_transform(kernel: np.ndarray, length: int) -> np.ndarray:
    """``rfft`` of the centred kernel laid on a circle of ``length >= len(kernel)`` points;
    real because the kernel is symmetric."""
    r = kernel.size // 2
    circular = np.zeros(length)
    circular[: r + 1] = kernel[r:]
    circular[length - r :] = kernel[:r]
    return np.fft.rfft(circular).real


def _edge_weights(kernel: np.ndarray, n: int, i: np.ndarray) -> np.ndarray:
    """Per entry ``i`` of a vector of ``n`` entries, the kernel weight that falls inside
    the vector (``K * 1``)."""
    r = kernel.size // 2
    cdf = np.concatenate(([0.0], np.cumsum(kernel)))
    return cdf[np.minimum(r, n - 1 - i) + r + 1] - cdf[r - np.minimum(r, i)]


def blur_rounds(
    values: np.ndarray, sigma: float, radius: int, max_rounds: int
) -> Iterator[np.ndarray]:
    """Yield the vector after round 1, 2, ... ``max_rounds`` of Gaussian blurring.

    One round replaces every entry by the Gaussian-weighted average of the entries within
    ``radius`` that exist (what :func:`~scrapy_tagratio.signal.gaussian_smooth` computes):
    ``v' = (K * v) / (K * 1)``, so a neighbourhood of 1s averages to 1 at the edges too
    (section III-B). The interior runs as a single-precision FFT: every value lies within
    about 1e-6 of the double-precision blur, so an element that close to the threshold
    can be labelled otherwise than by an exact computation. Fast:

    * Away from the edges the weights sum to 1, so round k is the k-th convolution power
      of the kernel applied to the start vector, ``irfft(rfft(v0) * rfft(K) ** k)``: one
      inverse FFT per round. The padding (six standard deviations of the widest round)
      keeps the circular transform from wrapping around.
    * The renormalisation at the edges changes only the first and last ``k * radius``
      entries by round k; those are recomputed by direct convolution of the previous round.
    * Once the two edge zones would meet (short vectors), or patching them would cost more
      than a transform (wide ranges), each remaining round is one FFT convolution.
    """
    n = values.size
    if n == 0:
        return
    kernel = gaussian_kernel(sigma, radius)
    r = radius
    current = values.astype(np.float64)
    rounds = 0
    length = _fast_length(n + r + math.ceil(6.0 * sigma * math.sqrt(max_rounds)))
    transform_cost = length * math.log2(length)
    if 4 * r < n:
        # The weights of the widest edge zones the loop can patch; the interior's are 1.
        widest = min(max_rounds * r, (n - 1) // 2)
        head_weight = _edge_weights(kernel, n, np.arange(widest))
        tail_weight = _edge_weights(kernel, n, np.arange(n - widest, n))
        transfer = _kernel_transform(kernel, length).astype(np.float32)
        spectrum = np.fft.rfft(current, length).astype(np.complex64)
        while rounds < max_rounds:
            zone = (rounds + 1) * r
            if 2 * zone >= n or 2 * (zone + r) * kernel.size > transform_cost:
                break
            spectrum *= transfer
            head = np.convolve(current[: zone + r], kernel)[r : r + zone]
            tail = np.convolve(current[n - zone - r :], kernel)[2 * r : 2 * r + zone]
            current = np.fft.irfft(spectrum, length)[:n].astype(np.float64)
            current[:zone] = head / head_weight[:zone]
            current[n - zone :] = tail / tail_weight[widest - zone :]
            rounds += 1
            yield current
    if rounds < max_rounds:
        weight = _edge_weights(kernel, n, np.arange(n))
        length = _fast_length(n + 2 * r + 1)
        transfer = _kernel_transform(kernel, length)
        for _ in range(rounds, max_rounds):
            current = np.fft.irfft(np.fft.rfft(current, length) * transfer, length)[:n] / weight
            yield current


def settled_labels(
    vector: np.ndarray,
    *,
    sigma: float,
    radius: int,
    threshold: float,
    settle: float,
    max_rounds: int,
    document: Document | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Blur the content code ``vector`` (1.0 content, 0.0 code) until the extracted set
    settles (section III-B/C).

    Returns the final blurred values, the extracted elements (content elements whose
    value is above ``threshold``) and the number of rounds run. The iteration stops after
    the first round in which at most ``settle`` of the content elements changed label
    (``settle = 0``: the set is unchanged), and after ``max_rounds`` at the latest.
    ``document.check_deadline`` runs every round.
    """
    content = vector > 0.5
    n_content = int(content.sum())
    values = vector
    extracted = content.copy()  # round 0: every content element is at 1.0
    rounds = 0
    for blurred in blur_rounds(vector, sigma, radius, max_rounds):
        rounds += 1
        if document is not None:
            document.check_deadline("CCB blurring")
        now = content & (blurred > threshold)
        changed = int(np.count_nonzero(now != extracted))
        values, extracted = blurred, now
        if changed <= settle * n_content:
            break
    return values, extracted, rounds


def _span_mask(starts: np.ndarray, ends: np.ndarray, n: int) -> np.ndarray:
    """Boolean per position of ``range(n)``: inside one of the sorted, disjoint spans
    ``[starts[i], ends[i])``."""
    runs = span_run_lengths(starts, ends, n)
    return np.repeat(np.arange(runs.size) % 2 == 1, runs)


def _run_sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of ``values`` over the runs beginning at ``starts`` (empty for no runs)."""
    return np.add.reduceat(values, starts) if starts.size else values[:0].copy()


def whole_words(vector: ContentCodeVector, extracted: np.ndarray) -> np.ndarray:
    """Per word, whether it is extracted: words are taken entirely as soon as any of their
    elements is (section III-C, "words are always extracted entirely")."""
    kept = np.zeros(vector.word_starts.size, dtype=bool)
    kept[vector.word[extracted & (vector.word >= 0)]] = True
    return kept


def _labelling(
    source: SourceView,
    vector: ContentCodeVector,
    values: np.ndarray,
    extracted: np.ndarray,
    threshold: float,
    kind: BlockKind,
) -> Labelling:
    """Whole words of the extracted elements, their text, and per-run block scores."""
    first_word, stop_word = _spans(whole_words(vector, extracted))
    run_starts = vector.word_starts[first_word]
    run_ends = vector.word_ends[stop_word - 1]
    text = source.text
    out = strip_tags(text[s:e] for s, e in zip(run_starts.tolist(), run_ends.tolist(), strict=True))
    # Content elements between the first and the last word of a run are labelled content.
    labels = (vector.values > 0.5) & _span_mask(run_starts, run_ends, len(text))[vector.starts]
    block_starts = np.flatnonzero(np.diff(labels, prepend=~labels[:1]))
    block_sizes = np.diff(np.append(block_starts, len(vector)))
    kept_weight = vector.weight[labels]
    return Labelling(
        text=out,
        block_scores=BlockScores(
            kind=kind,
            scores=_run_sums(values, block_starts) / np.maximum(block_sizes, 1),
            labels=labels[block_starts],
            text_lengths=_run_sums(vector.weight, block_starts),
        ),
        threshold=threshold,
        content_chars=int(kept_weight.sum()),
        link_chars=int(kept_weight[vector.in_link[labels]].sum()),
        total_chars=int(vector.weight.sum()),
    )


@dataclass(frozen=True)
class CCB(Algorithm):
    """CCB: character-based content code blurring; ACCB and TCCB change the defaults."""

    name: ClassVar[str] = "ccb"
    summary: ClassVar[str] = (
        "CCB, content code blurring per character (Gottron 2008): Gaussian-blurred content/code"
    )

    #: ``"char"`` (CCB, ACCB) or ``"token"`` (TCCB: each tag and each word one element).
    unit: str = "char"
    #: Leave anchor tags out of the content code vector (ACCB, section III-C).
    ignore_anchors: bool = False
    #: Half-width of the blurring neighbourhood in elements (IV-A: 40 chars, 25 tokens).
    blur_range: int = 40
    #: Content code ratio an element must exceed to be content (IV-A: 0.75).
    threshold: float = 0.75
    #: Stop when at most this share of the content elements changed label in a round.
    settle: float = 0.01
    #: Upper bound on the blurring rounds.
    max_rounds: int = 50

    def validate(self) -> None:
        check_choice("unit", self.unit, ("char", "token"))
        check_bool("ignore_anchors", self.ignore_anchors)
        check_range("blur_range", self.blur_range, 1, 100_000, integer=True)
        check_range("threshold", self.threshold, 0.0, 1.0, low_inclusive=False)
        check_range("settle", self.settle, 0.0, 1.0)
        check_range("max_rounds", self.max_rounds, 1, 1000, integer=True)

    def vector(self, source: SourceView) -> ContentCodeVector:
        """The content code vector this variant blurs."""
        if self.unit == "token":
            return token_vector(source)
        return char_vector(source, ignore_anchors=self.ignore_anchors)

    def run(self, document: Document) -> Labelling:
        source = document.source
        document.check_deadline("the source view")
        vector = self.vector(source)
        document.check_deadline("the content code vector")
        values, extracted, _ = settled_labels(
            vector.values,
            sigma=self.blur_range / 3.0,
            radius=self.blur_range,
            threshold=self.threshold,
            settle=self.settle,
            max_rounds=self.max_rounds,
            document=document,
        )
        kind: BlockKind = "token" if self.unit == "token" else "char-run"
        return _labelling(source, vector, values, extracted, self.threshold, kind)


@dataclass(frozen=True)
class ACCB(CCB):
    """ACCB: CCB with anchor tags left out of the content code vector."""

    name: ClassVar[str] = "accb"
    summary: ClassVar[str] = (
        "ACCB, content code blurring per character with anchor tags ignored (Gottron 2008)"
    )
    ignore_anchors: bool = True


@dataclass(frozen=True)
class TCCB(CCB):
    """TCCB: content code blurring over tokens (each tag and each word one element)."""

    name: ClassVar[str] = "tccb"
    summary: ClassVar[str] = "TCCB, content code blurring per token, tags and words (Gottron 2008)"
    unit: str = "token"
    blur_range: int = 25
