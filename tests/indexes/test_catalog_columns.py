"""The catalog's columns round-trip: what the build writes is what a bundle reads back, row for
row, codes found by their usual forms, links in both directions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from indexer import columns
from indexer.bundle import CatalogConcept, Concepts, code_key
from indexer.catalog import write_columns

CONCEPTS = [
    ["icd10cm", "I00-I99", "Diseases of the circulatory system", True, "chapter", None, []],
    ["icd10cm", "I21", "Acute myocardial infarction", True, "category", False, [0]],
    ["icd10cm", "I21.9", "Acute myocardial infarction, unspecified", True, "code", True, [1]],
    ["hpo", "HP:0001649", "Tachycardia", True, None, None, []],
    ["hpo", "HP:0011675", "Arrhythmia — cœur", False, None, None, [3, 0]],
]
LABELS = [
    [0, "Diseases of the circulatory system", "preferred", None, None],
    [1, "Acute myocardial infarction", "preferred", None, None],
    [1, "heart attack", "layperson", "lay_terms.tsv:12", "lay_terms"],
    [2, "AMI", "abbreviation", "", "abbreviations"],
    [3, "Tachycardia", "preferred", None, None],
    [4, "Arrhythmia — cœur", "preferred", None, None],
]

PRIOR = np.asarray([0, 0, 0, 0.25, -0.5])


@pytest.fixture
def table(tmp_path: Path) -> Path:
    write_columns(tmp_path / "catalog", CONCEPTS, LABELS, PRIOR)
    return tmp_path / "catalog"


def test_concepts_read_back_row_for_row(table: Path) -> None:
    concepts = Concepts(table, columns.read_names(table))
    assert len(concepts) == len(CONCEPTS)
    assert list(concepts) == [CatalogConcept(*row[:6], tuple(row[6])) for row in CONCEPTS]
    assert concepts[np.int32(-1)].display == "Arrhythmia — cœur"
    with pytest.raises(IndexError):
        concepts[len(CONCEPTS)]


def test_labels_read_back_with_their_kinds_origins_and_sources(table: Path) -> None:
    names = columns.read_names(table)
    owners, texts, kinds, origins, sources = (list(column) for column in zip(*LABELS, strict=True))
    assert columns.array(table, "label_concept").tolist() == owners
    assert list(columns.TextColumn(table, "label_text")) == texts
    assert list(columns.CategoryColumn(columns.array(table, "label_kind"), names["label_kind"])) == kinds
    assert list(columns.TextColumn(table, "label_origin")) == origins  # None and "" kept apart
    assert list(columns.CategoryColumn(columns.array(table, "label_knowledge"), names["label_knowledge"])) == sources
    assert columns.array(table, "label_abbreviation").tolist() == [False, False, False, True, False, False]


def test_each_concepts_prior_reads_back_as_float32(table: Path) -> None:
    prior = columns.array(table, "prior")
    assert prior.dtype == np.float32 and prior.tolist() == PRIOR.tolist()


def test_codes_are_found_by_system_and_by_any_usual_form(table: Path) -> None:
    concepts = Concepts(table, columns.read_names(table))
    by_code, by_key = (_code_index(table, name, key_of) for name, key_of in (("by_code", concepts.system_code), ("by_code_key", concepts.code_key)))
    assert by_code.get("icd10cm\0I21.9") == [2]
    assert by_code.get("hpo\0I21.9") == []
    assert by_key.get(code_key("i219")) == [2]
    assert by_key.get(code_key("hp_0001649")) == [3]


def _code_index(table: Path, name: str, key_of: Callable[[int], str]) -> columns.CodeIndex:
    collisions = columns.array(table, f"{name}.collisions")
    return columns.CodeIndex(columns.array(table, f"{name}.hashes"), columns.array(table, f"{name}.rows"), key_of, collisions)


@pytest.mark.parametrize("recorded", [True, False])
def test_keys_sharing_a_hash_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded: bool) -> None:
    """With a hash that collides (a key's length), the build records the shared hashes and a
    lookup checks each row's key under them; under a hash of one key, the first row's key is
    checked for all. A bundle without recorded collisions checks every row."""
    monkeypatch.setattr(columns, "key_hash", len)
    keys = ["ab", "cd", "ab", "xyz", "xyz", "q"]
    columns.write_code_index(tmp_path, "names", keys)
    assert columns.array(tmp_path, "names.collisions").tolist() == [2]  # "ab" and "cd"; "xyz" is one key
    collisions = columns.array(tmp_path, "names.collisions") if recorded else None
    index = columns.CodeIndex(columns.array(tmp_path, "names.hashes"), columns.array(tmp_path, "names.rows"), keys.__getitem__, collisions)
    assert index.get("ab") == [0, 2]
    assert index.get("cd") == [1]
    assert index.get("xyz") == [3, 4]
    assert index.get("abc") == []  # the hash of "xyz", another key
    assert index.get("zz") == []


def test_children_are_the_parent_links_reversed(table: Path) -> None:
    children = columns.Links(columns.array(table, "children.offsets"), columns.array(table, "children.rows"))
    assert [children[row].tolist() for row in range(len(CONCEPTS))] == [[1, 4], [2], [], [4], []]
    assert children.of(np.asarray([0, 3, 2])).tolist() == [1, 4, 4]  # one gather for a whole frontier
    assert children.of(np.asarray([2])).tolist() == []


def test_closure_reaches_every_ancestor_once_and_ends_on_a_cycle() -> None:
    # 0 is the root; 3 has two parents (1 and 2: a diamond); 4 and 5 are each other's parent (bad data).
    parents = [[], [0], [0], [1, 2], [3, 5], [4]]
    offsets = np.cumsum([0, *map(len, parents)])
    links = columns.Links(offsets, np.asarray([p for above in parents for p in above], dtype=np.int32))
    closure = links.closure(np.asarray([3, 0, 5]))
    assert [closure[i].tolist() for i in range(3)] == [[0, 1, 2, 3], [0], [0, 1, 2, 3, 4, 5]]
    assert links.closure(np.asarray([], dtype=np.int64)).offsets.tolist() == [0]
