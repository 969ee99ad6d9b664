"""``$translate`` by the ConceptMaps a request carries (``tx-resource``, or ``conceptMap``
inline), instead of the server's own mappings: each group whose source (target, with
``reverse``) is the coding's system maps its elements as they state, with the R4
``equivalence`` and the map's ``url|version`` as ``source``. ``result`` is true when some match
is not ``unmatched`` or ``disjoint``."""

from __future__ import annotations

from typing import Any

from app.errors import InvalidParameter
from app.fhir.params import Coding

NO_MATCH = frozenset({"unmatched", "disjoint"})


def translate_by_maps(maps: list[dict[str, Any]], coding: Coding, target: str | None, reverse: bool) -> dict[str, Any]:
    matches = []
    for concept_map in maps:
        groups = concept_map.get("group")
        if not isinstance(groups, list):
            raise InvalidParameter("tx-resource: a ConceptMap needs its groups", "tx-resource")
        canonical = "|".join(str(p) for p in (concept_map.get("url"), concept_map.get("version")) if p)
        for group in groups:
            matches += [{**match, "source": canonical} for match in _group_matches(group, coding, target, reverse)]
    out: list[dict[str, Any]] = [
        {"name": "result", "valueBoolean": any(m["equivalence"] not in NO_MATCH for m in matches)},
    ]
    if not matches:
        out.append({"name": "message", "valueString": f"no ConceptMap given maps {coding.system}#{coding.code}"})
    for match in matches:
        parts = [
            {"name": "equivalence", "valueCode": match["equivalence"]},
            {"name": "concept", "valueCoding": match["concept"]},
            {"name": "source", "valueUri": match["source"]},
        ]
        out.append({"name": "match", "part": parts})
    return {"resourceType": "Parameters", "parameter": out}


def _group_matches(group: Any, coding: Coding, target: str | None, reverse: bool) -> list[dict[str, Any]]:
    if not isinstance(group, dict):
        return []
    here, there = ("target", "source") if reverse else ("source", "target")
    if group.get(here) != coding.system or (target is not None and group.get(there) != target):
        return []
    found = []
    for element in group.get("element") or []:
        for mapped in element.get("target") or []:
            source_code, target_code = element.get("code"), mapped.get("code")
            code, other = (target_code, source_code) if reverse else (source_code, target_code)
            if code == coding.code and other:
                concept = {"system": group.get(there), "code": other}
                display = element.get("display") if reverse else mapped.get("display")
                concept |= {"display": display} if display else {}
                found.append({"equivalence": mapped.get("equivalence", "relatedto"), "concept": concept})
    return found
