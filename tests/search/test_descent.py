"""Codeable answers: a category-level match descends to the billable code its details select."""

from __future__ import annotations

import numpy as np
from fastapi.testclient import TestClient

from app.search.descent import Descent
from app.search.details import DETAIL_FEATURES, Details
from app.search.values import Ranked
from indexer.lexical.normalise import tokens


def _codes(client: TestClient, **params: object) -> list[str]:
    response = client.get("/search", params={"system": "toyicd", "k": 5, **params})
    assert response.status_code == 200, response.text
    return [row["code"] for row in response.json()["results"]]


def test_a_category_match_lists_its_code_right_before_it(client: TestClient) -> None:
    codes = _codes(client, q="acute myocardial infarction")
    assert codes[:2] == ["I21.0", "I21"]


def test_with_billable_codes_required_a_category_gives_way_to_its_code(client: TestClient) -> None:
    body = client.get(
        "/search", params={"q": "acute myocardial infarction", "system": "toyicd", "k": 5, "billable": "true"}
    ).json()
    first = body["results"][0]
    assert (first["code"], first["billable"]) == ("I21.0", True)
    assert first["why"]["origin"] == "via I21 Acute myocardial infarction: its code for what the query states"
    assert all(row["billable"] for row in body["results"])


def test_the_code_chosen_is_the_one_whose_details_the_query_states(client: TestClient) -> None:
    service = client.app.state.service
    bundle = service.bundle
    descent = Descent(bundle, (0.0,) * len(DETAIL_FEATURES), lambda row: Details.of(bundle.concepts[row].display))
    every = np.ones(len(bundle.concepts), dtype=bool)
    i21 = bundle.concept_index("toyicd", "I21")
    assert bundle.concepts[descent.code(i21, Details.of("MI"), frozenset(), every)].code == "I21.0"
    only_others = every.copy()
    only_others[bundle.concept_index("toyicd", "I21.0")] = False
    assert descent.code(i21, Details.of("MI"), frozenset(), only_others) is None  # none admitted: no descent


def test_descent_prefers_the_code_that_adds_nothing_unsaid() -> None:
    descent = _descent({
        0: "Type 2 diabetes mellitus",
        1: "Type 2 diabetes mellitus with hyperglycemia",
        2: "Type 2 diabetes mellitus with unspecified complications",
        3: "Type 2 diabetes mellitus without complications",
        4: "Type 2 diabetes mellitus with diabetic chronic kidney disease",
    })  # fmt: skip
    every = np.ones(5, dtype=bool)
    assert descent.code(0, Details.of("T2DM"), frozenset(), every) == 3
    assert descent.code(0, Details.of("T2DM with hyperglycemia"), frozenset({"hyperglycemia"}), every) == 1
    assert descent.code(0, Details.of("type 2 diabetes with CKD"), frozenset({"ckd", "chronic", "kidney", "diseas"}), every) == 4


def _descent(
    displays: dict[int, str], inclusions: dict[int, list[str]] | None = None, parents: dict[int, int] | None = None
) -> Descent:
    """A descent over toy concepts: row 0 and the codes below it, each named by ``displays`` and
    with the release's inclusion terms ``inclusions``; each below row 0 unless ``parents`` says
    otherwise, billable unless it is a parent."""
    texts = [(row, text) for row in sorted(displays) for text in [displays[row], *(inclusions or {}).get(row, [])]]
    parent_of = {row: (parents or {}).get(row, 0) for row in displays if row}

    class Concepts:
        parents = [np.array([parent_of[row]] if row in parent_of else [], dtype=np.int64) for row in sorted(displays)]

        def __getitem__(self, row: int) -> object:
            return type("Concept", (), {"display": displays[row], "system": "icd"})

    class Bundle:
        concepts = Concepts()
        billable = np.array([row > 0 and row not in parent_of.values() for row in sorted(displays)])
        systems: dict[str, object] = {}
        label_text = [text for _, text in texts]
        label_knowledge = [None] * len(texts)

        def concept_labels(self, row: int) -> list[int]:
            return [i for i, (owner, _) in enumerate(texts) if owner == row]

    descent = Descent(Bundle(), (0.0,) * len(DETAIL_FEATURES), lambda row: Details.of(displays[row]))  # type: ignore[arg-type]
    descent._below = lambda row: np.arange(1, len(displays))  # type: ignore[method-assign]
    return descent


