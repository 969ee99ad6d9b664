"""The value set an operation works on.

Implicit value sets are named by URL after their code system (the SNOMED CT convention, applied
to every loaded system):

- ``{system uri}?fhir_vs``: every code of the system;
- ``{system uri}?fhir_vs=isa/{code}``: ``code`` and every code below it by is-a, e.g.
  ``http://snomed.info/sct?fhir_vs=isa/404684003``,
  ``http://human-phenotype-ontology.org?fhir_vs=isa/HP:0001626``,
  ``http://hl7.org/fhir/sid/icd-10-cm?fhir_vs=isa/I20-I25``;
- ``{system uri}?fhir_vs=billable``: the billable codes of a system that marks them (ICD-10-CM:
  ``http://hl7.org/fhir/sid/icd-10-cm?fhir_vs=billable``), the codes a claim or a form may record;
  a chapter, block or category of codes is not selectable in it, and ``$validate-code`` says so.
  This is this server's own convention (no HL7 one names such a value set); it is the value set
  ``{"include": [{"system": ..., "filter": [{"property": "billable", "op": "=", "value": "true"}]}]}``.

Explicit ones are ValueSet resources with a ``compose`` (:mod:`app.fhir.compose`): passed inline
as the ``valueSet`` parameter, or named by ``url`` (and ``valueSetVersion``) among the
``tx-resource`` parameters, then among the value sets stored on the server
(:mod:`app.fhir.stored`); both also resolve the imports of a compose.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import unquote

from fhir.resources.R4B.valueset import ValueSet as FhirValueSet
from pydantic import ValidationError

from app.errors import CircularValueSet, InvalidParameter, InvalidValueSet, NotFound, UnknownSystem, UnresolvedImport
from app.fhir.compose import compose_rows
from app.fhir.context import FhirContext, Subtree
from app.fhir.params import OperationParams
from app.fhir.versions import SystemVersions, canonicals
from app.search.scope import Scope
from indexer.bundle import SystemRange

ALL_CODES = "fhir_vs"
IS_A = "fhir_vs=isa/"
BILLABLE = "fhir_vs=billable"


STANDARDS_STATUS = "http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status"
DEPRECATED = "http://hl7.org/fhir/StructureDefinition/valueset-deprecated"
EXPANSION_PARAMETER = "http://hl7.org/fhir/StructureDefinition/valueset-expansion-parameter"
MAX_IMPORTS = 8  # value sets importing value sets, this deep at most


@dataclass(frozen=True)
class ValueSetRef:
    url: str
    systems: tuple[SystemRange, ...]  # an implicit value set's one system; an explicit one's, as named
    subtree: Subtree | None  # None: every code of the (one) system
    version: str | None = None  # an explicit value set's own version
    resource: dict[str, Any] | None = None  # an explicit value set's ValueSet resource
    stated_versions: Mapping[str, str] = field(default_factory=dict)  # system uri -> the version its compose states
    versions: SystemVersions = SystemVersions()  # the request's version parameters
    used_value_sets: tuple[str, ...] = ()  # url|version of the value sets it imports, at any depth
    imported_statuses: tuple[tuple[str, str], ...] = ()  # the imports' (withdrawn or deprecated, url|version)
    billable_only: bool = False  # the implicit value set of a system's billable codes

    @property
    def statuses(self) -> tuple[tuple[str, str], ...]:
        """(withdrawn or deprecated, url|version) of the value set or an import, where so marked
        (its standards-status extension)."""
        own = [(e["valueCode"], self.canonical) for e in (self.resource or {}).get("extension") or [] if _standards_status(e)]
        return tuple(dict.fromkeys([*own, *self.imported_statuses]))

    def stated_version(self, system: SystemRange) -> str | None:
        """The version of ``system`` the value set's compose states."""
        return self.stated_versions.get(system.uri)

    def system_version(self, system: SystemRange) -> str | None:
        """The version of ``system`` the value set uses (None: whichever is loaded)."""
        return self.versions.used(system.uri, self.stated_version(system))

    @property
    def missing(self) -> str | None:
        """``system|version`` when the value set uses a version of one of its systems that is not loaded."""
        return next(
            (f"{s.uri}|{used}" for s in self.systems if (used := self.system_version(s)) not in (None, s.version)), None
        )

    @cached_property
    def _listed(self) -> dict[tuple[str, str], dict[str, Any]]:
        """The compose's concept entries, by (system uri, code)."""
        includes = (self.resource or {}).get("compose", {}).get("include", [])
        return {
            (include["system"], concept["code"]): concept
            for include in includes if isinstance(include, dict) and isinstance(include.get("system"), str)
            for concept in include.get("concept") or [] if isinstance(concept, dict) and isinstance(concept.get("code"), str)
        }

    def concept_extensions(self, system: SystemRange, code: str) -> list[dict[str, Any]]:
        """The extensions the compose gives a code it lists (valueset-deprecated, standards-status...)."""
        return [e for e in self._listed.get((system.uri, code), {}).get("extension", []) if isinstance(e, dict)]

    def concept_designations(self, system: SystemRange, code: str) -> list[dict[str, Any]]:
        """The designations the compose gives a code it lists."""
        return [d for d in self._listed.get((system.uri, code), {}).get("designation", []) if isinstance(d, dict)]

    def deprecated(self, system: SystemRange, code: str) -> bool:
        """Whether the value set marks the code it lists as deprecated."""
        return any(
            (e.get("url") == DEPRECATED and e.get("valueCode") in ("true", True) or e.get("valueBoolean") is True)
            or (e.get("url") == STANDARDS_STATUS and e.get("valueCode") == "deprecated")
            for e in self.concept_extensions(system, code)
        )

    def expansion_parameters(self) -> dict[str, str]:
        """The parameters its compose sets for its expansions (``valueset-expansion-parameter``)."""
        found = {}
        for extension in (self.resource or {}).get("compose", {}).get("extension", []):
            if isinstance(extension, dict) and extension.get("url") == EXPANSION_PARAMETER:
                parts = {
                    p.get("url"): next((v for k, v in p.items() if k.startswith("value")), None)
                    for p in extension.get("extension") or [] if isinstance(p, dict)
                }
                if isinstance(parts.get("name"), str) and isinstance(parts.get("value"), str):
                    found[parts["name"]] = parts["value"]
        return found

    @property
    def active_only(self) -> bool:
        """Whether the value set's compose leaves inactive codes out (``inactive: false``)."""
        return (self.resource or {}).get("compose", {}).get("inactive") is False

    @property
    def canonical(self) -> str:
        return canonical_of(self.url, self.version)

    def scope(self, include_inactive: bool, exclude: frozenset[int] = frozenset()) -> Scope:
        """The ranking scope of the value set (chapters and blocks left out, as everywhere)."""
        subtree, root = (None, None) if self.subtree is None else (self.subtree.ordered, self.subtree.root)
        return Scope(tuple(s.key for s in self.systems), subtree, exclude, include_inactive=include_inactive, root=root)

    def rows(self, context: FhirContext, active_only: bool) -> range | list[int]:
        """The value set's catalog rows in catalog order (system by system)."""
        if self.subtree is None:
            return context.bundle.rows(self.systems[0].key, include_inactive=not active_only)
        return context.active(self.subtree.ordered.tolist()) if active_only else self.subtree.ordered.tolist()

    def __contains__(self, row: int) -> bool:
        return self.subtree is None or row in self.subtree.rows


