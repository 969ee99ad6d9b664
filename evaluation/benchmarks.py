"""Built-in ranking benchmarks: fixed seeds and sizes, built from whatever the store holds."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.gold import RankingItem, leaf_to_parent, synonym_items
from evaluation.hierarchy import Hierarchy
from evaluation.runner import RankingReport, Search, evaluate_ranking
from indexer.store.reader import StoreReader

SIZE = 500
SEED = 20250116


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    system: str
    description: str
    query_kind: str | None  # a QUERY_KINDS key (synonym items); None: leaf-to-parent
    size: int = SIZE
    seed: int = SEED

    def build(self, reader: StoreReader) -> Benchmark:
        """The items and the system's hierarchy (graded gains, labels for the overlap)."""
        hierarchy = Hierarchy.from_reader(reader, self.system)
        if self.query_kind is None:
            gold = leaf_to_parent(hierarchy, self.system, max_items=self.size, seed=self.seed)
            return Benchmark(self, gold.items, hierarchy, gold.candidates)
        items = synonym_items(reader, self.system, self.query_kind, max_items=self.size, seed=self.seed)
        return Benchmark(self, items, hierarchy)


@dataclass(frozen=True)
class Benchmark:
    spec: BenchmarkSpec
    items: list[RankingItem]
    hierarchy: Hierarchy
    candidates: frozenset[str] | None = None  # the search space when it is not the whole system

    def run(self, search: Search, k: int = 10) -> RankingReport:
        """Evaluate ``search``; when :attr:`candidates` is set, it should return codes deep
        enough to keep k after the others are dropped (or search only the candidates)."""
        return evaluate_ranking(
            self.items,
            search,
            gain=self.hierarchy.gains,
            k=k,
            labels=self.hierarchy.labels,
            candidates=self.candidates,
        )


BENCHMARKS: dict[str, BenchmarkSpec] = {
    spec.name: spec
    for spec in (
        BenchmarkSpec("hpo-lay", "hpo", "HPO layperson synonyms → their HPO concept", "layperson"),
        BenchmarkSpec("hpo-synonyms", "hpo", "HPO exact (untyped) synonyms → their HPO concept", "exact"),
        BenchmarkSpec(
            "hpo-leaf-to-parent", "hpo", "HPO leaf names → any parent, leaves left out of the search", None
        ),
        BenchmarkSpec("icd10cm-inclusion", "icd10cm", "ICD-10-CM inclusion terms → their code", "inclusion"),
    )
}
