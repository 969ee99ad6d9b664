"""Every knowledge source applied to a catalog while a bundle is built, in order: alignments
(which lend names across systems), then the project's term tables (which may find a meaning by
a lent name). Supplements are designations in the store, read with the catalog itself."""

from __future__ import annotations

from collections import Counter

from indexer.catalog import Catalog
from indexer.knowledge.alignment import Alignment, Embed, align, propagate
from indexer.knowledge.term_tables import TABLES, name_index
from indexer.settings import KnowledgeSettings


def enrich(catalog: Catalog, settings: KnowledgeSettings, embed: Embed) -> tuple[dict, list[Alignment]]:
    """Add the knowledge sources' labels to ``catalog``; a summary for the manifest, and the alignments."""
    loaded = {s.key for s in catalog.systems}
    summary: dict = {}
    alignments: list[Alignment] = []
    if settings.alignments:
        for source, target in settings.align:
            if {source, target} <= loaded:
                alignments += align(catalog, source, target, embed, settings.dense_threshold)
        summary["alignments"] = {
            "pairs": [list(pair) for pair in settings.align if set(pair) <= loaded],
            "dense_threshold": settings.dense_threshold,
            "by_method": dict(Counter(a.method for a in alignments)),
            "labels": propagate(catalog, alignments),
        }
    tables = [table for table in TABLES if getattr(settings, table.knowledge)]
    index = name_index(catalog) if tables else {}
    for table in tables:
        rows = table.read()
        resolution = table.apply(index, rows)
        summary[table.knowledge] = {
            "table": table.path.name,
            "version": table.version,
            "rows": len(rows),
            "labels": resolution.labels,
            "unresolved": resolution.unresolved,
        }
    return summary, alignments
