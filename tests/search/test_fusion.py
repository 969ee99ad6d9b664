"""Hybrid fusion, against hand-computed scores."""

from __future__ import annotations

import pytest

from app.search.service import Hit, convex, rrf


def test_convex_combines_cosine_with_bm25_over_its_top_score() -> None:
    dense = [Hit(1, 0.9, 10), Hit(2, 0.8, 20)]
    lexical = [Hit(2, 10.0, 21), Hit(3, 5.0, 30)]

    fused = convex(dense, lexical, dense_weight=0.8)

    # 2: 0.8·0.8 + 0.2·10/10; 3: 0.8·0.8 (the lowest cosine found) + 0.2·5/10; 1: 0.8·0.9 + 0
    assert [(h.concept, h.label) for h in fused] == [(2, 20), (3, 30), (1, 10)]
    assert [h.score for h in fused] == pytest.approx([0.84, 0.74, 0.72])


def test_a_concept_only_the_encoder_finds_keeps_a_clear_lead_where_rank_fusion_loses_it() -> None:
    # "heart attack" in ICD-10-CM: the encoder ranks Acute myocardial infarction (1) first;
    # BM25 finds only concepts sharing a word, which the encoder ranks lower.
    dense = [Hit(1, 0.85, 1), Hit(2, 0.55, 2), Hit(3, 0.5, 3)]
    lexical = [Hit(3, 9.0, 3), Hit(2, 6.0, 2)]

    assert [h.concept for h in convex(dense, lexical, dense_weight=0.8)] == [1, 3, 2]
    assert [h.concept for h in rrf([dense, lexical], 60)] == [3, 2, 1]


def test_convex_with_one_ranking_empty_keeps_the_other_order() -> None:
    hits = [Hit(4, 3.0, 40), Hit(5, 1.0, 50)]

    assert [h.concept for h in convex([], hits, dense_weight=0.8)] == [4, 5]
    assert [h.concept for h in convex(hits, [], dense_weight=0.8)] == [4, 5]
    assert convex([], [], dense_weight=0.8) == []
