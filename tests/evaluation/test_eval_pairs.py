from __future__ import annotations

from collections.abc import Callable

import pytest

from evaluation.pairs import TermPair, distance, term_pairs
from indexer.records import Concept, Designation
from indexer.store import StoreReader
from tests.toy import _concept

EXACT = {"scope": "EXACT"}

# X1 and X2 share the term "cardia", so no term of one may be a negative for the other.
CONCEPTS = [
    _concept("X1", "heart", Designation("cardia", **EXACT)),
    _concept("X2", "hearth", Designation("Cardia", **EXACT)),
    _concept("X3", "ear", Designation("otic region", **EXACT), Designation("lug", scope="RELATED")),
]

# Levenshtein distances, case-folded:
#   heart–cardia 5: h→c, delete e, a, r, t→d, insert i, insert a
#   hearth–cardia 5: h→c, delete e, a, r, t→d, h→i, insert a
#   ear–otic region 10: 8 insertions, and only one of e, a, r can line up with the 11 letters
#   heart–ear 2 (delete h, t); hearth–ear 3 (delete h, t, h); ear–cardia 4 (e→c, a, r, insert d i a)
POSITIVES = [
    TermPair("heart", "cardia", 1, "name-synonym", 5, False),  # 5 is still easy
    TermPair("hearth", "Cardia", 1, "name-synonym", 5, False),
    TermPair("ear", "otic region", 1, "name-synonym", 10, True),
]


@pytest.fixture
def mini(reader_of: Callable[[list[Concept]], StoreReader]) -> StoreReader:
    return reader_of(CONCEPTS)


def test_distance_is_on_folded_terms() -> None:
    assert distance("Heart", "HEARTH") == 1
    assert distance("heart", "cardia") == 5


def test_positives_are_name_synonym_and_synonym_synonym(
    reader_of: Callable[[list[Concept]], StoreReader],
) -> None:
    reader = reader_of(
        [
            _concept(
                "M:1",
                "Tachycardia",
                Designation("Fast heart rate", **EXACT),
                Designation("Rapid heartbeat", **EXACT),
                Designation("TACHYCARDIA", **EXACT),  # the name again once folded
                Designation("Racing heart", scope="RELATED"),  # not a synonym for pairs
            )
        ]
    )
    assert term_pairs(reader, "mini", negatives=()) == [
        TermPair("Tachycardia", "Fast heart rate", 1, "name-synonym", distance("Tachycardia", "Fast heart rate"), True),
        TermPair("Tachycardia", "Rapid heartbeat", 1, "name-synonym", distance("Tachycardia", "Rapid heartbeat"), True),
        TermPair(
            "Fast heart rate", "Rapid heartbeat", 1, "synonym-synonym", distance("Fast heart rate", "Rapid heartbeat"), True
        ),
    ]
    assert len(term_pairs(reader, "mini", negatives=(), synonym_pairs=False)) == 2


def test_levenshtein_negatives(mini: StoreReader) -> None:
    pairs = term_pairs(mini, "mini", negatives=("levenshtein",))
    assert pairs[:3] == POSITIVES
    assert pairs[3:] == [
        # heart: hearth (1) is X2's, similar to X1 through "cardia"; next is ear (2)
        TermPair("heart", "ear", 0, "levenshtein", 2, False),
        # hearth: likewise ear (3)
        TermPair("hearth", "ear", 0, "levenshtein", 3, False),
        # ear: heart (2) and hearth (3) are already paired with ear; next is cardia (4).
        # The negative is hard because its positive (ear–otic region) is.
        TermPair("ear", "cardia", 0, "levenshtein", 4, True),
    ]


def test_nearest_ties_are_broken_by_the_seed(reader_of: Callable[[list[Concept]], StoreReader]) -> None:
    reader = reader_of(
        [
            _concept("A", "cat", Designation("feline", **EXACT)),
            *(_concept(f"B{i}", word) for i, word in enumerate(["bat", "hat", "mat", "rat", "sat"])),
        ]
    )
    chosen = {term_pairs(reader, "mini", negatives=("levenshtein",), seed=seed)[1].b for seed in range(20)}
    assert len(chosen) > 1 and chosen <= {"bat", "hat", "mat", "rat", "sat"}  # all at distance 1


def test_random_negatives(mini: StoreReader) -> None:
    pairs = term_pairs(mini, "mini", negatives=("random",), seed=3)
    negatives = pairs[3:]
    assert pairs[:3] == POSITIVES
    assert [(p.a, p.label, p.kind, p.hard) for p in negatives] == [
        ("heart", 0, "random", False),
        ("hearth", 0, "random", False),
        ("ear", 0, "random", True),
    ]
    # X1 and X2 may only meet X3's terms, and X3's anchor only X1's or X2's
    assert {p.b for p in negatives[:2]} <= {"ear", "otic region"}
    assert negatives[2].b in {"heart", "cardia", "hearth"}
    assert all(p.distance == distance(p.a, p.b) for p in negatives)
    assert term_pairs(mini, "mini", negatives=("random",), seed=3) == pairs


def test_a_sample_of_positives_gets_its_negatives(mini: StoreReader) -> None:
    pairs = term_pairs(mini, "mini", max_positives=1, seed=0)
    assert [p.kind for p in pairs] == ["name-synonym", "random", "levenshtein"]
    assert pairs[0].a == pairs[1].a == pairs[2].a
    assert len(term_pairs(mini, "mini", concepts={"X1", "X3"}, negatives=())) == 2
    with pytest.raises(ValueError):
        term_pairs(mini, "mini", negatives=("nearest",))
