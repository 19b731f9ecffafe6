"""The one training and validation protocol of every model the project fits.

Figures fitted and reported on one set do not hold on others, so every model (the overview
detector, the default algorithm's block model) is fitted on all development sets and judged
on data that did not tune it:

* **The pool.** Every page of every development set, each counted once: a page whose bytes
  appear in two sets (overview-dev took 88 pages from trafilatura-eval and fundus-dev) is
  one :class:`ProtocolPage` that belongs to both (``memberships``).
* **Labels.** ``overview_label`` is overview-dev's label where the page is in overview-dev
  (``overview`` / ``article`` / ``other``); every other page of a content set is
  ``content``. (Two trafilatura-eval pages are labelled overview by overview-dev; they keep
  that label: the overview set's labels are the ones made for the question.)
* **Leave one set out** (:func:`leave_one_set_out`): for each set, a model fitted on every
  page that is *not* a member of the set scores the set's pages.
* **Site-grouped folds** (:func:`site_folds`): k folds in which no site sits on both sides,
  stratified by a label when one is given.
* **Nested choices** (:func:`inner_folds`): constants and thresholds are chosen by folds of
  the *training* pages only, never of the pages they are then judged on.

The pages themselves are read lazily (:meth:`ProtocolPage.html`), so building the pool is
cheap; callers cache whatever they compute per page.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

from scrapy_tagratio.urls import domain_and_suffix, host_of

from . import _data

__all__ = [
    "CONTENT_SETS",
    "OVERVIEW_SET",
    "ProtocolPage",
    "inner_folds",
    "leave_one_set_out",
    "pool",
    "site_folds",
    "site_of",
]

#: The sets whose every page is a content page with gold main text (command-line names).
CONTENT_SETS: tuple[str, ...] = ("trafilatura", "fundus", "dragnet", "readability", "goose")
#: The labelled overview/article/other set.
OVERVIEW_SET = "overview"
#: CleanEval: full gold text, but random web pages (not all of them content pages).
CLEANEVAL_SET = "cleaneval"


@dataclass(frozen=True)
class ProtocolPage:
    """One distinct page of the pool.

    ``key`` is ``"<set>/<id>"`` of its first membership; ``memberships`` maps each set the
    page belongs to onto its id there (and its gold record through :meth:`gold`).
    """

    key: str
    path: Path
    url: str | None
    site: str
    overview_label: str  # overview / article / other / content (a content set's page)
    memberships: tuple[tuple[str, str], ...]

    @property
    def sets(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.memberships)

    def html(self) -> bytes:
        """The page's original bytes."""
        with gzip.open(self.path) as handle:
            return handle.read()

    def gold(self, dataset: str) -> dict[str, Any]:
        """The gold record of the page in ``dataset`` (one of its memberships)."""
        page_id = dict(self.memberships)[dataset]
        if dataset == OVERVIEW_SET:
            return _overview_rows()[page_id]
        return _data.load_gold(dataset)[page_id]

    @property
    def is_overview(self) -> bool:
        return self.overview_label == "overview"


class HasSite(Protocol):
    """What the site-grouped folds read of a page."""

    @property
    def site(self) -> str: ...


#: A Wayback Machine capture's address: the archived address follows the timestamp.
_WAYBACK = re.compile(r"^https?://web\.archive\.org/web/[0-9a-z_]+/(.+)$", re.IGNORECASE)
#: trafilatura-eval's stand-in for a page saved without its address: ``hard::`` and the
#: file name, which starts with the page's host (``hard::nationnews.com-schools.html``).
_SAVED_AS = "hard::"


def site_of(url: str | None) -> str | None:
    """The host of ``url`` without ``www.``, lower-cased (a URL without a scheme read as
    starting with its host); None without a usable host. A Wayback Machine capture
    belongs to the site it archives, and a trafilatura-eval page saved without its address
    to the host its file name starts with: each is its own site, not one site of many
    (a site's pages must all fall on the same side of a fold)."""
    if not url:
        return None
    wayback = _WAYBACK.match(url)
    if wayback is not None:
        return site_of(wayback.group(1))
    if url.startswith(_SAVED_AS):
        return _host_of_file_name(url[len(_SAVED_AS) :])
    return host_of(url if "//" in url else f"//{url}")


def _host_of_file_name(name: str) -> str | None:
    """The host a saved page's file name starts with: the shortest run of its leading
    dot-separated labels (before the first ``-``) that ends in a public suffix
    (``iwr.de.IWR-Pressedienst.html``: ``iwr.de``), one label longer where that keeps
    the domain and lengthens its suffix (``laestrella.com.pa-laboral.html``:
    ``laestrella.com.pa``); None when no run does."""
    labels = name.split("-", 1)[0].lower().split(".")
    for count in range(2, len(labels) + 1):
        run = ".".join(labels[:count])
        domain, suffix = domain_and_suffix(run)
        if not (domain and suffix):
            continue
        if count < len(labels):
            longer = ".".join(labels[: count + 1])
            longer_domain, longer_suffix = domain_and_suffix(longer)
            if longer_domain == domain and len(longer_suffix) > len(suffix):
                run = longer
        return host_of(f"//{run}")
    return None


