"""Fit the default algorithm's block model on every development set and write its file.

    python -m benchmarks.train_tagratio            # validate, fit, write the model file
    python -m benchmarks.train_tagratio --limit 40 --no-write   # a smoke run
    python -m benchmarks.train_tagratio --no-write --stage loso --seed 1   # another seed

Data (``benchmarks/protocol.py``): every distinct page of trafilatura-eval, fundus-dev,
dragnet-dev, readability-dev and cleaneval-dev once. Each text block of a page (see
``scrapy_tagratio.algorithms.tagratio.block_features``) gets a label from the gold of the
page's set:

* trafilatura-eval (snippets): 1 if the block's text holds a ``with`` snippet, 0 if it holds
  a ``without`` snippet, none otherwise (most blocks);
* the full-text sets: the share of the block's word 4-grams (a block of fewer than four
  words: its whole word sequence) found among the gold text's; 1 from :data:`GOLD_SHARE`
  on, else 0;
* a block of a comment thread beside an article (feature ``thread_beside_article``) is
  left unlabelled whatever its set's gold says: the default drops such threads by rule
  (``scrapy_tagratio.algorithms.tagratio``), so the model never decides them and learns
  nothing from them (the sets' gold disagrees on them);
* the article's lead, notes and code, the discussion after its headline, the teasers' links
  after it, the blocks after the article's body and the data tables (``block_features``'
  :class:`~scrapy_tagratio.algorithms.tagratio.BlockRules`) keep their labels: the rules
  that keep or drop them do not change what the model learns, and :func:`predict` applies
  them as the extractor does, so the validation scores the extractor's choice.

Each site weighs the same within its set: its pages share the weight, and a page's labelled
blocks share the page's by what its set's measure counts in them: a full-text set's blocks
by their words (word 4-gram F1 counts words), trafilatura-eval's by the snippets they hold
(its snippet F counts each snippet once, whatever its length: weighed by words, a one-word
prompt or credit that is a "without" snippet weighed almost nothing beside a paragraph).
So long pages do not drown short ones, and a site with many pages (dragnet-dev holds 23 of
one blog) does not teach its template many times over, which a model meant for sites it
has never seen cannot use. The sets weigh in proportion to the square root of their numbers
of sites (:func:`site_weights`): by sites alone trafilatura-eval's 982 sites were three
quarters of the weight, and with its snippet weights its held-out models of the full-text
sets learned that a short block is furniture, at the cost of their short paragraphs and
list items; each set weighing one would give a set of 46 sites as much as one of 982.

The learner is scikit-learn's histogram gradient boosting (shallow trees), exported as plain
arrays (:class:`scrapy_tagratio.algorithms.trees.BoostedTrees`) and checked against
scikit-learn's own predictions before it is written.

The feature ``word_score`` is stacked (:func:`fit`): a word model
(:mod:`scrapy_tagratio.algorithms.words`, a logistic regression over hashed words fitted by
:func:`fit_words` on the same labelled blocks and weights) gives it; inside every fit, each
training block's score comes from a word model of the other sites' pages
(:data:`WORD_FOLDS` site-grouped folds of the training pages, :func:`out_of_fold_words`),
so the trees learn how far to trust it on a site the word model has not seen, and the pages
the model then scores (held-out ones, or the extractor's) get the word model of all its
training pages, which the model file holds.

Validation, printed and stored in the model file; every choice inside training folds:

* **leave one set out**: for each set, a model fitted on the pages of the other sets scores
  it (snippet F-score on trafilatura-eval, word 4-gram F1 on the others);
* **site-grouped folds** (5): trafilatura-eval's pages scored by models fitted on folds that
  share no site with them;
* every model's probability cut is chosen on *inner* folds of its own training pages
  (:data:`INNER`: each training set left out in turn, or K site-grouped folds): of the
  cuts of :data:`CUTS` whose gain over :data:`CUT_PRIOR`, the median over the training
  sets of the inner folds' out-of-fold predictions, is within :data:`CUT_TOLERANCE` of the
  best, the one nearest :data:`CUT_PRIOR` (the best alone swung between 0.35 and 0.5 with
  training sets that differ little, and each set's score with it; the median set's gain,
  not the mean, so that one set's steep curve cannot move the cut for all);
  ``--inner 1`` fixes it at 0.5 (smoke runs).

Scores here are of the kept blocks' texts joined in document order (close to, not exactly,
the extractor's text); ``python -m benchmarks.accuracy --loso`` scores the real extractor.
Per-page blocks and fitted models are cached under ``/tmp`` (``--cache``, keyed by the
package's source, the data and the choices). The stages can run as separate processes
(``--stage loso``, ``site``, ``final``; set ``OMP_NUM_THREADS=1`` on a shared machine: the
learner's threads spin when the cores are busy), and ``--stage all`` then writes the model
from their caches.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import pickle
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from scrapy_tagratio.algorithms.tagratio import (
    FEATURES,
    MODEL_NAME,
    BlockRules,
    block_features,
    content_probability,
    kept_blocks,
    word_model,
)
from scrapy_tagratio.algorithms.trees import MODEL_VERSION, BoostedTrees
from scrapy_tagratio.algorithms.words import HashedWords, WordScores, hashed_words
from scrapy_tagratio.document import Document

from . import _data, protocol
from .metrics import normalise_whitespace, shingle_counts, summarise_shingles, tokens

__all__ = [
    "LABEL_SETS",
    "PageBlocks",
    "fit",
    "load_blocks",
    "loso_models",
    "main",
    "pick_cut",
    "typical_gains",
    "write_loso_models",
]

#: The sets whose gold labels blocks, in table order.
LABEL_SETS: tuple[str, ...] = ("trafilatura", "fundus", "dragnet", "readability", "cleaneval")
SNIPPET_SET = "trafilatura"
#: A block whose share of word 4-grams found in the gold text reaches this is content.
GOLD_SHARE = 0.5
#: Candidate probability cuts, chosen among inside training folds (a fine grid: the
#: choice below does not depend on a coarse step landing on a set's peak).
CUTS = tuple(round(0.3 + 0.025 * i, 3) for i in range(17))  # 0.3 .. 0.7
#: The cut a model keeps unless its inner folds show a better one: the learner's
#: log-loss makes 0.5 the cut of its best block accuracy.
CUT_PRIOR = 0.5
#: Inner gains within this of the best are a tie, broken towards :data:`CUT_PRIOR` (design
#: constant: the inner figures move by about this much between training sets that differ
#: little, and the best cut with it; a tie must not swing the cut).
CUT_TOLERANCE = 0.003
#: The inner folds of each model's training pages on which its cut is chosen: ``"sets"``,
#: one fold per training set left out (the inner choice then mirrors the leave-one-set-out
#: validation: a cut must hold on a set the model has not seen), or a number of
#: site-grouped folds (1: no choice, the cut is 0.5).
INNER: int | str = "sets"
#: Learner parameters (shallow trees: the model ships as arrays, evaluated per page).
PARAMS: dict[str, Any] = {
    "max_iter": 80,
    "learning_rate": 0.2,
    "max_depth": 3,
    "max_leaf_nodes": 8,
    "min_samples_leaf": 40,
    "l2_regularization": 1.0,
    "random_state": 0,
}
#: The learner's default seed (``--seed``): it picks the tenth of the blocks held out for
#: early stopping, so another seed gives another model (judge a change over several).
SEED = 0
#: The word model (:mod:`scrapy_tagratio.algorithms.words`): its buckets (2 ** 18: 512 KiB of
#: float16 weights in the model file), the logistic regression's inverse regularisation, the
#: longest block it is fitted on and scores (0: every block) and the site-grouped folds of
#: a model's training pages that give their blocks' out-of-fold word scores (design
#: choices, screened on trafilatura-eval's site-grouped folds; 12 words: scored on every
#: block, the model lost readability-dev when it was left out, the long blocks the
#: structural features decide already: development notes, issue 14).
WORD_BITS = 18
WORD_C = 1.0
WORD_MAX_WORDS = 12
WORD_FOLDS = 5
_BESIDE_ARTICLE = FEATURES.index("thread_beside_article")
_WORD_SCORE = FEATURES.index("word_score")
PACKAGE = Path(__file__).resolve().parents[1] / "scrapy_tagratio"
MODEL_PATH = PACKAGE / "models" / f"{MODEL_NAME}.json"


@dataclass
class PageBlocks:
    """One page of the pool as the training sees it."""

    key: str
    site: str  # the page's site (:attr:`protocol.ProtocolPage.site`)
    dataset: str  # the set whose gold labels it (its first labelling membership)
    sets: tuple[str, ...]
    features: np.ndarray  # float32, blocks x features
    rules: BlockRules  # what the rules beside the model read (lead, notes, body names...)
    labels: np.ndarray  # int8: 1 content, 0 not, -1 unlabelled
    weights: np.ndarray  # float32, summing to 1 over labelled blocks
    texts: list[str]
    words: HashedWords  # the blocks' hashed words (:data:`WORD_BITS` bits)
    gold: Any  # snippets (with, without) or the gold text


def _gold_shingles(gold: str) -> list[set[tuple[str, ...]]]:
    """The gold's word n-grams for n = 1..4 (index n - 1)."""
    words = tokens(gold)
    return [{tuple(words[i : i + n]) for i in range(len(words) - n + 1)} for n in range(1, 5)]


