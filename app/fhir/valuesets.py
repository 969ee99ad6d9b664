"""Implicit value sets, named by URL after their code system (the SNOMED CT convention, applied
to every loaded system):

- ``{system uri}?fhir_vs``: every code of the system;
- ``{system uri}?fhir_vs=isa/{code}``: ``code`` and every code below it by is-a, e.g.
  ``http://snomed.info/sct?fhir_vs=isa/404684003``,
  ``http://human-phenotype-ontology.org?fhir_vs=isa/HP:0001626``,
  ``http://hl7.org/fhir/sid/icd-10-cm?fhir_vs=isa/I20-I25``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from app.fhir.context import FhirContext, Subtree
from app.errors import NotFound
from app.search.scope import Scope
from indexer.bundle import SystemRange

ALL_CODES = "fhir_vs"
IS_A = "fhir_vs=isa/"


@dataclass(frozen=True)
class ValueSetRef:
    url: str
    system: SystemRange
    subtree: Subtree | None  # None: every code of the system

    def scope(self, include_inactive: bool, exclude: frozenset[int] = frozenset()) -> Scope:
        """The ranking scope of the value set (chapters and blocks left out, as everywhere)."""
        subtree = None if self.subtree is None else self.subtree.rows
        return Scope((self.system.key,), subtree, exclude, include_inactive=include_inactive)

    def rows(self, context: FhirContext, active_only: bool) -> range | list[int]:
        """The value set's catalog rows in catalog order."""
        everything = context.bundle.rows(self.system.key, include_inactive=not active_only)
        if self.subtree is None:
            return everything
        return [row for row in self.subtree.ordered if row in everything]

    def __contains__(self, row: int) -> bool:
        return self.subtree is None or row in self.subtree.rows


def implicit_url(system: SystemRange) -> str:
    return f"{system.uri}?{ALL_CODES}"


def parse_value_set(context: FhirContext, url: str) -> ValueSetRef:
    base, _, query = url.partition("?")
    system = context.system_or_none(base)
    if system is None or not (query == ALL_CODES or query.startswith(IS_A)):
        known = ", ".join(implicit_url(s) for s in context.bundle.systems.values())
        raise NotFound(
            f"value set {url!r} is unknown; known: {known}, and {{system}}?{IS_A}{{code}} for a subtree"
        )
    if query == ALL_CODES:
        return ValueSetRef(url, system, None)
    code = unquote(query[len(IS_A) :])
    if context.bundle.concept_index(system.key, code) is None:
        raise NotFound(f"value set {url!r}: code {code!r} is not in {system.uri} version {system.version}")
    return ValueSetRef(url, system, context.subtree(system, code))
