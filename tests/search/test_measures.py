"""Measurements a note states: a value outside its range read as its finding, a score left out."""

from __future__ import annotations

import pytest

from app.search import grammar
from app.search.details import Details
from app.search.measures import finding

ICD = frozenset({"icd10cm"})


@pytest.mark.parametrize(
    ("query", "read"),
    [
        ("Na 128 mmol/L on admission", "hyponatremia on admission"),
        ("K+ 6.1", "hyperkalemia"),
        ("plts 45k, no bleeding", "thrombocytopenia, no bleeding"),
        ("Hb 7.9", "anemia"),  # g/dL, the unit that can hold it
        ("Hb 79 g/L", "anemia"),
        ("BG 2.1 mmol/L, symptomatic", "hypoglycemia, symptomatic"),
        ("glucose 450 mg/dL", "hyperglycemia"),
        ("WBC 18.2, fever", "leukocytosis, fever"),
        ("temp 39.4 C, rigors", "fever, rigors"),
        ("HR 140, palpitations", "tachycardia, palpitations"),
        ("SpO2 86% on room air", "hypoxemia on room air"),
        ("BP 182/104, headache", "elevated blood pressure, headache"),  # no hypertension until diagnosed
        ("T2DM, A1c 9.2%", "T2DM, elevated hemoglobin A1c"),
        ("CRP 120, fever", "elevated C-reactive protein, fever"),
        ("ALT 210 U/L", "elevated alanine aminotransferase"),
        ("CK 12,000 U/L, weakness", "elevated creatine kinase, weakness"),  # a thousands separator
        ("HFrEF, EF 30%", "HFrEF, reduced ejection fraction"),
        # a score or a value within its range codes nothing: left out
        ("pAF, CHA2DS2-VASc 3", "pAF"),
        ("HFpEF, LVEF 55%", "HFpEF"),
        ("hyperkalemia, K 4.8 after treatment", "hyperkalemia, after treatment"),
        # growth by its centile or standard deviation score, at the charts' usual cut-offs
        ("head circumference below the 2nd percentile", "microcephaly"),
        ("FOHC +2.4 SD, frontal bossing", "macrocephaly, frontal bossing"),
        ("length < 3rd centile", "short stature"),
        ("height 99th centile", "tall stature"),
        ("wt 25th centile, ht 2nd centile", "short stature"),
        ("lost 10 lbs in 2 months", "weight loss in 2 months"),
        ("dropped half a stone, night sweats", "weight loss, night sweats"),
        ("put on 3 kg since starting olanzapine", "weight gain since starting olanzapine"),
    ],
)
def test_a_measurement_is_read_as_its_finding_or_left_out(query: str, read: str) -> None:
    assert grammar.read(query, ICD).text == read


@pytest.mark.parametrize(
    "query",
    [
        "glucose 35",  # 35 mmol/L or 35 mg/dL: no unit tells
        "T 12 fracture",  # no temperature
        "CA 125 raised",  # a tumour marker, no calcium
        "amlodipine 10 mg 2 times daily",  # a dose is no magnesium
        "EF 55%",  # a value alone is what was asked
        "CA 19-9 45, pancreatic mass",  # a tumour marker's name, no calcium
        "ionized Ca 1.15, on dialysis",  # another range than a total calcium's
        "UA glucose 3+, polyuria",  # a dipstick's reading, and not of blood
        "urine WBC 25, dysuria",
        "vitamin K 10 mg given",  # a dose
        "kidney stone, lost a lot of blood",  # a stone of the body, no weight
    ],
)
def test_what_is_no_measurement_or_all_the_query_is_kept(query: str) -> None:
    assert grammar.read(query, ICD).text == query


def test_a_value_is_read_in_the_unit_written() -> None:
    assert finding("calcium", 2.0, "mmol/L") == "hypocalcemia"
    assert finding("calcium", 2.0, None) == "hypocalcemia"  # only mmol/L can hold 2.0
    assert finding("calcium", 11.2, "mg/dL") == "hypercalcemia"
    assert finding("calcium", 9.5, None) == ""  # in range
    assert finding("calcium", 125, None) is None  # no unit holds it


def test_a_measurements_numbers_are_no_stage_or_type() -> None:
    assert Details.of("pAF, CHA2DS2-VASc 3").numbers == frozenset()
    assert Details.of("CKD 3b, eGFR 38").numbers == frozenset({"3b"})