def _full_text_labels(texts: list[str], gold: str) -> tuple[np.ndarray, np.ndarray]:
    grams = _gold_shingles(gold)
    labels = np.full(len(texts), -1, dtype=np.int8)
    words = np.zeros(len(texts))
    for i, text in enumerate(texts):
        block = tokens(text)
        if not block:
            continue
        n = min(4, len(block))
        own = [tuple(block[j : j + n]) for j in range(len(block) - n + 1)]
        share = sum(gram in grams[n - 1] for gram in own) / len(own)
        labels[i] = share >= GOLD_SHARE
        words[i] = len(block)
    return labels, words


def _snippet_labels(texts: list[str], with_: list[str], without: list[str]) -> np.ndarray:
    labels = np.full(len(texts), -1, dtype=np.int8)
    for i, text in enumerate(map(normalise_whitespace, texts)):
        if any(s in text for s in without):
            labels[i] = 0
        if any(s in text for s in with_):
            labels[i] = 1
    return labels


def _snippets_held(texts: list[str], snippets: list[str]) -> np.ndarray:
    """Per block, how many of ``snippets`` (``with`` and ``without``) its text holds: a
    labelled block's training weight (see the module description)."""
    return np.array(
        [sum(s in text for s in snippets) for text in map(normalise_whitespace, texts)],
        dtype=np.float64,
    )