def _code(descent: Descent, said: str, mask: np.ndarray, label: int | None = None) -> int | None:
    """The code ``descent`` picks below its toy category (row 0) for the query ``said``."""
    return descent.code(0, Details.of(said), frozenset(tokens(said)), mask, label)


def test_what_a_code_only_negates_is_the_default_and_unspecified_breaks_a_tie() -> None:
    migraine = _descent({
        0: "Migraine",
        1: "Migraine without aura, not intractable, without status migrainosus",
        2: "Ophthalmoplegic migraine, intractable",
        3: "Migraine, unspecified, not intractable, without status migrainosus",
        4: "Migraine, unspecified, intractable, without status migrainosus",
    })  # fmt: skip
    every = np.ones(5, dtype=bool)
    assert _code(migraine, "migraine", every) == 3
    said = "intractable migraine"
    assert _code(migraine, said, every) == 4
    said = "non-intractable migraine"  # what the query negates it does not say (Descent.apply leaves it out)
    assert migraine.code(0, Details.of(said), frozenset(tokens(said)) - Details.of(said).negated, every) == 3
    piles = _descent(
        {0: "Hemorrhoids and perianal venous thrombosis", 1: "Perianal venous thrombosis", 2: "Unspecified hemorrhoids"}
    )
    assert _code(piles, "hemorrhoids", np.ones(3, dtype=bool)) == 2


def test_the_code_the_release_names_as_its_category_is_the_default_unless_the_query_selects_another() -> None:
    """ "Parkinson's disease NOS" is G20.A1's inclusion term: it is what G20 codes to, not the code
    that adds no word (*Parkinsonism, unspecified*), unless a word or detail the query states
    selects another ("with dyskinesia")."""
    parkinson = _descent(
        {
            0: "Parkinson's disease",
            1: "Parkinson's disease without dyskinesia, without mention of fluctuations",
            2: "Parkinson's disease with dyskinesia",
            3: "Parkinsonism, unspecified",
        },
        {1: ["Parkinson's disease NOS"]},
    )
    every = np.ones(4, dtype=bool)
    said = "parkinsons disease"
    assert _code(parkinson, said, every) == 1
    said = "parkinsons disease with dyskinesia"
    assert _code(parkinson, said, every) == 2
    assert _code(parkinson, said, np.array([True, False, False, True])) == 3  # not admitted


def test_the_words_of_an_axis_a_code_leaves_unspecified_are_no_kind_it_adds() -> None:
    ulcer = _descent({
        0: "Gastric ulcer",
        1: "Acute gastric ulcer without hemorrhage or perforation",
        2: "Gastric ulcer, unspecified as acute or chronic, without hemorrhage or perforation",
        3: "Chronic or unspecified gastric ulcer with perforation",
    })  # fmt: skip
    every = np.ones(4, dtype=bool)
    assert _code(ulcer, "stomach ulcer", every) == 2
    assert _code(ulcer, "acute gastric ulcer", every) == 1


def test_a_part_of_the_body_says_the_region_its_codes_name_unless_a_code_names_the_part() -> None:
    gout = _descent({
        0: "Idiopathic gout",
        1: "Idiopathic gout, right shoulder",
        2: "Idiopathic gout, right hand",
        3: "Idiopathic gout, right ankle and foot",
    })  # fmt: skip
    every = np.ones(4, dtype=bool)
    assert _code(gout, "gout in the right big toe", every) == 3
    assert _code(gout, "gout of the right thumb", every) == 2
    pain = _descent({0: "Pain in limb", 1: "Pain in right foot", 2: "Pain in right toe(s)"})
    assert _code(pain, "pain in right big toe", np.ones(3, dtype=bool)) == 2


def test_an_organ_said_by_another_word_selects_the_code_that_names_it() -> None:
    transplant = _descent({0: "Transplanted organ and tissue status", 1: "Kidney transplant status", 2: "Heart transplant status",
                           3: "Transplanted organ and tissue status, unspecified"})  # fmt: skip
    assert _code(transplant, "renal transplant recipient", np.ones(4, dtype=bool)) == 1
    history = _descent({0: "Personal history of malignant neoplasm of digestive organs",
                        1: "Personal history of other malignant neoplasm of large intestine",
                        2: "Personal history of malignant neoplasm of small intestine"})  # fmt: skip
    assert _code(history, "hx colon ca", np.ones(3, dtype=bool)) == 1


