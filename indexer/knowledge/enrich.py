"""Every knowledge source applied to a catalog while a bundle is built, in order: alignments
(which lend names across systems), then the project's term tables (which may find a meaning by
a lent name), then its vocabulary (phrasings by code), then what users taught it (approved
phrasings, :mod:`indexer.knowledge.learned`); corrections a reviewer made (``corrections.tsv``, and
the denials a curator approved) deny alignments before they lend and names after they were given.
Supplements are designations in the store, read with the catalog itself."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from indexer.catalog import Catalog
from indexer.knowledge import corrections, learned, vocabulary
from indexer.knowledge.alignment import Alignment, Embed, align, propagate
from indexer.knowledge.term_tables import TABLES, name_index
from indexer.settings import KnowledgeSettings


def enrich(
    catalog: Catalog, settings: KnowledgeSettings, embed: Embed, taught: Sequence[learned.Learned] = ()
) -> tuple[dict, list[Alignment]]:
    """Add the knowledge sources' labels to ``catalog`` (``taught``: the store's learned items); a
    summary for the manifest, and the alignments."""
    loaded = {s.key for s in catalog.systems}
    summary: dict = {}
    alignments: list[Alignment] = []
    denied = (corrections.read() if settings.corrections else []) + learned.corrections(taught)
    if settings.alignments:
        for source, target in settings.align:
            if {source, target} <= loaded:
                alignments += align(catalog, source, target, embed, settings.dense_threshold)
        stopped = corrections.denied_alignments(catalog, alignments, denied)
        alignments = [a for a in alignments if a not in stopped]
        summary["alignments"] = {
            "pairs": [list(pair) for pair in settings.align if set(pair) <= loaded],
            "dense_threshold": settings.dense_threshold,
            "by_method": dict(Counter(a.method for a in alignments)),
            "labels": propagate(catalog, alignments),
            "denied": [f"{catalog.entries[a.source].code} - {catalog.entries[a.target].code}" for a in stopped],
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
    if settings.vocabulary:
        summary["vocabulary"] = {}
        for table in vocabulary.tables(settings.vocabulary_off):
            if table.system in loaded:
                rows = table.read()
                applied = table.apply(catalog, rows)
                summary["vocabulary"][table.name] = {
                    "version": table.version, "rows": len(rows), "labels": applied.labels, "unresolved": applied.unresolved,
                }
    if taught:
        summary["learned"] = {
            "designations": len(learned.approved(taught, learned.DESIGNATION)),
            "labels": learned.add_designations(catalog, taught),
            "denials": len(learned.approved(taught, learned.DENIAL)),
        }
    if denied:
        summary["corrections"] = {"rows": len(denied), "designations_removed": corrections.deny_designations(catalog, denied)}
    return summary, alignments