def canonical_of(url: str, version: str | None) -> str:
    """url|version (the url alone where the value set has no version)."""
    return url if version is None else f"{url}|{version}"


def implicit_url(system: SystemRange) -> str:
    return f"{system.uri}?{ALL_CODES}"


@dataclass(frozen=True)
class Given:
    """What a request brings to resolve value sets with: ``tx-resource`` value sets and the
    system version parameters."""

    resources: Sequence[dict[str, Any]] = ()
    versions: SystemVersions = SystemVersions()
    value_set_versions: dict[str, str] = field(default_factory=dict)  # default-valueset-version: url -> version


def parse_value_set(context: FhirContext, url: str, versions: SystemVersions = SystemVersions()) -> ValueSetRef:
    base, _, query = url.partition("?")
    system = context.system_or_none(base)
    billable = None if system is None or query != BILLABLE else context.billable(system)
    if system is None or not is_implicit(url) or (query == BILLABLE and billable is None):
        systems = context.bundle.systems.values()
        known = ", ".join(implicit_url(s) for s in systems)
        billed = ", ".join(f"{s.uri}?{BILLABLE}" for s in systems if context.billable(s) is not None)
        kinds = [known, f"{{system}}?{IS_A}{{code}} for a subtree", *([f"{billed} for the billable codes"] if billed else [])]
        raise NotFound(f"value set {url!r} is unknown; known: {', '.join(kinds[:-1])}, and {kinds[-1]}")
    if query == ALL_CODES:
        return ValueSetRef(url, (system,), None, versions=versions)
    if billable is not None:
        return ValueSetRef(url, (system,), billable, versions=versions, billable_only=True)
    code = unquote(query[len(IS_A) :])
    if context.bundle.concept_index(system.key, code) is None:
        raise NotFound(f"value set {url!r}: code {code!r} is not in {system.uri} version {system.version}")
    return ValueSetRef(url, (system,), context.subtree(system, code), versions=versions)


