"""Explicit value sets: a ValueSet resource's ``compose`` resolved to catalog rows.

An ``include`` (or ``exclude``) names a loaded code system (and, optionally, a version: the one
used is chosen with the request's version parameters, :mod:`app.fhir.versions`; a version that is
not loaded leaves the include empty and is reported by :attr:`app.fhir.valuesets.ValueSetRef.missing`)
and then either lists ``concept`` codes (one the system lacks is in no value set, so left out)
or ANDs ``filter`` s, else takes every code; its
``valueSet`` entries (imports) intersect it with other value sets. Includes are united, excludes
taken away; ``inactive: false`` leaves inactive codes out. Filters:

- on ``concept`` (or ``code``): ``is-a`` (the code and everything below it), ``descendent-of``
  (below it only), ``child-of`` (its children), ``is-not-a``, ``=`` (that code), ``in`` / ``not-in`` (comma-separated codes),
  ``regex`` (the whole code matches);
- ``=`` on the catalog's properties: ``kind`` (ICD-10-CM ``chapter``, ``block``, ``category``,
  ``code``; also ``regex``), ``billable`` and ``inactive`` (``true`` / ``false``); ``=``, ``in`` and ``not-in`` on
  FHIR's ``notSelectable`` (true for ICD-10-CM chapters and blocks).

A value set may draw on several loaded code systems. Anything it cannot honour is refused naming
the element (``compose.include[0].filter[1].op``). Its cost is checked before any work starts
(:func:`check_cost`: parts, imports, filters and listed concepts against the ``fhir`` settings),
regular expressions run on RE2 (linear time: no pattern can pin a core), and the work stops at
its next part once the request has timed out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import re2

from app.errors import InvalidValueSet, TooCostly
from app.fhir.context import FhirContext
from app.fhir.versions import SystemVersions
from app.ops.limits import check_cancelled
from app.settings import FhirSettings
from indexer.bundle import SystemRange

Resolve = Callable[[str, str], tuple[tuple[SystemRange, ...], frozenset[int]]]
"""(canonical URL of an imported value set, where it is named) -> its systems and rows."""

CONCEPT_PROPERTIES = ("concept", "code")
FLAGS = {"true": True, "false": False}


@dataclass(frozen=True)
class Composition:
    """What a compose resolves to: its code systems (in the order it names them), its catalog
    rows, and the version of each system its includes state (uri -> version)."""

    systems: tuple[SystemRange, ...]
    rows: frozenset[int]
    versions: dict[str, str]


def compose_rows(
    context: FhirContext, compose: Any, resolve: Resolve, at: str = "compose", versions: SystemVersions = SystemVersions()
) -> Composition:
    """The systems, the catalog rows and the stated versions of a ``compose``."""
    if not isinstance(compose, dict):
        raise InvalidValueSet(f"{at}: expected an object", at)
    includes = compose.get("include")
    if not isinstance(includes, list) or not includes:
        raise InvalidValueSet(f"{at}.include: at least one include is required", f"{at}.include")
    check_cost(compose, context.settings.fhir, at)
    systems: dict[str, SystemRange] = {}
    stated: dict[str, str] = {}
    rows: set[int] = set()
    for number, include in enumerate(includes):
        found, part, version = _part(context, include, resolve, f"{at}.include[{number}]", versions)
        systems |= {system.key: system for system in found}
        if version is not None:
            stated.setdefault(found[0].uri, version)
        rows |= part
    excludes = compose.get("exclude") or []
    if not isinstance(excludes, list):
        raise InvalidValueSet(f"{at}.exclude: expected a list", f"{at}.exclude")
    for number, exclude in enumerate(excludes):
        rows -= _part(context, exclude, resolve, f"{at}.exclude[{number}]", versions)[1]
    inactive = compose.get("inactive")
    if inactive is not None and not isinstance(inactive, bool):
        raise InvalidValueSet(f"{at}.inactive: expected true or false", f"{at}.inactive")
    if inactive is False:
        rows = set(context.active(rows))
    return Composition(tuple(systems.values()), frozenset(rows), stated)


def _part(
    context: FhirContext, part: Any, resolve: Resolve, at: str, versions: SystemVersions
) -> tuple[tuple[SystemRange, ...], frozenset[int], str | None]:
    """The systems and rows one include or exclude names (no rows where the version it uses is
    not loaded), and the version it states."""
    if not isinstance(part, dict):
        raise InvalidValueSet(f"{at}: expected an object", at)
    check_cancelled()
    imports = part.get("valueSet") or []
    if not isinstance(imports, list) or not all(isinstance(url, str) for url in imports):
        raise InvalidValueSet(f"{at}.valueSet: expected a list of canonical URLs", f"{at}.valueSet")
    imported = [resolve(url, f"{at}.valueSet[{n}]") for n, url in enumerate(imports)]
    uri = part.get("system")
    if uri is None:
        if not imported:
            raise InvalidValueSet(f"{at}: names no system and no valueSet", at)
        systems = tuple(dict.fromkeys(system for found, _ in imported for system in found))
        return systems, frozenset.intersection(*(r for _, r in imported)), None
    if not isinstance(uri, str):
        raise InvalidValueSet(f"{at}.system: expected a URI", f"{at}.system")
    system = context.system(uri)
    stated = part.get("version")
    if stated is not None and not isinstance(stated, str):
        raise InvalidValueSet(f"{at}.version: expected a string", f"{at}.version")
    if versions.used(uri, stated) not in (None, system.version):
        return (system,), frozenset(), stated
    if part.get("concept") and part.get("filter"):
        raise InvalidValueSet(f"{at}: give concept or filter, not both", at)
    if part.get("concept"):
        rows = _listed(context, system, part["concept"], f"{at}.concept")
    else:
        rows = _filtered(context, system, part.get("filter") or [], f"{at}.filter")
    for _, more in imported:
        rows &= more
    return (system,), rows, stated


def _listed(context: FhirContext, system: SystemRange, concepts: Any, at: str) -> frozenset[int]:
    if not isinstance(concepts, list):
        raise InvalidValueSet(f"{at}: expected a list", at)
    rows = set()
    for number, concept in enumerate(concepts):
        code = concept.get("code") if isinstance(concept, dict) else None
        if not isinstance(code, str):
            raise InvalidValueSet(f"{at}[{number}].code: expected a code", f"{at}[{number}].code")
        row = context.bundle.concept_index(system.key, code)
        if row is not None:  # a listed code the system lacks is in no value set ($validate-code says so)
            rows.add(row)
    return frozenset(rows)


def _row(context: FhirContext, system: SystemRange, code: str, at: str) -> int:
    """The row of a code a filter names (400 vs-invalid naming the element when the system lacks it:
    the value set cannot be resolved as written)."""
    row = context.bundle.concept_index(system.key, code)
    if row is None:
        raise InvalidValueSet(f"{at}: {code!r} is not in {system.uri} version {system.version}", at)
    return row


def _filtered(context: FhirContext, system: SystemRange, filters: Any, at: str) -> frozenset[int]:
    if not isinstance(filters, list):
        raise InvalidValueSet(f"{at}: expected a list", at)
    every = context.bundle.rows(system.key, include_inactive=True)
    rows = frozenset(every)
    for number, item in enumerate(filters):
        where = f"{at}[{number}]"
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("property", "op", "value")):
            raise InvalidValueSet(f"{where}: expected property, op and value strings", where)
        check_cancelled()
        rows &= _filter(context, system, every, item["property"], item["op"], item["value"], where)
    return rows


def _filter(
    context: FhirContext, system: SystemRange, every: range, prop: str, op: str, value: str, at: str
) -> frozenset[int]:
    bundle = context.bundle
    if prop in CONCEPT_PROPERTIES:
        if op in ("is-a", "descendent-of", "is-not-a", "child-of"):
            row = _row(context, system, value, f"{at}.value")
            if op == "child-of":
                return frozenset(bundle.children(row))
            below = bundle.descendants(row)
            if op == "is-a":
                return below
            if op == "descendent-of":
                return below - {row}
            return frozenset(every) - below
        if op in ("=", "in", "not-in"):
            codes = [value] if op == "=" else [code.strip() for code in value.split(",") if code.strip()]
            listed = frozenset(_row(context, system, code, f"{at}.value") for code in codes)
            return frozenset(every) - listed if op == "not-in" else listed
        if op == "regex":
            pattern = _regex(value, at, context.settings.fhir.max_regex_length)
            return frozenset(row for row in every if pattern.fullmatch(bundle.concepts.codes[row]))
        supported = "is-a, descendent-of, is-not-a, child-of, =, in, not-in, regex"
        raise InvalidValueSet(f"{at}.op: {op!r} on {prop} is not supported ({supported})", f"{at}.op")
    rows = np.arange(every.start, every.stop)
    if prop == "notSelectable" and op in ("=", "in", "not-in"):  # FHIR's property: chapters and blocks
        given = (value.split(",") if op != "=" else [value])
        named = {FLAGS[v.strip()] for v in given if v.strip() in FLAGS}  # booleans are case-sensitive: "TRUE" is none
        wanted = {True, False} - named if op == "not-in" else named
        return frozenset(rows[np.isin(bundle.grouping[rows], list(wanted))].tolist())
    if prop == "kind" and op == "regex":
        pattern = _regex(value, at, context.settings.fhir.max_regex_length)
        kinds = {str(kind) for kind in set(bundle.kinds[rows].tolist()) if kind is not None and pattern.fullmatch(str(kind))}
        return frozenset(rows[np.isin(bundle.kinds[rows], list(kinds))].tolist())
    if op != "=":
        raise InvalidValueSet(f"{at}.op: only = is supported on {prop!r} (and regex on kind)", f"{at}.op")
    if prop == "kind":
        return frozenset(rows[bundle.kinds[rows] == value].tolist())
    if prop in ("billable", "inactive"):
        flag = _flag(value, prop, at)
        if prop == "billable":
            return frozenset(rows[bundle.billable[rows] == flag].tolist())
        return frozenset(rows[bundle.concepts.active[rows] != flag].tolist())
    raise InvalidValueSet(
        f"{at}.property: {prop!r} is not a filterable property (concept, code, kind, billable, inactive, notSelectable)",
        f"{at}.property",
    )


def check_cost(compose: dict[str, Any], limits: FhirSettings, at: str) -> None:
    """Refuse a compose whose parts, imports, filters or listed concepts exceed the limits, before
    any of it is worked out (a nested value set is costed when it is resolved, by the same check)."""
    parts = [part for key in ("include", "exclude") for part in (compose.get(key) or []) if isinstance(part, dict)]
    counts = {
        "parts": len(compose.get("include") or []) + len(compose.get("exclude") or []),
        "imports": sum(len(p["valueSet"]) for p in parts if isinstance(p.get("valueSet"), list)),
        "filters": sum(len(p["filter"]) for p in parts if isinstance(p.get("filter"), list)),
        "concepts": sum(len(p["concept"]) for p in parts if isinstance(p.get("concept"), list)),
    }
    for name, count in counts.items():
        limit = getattr(limits, f"max_compose_{name}")
        if count > limit:
            raise TooCostly(f"{at}: {count} {name}, more than the {limit} a compose may have (fhir.max_compose_{name})")


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_RE2_OPTIONS.max_mem = 8 << 20  # a pattern whose automaton needs more is refused


def _regex(value: str, at: str, max_length: int) -> re2._Regexp:
    if len(value) > max_length:
        raise TooCostly(f"{at}.value: a regex of {len(value)} characters, more than {max_length} (fhir.max_regex_length)")
    try:
        return re2.compile(value, _RE2_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InvalidValueSet(f"{at}.value: not a regular expression RE2 accepts ({reason})", f"{at}.value") from None


def _flag(value: str, prop: str, at: str) -> bool:
    flag = FLAGS.get(value)
    if flag is None:
        raise InvalidValueSet(f"{at}.value: {prop} is true or false (got {value!r})", f"{at}.value")
    return flag
