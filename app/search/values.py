"""The value types of the ranking core: what a channel finds (:class:`Hit`), what the ranker
orders (:class:`Ranked`, :class:`Ranking`) and what a surface shows (:class:`Result`, :class:`Why`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple


class Mode(StrEnum):
    DENSE = "dense"
    LEXICAL = "lexical"
    HYBRID = "hybrid"


class Hit(NamedTuple):  # a tuple: a query's channels make hundreds (a frozen dataclass took twice the time)
    row: int  # row in the bundle catalog
    score: float
    label: int  # best-matching label id


@dataclass(frozen=True)
class Why:
    """Why a row was returned: the label that matched (its kind and, for knowledge the
    terminology does not state, its origin) and each channel's part."""

    matched_term: str
    matched_type: str
    origin: str | None  # of the matched label, or the bridge the row was found through
    cosine: float
    bm25: float | None  # raw BM25 of the best label; None when BM25 did not retrieve the concept
    char: float
    words: float
    code: bool
    corrected: bool


@dataclass(frozen=True)
class Threshold:
    """Which candidates a ranking keeps: those of at least ``min_confidence`` and, with
    ``spare_whole_words``, any whose label holds every word of the query (a text filter's
    expansion lists a code that names every word it was given, however unsure the ranking is)."""

    min_confidence: float = 0.0
    spare_whole_words: bool = False


@dataclass(frozen=True)
class Ranked:
    row: int  # row in the bundle catalog
    label: int  # the label shown as matched
    score: float  # hybrid: the confidence; dense: cosine; lexical: BM25
    confidence: float
    features: tuple[float, ...] = field(repr=False)
    bm25: float | None = None
    via: str | None = None  # the bridge that found it, when a bridge did
    category: int | None = None  # the category it was descended to from (features and label are the category's)


@dataclass(frozen=True)
class Ranking:
    rows: list[Ranked]
    suggestion: str | None = None  # the query with unknown words corrected, when any was
    # Candidates at or above the minimum confidence, ``rows`` and those past ``k`` (the size of a
    # thresholded result, as a filtered $expand's ``total``; ``k`` within ``fusion_depth`` leaves
    # the candidates, hence this count, unchanged).
    above: int = 0


@dataclass(frozen=True)
class Result:
    rank: int
    system: str
    code: str
    display: str
    kind: str | None
    billable: bool | None
    inactive: bool
    score: float
    confidence: float
    matched_term: str
    why: Why
