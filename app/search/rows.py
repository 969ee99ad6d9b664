"""Rows: a ranked concept as a surface shows it, explaining itself (the matched label with its
type and origin, each channel's part, whether a rewrite found it)."""

from __future__ import annotations

from app.search.features import CHAR, CODE, COS, REWRITTEN, WORDS
from app.search.values import Ranked, Ranking, Result, Why
from indexer.bundle import Bundle


def result(bundle: Bundle, rank: int, ranked: Ranked) -> Result:
    concept = bundle.concepts[ranked.row]
    features = ranked.features
    code = bool(features[CODE])
    why = Why(
        matched_term=concept.code if code else bundle.label_text[ranked.label],
        matched_type="code" if code else bundle.label_kind[ranked.label],
        origin=None if code else ranked.via or bundle.label_origin[ranked.label],
        cosine=round(features[COS], 4),
        bm25=None if ranked.bm25 is None else round(ranked.bm25, 4),
        char=round(features[CHAR], 4),
        words=round(features[WORDS], 4),
        code=code,
        corrected=bool(features[REWRITTEN]) and ranked.via is None,
    )
    return Result(
        rank=rank,
        system=concept.system,
        code=concept.code,
        display=concept.display,
        kind=concept.kind,
        billable=concept.billable,
        inactive=not concept.active,
        score=ranked.score,
        confidence=round(ranked.confidence, 4),
        matched_term=why.matched_term,
        why=why,
    )


def results(bundle: Bundle, ranking: Ranking) -> list[Result]:
    return [result(bundle, rank, row) for rank, row in enumerate(ranking.rows, start=1)]