def operation_value_set(context: FhirContext, params: OperationParams) -> ValueSetRef:
    """The value set of an operation: the stored ValueSet it is invoked on (``ValueSet/{id}/$expand``),
    else ``valueSet`` inline, else ``url`` (``valueSetVersion``)."""
    defaults = canonicals(params, "default-valueset-version")
    given = Given(params.resources("tx-resource", "ValueSet"), SystemVersions.from_params(params), defaults)
    if params.instance is not None:  # ValueSet/{id}/$expand: the stored ValueSet itself
        return _explicit(context, params.instance, given, f"value set {params.instance['url']}", ())
    [inline] = params.resources("valueSet", "ValueSet") or [None]
    if inline is not None:
        return _explicit(context, inline, given, "valueSet", ())
    return find_value_set(context, params.required_text("url"), params.text("valueSetVersion"), given)


def find_value_set(
    context: FhirContext, url: str, version: str | None = None, given: Given = Given(), chain: tuple[str, ...] = ()
) -> ValueSetRef:
    """An implicit value set by URL, or one of the ``tx-resource`` s with that ``url`` (and
    version), else a stored one."""
    canonical, _, pinned = url.partition("|")
    if canonical in chain:
        raise CircularValueSet(f"value set {chain[0]} imports itself: {' -> '.join([*chain, canonical])}", "valueSet")
    if len(chain) > MAX_IMPORTS:
        raise InvalidParameter(f"value set {url!r}: imports nest more than {MAX_IMPORTS} deep", "valueSet")
    version = version or pinned or given.value_set_versions.get(canonical) or None
    found = [r for r in given.resources if r.get("url") == canonical and version in (None, r.get("version"))]
    if found:  # the latest version where none is asked
        return _explicit(context, max(found, key=_version_key), given, f"value set {canonical}", chain)
    if version is None and is_implicit(canonical):
        return parse_value_set(context, canonical, given.versions)
    stored = context.value_sets.search(canonical, version)
    if stored:
        return _explicit(context, max(stored, key=_version_key), given, f"value set {canonical}", chain)
    if version is None:
        return parse_value_set(context, canonical, given.versions)  # refused, naming the value sets there are
    raise NotFound(f"value set {canonical!r} version {version!r} is unknown")


def _version_key(resource: dict[str, Any]) -> tuple[tuple[int, int | str], ...]:
    """Orders versions as people number them: 1.10.0 after 1.9.0, numbers before words."""
    parts = re.findall(r"\d+|[^\d.]+", str(resource.get("version") or ""))
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def is_implicit(url: str) -> bool:
    query = url.partition("?")[2]
    return query in (ALL_CODES, BILLABLE) or query.startswith(IS_A)


