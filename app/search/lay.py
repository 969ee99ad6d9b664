"""Lay ways of saying "cannot": "can't hear", "trouble sleeping", "unable to walk". Terminologies
name such findings by the function and its impairment ("Hearing impairment", "Inability to
walk", "Difficulty sleeping"), so the ranking core also searches those wordings (as rewrites of
the query, like a spelling correction)."""

from __future__ import annotations

import re

_CANNOT = re.compile(
    r"\b(?:can'?t|cannot|can not|could ?n'?t|unable to|not able to|trouble|difficulty|hard to|problems?)\s+(\w+)",
    re.IGNORECASE,
)
_ENDINGS = (("ie", "ying"), ("e", "ing"))  # die → dying, breathe → breathing


def gerund(verb: str) -> str:
    if verb.endswith("ing"):
        return verb
    for ending, replacement in _ENDINGS:
        if verb.endswith(ending) and not verb.endswith("ee"):  # see → seeing, pee → peeing
            return verb[: -len(ending)] + replacement
    return verb + "ing"


def rewrites(query: str) -> list[str]:
    """Wordings a terminology would use for a lay "cannot X" query; none for other queries."""
    match = _CANNOT.search(query)
    if match is None:
        return []
    verb = match.group(1).lower()
    base = verb[:-3] if verb.endswith("ing") else verb
    return [f"{gerund(verb)} impairment", f"inability to {base}", f"difficulty {gerund(verb)}"]
