"""The project's vocabulary as lay wording of the training graph: applied as the bundle applies it, held out with its concept."""

from __future__ import annotations

import random
from pathlib import Path

from indexer.knowledge.vocabulary import VocabularyTable
from tests.toy import toy_concepts
from training.data import builders, vocabulary
from training.data.graph import OntologyGraph
from training.data.splits import Split, guarded

ROWS = [
    ("T:2", "Tachycardia", "my heart is racing", "lay"),
    ("T:2", "Tachycardia", "Fast heart rate", "lay"),  # HPO's own lay wording already
    ("T:2", "Bradycardia", "heart goes too slow", "lay"),  # named as another concept: not applied
    ("T:99", "Nothing", "no such code", "lay"),
    ("T:3", "Bradycardia", "his heart beats slowly", "parent"),
]


def _table(directory: Path, name: str, rows: list[tuple[str, ...]]) -> VocabularyTable:
    lines = ["# vocabulary test table. Version 1 (2026-11-28).", "code\tname\tphrasing\tregister", *("\t".join(r) for r in rows)]
    path = directory / f"{name}.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return VocabularyTable(path)


def test_phrasings_join_their_concepts_lay_wording_when_the_name_matches(tmp_path: Path) -> None:
    graph = OntologyGraph.from_concepts("toy", toy_concepts())
    tables = [_table(tmp_path, "toy_1", ROWS), _table(tmp_path, "other_1", [("T:2", "Tachycardia", "never read", "lay")])]

    counts = vocabulary.add(graph, ["toy"], tables)

    assert counts == {"added": 2, "known": 1, "unresolved": 2}
    assert graph.nodes["toy", "T:2"].lay[-1] == "my heart is racing"
    assert "my heart is racing" not in graph.nodes["toy", "T:2"].labels  # lay wording, not a label
    assert graph.nodes["toy", "T:3"].lay[-1] == "his heart beats slowly"
    assert "never read" not in {t for node in graph.nodes.values() for t in node.lay}
    # Trained as lay pairs: the phrasing pulled towards each formal label of its concept.
    pairs = builders.lay_pairs(graph, set(graph.nodes))
    assert ("my heart is racing", "Tachycardia") in pairs and ("his heart beats slowly", "Bradycardia") in pairs


def test_a_held_out_concepts_phrasing_never_reaches_training_text(tmp_path: Path) -> None:
    graph = OntologyGraph.from_concepts("toy", toy_concepts())
    # The same wording for a held-out concept (T:2) and a training one (T:3).
    vocabulary.add(graph, ["toy"], [_table(tmp_path, "toy_1", [ROWS[0], ("T:3", "Bradycardia", "my heart is racing", "lay")])])
    groups = {Split.TRAIN: set(graph.nodes) - {("toy", "T:2")}, Split.DEV: {("toy", "T:2")}, Split.TEST: set()}

    train = guarded(graph, groups)

    rows = builders.lay_pairs(graph, train) + builders.definition_pairs(graph, train, 2, random.Random(1))
    assert rows and not any("my heart is racing" in text for row in rows for text in row)
