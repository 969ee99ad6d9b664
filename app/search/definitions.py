"""HPO's terms that a number defines, read from the number a query states (only where HPO is searched).

- **onset**: the age a disease began at, in years, months, weeks or days ("first symptoms around age 10" → Juvenile onset, 5 to 15
  years; "began after the age of 60" → Late onset);
- **severity**: a degree said of how affected a patient is, alone ("only mildly affected" → Mild;
  "intermediate severity, between mild and severe" → Moderate);
- **frequency**: the share of patients a feature is seen in, as HPO's frequency terms define it
  ("seen in roughly a third of reported patients" → Frequent, 30% to 79%; "in every affected
  individual" → Obligate, 100%; "under 5% of cases" → Very rare, 1% to 4%).
"""

from __future__ import annotations

import re

# What says the onset ("symptoms began", "onset"), taken into the onset term it is read as.
_ONSET_VERB = r"(?:began|begin|begins|started|starts|start|appeared|presented|presents|developed|onset)"
_ONSET_SAID = rf"(?:(?:first\s+)?(?:symptoms?|signs?)\s+(?:{_ONSET_VERB}\s+)?|{_ONSET_VERB}\s+)?"
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8, "ten": 10, "twelve": 12}
_COUNT = r"\d{1,3}|" + "|".join(_NUMBER_WORDS)
ONSET_AGE = re.compile(
    _ONSET_SAID + r"\b(?P<comparator>after|over|beyond|from|at|around|about|by|before|under|in|within|between)\s+(?:the\s+)?"
    r"(?:ages?\s+(?:of\s+)?(?P<years>" + _COUNT + r")(?:\s+and\s+(?P<to>\d{1,3}))?(?:\s*(?:years?|yrs?|y))?\b"
    r"|(?P<count>" + _COUNT + r")\s*(?P<unit>years?|yrs?|months?|mos?|weeks?|wks?|days?)"
    r"(?:\s+(?:of\s+age|old|of\s+life|after\s+birth))?\b"
    r"|first\s+(?:(?P<within>" + _COUNT + r")\s*)?(?P<period>months?|weeks?|days?|year)\s+(?:of\s+life|after\s+birth))",
    re.IGNORECASE,
)
ONSET_CUE = re.compile(
    r"\b(?:onset|symptoms?|began|begin|begins|started|starts?|first|presents?|presented|appear\w*|develop\w*)\b", re.IGNORECASE
)
_ONSET_BY_AGE = ((5, "childhood"), (16, "juvenile"), (40, "young adult"), (61, "middle age"))  # below each age, in years
_DAYS = {"day": 1, "week": 7, "wk": 7, "month": 30.4, "mo": 30.4, "y": 365.25}


def onset(match: re.Match[str]) -> str:
    """The onset term of :data:`ONSET_AGE`'s age (the middle of a range): in its first 28 days
    neonatal, to a year infantile, then childhood to late by the years."""
    later = match.group("comparator").lower() in ("after", "over", "beyond")
    if match.group("years") is not None:
        years = (_number(match.group("years")) + int(match.group("to") or match.group("years"))) / 2 + (1 if later else 0)
        if years < 1:
            return match.group(0)
        days = years * 365.25
    else:
        unit = match.group("unit") or match.group("period")
        days = _number(match.group("count") or match.group("within") or "1") * next(
            length for name, length in _DAYS.items() if unit.lower().startswith(name)
        )
        days += -1 if match.group("period") else 1 if later else 0  # "in the first four weeks of life": within them
    if days < 366:
        return "neonatal onset" if days < 28 else "infantile onset"
    return next((f"{name} onset" for below, name in _ONSET_BY_AGE if days / 365.25 < below), "late onset")


def _number(written: str) -> int:
    return _NUMBER_WORDS.get(written.lower()) or int(written)


