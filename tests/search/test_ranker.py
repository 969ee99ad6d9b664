"""The ranker's order on toy candidates: confidence first, then its tie-breaks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from app.search import ranker
from app.search.confidence import FEATURES, Calibration
from app.search.values import Mode

CALIBRATION = Calibration(tuple([1.0] + [0.0] * (len(FEATURES) - 1)), 0.0)  # confidence: σ(cosine)
BUNDLE = SimpleNamespace(
    billable=np.zeros(10, dtype=bool),
    lent=lambda labels: np.zeros(len(labels), dtype=bool),
    system_of=lambda rows: np.full(len(rows), "icd", dtype=object),
)


def _order(cosines: list[float], name_cosines: list[float], named: list[bool] | None = None) -> list[int]:
    candidates = np.arange(len(cosines), dtype=np.int64)
    features = np.zeros((len(cosines), len(FEATURES)), dtype=np.float32)
    features[:, 0] = cosines
    ties = ranker.TieBreaks(np.asarray(named or [False] * len(cosines)), np.asarray(name_cosines, dtype=np.float32))
    rows, _ = ranker.order(
        BUNDLE, CALIBRATION, candidates, features, candidates, [None] * len(cosines), {}, {}, Mode.HYBRID, 10, 0.0, ties
    )
    return [row.row for row in rows]


def test_equal_confidences_go_to_the_candidate_whose_name_is_nearest_the_query() -> None:
    """"UC", lent by one table to two concepts: the same features, so the same confidence; the
    one whose preferred name the query means comes first, not the first in catalog order."""
    assert _order([0.9, 0.9, 0.5], [0.2, 0.6, 0.9]) == [1, 0, 2]


def test_the_name_never_outranks_a_higher_confidence_nor_a_release_name_saying_the_query() -> None:
    assert _order([0.9, 0.8], [0.1, 0.9]) == [0, 1]
    assert _order([0.9, 0.9], [0.1, 0.9], named=[True, False]) == [0, 1]
    assert _order([0.9, 0.9], [0.5, 0.5]) == [0, 1]  # nothing else tells them apart: catalog order
