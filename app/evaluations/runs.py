"""Evaluate text → concept items against the served bundle with the shared ``evaluation``
package, and keep every run in the store (``evaluation_run``) with its model, bundle and mode."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Engine, insert, select

from app.search.scope import Scope
from app.search.service import SearchService
from app.search.values import Mode
from app.tables import EvaluationRunRow
from evaluation.gold import RankingItem
from evaluation.hierarchy import Hierarchy
from evaluation.runner import RankingReport, evaluate_ranking
from indexer.lexical.normalise import label_key
from indexer.store import StoreReader

CANDIDATE_DEPTH = 10  # with a restricted search space, fetch k × this many codes before the cut


@lru_cache(maxsize=4)
def _hierarchy(reader: StoreReader, system: str, version_id: int) -> Hierarchy:
    """The system's is_a graph and labels (graded gains, word overlap), read once per version."""
    return Hierarchy.from_reader(reader, system)


def system_hierarchy(reader: StoreReader, system: str) -> Hierarchy:
    version = reader.system(system)
    if version is None:
        raise LookupError(f"{system} is not in the store")
    return _hierarchy(reader, system, version.version_id)


def unknown_gold(service: SearchService, system: str, items: Sequence[RankingItem]) -> dict[int, list[str]]:
    """Per item (by position), its gold codes that are not concepts of ``system`` in the bundle."""
    found = {}
    for number, item in enumerate(items):
        missing = [code for code in item.gold if service.bundle.concept_index(system, code) is None]
        if missing:
            found[number] = missing
    return found


def evaluate(
    service: SearchService,
    hierarchy: Hierarchy,
    system: str,
    items: Sequence[RankingItem],
    mode: Mode,
    k: int,
    candidates: Collection[str] | None = None,
    check: Callable[[], None] | None = None,
    leave_out: bool = False,
) -> RankingReport:
    """Hits@1/5/10, MRR, graded nDCG@k, per-item ranks and Hits@k by word overlap; ``check`` is
    called before each item (it raises to stop the run: the request timed out). With
    ``leave_out`` (the built-in benchmarks and the usage set, whose queries are labels of the
    index or phrasings users taught) each query's own label is left out of its gold concepts
    while it is searched, and the phrasings users taught are not read: no self-retrieval."""
    depth = k * CANDIDATE_DEPTH if candidates is not None else k
    gold_of: dict[str, set[str]] = {}
    for item in items:
        gold_of.setdefault(item.query, set()).update(item.gold)

    def search(query: str) -> list[str]:
        if check is not None:
            check()
        excluded = own_labels(service, system, query, gold_of[query]) if leave_out else frozenset()
        ranking = service.rank(query, Scope((system,), exclude_labels=excluded, learned=not leave_out), depth, mode)
        return [service.bundle.concepts[ranked.row].code for ranked in ranking.rows]

    return evaluate_ranking(items, search, gain=hierarchy.gains, k=k, labels=hierarchy.labels, candidates=candidates)


def own_labels(service: SearchService, system: str, query: str, gold: Collection[str]) -> frozenset[int]:
    """The labels of the gold concepts that say what ``query`` says (up to case, word order and
    "unspecified"): the query's own label, and any copy a knowledge source lent."""
    bundle, key = service.bundle, label_key(query)
    rows = [row for code in gold if (row := bundle.concept_index(system, code)) is not None]
    return frozenset(
        label for row in rows for label in bundle.concept_labels(row) if label_key(bundle.label_text[label]) == key
    )


@dataclass(frozen=True)
class RunRecord:
    id: int
    name: str | None
    benchmark: str | None
    system: str
    mode: str
    k: int
    model_id: str
    bundle_id: str
    created_at: datetime
    count: int
    metrics: dict[str, float]
    overlap: dict[str, Any]
    items: list[dict[str, Any]] | None  # None in listings

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        if self.items is None:
            del data["items"]
        return data


class RunStore:
    """The ``evaluation_run`` table."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(
        self,
        report: RankingReport,
        service: SearchService,
        system: str,
        mode: Mode,
        benchmark: str | None = None,
        name: str | None = None,
    ) -> RunRecord:
        data = report.to_dict()
        values = {
            "name": name,
            "benchmark": benchmark,
            "system": system,
            "mode": str(mode),
            "k": report.k,
            "model_id": service.encoder.id,
            "bundle_id": service.bundle.id,
            "created_at": datetime.now(UTC),
            "count": report.count,
            "metrics": data["metrics"],
            "overlap": data["overlap"] or {},
            "items": data["items"],
        }
        with self.engine.begin() as conn:
            run_id = conn.execute(insert(EvaluationRunRow).values(**values).returning(EvaluationRunRow.id)).scalar_one()
        stored = self.get(run_id)  # the run as the store hands it back (lists, not tuples)
        assert stored is not None
        return stored

    def list(self, limit: int = 200) -> list[RunRecord]:
        """The newest runs first, without their items."""
        columns = [c for c in EvaluationRunRow.__table__.c if c.name != "items"]
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(*columns).order_by(EvaluationRunRow.created_at.desc(), EvaluationRunRow.id.desc()).limit(limit)
            ).all()
        return [_record(row._mapping, None) for row in rows]

    def get(self, run_id: int) -> RunRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(EvaluationRunRow.__table__).where(EvaluationRunRow.id == run_id)).first()
        return None if row is None else _record(row._mapping, row.items)


def _record(row: Any, items: list[dict[str, Any]] | None) -> RunRecord:
    return RunRecord(**{name: row[name] for name in RunRecord.__dataclass_fields__ if name != "items"}, items=items)
