"""One system's active concepts in memory: is_a edges both ways, labels, and graded gains."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from indexer.records import Concept
from indexer.store.reader import StoreReader

EXACT, NEAR, FAR = 3, 2, 1  # Triplet-BERT gains: the concept; parent or child; 2 steps away


def active_concepts(reader: StoreReader, system: str) -> Iterator[Concept]:
    """Stream the active concepts of the newest loaded version of ``system``."""
    version = reader.system(system)
    if version is None:
        raise LookupError(f"unknown system {system!r}")
    return (c for c in reader.iter_concepts(version) if c.active)


class Hierarchy:
    """Active concepts and the is_a edges between them (edges to inactive or unknown codes are
    dropped). ``labels[code]`` is the concept's display first, then its other active labels."""

    def __init__(self, parents: Mapping[str, Sequence[str]], labels: Mapping[str, Sequence[str]]) -> None:
        self.labels: dict[str, tuple[str, ...]] = {code: tuple(texts) for code, texts in labels.items()}
        self.parents: dict[str, tuple[str, ...]] = {
            code: tuple(p for p in parents.get(code, ()) if p in self.labels) for code in self.labels
        }
        children: dict[str, list[str]] = {code: [] for code in self.labels}
        for code, targets in self.parents.items():
            for parent in targets:
                children[parent].append(code)
        self.children: dict[str, tuple[str, ...]] = {code: tuple(c) for code, c in children.items()}

    @classmethod
    def from_concepts(cls, concepts: Iterable[Concept]) -> Hierarchy:
        parents: dict[str, list[str]] = {}
        labels: dict[str, list[str]] = {}
        for concept in concepts:
            if concept.active:
                parents[concept.code] = concept.parents
                labels[concept.code] = concept.labels()
        return cls(parents, labels)

    @classmethod
    def from_reader(cls, reader: StoreReader, system: str) -> Hierarchy:
        return cls.from_concepts(active_concepts(reader, system))

    def display(self, code: str) -> str:
        return self.labels[code][0]

    def is_leaf(self, code: str) -> bool:
        return not self.children[code]

    def descendants(self, code: str) -> set[str]:
        """Every concept below ``code`` (not ``code`` itself)."""
        found: set[str] = set()
        stack = list(self.children.get(code, ()))
        while stack:
            child = stack.pop()
            if child not in found:
                found.add(child)
                stack.extend(self.children[child])
        return found

    def gains(self, gold: Iterable[str]) -> dict[str, int]:
        """Every concept with a positive graded gain for a query whose answer is any of ``gold``:
        3 a gold concept; 2 a direct parent or child; 1 a grandparent, grandchild, sibling or
        uncle (a parent's sibling). A concept related in several ways, or to several golds,
        takes the largest gain."""
        result: dict[str, int] = {}

        def grant(codes: Iterable[str], gain: int) -> None:
            for code in codes:
                result[code] = max(result.get(code, 0), gain)

        for code in gold:
            parents = self._step(self.parents, [code])
            grandparents = self._step(self.parents, parents)
            children = self._step(self.children, [code])
            grant(grandparents, FAR)
            grant(self._step(self.children, children), FAR)  # grandchildren
            grant(self._step(self.children, parents), FAR)  # siblings (and the gold itself)
            grant(self._step(self.children, grandparents), FAR)  # uncles (and the parents)
            grant([*parents, *children], NEAR)
            grant([code], EXACT)
        return result

    def gain(self, gold: Iterable[str], code: str) -> int:
        """The graded gain of one result ``code`` (see :meth:`gains`)."""
        return self.gains(gold).get(code, 0)

    @staticmethod
    def _step(edges: Mapping[str, Sequence[str]], codes: Iterable[str]) -> list[str]:
        return [target for code in codes for target in edges.get(code, ())]
