"""The project's vocabulary (``indexer/knowledge/vocabulary``) as lay wording of the graph's concepts.

Each phrasing joins its concept's ``lay`` list, so that ``builders.lay_pairs`` pairs it with every
formal label of the concept and the miner gives it near but wrong labels as negatives, as HPO's own
layperson synonyms get. Phrasings are not labels: they are not paired with each other, and no
triplet or synonym pair is made of them. A row applies as the bundle applies it: to a concept of
the graph (ICD-10-CM's 7th-character extensions are collapsed onto their code, so a row naming one
is left out) whose name is the row's. Held-out concepts' phrasings never reach training text: only
training concepts contribute, and the split's guard drops a phrasing equal to a held-out text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable

from indexer.knowledge import vocabulary
from indexer.lexical.normalise import fold
from training.data.graph import OntologyGraph


def add(
    graph: OntologyGraph, systems: Collection[str], tables: Iterable[vocabulary.VocabularyTable] | None = None
) -> dict[str, int]:
    """Add the phrasings of ``tables`` (default: every table) for ``systems`` to ``graph``; returns
    how many rows were ``added``, already there (``known``) and ``unresolved``."""
    counts: Counter[str] = Counter()
    for table in vocabulary.tables() if tables is None else tables:
        if table.system not in systems:
            continue
        for row in table.read():
            node = graph.nodes.get((table.system, row.code))
            if node is None or fold(node.name).strip() != fold(row.name).strip():
                counts["unresolved"] += 1
            elif row.text in node.lay or row.text in node.labels:
                counts["known"] += 1
            else:
                node.lay.append(row.text)
                counts["added"] += 1
    return {key: counts[key] for key in ("added", "known", "unresolved")}
