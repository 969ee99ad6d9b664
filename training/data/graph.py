"""An in-memory view of one or more systems' active concepts, read from the store."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from indexer.records import IS_A, Concept
from indexer.store import StoreReader

Key = tuple[str, str]  # (system key, code)
LAYPERSON = "layperson"  # HPO's synonym type for plain-language wording
# HPO tags many lay wordings RELATED ("High blood pressure" for Hypertension): they still name the concept.
LAY_SCOPES = frozenset({"EXACT", "RELATED"})
# ICD-10-CM's inclusion terms and includes notes name narrower or sibling conditions, not the code:
# they are entry terms, kept apart from the labels (builders.entry_descriptions).
ENTRY_TYPES = frozenset({"inclusion", "includes"})
# ICD-10-CM's 7th-character extensions ("…, initial encounter for closed fracture") are collapsed
# onto their code: half of the system's concepts, and none of them a different condition.
EXTENSION = "seventh_character"


@dataclass
class Node:
    key: Key
    name: str
    labels: list[str]  # name first, then distinct synonyms
    definitions: list[str]
    lay: list[str] = field(default_factory=list)  # labels that are layperson synonyms (EXACT or RELATED)
    entries: list[str] = field(default_factory=list)  # entry terms (ENTRY_TYPES), not labels
    parents: list[Key] = field(default_factory=list)
    children: list[Key] = field(default_factory=list)
    relations: list[tuple[str, Key]] = field(default_factory=list)  # (readable phrase, target), not is-a


class OntologyGraph:
    def __init__(self, nodes: dict[Key, Node]) -> None:
        self.nodes = nodes

    @classmethod
    def from_concepts(cls, system: str, concepts: Iterable[Concept]) -> OntologyGraph:
        graph = cls({})
        graph.add(system, concepts)
        return graph

    @classmethod
    def from_store(cls, reader: StoreReader, systems: Iterable[str]) -> OntologyGraph:
        graph = cls({})
        for key in systems:
            version = reader.system(key)
            if version is None:
                raise ValueError(f"system {key!r} is not in the store")
            graph.add(key, reader.iter_concepts(version))
        return graph

    def add(self, system: str, concepts: Iterable[Concept], related: str | None = None) -> None:
        """Add a system's active concepts (7th-character extensions collapsed); their non-is-a
        relationships point into ``related`` (an open-text source's, into a store system), else
        into ``system`` itself. A relationship whose target is not in the graph is dropped."""
        edges: list[tuple[Key, str, str | None, str]] = []
        for concept in concepts:
            if not concept.active or EXTENSION in concept.properties:
                continue
            key = (system, concept.code)
            designations = concept.label_designations()
            labels = [d.text for d in designations if d.type not in ENTRY_TYPES]
            entries = [d.text for d in designations if d.type in ENTRY_TYPES and d.text not in labels]
            lay = [d.text for d in concept.designations if d.active and d.type == LAYPERSON and d.scope in LAY_SCOPES]
            self.nodes[key] = Node(key, concept.display, labels, [d.text for d in concept.definitions], lay, entries)
            edges.extend((key, r.type, r.label, r.target) for r in concept.relationships)
        children: dict[Key, list[Key]] = defaultdict(list)
        for source, kind, label, code in edges:
            target = (system if kind == IS_A else related or system, code)
            if target not in self.nodes:
                continue
            if kind == IS_A:
                self.nodes[source].parents.append(target)
                children[target].append(source)
            else:
                self.nodes[source].relations.append((phrase(label or kind), target))
        for key, kids in children.items():
            self.nodes[key].children.extend(kids)

    def siblings(self, key: Key) -> list[Key]:
        node = self.nodes[key]
        return sorted({s for p in node.parents for s in self.nodes[p].children if s != key})

    def uncles(self, key: Key) -> list[Key]:
        """Siblings of the concept's parents (Algorithm 1's getSiblings(directParents))."""
        parents = set(self.nodes[key].parents)
        return sorted({u for p in parents for u in self.siblings(p) if u not in parents and u != key})

    def cousins(self, key: Key) -> list[Key]:
        """Children of the concept's uncles: same kind of thing, one branch over."""
        return sorted({c for u in self.uncles(key) for c in self.nodes[u].children if c != key})

    def ancestors(self, key: Key) -> list[Key]:
        """Every ancestor, nearest first (breadth-first)."""
        seen: dict[Key, None] = {}
        frontier = list(self.nodes[key].parents)
        while frontier:
            nxt = []
            for parent in frontier:
                if parent not in seen:
                    seen[parent] = None
                    nxt.extend(self.nodes[parent].parents)
            frontier = nxt
        return list(seen)


_VERB_PREFIXES = ("is ", "has ", "may ", "was ", "can ", "causes ", "occurs ", "part of")


def phrase(relationship: str) -> str:
    """A relationship type as a verb phrase: ``part_of`` → "is part of", ``Finding site`` → "has finding site"."""
    text = relationship.replace("_", " ").strip().lower()
    if text.startswith("part of"):
        return "is " + text
    if text.startswith(_VERB_PREFIXES):
        return text
    return "has " + text
