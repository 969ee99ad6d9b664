"""Measurements a note states: a lab value or a vital sign outside its reference range read as the
finding it is ("Na 128" → "hyponatremia", "plts 45" → "thrombocytopenia", "HR 140" →
"tachycardia"), a growth measurement beyond the charts' usual centiles as its finding ("OFC <
3rd centile" → "microcephaly"), a weight lost or put on as the change ("dropped two stone" →
"weight loss"), and a value that codes nothing (a score, a drug level, a lab within its range)
as incidental detail ("pAF, CHA2DS2-VASc 3": no stage 3 of anything).

A value is read in the unit written after it, else in the one unit whose plausible values hold it
("Hb 9" g/dL, "Hb 90" g/L); where two units could hold it ("glucose 35") it is read as no finding.
The limits are adults' usual reference limits (a laboratory's own may differ a little); a value
exactly at a limit is within the range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    written: str  # how the unit is written after the value (a pattern)
    low: float | None  # the reference range in this unit
    high: float | None
    plausible: tuple[float, float]  # the values this unit can hold


@dataclass(frozen=True)
class Analyte:
    names: str  # how notes name it (a pattern, matched case-insensitively unless it sets its own flags)
    below: str | None  # the finding a value below the range is
    above: str | None
    units: tuple[Unit, ...]
    unit_needed: str = ""  # names read only with a unit written (a pattern)


_MMOL = r"mmol/l|mmol|meq/l|meq"
ANALYTES = (
    Analyte(r"na\+?|sodium", "hyponatremia", "hypernatremia", (Unit(_MMOL, 135, 145, (95, 190)),)),
    Analyte(r"k\+?|potassium", "hypokalemia", "hyperkalemia", (Unit(_MMOL, 3.5, 5.0, (1.0, 9.0)),)),
    Analyte(
        r"ca(?:\+\+|2\+)?|calcium|corrected calcium|adjusted calcium",
        "hypocalcemia",
        "hypercalcemia",
        (Unit(_MMOL, 2.1, 2.6, (0.8, 4.5)), Unit(r"mg/dl", 8.5, 10.5, (4.0, 20.0))),
        r"ca",  # "breast ca 3": a cancer
    ),
    Analyte(
        r"(?-i:Mg)|magnesium",
        "hypomagnesemia",
        "hypermagnesemia",
        (Unit(_MMOL, 0.7, 1.0, (0.1, 3.0)), Unit(r"mg/dl", 1.7, 2.4, (0.4, 8.0))),
    ),
    Analyte(
        r"glucose|glu|bg|bgl|bsl|cbg|fbg|fbs|rbg|rbs|fsbg|blood sugars?|blood glucose|sugars?",
        "hypoglycemia",
        "hyperglycemia",
        (Unit(_MMOL, 3.9, 11.1, (0.5, 45.0)), Unit(r"mg/dl", 70, 200, (10, 2000))),
    ),
    Analyte(
        r"hba1c|a1c|hemoglobin a1c|glycated hemoglobin",
        None,
        "elevated hemoglobin A1c",  # a diabetes "with hyperglycemia" is the provider's word
        (Unit(r"%", None, 6.4, (3.0, 20.0)), Unit(r"mmol/mol", None, 47, (20, 200))),
    ),
    Analyte(
        r"hb|hgb|haemoglobin|hemoglobin", "anemia", None, (Unit(r"g/dl", 12, None, (2, 25)), Unit(r"g/l", 120, None, (25, 250)))
    ),
    Analyte(
        r"plts?|platelets?|platelet count",
        "thrombocytopenia",
        "thrombocytosis",
        (Unit(r"x?\s*10\^?9/l|k/ul|k", 150, 450, (1, 3000)),),
    ),
    Analyte(
        r"wbc|wcc|white (?:blood )?(?:cell )?count|white cells|leukocytes|leucocytes",
        "leukopenia",
        "leukocytosis",
        (Unit(r"x?\s*10\^?9/l|k/ul|k", 4.0, 11.0, (0.05, 400)), Unit(r"/ul|/mm3|cells/ul", 4000, 11000, (500, 400000))),
    ),
    Analyte(
        r"anc|absolute neutrophil count",  # not "neuts 78": a differential's share
        "neutropenia",
        "neutrophilia",
        (Unit(r"x?\s*10\^?9/l|k/ul|k", 1.5, 7.5, (0.0, 100)), Unit(r"/ul|/mm3|cells/ul", 1500, 7500, (101, 100000))),
    ),
    Analyte(
        r"albumin|alb", "hypoalbuminemia", None, (Unit(r"g/l", 35, None, (8, 70)), Unit(r"g/dl", 3.5, None, (0.5, 7.0)))
    ),
    Analyte(
        r"t|temp|temperature|tmax|t max",
        "hypothermia",
        "fever",
        (Unit(r"°?\s*c|degrees? c|celsius", 35.0, 37.9, (25, 45)), Unit(r"°?\s*f|degrees? f|fahrenheit", 95, 100.3, (77, 113))),
    ),
    Analyte(r"hr|heart rate|pulse", "bradycardia", "tachycardia", (Unit(r"bpm|/min|beats per minute", 60, 100, (15, 300)),)),
    Analyte(r"rr|resp rate|respiratory rate", "bradypnea", "tachypnea", (Unit(r"/min|breaths per minute", 12, 20, (3, 80)),)),
    Analyte(
        r"spo2|sao2|sats?|o2 sats?|oxygen saturation|pulse ox", "hypoxemia", None, (Unit(r"%|percent", 92, None, (40, 100)),)
    ),
    Analyte(r"psa", None, "elevated prostate specific antigen", (Unit(r"ng/ml", None, 4.0, (0.01, 5000)),)),
    Analyte(r"crp|c-reactive protein", None, "elevated C-reactive protein", (Unit(r"mg/l", None, 10, (0.1, 500)),)),
    Analyte(r"esr|sed rate", None, "elevated erythrocyte sedimentation rate", (Unit(r"mm/h(?:r)?", None, 30, (0, 150)),)),
    Analyte(r"alt|sgpt", None, "elevated alanine aminotransferase", (Unit(r"u/l|iu/l", None, 40, (1, 20000)),)),
    Analyte(r"ast|sgot", None, "elevated aspartate aminotransferase", (Unit(r"u/l|iu/l", None, 40, (1, 20000)),)),
    Analyte(
        r"ck|cpk|creatine kinase|creatine phosphokinase",
        None,
        "elevated creatine kinase",
        (Unit(r"u/l|iu/l", None, 200, (5, 500000)),),
    ),
    Analyte(  # heart failure with a reduced ejection fraction is at or below 40%; 41-49% mildly reduced
        r"ef|lvef|ejection fraction|lv ejection fraction",
        "reduced ejection fraction",
        None,
        (Unit(r"%|percent", 50, None, (5, 90)),),
    ),
    Analyte(
        r"tg|triglycerides",
        None,
        "hypertriglyceridemia",
        (Unit(_MMOL, None, 1.7, (0.2, 30)), Unit(r"mg/dl", None, 150, (40, 5000))),
    ),
    Analyte(
        r"bili|t ?bili|total bilirubin|bilirubin",
        None,
        "hyperbilirubinemia",
        (Unit(r"mg/dl", None, 1.2, (0.1, 40)), Unit(r"umol/l|µmol/l|micromol/l", None, 21, (2, 700))),
    ),
)
# Values that code nothing by themselves: scores and levels a note gives beside what it codes.
# Some code a finding by themselves (a GCS, an NIHSS, an INR, a TSH): a query of them alone is kept
# as typed, and beside other words the query is searched as typed too.
INCIDENTAL = (
    r"cha2ds2[- ]?vasc|chads2|has[- ]bled|gcs|nihss|mrs|wells|curb[- ]?65|phq[- ]?9|phq[- ]?2|gad[- ]?7|mmse|moca|ecog|apgar|"
    r"bishop|ag|anion gap|egfr|gfr|creat|creatinine|bun|ldl|hdl|tc|cholesterol|tsh|inr|ferritin|lactate|trop|troponin|"
    r"bnp|nt-?probnp|d-?dimer|lipase|alp|ggt"
)
# A value (not a range, "CA 19-9", nor a dipstick's "3+"); no dose, length or time after it ("albumin
# 25 g IV", "T 30 min"); not of another fluid than blood ("urine WBC 25"), an ionized calcium or a vitamin.
_VALUE = r"(?:\s*(?:of|was|is|=|:)\s*|\s*)(\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?)(?!\s*[-+]\s*\d|\s*\+)"
_NOT_BLOOD = r"(?<!urine )(?<!ua )(?<!csf )(?<!fluid )(?<!ionized )(?<!ionised )(?<!vitamin )"
# Every unit an analyte is written in, the longest first ("mmol/mol" before "mmol").
_WRITTEN_UNITS = {written for analyte in ANALYTES for unit in analyte.units for written in unit.written.split("|")}
_UNITS = "|".join(sorted(_WRITTEN_UNITS, key=len, reverse=True))
MEASUREMENT = re.compile(
    rf"(?<![\w/]){_NOT_BLOOD}(?:({'|'.join(f'(?:{a.names})' for a in ANALYTES)})|({INCIDENTAL})){_VALUE}"
    rf"(?:\s*({_UNITS}))?(?!\w)(?!\s*(?:mg|mcg|g|ml|units?|mins?|minutes|hrs?|hours|days?|cm|mm)\b)",
    re.IGNORECASE,
)
BLOOD_PRESSURE = re.compile(
    r"(?<![\w/])(?:bp|blood pressure)\s*(?:of|was|is|=|:)?\s*(\d{2,3})\s*/\s*(\d{2,3})(?:\s*mm\s*hg)?(?!\w)", re.IGNORECASE
)
_NAMES = [(re.compile(rf"^(?:{analyte.names})$", re.IGNORECASE), analyte) for analyte in ANALYTES]
# A growth measurement by its centile or standard deviation score, at the growth charts' usual
# cut-offs (below the 3rd centile or 2 SD, above the 97th or 2 SD): "OFC < 3rd centile" is
# microcephaly, "ht -3 SD" short stature, "head circumference > 97th percentile" macrocephaly.
_GROWTH = (
    (r"ofc|hc|fohc|head circ(?:umference)?|head size", "microcephaly", "macrocephaly"),
    (r"ht|height|length|stature", "short stature", "tall stature"),
    (r"wt|weight", "decreased body weight", "increased body weight"),
)
_CENTILE = r"(?:centiles?|percentiles?|%ile|pctl|th %|%)"
GROWTH = re.compile(
    rf"(?<![\w/])({'|'.join(names for names, _, _ in _GROWTH)})\s*(?:is|was|=|:|at|on|of)?\s*(?:the\s+)?"
    rf"(?:(<|>|below|above|under|over|less than|greater than|more than)\s*(?:the\s+)?)?"
    rf"(?:(\d+(?:\.\d+)?)(?:st|nd|rd|th)?\s*{_CENTILE}|([+-−]?\s*\d(?:\.\d+)?)\s*(?:sd|sds|z)\b)",
    re.IGNORECASE,
)
_GROWTH_NAMES = [(re.compile(rf"^(?:{names})$", re.IGNORECASE), low, high) for names, low, high in _GROWTH]

# A weight lost or put on, told in a unit of weight: "I've dropped two stone without trying" is a
# weight loss (no stone of the body), "put on 10 lbs" a weight gain.
_AMOUNT = (
    r"(?:(?:about|around|nearly|almost|over|more than)\s+)?(?:a|one|two|three|four|five|six|half a|a couple of|\d+(?:\.\d+)?)"
)
WEIGHT_CHANGE = re.compile(
    rf"\b(?:(lost|losing|dropped|dropping|shed|down)|gained|gaining|put on|putting on|piled on|up)\s+{_AMOUNT}\s*"
    r"(?:stones?|st|pounds?|lbs?|kilos?|kgs?|kilograms?)\b(?:\s+in weight)?",
    re.IGNORECASE,
)


def weight_change(match: re.Match[str]) -> str:
    """A change of :data:`WEIGHT_CHANGE` as read."""
    return "weight loss" if match.group(1) else "weight gain"


def finding(name: str, value: float, written: str | None) -> str | None:
    """The finding ``value`` of the analyte written ``name`` is (in the unit ``written``, else the
    one that can hold it): "" within the range (or an analyte whose value codes no finding), None
    for no measurement (a unit that cannot be told, a value no unit of it can hold: "T 12" is no
    temperature)."""
    for pattern, analyte in _NAMES:
        if not pattern.match(name.strip()):
            continue
        if written is None and analyte.unit_needed and re.fullmatch(analyte.unit_needed, name.strip(), re.IGNORECASE):
            return None
        if written is not None:
            units = [u for u in analyte.units if re.fullmatch(u.written, written.strip(), re.IGNORECASE)]
        else:
            units = [u for u in analyte.units if u.plausible[0] <= value <= u.plausible[1]]
        if len(units) != 1 or not units[0].plausible[0] <= value <= units[0].plausible[1]:
            continue  # another analyte written alike may hold it
        unit = units[0]
        if unit.low is not None and value < unit.low:
            return analyte.below or ""
        if unit.high is not None and value > unit.high:
            return analyte.above or ""
        return ""
    return None


def measurement(match: re.Match[str]) -> str:
    """A measurement of :data:`MEASUREMENT` as read: its finding, or nothing (in its range, a score);
    as written when it is none (:func:`finding` is None)."""
    analyte, _, value, unit = match.groups()
    found = finding(analyte, float(value.replace(",", "")), unit) if analyte else ""
    return match.group(0) if found is None else f" {found} " if found else " "


def pressure(match: re.Match[str]) -> str:
    """A blood pressure of :data:`BLOOD_PRESSURE` as read (JNC 7's stage 1 limits): a high reading is
    no hypertension until diagnosed (R03.0)."""
    systolic, diastolic = int(match.group(1)), int(match.group(2))
    found = "elevated blood pressure" if systolic >= 140 or diastolic >= 90 else "hypotension" if systolic < 90 else ""
    return f" {found} " if found else " "


def growth(match: re.Match[str]) -> str:
    """A growth measurement of :data:`GROWTH` as read: its finding, or nothing (within the charts'
    usual range)."""
    name, comparator, centile, score = match.groups()
    low, high = next((low, high) for pattern, low, high in _GROWTH_NAMES if pattern.match(name.strip()))
    below = (comparator or "").lower() in ("<", "below", "under", "less than")
    above = (comparator or "").lower() in (">", "above", "over", "greater than", "more than")
    if centile is not None:
        value = float(centile)
        found = low if value < 3 or (below and value <= 3) else high if value > 97 or (above and value >= 97) else ""
    else:
        value = float(re.sub(r"\s+", "", score).replace("−", "-"))
        found = low if value <= -2 else high if value >= 2 else ""
    return f" {found} " if found else " "


def strip(text: str) -> str:
    """``text`` without its measurements: their numbers are no type, stage or grade."""
    out = WEIGHT_CHANGE.sub(" ", GROWTH.sub(" ", BLOOD_PRESSURE.sub(" ", text)))
    return MEASUREMENT.sub(lambda m: m.group(0) if m.group(0) == measurement(m) else " ", out)
