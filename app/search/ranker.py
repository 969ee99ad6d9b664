"""The ranker: candidates' features to calibrated confidence, and the order a mode gives them.

``hybrid`` orders concepts by the confidence (:mod:`app.search.confidence`), ``dense`` by cosine
and ``lexical`` by BM25 alone. A code match always ranks first; on a tie the concept one of
whose release names says the query ("epilepsy": G40.909 *Epilepsy NOS* before R56.9, both lent
"Seizure" by an alignment), then one matched by a name of its release rather than a knowledge
source's lent label (N18.6 *End stage renal disease* before the stage 5 code an alignment lent
the name to), then a billable code (the one to record), then the concept whose preferred name is
nearest the query in meaning (an abbreviation of several meanings, each lent the same label by one
table, ties to the end: "UC" is ulcerative colitis before urothelial carcinoma). No row of an
ambiguous query (a name of several meanings) is certain: its confidence is split between them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.search.confidence import Calibration
from app.search.features import CODE, COS
from app.search.values import Hit, Mode, Ranked
from indexer.bundle import Bundle


@dataclass(frozen=True)
class TieBreaks:
    """Per candidate, what orders candidates of equal score (after a code match)."""

    named: np.ndarray  # a name of its release says the query
    name_cosine: np.ndarray  # the cosine of the query with its preferred name


def order(
    bundle: Bundle,
    calibration: Calibration,
    candidates: np.ndarray,
    features: np.ndarray,
    labels: np.ndarray,
    via: list[str | None],
    bm25: dict[int, Hit],
    meanings: dict[str, int],
    mode: Mode,
    k: int,
    min_confidence: float,
    ties: TieBreaks,
    spared: np.ndarray | None = None,
) -> tuple[list[Ranked], int]:
    """The best ``k`` of ``candidates`` (catalog rows) at or above ``min_confidence`` or ``spared``
    (a mask over them), and how many candidates are."""
    confidence = calibration.confidence(features)
    if any(count > 1 for count in meanings.values()):
        confidence /= np.asarray([max(meanings[key], 1) for key in bundle.system_of(candidates)], dtype=np.float32)
    if mode is Mode.DENSE:
        score = features[:, COS]
    elif mode is Mode.LEXICAL:
        score = np.array([bm25[r].score if r in bm25 else 0.0 for r in candidates.tolist()], dtype=np.float32)
    else:
        score = confidence
    keep = confidence >= min_confidence
    if spared is not None:
        keep |= spared
    if mode is Mode.LEXICAL:
        keep &= (score > 0) | (features[:, CODE] > 0)
    lent = bundle.lent(labels)
    billable = bundle.billable[candidates]
    ranked = np.lexsort((candidates, -ties.name_cosine, ~billable, lent, ~ties.named, -score, -features[:, CODE]))
    chosen = [i for i in ranked if keep[i]][:k]
    return [
        Ranked(
            int(candidates[i]),
            int(labels[i]),
            float(score[i]),
            float(confidence[i]),
            tuple(float(f) for f in features[i]),
            bm25[int(candidates[i])].score if int(candidates[i]) in bm25 else None,
            via[i],
        )
        for i in chosen
    ], int(keep.sum())