def test_an_inclusion_term_of_a_code_selects_it() -> None:
    failure = _descent(
        {0: "Heart failure", 1: "Unspecified systolic (congestive) heart failure", 2: "Heart failure, unspecified"},
        {2: ["Congestive heart failure NOS", "Biventricular (heart) failure NOS"]},
    )
    said = "congestive heart failure"
    assert _code(failure, said, np.ones(3, dtype=bool)) == 2


def test_an_inclusion_term_of_a_subcategory_selects_the_codes_under_it() -> None:
    femur = _descent(
        {
            0: "Fracture of head and neck of femur",
            1: "Fracture of unspecified part of neck of femur",
            2: "Fracture of unspecified part of neck of right femur, initial encounter for closed fracture",
            3: "Unspecified fracture of head of right femur, initial encounter for closed fracture",
        },
        {1: ["Fracture of hip NOS", "Fracture of neck of femur NOS"]},
        {2: 1},
    )
    said = "right hip fracture, initial encounter"
    assert _code(femur, said, femur.bundle.billable) == 2


def test_an_unsaid_other_weighs_as_a_default_not_as_a_site_or_kind_the_query_does_not_say() -> None:
    """DVT's history is the "other" code: a pulmonary embolism is a kind the query does not say."""
    history = _descent({
        0: "Personal history of venous thrombosis and embolism",
        1: "Personal history of pulmonary embolism",
        2: "Personal history of other venous thrombosis and embolism",
    })  # fmt: skip
    every = np.ones(3, dtype=bool)
    said = "personal history of DVT"
    assert _code(history, said, every) == 2
    said = "personal history of pulmonary embolism"
    assert _code(history, said, every) == 1


def test_a_code_carrying_the_text_that_found_its_category_is_chosen_unless_a_stated_detail_says_otherwise() -> None:
    breathing = _descent(
        {0: "Abnormalities of breathing", 1: "Shortness of breath on exertion", 2: "Unspecified abnormalities of breathing"},
        {0: ["SOB"], 1: ["SOB"]},
    )
    every = np.ones(3, dtype=bool)
    sob = breathing.bundle.label_text.index("SOB")  # the category's label "SOB"
    # By its names alone, code 1's "SOB" (a word said) weighs as its two words the query does not say.
    assert _code(breathing, "SOB", every) == 2
    assert _code(breathing, "SOB", every, sob) == 1
    veins = _descent(
        {0: "Thrombosis of deep veins of lower extremity", 1: "Thrombosis of deep veins of left lower extremity",
         2: "Thrombosis of unspecified deep veins of unspecified lower extremity"},
        {0: ["DVT"], 2: ["DVT"]},
    )  # fmt: skip
    veins.weights = np.eye(len(DETAIL_FEATURES), dtype=np.float32)[DETAIL_FEATURES.index("side_agree")] * 2.6
    said = "DVT left lower extremity"
    dvt = veins.bundle.label_text.index("DVT")
    assert _code(veins, said, np.ones(3, dtype=bool), dvt) == 1


def test_a_category_is_named_by_the_code_the_query_selects_for_its_details() -> None:
    """The features weigh a category's details as its code's ("R hip fx, init": S72.00 agrees on
    the side and the encounter through S72.001A); a code, and a row of a system without codes, name themselves."""
    femur = _descent({0: "Fracture of femur", 1: "Fracture of right femur, initial encounter", 2: "Fracture of left femur"})
    femur.coded = frozenset({"icd"})
    said = "right femur fracture, initial encounter"
    assert femur.named_by(0, Details.of(said), frozenset(tokens(said)), femur.bundle.billable) == 1
    assert femur.named_by(2, Details.of(said), frozenset(tokens(said)), femur.bundle.billable) == 2
    femur.coded = frozenset()
    assert femur.named_by(0, Details.of(said), frozenset(tokens(said)), femur.bundle.billable) == 0


def _ascent(system: str = "hpo", margin: float = 0.1) -> Descent:
    """A descent over three HPO-like concepts: Microcephaly (0), its child Mild microcephaly (1), Macrocephaly (2)."""
    return _toy(("Microcephaly", "Mild microcephaly", "Macrocephaly"), ((), (0,), ()), system, margin)