def page_blocks(page: protocol.ProtocolPage) -> PageBlocks:
    """Features, labels and texts of one page's blocks."""
    document = Document.from_input(page.html(), url=page.url)
    blocks, features, _, rules = block_features(document, None)  # word scores: per fold
    texts = document.block_texts(blocks)
    dataset = next(name for name in page.sets if name in LABEL_SETS)
    record = page.gold(dataset)
    if dataset == SNIPPET_SET:
        with_ = [normalise_whitespace(s) for s in record["with"]]
        without = [normalise_whitespace(s) for s in record["without"]]
        labels = _snippet_labels(texts, with_, without)
        counted = _snippets_held(texts, with_ + without)  # what the snippet F counts
        gold: Any = (with_, without)
    else:
        labels, counted = _full_text_labels(texts, record["body"])
        gold = record["body"]
    labels[features[:, _BESIDE_ARTICLE] > 0] = -1
    weights = np.where(labels >= 0, np.maximum(counted, 1.0), 0.0)
    weights /= max(weights.sum(), 1e-9)
    return PageBlocks(
        key=page.key,
        site=page.site,
        dataset=dataset,
        sets=page.sets,
        features=features.astype(np.float32),
        rules=rules,
        labels=labels,
        weights=weights.astype(np.float32),
        texts=texts,
        words=hashed_words(texts, WORD_BITS, WORD_MAX_WORDS),
        gold=gold,
    )


