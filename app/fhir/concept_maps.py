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
        canonical = "|".join(str(p) for p in (concept_map.get("url"), concept_map.get("version")) if p)
        at = f"ConceptMap {canonical or '(no url)'}"
        if not isinstance(concept_map.get("group"), list):
            raise InvalidParameter(f"tx-resource: {at} needs its groups", "tx-resource")
        for number, group in enumerate(_objects(concept_map["group"], f"{at}.group")):
            found = _group_matches(group, coding, target, reverse, f"{at}.group[{number}]")
            matches += [{**match, "source": canonical} for match in found]
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


def _objects(value: Any, at: str) -> list[dict[str, Any]]:
    """A list of JSON objects (absent: none), else a 400 naming the element."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise InvalidParameter(f"tx-resource: {at} must be a list of objects", "tx-resource")
    return value


def _text(value: Any, at: str) -> str | None:
    """A string element (absent: None), else a 400 naming it."""
    if value is not None and not isinstance(value, str):
        raise InvalidParameter(f"tx-resource: {at} must be a string", "tx-resource")
    return value


def _group_matches(group: dict[str, Any], coding: Coding, target: str | None, reverse: bool, at: str) -> list[dict[str, Any]]:
    here, there = ("target", "source") if reverse else ("source", "target")
    if group.get(here) != coding.system or (target is not None and group.get(there) != target):
        return []
    found = []
    for number, element in enumerate(_objects(group.get("element"), f"{at}.element")):
        source_code = _text(element.get("code"), f"{at}.element[{number}].code")
        for other, mapped in enumerate(_objects(element.get("target"), f"{at}.element[{number}].target")):
            where = f"{at}.element[{number}].target[{other}]"
            target_code = _text(mapped.get("code"), f"{where}.code")
            code, mapped_code = (target_code, source_code) if reverse else (source_code, target_code)
            if code == coding.code and mapped_code:
                concept = {"system": group.get(there), "code": mapped_code}
                display = _text(element.get("display") if reverse else mapped.get("display"), f"{where}.display")
                concept |= {"display": display} if display else {}
                equivalence = _text(mapped.get("equivalence"), f"{where}.equivalence") or "relatedto"
                found.append({"equivalence": equivalence, "concept": concept})
    return found
