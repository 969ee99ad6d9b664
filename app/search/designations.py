"""A concept's designations as the service knows them: the store's (the release's own and the
local supplements') and those the served bundle's knowledge sources added."""

from __future__ import annotations

from indexer.bundle import Bundle
from indexer.records import Concept, Designation


def all_designations(concept: Concept, bundle: Bundle | None, system: str) -> list[Designation]:
    row = bundle.concept_index(system, concept.code) if bundle is not None else None
    if row is None:
        return list(concept.designations)
    own = {d.text for d in concept.designations} | {concept.display}
    return [*concept.designations, *(d for d in bundle.knowledge_labels(row) if d.text not in own)]