_PERCENT = r"\s*(?:%|percent\b|per\s+cent\b)"
_FRACTIONS = {
    "half": 50,
    "a third": 33,
    "one third": 33,
    "two thirds": 67,
    "a quarter": 25,
    "one quarter": 25,
    "three quarters": 75,
    "a fifth": 20,
    "one fifth": 20,
    "a tenth": 10,
    "one tenth": 10,
}
_POPULATION = (
    r"(?:\s+(?:(?:of|in)\s+)?(?:the\s+|all\s+)?(?:[^\W\d]+\s+){0,2}?"
    r"(?:patients|cases|individuals|people|persons|carriers|probands|families|children|those\s+affected))"
)
_EVERY = (
    r"(?:every\s+(?:single\s+)?(?:affected\s+)?(?:individual|patient|case|person|child)"
    r"|all\s+(?:affected\s+)?(?:individuals|patients|cases))"
)
FREQUENCY = re.compile(
    r"\b(?:(?:seen|present|found|observed|occurs?|occurring|reported)\s+in\s+)?(?:(?P<qualifier>about|around|roughly|approximately|nearly|almost|over|under|below|above|less\s+than|more\s+than|"
    r"fewer\s+than|up\s+to)\s+)?"
    r"(?:(?P<low>\d{1,3})(?:" + _PERCENT + r")?\s*(?:-|–|to)\s*(?P<high>\d{1,3})" + _PERCENT + _POPULATION + "?"
    r"|(?P<percent>\d{1,3})" + _PERCENT + _POPULATION + "?"
    r"|(?P<fraction>" + "|".join(_FRACTIONS) + r")" + _POPULATION + r"|(?:1|one)\s+in\s+(?P<n>\d{1,4})" + _POPULATION + "?"
    r"|(?P<every>" + _EVERY + r"))",
    re.IGNORECASE,
)
# Words that say a share of patients is meant (not a percentile, a saturation or an ejection fraction).
FREQUENCY_CUE = re.compile(
    r"\b(?:seen|present|occurs?|occurring|found|reported|affect\w*|features?|frequen\w*|observed|cases|patients|individuals|carriers|"
    r"probands|families)\b",
    re.IGNORECASE,
)
_FREQUENCY_BY_SHARE = ((1, "very rare"), (5, "occasional"), (30, "frequent"), (80, "very frequent"), (100, "obligate"))


def frequency(match: re.Match[str]) -> str:
    """HPO's frequency term for :data:`FREQUENCY`'s share of patients."""
    if match.group("every"):
        return "obligate"
    if match.group("fraction"):
        share = float(_FRACTIONS[re.sub(r"\s+", " ", match.group("fraction").lower())])
    elif match.group("n"):
        share = 100 / max(int(match.group("n")), 1)
    elif match.group("high"):
        share = (int(match.group("low")) + int(match.group("high"))) / 2
    else:
        share = float(match.group("percent"))
    qualifier = re.sub(r"\s+", " ", (match.group("qualifier") or "").lower())
    share += -0.5 if qualifier in ("under", "below", "less than", "fewer than", "up to") else 0.5 if qualifier in (
        "over", "above", "more than") else 0
    if share > 100:
        return match.group(0)
    if share <= 0:
        return "excluded"
    term = "very rare"
    for lowest, name in _FREQUENCY_BY_SHARE:
        if share >= lowest:
            term = name
    return term


# A degree said of how affected a patient is, as the whole query: HPO's severity terms.
SEVERITY = re.compile(
    r"^\s*(?:(?:only|very|quite|rather)\s+)?(?:(?P<adverb>mild|moderate|severe|profound)ly\s+affected|"
    r"intermediate\s+severity(?:,?\s+between\s+mild\s+and\s+severe)?|between\s+mild\s+and\s+severe)"
    r"\s*$",
    re.IGNORECASE,
)


def severity(match: re.Match[str]) -> str:
    """HPO's severity term for :data:`SEVERITY`'s degree."""
    return match.group("adverb").lower() if match.group("adverb") else "moderate"