def _toy(displays: tuple[str, ...], parents: tuple[tuple[int, ...], ...], system: str, margin: float) -> Descent:
    """A descent over toy concepts with nothing below them; billable where the system is coded ("icd")."""

    class Concepts:
        def __getitem__(self, row: int) -> object:
            return type("Concept", (), {"display": displays[row], "parents": parents[row], "system": system})

    class Bundle:
        concepts = Concepts()
        billable = np.full(len(displays), system == "icd")
        systems: dict[str, object] = {}

    descent = Descent(Bundle(), (0.0,) * len(DETAIL_FEATURES), lambda row: Details.of(displays[row]), margin)  # type: ignore[arg-type]
    descent.coded = frozenset({"icd"})
    descent._below = lambda row: np.array([], dtype=np.int64)  # type: ignore[method-assign]  # no codes below
    return descent


def _ranked(*rows: tuple[int, float]) -> list[Ranked]:
    return [Ranked(row, row, confidence, confidence, ()) for row, confidence in rows]


def _order(descent: Descent, query: str, rows: list[Ranked]) -> list[tuple[int, float]]:
    every = np.ones(3, dtype=bool)
    return [(r.row, r.confidence) for r in descent.apply(rows, Details.of(query), query, every, False, 10, ascend=True)]


def test_a_term_more_specific_than_the_query_gives_way_to_its_parent_trading_scores() -> None:
    rows = _ranked((1, 0.8), (2, 0.78), (0, 0.75))
    assert _order(_ascent(), "her head is small", rows) == [(0, 0.8), (2, 0.78), (1, 0.75)]


def test_no_ascent_when_the_query_says_the_added_word_the_parent_is_far_or_the_system_is_coded() -> None:
    rows = _ranked((1, 0.8), (2, 0.78), (0, 0.75))
    assert _order(_ascent(), "mild small head", rows) == [(1, 0.8), (2, 0.78), (0, 0.75)]  # "mild" said
    assert _order(_ascent(margin=0.02), "her head is small", rows) == [(1, 0.8), (2, 0.78), (0, 0.75)]
    assert _order(_ascent(system="icd"), "her head is small", rows) == [(1, 0.8), (2, 0.78), (0, 0.75)]
    assert _order(_ascent(margin=0.0), "her head is small", rows) == [(1, 0.8), (2, 0.78), (0, 0.75)]  # off


def _sprains(margin: float = 0.1) -> Descent:
    return _toy(
        (
            "Sprain of other ligament of right ankle, initial encounter",
            "Sprain of unspecified ligament of right ankle, initial encounter",
            "Sprain of tibiofibular ligament of right ankle, initial encounter",
        ),
        ((), (), ()),
        "icd",
        margin,
    )


def test_an_other_code_gives_way_to_its_unspecified_twin_when_the_query_specifies_nothing() -> None:
    rows = _ranked((0, 0.97), (2, 0.96), (1, 0.95))
    assert _order(_sprains(), "sprained right ankle, initial encounter", rows) == [(1, 0.97), (2, 0.96), (0, 0.95)]


def test_the_other_code_stays_first_when_the_query_says_what_other_is_for_or_the_twin_is_far() -> None:
    rows = _ranked((0, 0.97), (2, 0.96), (1, 0.95))
    kept = [(0, 0.97), (2, 0.96), (1, 0.95)]
    assert _order(_sprains(), "sprain of calcaneofibular ligament of right ankle", rows) == kept  # a ligament it names
    assert _order(_sprains(), "sprain of other ligament of right ankle", rows) == kept  # "other" said
    assert _order(_sprains(margin=0.01), "sprained right ankle, initial encounter", rows) == kept
    assert _order(_sprains(margin=0.0), "sprained right ankle, initial encounter", rows) == kept  # off


def test_a_word_said_outweighs_two_words_a_code_adds_unsaid() -> None:
    embolism = _descent({
        0: "Pulmonary embolism without acute cor pulmonale",
        1: "Saddle embolus of pulmonary artery without acute cor pulmonale",
        2: "Other pulmonary embolism without acute cor pulmonale",
    })  # fmt: skip
    said = "embolism, pulmonary, saddle, no cor pulmonale"
    assert _code(embolism, said, np.ones(3, dtype=bool)) == 1
    said = "pulmonary embolism, no cor pulmonale"  # nothing selects: the "other" code adds least
    assert _code(embolism, said, np.ones(3, dtype=bool)) == 2