def _source_fingerprint() -> str:
    """A digest of the package's source, the compiled kernel's included: the features
    depend on the reader, the node table, the structures and the algorithms, so any change
    of the code recomputes the cached blocks (a cache keyed by the feature names alone
    served stale features)."""
    digest = hashlib.sha1()
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyx")]):
        digest.update(path.relative_to(PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _script_fingerprint() -> str:
    """A digest of this script's source: the blocks' labels and the models' cuts are
    computed by it, so a cache written by another version of it is not read."""
    return hashlib.sha1(Path(__file__).read_bytes()).hexdigest()


def _gold_fingerprint() -> str:
    """A digest of the labelling sets' gold as read (a repaired gold relabels blocks)."""
    golds = {name: _data.load_gold(name) for name in LABEL_SETS}
    return hashlib.sha1(json.dumps(golds, sort_keys=True).encode()).hexdigest()


def load_blocks(limit: int | None, cache: Path | None) -> list[PageBlocks]:
    """The pool's pages as :class:`PageBlocks`, computed once and cached (keyed by the
    package's source, the gold, the feature names, the limit and the record's fields: a
    change of the code or of the gold recomputes)."""
    fields = tuple(field.name for field in dataclasses.fields(PageBlocks))
    key = (
        _source_fingerprint(), _gold_fingerprint(), FEATURES, limit, LABEL_SETS, GOLD_SHARE, fields,
        WORD_BITS, WORD_MAX_WORDS, _script_fingerprint(),
    )  # fmt: skip
    tag = hashlib.sha1(repr(key).encode()).hexdigest()[:12]
    path = cache / f"tagratio-blocks-{tag}.pkl" if cache else None
    if path is not None and path.is_file():
        with open(path, "rb") as handle:
            return [PageBlocks(**fields) for fields in pickle.load(handle)]
    pages = protocol.pool(LABEL_SETS)
    if limit is not None:  # the first ``limit`` pages of every set
        seen: dict[str, int] = {}
        chosen = []
        for page in pages:
            first = page.sets[0]
            if seen.get(first, 0) < limit:
                seen[first] = seen.get(first, 0) + 1
                chosen.append(page)
        pages = tuple(chosen)
    started = time.perf_counter()
    result = []
    for done, page in enumerate(pages, 1):
        result.append(page_blocks(page))
        if done % 200 == 0:
            print(
                f"  {done}/{len(pages)} pages, {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
    if path is not None:  # plain data: any __main__ reads it
        _data.write_atomically(path, pickle.dumps([vars(page) for page in result]))
    return result


# ------------------------------------------------------------------ fitting and scoring
def learner_params(seed: int = SEED) -> dict[str, Any]:
    """:data:`PARAMS` with the learner's seed ``seed``."""
    return {**PARAMS, "random_state": seed}


def site_weights(pages: Sequence[PageBlocks]) -> np.ndarray:
    """Per page, its weight in training: each labelling set of ``pages`` weighs in
    proportion to the square root of its number of sites (design choice, between each site
    one and each set one; not fitted), shared equally by its sites, a site's by its pages;
    the weights sum to the number of sites, as when each site weighed one (see the module
    description)."""
    pages_of_site = Counter(page.site for page in pages)
    sites: dict[str, set[str]] = {}
    for page in pages:
        sites.setdefault(page.dataset, set()).add(page.site)
    count = {name: len(members) for name, members in sites.items()}
    scale = sum(count.values()) / sum(n**0.5 for n in count.values())
    return np.array(
        [
            scale * count[page.dataset] ** 0.5 / count[page.dataset] / pages_of_site[page.site]
            for page in pages
        ]
    )


def _training_weights(pages: Sequence[PageBlocks]) -> np.ndarray:
    """The labelled blocks' weights (:func:`site_weights` times each page's own)."""
    return np.concatenate(
        [
            p.weights[p.labels >= 0] * share
            for p, share in zip(pages, site_weights(pages), strict=True)
        ]
    )


#: Word models fitted in this process, by their training pages' keys: the folds and cuts
#: of a run (and its seeds: the word model has none) fit the same pages many times.
_WORD_MODELS: dict[str, WordScores] = {}


def fit_words(pages: Sequence[PageBlocks]) -> WordScores:
    """The word model of ``pages``: a logistic regression on their labelled blocks' hashed
    words (:mod:`scrapy_tagratio.algorithms.words`; each block a set of buckets scaled to
    unit length), with the block model's labels and weights; its weights rounded to float16
    as the model file holds them."""
    key = hashlib.sha1("\n".join(p.key for p in pages).encode()).hexdigest()
    if key in _WORD_MODELS:
        return _WORD_MODELS[key]
    matrices, labels, weights = [], [], []
    for page, share in zip(pages, site_weights(pages), strict=True):
        hashed = page.words
        chosen = (page.labels >= 0) & (hashed.words > 0)
        if WORD_MAX_WORDS:
            chosen &= hashed.words <= WORD_MAX_WORDS
        sizes = np.diff(hashed.starts)
        rows = sp.csr_matrix(
            (np.repeat(1.0 / np.sqrt(np.maximum(sizes, 1)), sizes), hashed.buckets, hashed.starts),
            shape=(len(sizes), 1 << WORD_BITS),
        )
        matrices.append(rows[chosen])
        labels.append(page.labels[chosen])
        weights.append(page.weights[chosen] * share)
    weight, label = np.concatenate(weights), np.concatenate(labels)
    if len(np.unique(label)) < 2:  # nothing to tell apart: every block scores the intercept
        return WordScores(WORD_BITS, WORD_MAX_WORDS, np.zeros(1 << WORD_BITS, np.float32), 0.0)
    regression = LogisticRegression(C=WORD_C, solver="liblinear", max_iter=200).fit(
        sp.vstack(matrices, format="csr"),
        label,
        sample_weight=weight / weight.mean(),
    )
    model = WordScores(
        WORD_BITS,
        WORD_MAX_WORDS,
        regression.coef_.ravel().astype(np.float16).astype(np.float32),
        float(regression.intercept_[0]),
    )
    _WORD_MODELS[key] = model
    return model


def out_of_fold_words(pages: Sequence[PageBlocks]) -> list[np.ndarray]:
    """Per page, its blocks' word scores by a word model fitted on the pages of other
    sites (:data:`WORD_FOLDS` site-grouped folds of ``pages``): the block model learns
    how far to trust the scores the word model gives pages it has not seen."""
    scores: list[np.ndarray] = [np.zeros(0, dtype=np.float32)] * len(pages)
    sites = np.array([p.site for p in pages])
    folds = min(WORD_FOLDS, len(set(sites.tolist())))
    if folds < 2:  # one site: no other site's words to score it by
        return [np.zeros(len(p.labels), dtype=np.float32) for p in pages]
    for train, test in GroupKFold(folds).split(sites, groups=sites):
        words = fit_words([pages[i] for i in train.tolist()])
        for i in test.tolist():
            scores[i] = words.scores_of(pages[i].words)
    return scores


def with_word_scores(page: PageBlocks, scores: np.ndarray) -> np.ndarray:
    """The page's block features, its ``word_score`` column ``scores`` (the cached
    features hold 0 there: the scores are those of the fold's word model)."""
    features = page.features.copy()
    features[:, _WORD_SCORE] = scores
    return features


def fit(
    pages: Sequence[PageBlocks], seed: int = SEED
) -> tuple[HistGradientBoostingClassifier, WordScores]:
    """The learner (seed ``seed``) fitted on the labelled blocks of ``pages``, the sets
    and their sites weighed by :func:`site_weights`, their word scores out of fold
    (:func:`out_of_fold_words`); and the word model of all ``pages``."""
    x = np.vstack(
        [
            with_word_scores(p, words)[p.labels >= 0]
            for p, words in zip(pages, out_of_fold_words(pages), strict=True)
        ]
    )
    y = np.concatenate([p.labels[p.labels >= 0] for p in pages])
    learner = HistGradientBoostingClassifier(**learner_params(seed))
    return learner.fit(x, y, sample_weight=_training_weights(pages)), fit_words(pages)


def export(model: HistGradientBoostingClassifier, words: WordScores | None = None) -> BoostedTrees:
    """The fitted learner as :class:`BoostedTrees` arrays, holding the word model ``words``
    (its file's ``"words"``)."""
    predictors = [tree for trees in model._predictors for tree in trees]
    size = max(len(tree.nodes) for tree in predictors)
    shape = (len(predictors), size)
    feature = np.full(shape, -1, dtype=np.intp)
    threshold = np.zeros(shape)
    left = np.tile(np.arange(size), (len(predictors), 1))
    right = left.copy()
    value = np.zeros(shape)
    depth = 0
    for t, tree in enumerate(predictors):
        nodes = tree.nodes
        count = len(nodes)
        leaf = nodes["is_leaf"].astype(bool)
        feature[t, :count] = np.where(leaf, -1, nodes["feature_idx"])
        threshold[t, :count] = nodes["num_threshold"]
        left[t, :count] = np.where(leaf, np.arange(count), nodes["left"])
        right[t, :count] = np.where(leaf, np.arange(count), nodes["right"])
        value[t, :count] = np.where(leaf, nodes["value"], 0.0)
        depth = max(depth, int(nodes["depth"].max()))
    return BoostedTrees(
        features=FEATURES,
        baseline=float(np.ravel(model._baseline_prediction)[0]),
        feature=feature,
        threshold=threshold,
        left=left,
        right=right,
        value=value,
        depth=depth,
        cut=0.5,
        about={} if words is None else {"words": words.to_dict()},
    )


def page_text(page: PageBlocks, keep: np.ndarray) -> str:
    return "\n".join(t for t, k in zip(page.texts, keep.tolist(), strict=True) if k)


#: Per page and set of kept blocks, its counts (:func:`page_counts`): the cuts and folds
#: of a run score the same page with the same blocks many times.
_COUNTS: dict[tuple[str, bytes], Any] = {}


def page_counts(page: PageBlocks, keep: np.ndarray) -> Any:
    """The page's counts with the ``keep`` blocks kept: snippets found, missed and wrongly
    found (trafilatura-eval), else its word 4-gram :class:`ShingleCounts`."""
    key = (page.key, np.packbits(keep).tobytes())
    if key not in _COUNTS:
        if page.dataset == SNIPPET_SET:
            text = normalise_whitespace(page_text(page, keep))
            with_, without = page.gold
            found = sum(s in text for s in with_)
            _COUNTS[key] = (found, len(with_) - found, sum(s in text for s in without))
        else:
            _COUNTS[key] = shingle_counts(page.gold, page_text(page, keep))
    return _COUNTS[key]


def set_score(pages: Sequence[PageBlocks], kept: Sequence[np.ndarray], dataset: str) -> float:
    """The set's measure on the kept blocks: snippet F-score or word 4-gram F1."""
    counts = [page_counts(page, keep) for page, keep in zip(pages, kept, strict=True)]
    if dataset == SNIPPET_SET:
        tp, fn, fp = (sum(column) for column in zip(*counts, strict=True)) if counts else (0, 0, 0)
        return 2 * tp / max(2 * tp + fp + fn, 1)
    return summarise_shingles(counts)[2]


def scores_by_set(
    pages: Sequence[PageBlocks], probabilities: Sequence[np.ndarray], cut: float
) -> dict[str, float]:
    """Per set present in ``pages``, its score at ``cut`` (a page counts in its labelling set)."""
    out = {}
    for dataset in LABEL_SETS:
        chosen = [i for i, p in enumerate(pages) if p.dataset == dataset]
        if chosen:
            out[dataset] = set_score(
                [pages[i] for i in chosen],
                [kept_blocks(probabilities[i], cut, pages[i].rules.chars) for i in chosen],
                dataset,
            )
    return out


def model_features(model: BoostedTrees, page: PageBlocks) -> np.ndarray:
    """The page's block features with the word scores of ``model``'s word model."""
    return with_word_scores(page, word_model(model).scores_of(page.words))


def predict(model: BoostedTrees, pages: Sequence[PageBlocks]) -> list[np.ndarray]:
    return [content_probability(model, model_features(model, p), p.rules) for p in pages]


def inner_folds(
    pages: Sequence[PageBlocks], protocol_pages: Sequence[protocol.ProtocolPage], inner: int | str
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index pairs of ``pages``: with ``inner == "sets"`` one per set present,
    left out (its test pages: those it labels), else ``inner`` site-grouped folds."""
    if inner != "sets":
        return protocol.site_folds(protocol_pages, int(inner))
    present = [name for name in LABEL_SETS if any(p.dataset == name for p in pages)]
    return [
        (train, test[[pages[i].dataset == name for i in test.tolist()]])
        for name, train, test in protocol.leave_one_set_out(protocol_pages, present)
    ]


def choose_cut(
    pages: list[PageBlocks],
    protocol_pages: Sequence[protocol.ProtocolPage],
    inner: int | str,
    seed: int = SEED,
) -> float:
    """The cut of the best typical gain over :data:`CUT_PRIOR` (:func:`pick_cut`): per cut,
    the median over the sets of the change of each set's score, on out-of-fold predictions
    of inner folds of ``pages`` (:func:`inner_folds`). The sets' curves disagree (a gold
    that rewards recall favours low cuts, one that rewards precision high ones), and with
    their mean the steepest set chose the cut: the median set's gain is what a set not seen
    in training can expect (development notes, "the cut by the typical set's gain")."""
    probabilities: list[np.ndarray] = [np.zeros(0)] * len(pages)
    for train, test in inner_folds(pages, protocol_pages, inner):
        model = export(*fit([pages[i] for i in train], seed))
        for i, p in zip(test.tolist(), predict(model, [pages[i] for i in test]), strict=True):
            probabilities[i] = p
    return pick_cut(typical_gains({cut: scores_by_set(pages, probabilities, cut) for cut in CUTS}))


def typical_gains(scores: dict[float, dict[str, float]]) -> dict[float, float]:
    """Per cut, the median over the sets of the change of the set's score from its score
    at :data:`CUT_PRIOR` (``scores``: per cut, each set's score)."""
    prior = scores[CUT_PRIOR]
    return {
        cut: float(np.median([score - prior[name] for name, score in by_set.items()]))
        for cut, by_set in scores.items()
    }


def pick_cut(scores: dict[float, float]) -> float:
    """Of the cuts whose inner score is within :data:`CUT_TOLERANCE` of the best, the one
    nearest :data:`CUT_PRIOR` (the lower of two as near)."""
    best = max(scores.values())
    near = [cut for cut, score in scores.items() if score >= best - CUT_TOLERANCE]
    return min(near, key=lambda cut: (abs(cut - CUT_PRIOR), cut))


def fit_with_cut(
    pages: list[PageBlocks],
    protocol_pages: Sequence[protocol.ProtocolPage],
    inner: int | str,
    seed: int = SEED,
) -> BoostedTrees:
    """A model of ``pages`` whose cut is chosen on inner folds of the same pages."""
    cut = CUT_PRIOR if inner in (1, "1") else choose_cut(pages, protocol_pages, inner, seed)
    learner, words = fit(pages, seed)
    trees = export(learner, words)
    sample = np.vstack([model_features(trees, p) for p in pages[:20]]).astype(np.float64)
    if not np.allclose(trees.probability(sample), learner.predict_proba(sample)[:, 1]):
        raise AssertionError("the exported trees do not predict as scikit-learn's model")
    return dataclasses.replace(trees, cut=cut)


def loso_models(
    pages: list[PageBlocks],
    protocol_pages: Sequence[protocol.ProtocolPage],
    inner: int | str = INNER,
    seed: int = SEED,
) -> dict[str, BoostedTrees]:
    """Per set of :data:`LABEL_SETS`, the model fitted without its pages."""
    models = {}
    for dataset, train, _ in protocol.leave_one_set_out(protocol_pages, LABEL_SETS):
        chosen = train.tolist()
        models[dataset] = fit_with_cut(
            [pages[i] for i in chosen], [protocol_pages[i] for i in chosen], inner, seed
        )
    return models


def _run_tag(pages: Sequence[PageBlocks], inner: int | str, seed: int) -> str:
    """Names the cached results of a training run: its data (the blocks' features and
    labels: the package's code reaches the models through them), learner (with its seed)
    and choices."""
    params = learner_params(seed)
    key = repr(
        (_fingerprint(pages), params, CUTS, CUT_PRIOR, CUT_TOLERANCE, inner, _script_fingerprint())
    )  # the script's source: how the cut is chosen
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def _loso_paths(
    cache: Path, pages: Sequence[PageBlocks], inner: int | str, seed: int
) -> dict[str, Path]:
    """Where the leave-one-set-out models of these pages and settings are kept."""
    tag = _run_tag(pages, inner, seed)
    return {name: cache / f"tagratio-without-{name}-{tag}.json" for name in LABEL_SETS}


def write_loso_models(
    cache: Path,
    inner: int | str = INNER,
    pages: list[PageBlocks] | None = None,
    seed: int = SEED,
) -> dict[str, Path]:
    """The leave-one-set-out models of the whole pool as model files under ``cache``
    (``{held-out set: path}``), fitted unless this training run wrote them already
    (``benchmarks.accuracy --loso`` reads them)."""
    pages = load_blocks(None, cache) if pages is None else pages
    paths = _loso_paths(cache, pages, inner, seed)
    if not all(path.is_file() for path in paths.values()):
        keys = {p.key for p in pages}
        protocol_pages = [p for p in protocol.pool(LABEL_SETS) if p.key in keys]
        for dataset, model in loso_models(pages, protocol_pages, inner, seed).items():
            _data.write_atomically(paths[dataset], json.dumps(model.to_dict()).encode())
    return paths


def loso_validation(
    pages: list[PageBlocks], cache: Path, inner: int | str, seed: int = SEED
) -> dict[str, Any]:
    """Leave one set out: each set scored by the model fitted without it (printed)."""
    out: dict[str, Any] = {}
    for dataset, path in write_loso_models(cache, inner, pages, seed).items():
        model = BoostedTrees.from_dict(json.loads(path.read_text(encoding="utf-8")))
        held = [p for p in pages if dataset in p.sets and p.dataset == dataset]
        score = scores_by_set(held, predict(model, held), model.cut).get(dataset, float("nan"))
        out[dataset] = {"score": round(score, 4), "cut": model.cut}
        print(f"leave one set out: {dataset:<12} score {score:.4f} (cut {model.cut})")
    out["mean"] = round(float(np.mean([v["score"] for v in out.values()])), 4)
    print(f"leave one set out: mean         {out['mean']:.4f}")
    return out


def site_validation(
    pages: list[PageBlocks],
    protocol_pages: Sequence[protocol.ProtocolPage],
    cache: Path,
    inner: int | str,
    n_splits: int = 5,
    seed: int = SEED,
) -> dict[str, float]:
    """Site-grouped folds: every page scored by a model fitted on folds sharing no site
    with it; per set (printed; cached under ``cache``)."""
    path = cache / f"tagratio-site-grouped-{n_splits}-{_run_tag(pages, inner, seed)}.json"
    if path.is_file():
        out: dict[str, float] = json.loads(path.read_text(encoding="utf-8"))
    else:
        probabilities: list[np.ndarray] = [np.zeros(0)] * len(pages)
        cuts = np.zeros(len(pages))
        for train, test in protocol.site_folds(protocol_pages, n_splits):
            chosen = train.tolist()
            model = fit_with_cut(
                [pages[i] for i in chosen], [protocol_pages[i] for i in chosen], inner, seed
            )
            tested = test.tolist()
            for i, p in zip(tested, predict(model, [pages[i] for i in tested]), strict=True):
                probabilities[i], cuts[i] = p, model.cut
        kept = [
            kept_blocks(p, c, page.rules.chars)
            for p, c, page in zip(probabilities, cuts, pages, strict=True)
        ]
        out = {}
        for dataset in LABEL_SETS:
            chosen = [i for i, p in enumerate(pages) if p.dataset == dataset]
            if chosen:
                score = set_score([pages[i] for i in chosen], [kept[i] for i in chosen], dataset)
                out[dataset] = round(score, 4)
        _data.write_atomically(path, json.dumps(out).encode())
    for dataset, score in out.items():
        print(f"site-grouped {n_splits} folds: {dataset:<12} score {score:.4f}")
    return out


def final_model(
    pages: list[PageBlocks],
    protocol_pages: Sequence[protocol.ProtocolPage],
    cache: Path,
    inner: int | str,
    seed: int = SEED,
) -> BoostedTrees:
    """The model of every page (cached under ``cache``)."""
    path = cache / f"tagratio-final-{_run_tag(pages, inner, seed)}.json"
    if path.is_file():
        return BoostedTrees.from_dict(json.loads(path.read_text(encoding="utf-8")))
    model = fit_with_cut(pages, protocol_pages, inner, seed)
    _data.write_atomically(path, json.dumps(model.to_dict()).encode())
    return model


def _fingerprint(pages: Sequence[PageBlocks]) -> str:
    """A digest of the training data: the pages and their sites, their blocks' features and
    labels, and what the rules read (the cut is chosen, and the cached scores computed, on
    the rules' output as well as the model's)."""
    digest = hashlib.sha1()
    for page in pages:
        digest.update(page.key.encode())
        digest.update(page.site.encode())
        digest.update(page.features.tobytes())
        digest.update(page.labels.tobytes())
        digest.update(page.weights.tobytes())
        digest.update(page.rules.lead.tobytes())
        digest.update(page.rules.discussion.tobytes())
        digest.update(page.rules.links_after.tobytes())
        digest.update(page.rules.notes.tobytes())
        digest.update(page.rules.code.tobytes())
        digest.update(page.rules.chars.tobytes())
        digest.update(page.rules.bodies.tobytes())
        digest.update(page.rules.tables.tobytes())
        digest.update(page.words.buckets.tobytes())
        digest.update(page.words.starts.tobytes())
    return digest.hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.train_tagratio", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--limit", type=int, help="only the first N pages of each set (smoke runs)")
    parser.add_argument(
        "--inner",
        type=lambda value: value if value == "sets" else int(value),
        default=INNER,
        help="inner folds choosing the cut: 'sets' (each training set left out) or a number "
        "of site-grouped folds (1: cut 0.5)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=SEED,
        help="the learner's random_state (which blocks early stopping holds out); recorded "
        "in the model file",
    )
    parser.add_argument("--cache", type=Path, default=Path("/tmp/scrapy-tagratio-cache"))
    parser.add_argument("--no-write", action="store_true", help="validate only")
    parser.add_argument(
        "--stage",
        choices=("loso", "site", "final", "all"),
        default="all",
        help="only the leave-one-set-out validation, the site-grouped one or the final fit "
        "(each cached: processes can run them at once, and 'all' then reuses them)",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    pages = load_blocks(args.limit, args.cache)
    keys = {p.key for p in pages}
    protocol_pages = [p for p in protocol.pool(LABEL_SETS) if p.key in keys]
    assert [p.key for p in protocol_pages] == [p.key for p in pages]
    labelled = sum(int((p.labels >= 0).sum()) for p in pages)
    print(
        f"{len(pages)} pages, {sum(len(p.labels) for p in pages)} blocks, {labelled} labelled, "
        f"{len(FEATURES)} features ({time.perf_counter() - started:.0f} s)"
    )

    stages = ("loso", "site", "final") if args.stage == "all" else (args.stage,)
    validation = {}
    if "loso" in stages:
        validation["leave_one_set_out"] = loso_validation(pages, args.cache, args.inner, args.seed)
    if "site" in stages:
        validation["site_grouped"] = site_validation(
            pages, protocol_pages, args.cache, args.inner, seed=args.seed
        )
    if "final" in stages:
        final = final_model(pages, protocol_pages, args.cache, args.inner, args.seed)
    if args.stage != "all":
        return 0
    print(f"final model: {final.feature.shape[0]} trees, depth {final.depth}, cut {final.cut}")
    if args.no_write:
        return 0
    about = {
        "version": MODEL_VERSION,
        "training": {
            "sets": list(LABEL_SETS),
            "pages": len(pages),
            "labelled_blocks": labelled,
            "fingerprint": _fingerprint(pages),
            "learner": "sklearn HistGradientBoostingClassifier",
            "params": learner_params(args.seed),
            "gold_share": GOLD_SHARE,
            "word_model": {
                "bits": WORD_BITS,
                "C": WORD_C,
                "max_words": WORD_MAX_WORDS,
                "folds": WORD_FOLDS,
            },
            "inner_folds": args.inner,
            "limit": args.limit,
        },
        "validation": validation,
    }
    model = dataclasses.replace(final, about={**final.about, **about})
    MODEL_PATH.parent.mkdir(parents=True, exist_ok=True)
    MODEL_PATH.write_text(
        json.dumps(model.to_dict(), separators=(",", ":")) + "\n", encoding="utf-8"
    )
    print(f"wrote {MODEL_PATH} ({MODEL_PATH.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