@cache
def _overview_rows() -> dict[str, dict[str, str]]:
    root = _data.benchmarks_dir()
    if root is None:
        raise FileNotFoundError(
            "benchmark data not found: set TAGRATIO_BENCHMARKS or put it at ../shared/benchmarks"
        )
    with open(root / "overview-dev" / "labels.csv", encoding="utf-8", newline="") as handle:
        return {row["file"]: row for row in csv.DictReader(handle)}


def _digest(path: Path) -> str:
    with gzip.open(path) as handle:
        return hashlib.sha1(handle.read()).hexdigest()


def _content_site(dataset: str, page_id: str, record: dict[str, Any]) -> str:
    site = record.get("site") or site_of(record.get("url"))
    if not site and dataset == "fundus":
        site = str(record.get("publisher", "")).lower() or None
    # Without a URL a page is its own site: grouping then can only be finer, never leak.
    return site or f"{dataset}/{page_id}"


@cache
def pool(sets: tuple[str, ...] = (*CONTENT_SETS, OVERVIEW_SET)) -> tuple[ProtocolPage, ...]:
    """Every distinct page of ``sets``, in a fixed order (sets as given, ids sorted).

    Pages are matched across sets by the SHA-1 of their bytes.
    """
    root = _data.benchmarks_dir()
    if root is None:
        raise FileNotFoundError(
            "benchmark data not found: set TAGRATIO_BENCHMARKS or put it at ../shared/benchmarks"
        )
    entries: dict[str, dict[str, Any]] = {}  # digest -> fields of the page
    for dataset in sets:
        if dataset == OVERVIEW_SET:
            members = [
                (row["file"], root / "overview-dev" / row["file"], row["url"] or None,
                 row["site"] or None, row["label"])
                for row in _overview_rows().values()
            ]  # fmt: skip
        else:
            folder = _data.dataset_dir(dataset)
            members = [
                (page_id, folder / "pages" / f"{page_id}.html.gz", record.get("url") or None,
                 _content_site(dataset, page_id, record), "content")
                for page_id, record in sorted(_data.load_gold(dataset).items())
            ]  # fmt: skip
        for page_id, path, url, site, label in members:
            entry = entries.setdefault(
                _digest(path),
                {"key": f"{dataset}/{page_id}", "path": path, "url": url, "site": site,
                 "label": "content", "memberships": []},
            )  # fmt: skip
            entry["memberships"].append((dataset, page_id))
            entry["url"] = entry["url"] or url
            if dataset == OVERVIEW_SET:
                entry["label"] = label
                entry["site"] = site or entry["site"]
    return tuple(
        ProtocolPage(
            key=entry["key"],
            path=entry["path"],
            url=entry["url"],
            site=entry["site"] or site_of(entry["url"]) or entry["key"],
            overview_label=entry["label"],
            memberships=tuple(entry["memberships"]),
        )
        for entry in entries.values()
    )


def leave_one_set_out(
    pages: Sequence[ProtocolPage], sets: Sequence[str] = CONTENT_SETS
) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """``(held-out set, training indices, test indices)`` for each of ``sets``.

    The test pages are the set's members; the training pages are those that are not members
    (so a page shared with another set never trains the model that scores it).
    """
    for dataset in sets:
        member = np.array([dataset in page.sets for page in pages])
        yield dataset, np.flatnonzero(~member), np.flatnonzero(member)


def site_folds(
    pages: Sequence[HasSite],
    n_splits: int = 5,
    *,
    labels: np.ndarray | None = None,
    seed: int = 0,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_splits`` (train, test) index pairs; no site is on both sides of a pair.

    With ``labels`` the folds are stratified by them (scikit-learn's StratifiedGroupKFold,
    shuffled by ``seed``); without, GroupKFold.
    """
    groups = np.array([page.site for page in pages])
    dummy = np.zeros((len(pages), 1))
    if labels is None:
        return list(GroupKFold(n_splits).split(dummy, groups=groups))
    splitter = StratifiedGroupKFold(n_splits, shuffle=True, random_state=seed)
    return list(splitter.split(dummy, labels, groups))


def inner_folds(
    pages: Sequence[HasSite],
    train: np.ndarray,
    n_splits: int = 4,
    *,
    labels: np.ndarray | None = None,
    seed: int = 0,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Site-grouped folds of the training indices ``train`` alone, as indices into ``pages``:
    the folds on which a constant or threshold is chosen for an outer fold."""
    subset = [pages[i] for i in train]
    sub_labels = None if labels is None else labels[train]
    return [
        (train[inner_train], train[inner_test])
        for inner_train, inner_test in site_folds(subset, n_splits, labels=sub_labels, seed=seed)
    ]
