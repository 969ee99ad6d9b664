"""A concept's designations as the service knows them: the store's (the release's own and the
local supplements') and those the served bundle's knowledge sources added."""

from __future__ import annotations

from indexer.bundle import Bundle
from indexer.records import Concept, Designation


def all_designations(
    concept: Concept, bundle: Bundle | None, system: str, sources: frozenset[str] | None = None
) -> list[Designation]:
    """The concept's designations; with ``sources``, of the knowledge only those sources' (FHIR
    lists a supplement's designations when asked for it)."""
    wanted = [d for d in concept.designations if sources is None or d.knowledge is None or d.knowledge in sources]
    row = bundle.concept_index(system, concept.code) if bundle is not None else None
    if row is None:
        return wanted
    own = {d.text for d in concept.designations} | {concept.display}
    added = [d for d in bundle.knowledge_labels(row) if d.text not in own and (sources is None or d.knowledge in sources)]
    return [*wanted, *added]