def checked_value_set(context: FhirContext, resource: dict[str, Any]) -> ValueSetRef:
    """A ValueSet resource to store, resolved against the served bundle (a bad compose is
    refused before it is stored)."""
    url = resource.get("url")
    if not isinstance(url, str) or not url:
        raise InvalidParameter("url: a stored ValueSet needs a canonical url", "url")
    if is_implicit(url):
        raise InvalidParameter(f"url: {url!r} names an implicit value set of a loaded code system", "url")
    version = resource.get("version")
    if version is not None and not isinstance(version, str):
        raise InvalidParameter("version: expected a string", "version")
    return _explicit(context, resource, Given(), "ValueSet", ())


def _explicit(context: FhirContext, resource: dict[str, Any], given: Given, at: str, chain: tuple[str, ...]) -> ValueSetRef:
    """An explicit value set resolved; ``chain``: the urls of the value sets importing it."""
    url = resource.get("url")
    if url is not None and not isinstance(url, str):
        raise InvalidParameter(f"{at}.url: expected a URI", f"{at}.url")

    malformed = _malformed(resource, at)  # a compose's own faults are named by its parser first
    if outside := [fault for fault in malformed if not fault[0].startswith(f"{at}.compose")]:
        raise InvalidValueSet(f"{outside[0][0]}: {outside[0][1]}", outside[0][0])

    used: list[str] = []
    statuses: list[tuple[str, str]] = []

    contained = {
        f"#{r.get('id')}": r
        for r in resource.get("contained") or []
        if isinstance(r, dict) and r.get("resourceType") == "ValueSet"
    }

    resolved: dict[str, tuple[tuple[SystemRange, ...], frozenset[int]]] = {}  # each URL worked out once

    def imported(canonical: str, where: str) -> tuple[tuple[SystemRange, ...], frozenset[int]]:
        if canonical in resolved:
            return resolved[canonical]
        try:
            if canonical in contained:  # a local reference to a value set the resource contains
                value_set = _explicit(context, contained[canonical], given, where, (*chain, url or at))
            else:
                value_set = find_value_set(context, canonical, None, given, (*chain, url or at))
        except NotFound as error:
            raise UnresolvedImport(f"{where}: {error.detail}") from None
        used.extend([*([] if canonical in contained else [value_set.canonical]), *value_set.used_value_sets])
        statuses.extend(value_set.statuses)
        resolved[canonical] = value_set.systems, frozenset(value_set.rows(context, active_only=False))
        return resolved[canonical]

    if "compose" not in resource:
        raise InvalidParameter(f"{at}: a value set without compose is not supported", at)
    version = resource.get("version") if isinstance(resource.get("version"), str) else None
    try:
        composed = compose_rows(context, resource["compose"], imported, f"{at}.compose", given.versions)
    except UnknownSystem as error:  # named, as it passes out, by the outermost value set drawing on it
        error.value_set = canonical_of(url or "the value set", version)
        raise
    if malformed:
        raise InvalidValueSet(f"{malformed[0][0]}: {malformed[0][1]}", malformed[0][0])
    subtree = Subtree.of(composed.rows)
    return ValueSetRef(
        url or f"urn:uuid:{uuid.uuid4()}", composed.systems, subtree, version, resource, composed.versions, given.versions,
        tuple(used), tuple(statuses),
    )


def _malformed(resource: dict[str, Any], at: str) -> list[tuple[str, str]]:
    """(element, fault) of each element of a ValueSet that is not of its FHIR R4B type or
    cardinality (an ``extension`` that is a number, not a list), as fhir.resources checks them;
    a missing element is no fault here (the compose's parser names what it needs)."""
    try:
        FhirValueSet.model_validate({**resource, "resourceType": "ValueSet"})
    except ValidationError as error:
        return [
            (at + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in e["loc"]), e["msg"])
            for e in error.errors()
            if not e["type"].endswith("missing")  # a required element left out (status) is tolerated, as clients do
        ]
    return []


def _standards_status(extension: Any) -> bool:
    """A standards-status extension marking a value set withdrawn or deprecated."""
    return (
        isinstance(extension, dict) and extension.get("url") == STANDARDS_STATUS
        and extension.get("valueCode") in ("withdrawn", "deprecated")
    )
