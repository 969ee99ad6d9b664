"""One contract, every lexical backend: BM25 ranking over normalised labels, range filters,
given labels and a subtree (by the labels' lineage) applied while searching."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from indexer.lexical import BUILDERS, Label, lexical_builder, open_lexical
from indexer.lexical.tantivy_index import COPY_PREFIX, remove_orphaned_copies
from indexer.settings import LexicalSettings, Settings
from tests.indexes.cluster import needs_elasticsearch

LABELS = [
    "Tachycardia",
    "Fast heart rate",
    "Hearing impairment",
    "Hearing loss",
    "Heart failure",
    "Fracture of neck of right femur",
    "Fractures of the femoral shaft",
    "Ménière disease",
    "Rate of growth",
]
# Each label's concept and the concepts above it (Label.within): rows 0 (root) > 1 > 2, 0 > 3.
LINEAGE = [(0, 1), (0, 1), (0, 3), (0, 3), (0, 1, 2), (0,), (0,), (0, 3), (0, 1, 2)]


@pytest.fixture(params=[*BUILDERS, pytest.param("elasticsearch", marks=needs_elasticsearch)])
def index(request: pytest.FixtureRequest, tmp_path: Path):
    # Without its embedded fallback, so that every answer comes from the cluster.
    settings = Settings(lexical=LexicalSettings(backend=request.param, fallback_embedded=False), _env_file=None)
    remote = request.getfixturevalue("elastic_indexes") if request.param == "elasticsearch" else None
    if remote is not None:
        settings = settings.model_copy(update={"elasticsearch": remote.settings})
    labels = [Label(i, text, "toy", f"T:{i}", within) for i, (text, within) in enumerate(zip(LABELS, LINEAGE, strict=True))]
    entry = lexical_builder(settings.lexical, remote).build(tmp_path / "lexical", labels)
    return open_lexical({"backend": request.param, **entry}, tmp_path / "lexical", settings)


def _ids(hits: list[tuple[int, float]]) -> list[int]:
    return [label for label, _ in hits]


def test_the_index_counts_the_labels_it_holds(index) -> None:
    assert len(index) == len(LABELS)


def test_best_match_first_and_scores_descending(index) -> None:
    hits = index.search("fast heart rate", 10)
    assert _ids(hits)[0] == 1
    assert set(_ids(hits)) == {1, 4, 8}
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_case_accents_and_stemming_are_normalised_alike(index) -> None:
    assert _ids(index.search("MENIERE", 3)) == [7]
    assert _ids(index.search("fractured femur", 3))[0] == 5
    assert set(_ids(index.search("hearing", 5))) == {2, 3}


def test_range_filter_and_limits(index) -> None:
    assert _ids(index.search("heart", 10, (2, 9))) == [4]
    assert len(index.search("heart", 1)) == 1


def test_allowed_labels_are_kept_to_while_searching(index) -> None:
    """A subtree's labels go to the search: its hits are theirs alone, with the scores they
    have unfiltered, however many better labels lie outside."""
    unfiltered = dict(index.search("fast heart rate", 10))
    hits = index.search("fast heart rate", 10, None, allowed=[4, 8])
    assert _ids(hits) == sorted([4, 8], key=lambda label: -unfiltered[label])
    assert [round(score, 4) for _, score in hits] == [round(unfiltered[label], 4) for label in _ids(hits)]
    assert _ids(index.search("fast heart rate", 10, (5, 9), allowed=[4, 8])) == [8]
    assert index.search("fast heart rate", 10, None, allowed=[]) == []


def test_a_subtree_is_kept_to_by_lineage_while_searching(index) -> None:
    """``within``: the labels of a concept and of every concept below it, with their unfiltered
    scores, alone or with a range and given labels."""
    unfiltered = dict(index.search("fast heart rate", 10))
    hits = index.search("fast heart rate", 10, within=2)
    assert _ids(hits) == sorted([4, 8], key=lambda label: -unfiltered[label])
    assert [round(score, 4) for _, score in hits] == [round(unfiltered[label], 4) for label in _ids(hits)]
    assert _ids(index.search("fast heart rate", 10, within=1))[0] == 1
    assert set(_ids(index.search("fast heart rate", 10, within=1))) == {1, 4, 8}
    assert set(_ids(index.search("hearing heart", 10, within=3))) == {2, 3}
    assert set(_ids(index.search("heart rate", 10, within=0))) == {1, 4, 8}
    assert _ids(index.search("fast heart rate", 10, (5, 9), within=1)) == [8]
    assert _ids(index.search("fast heart rate", 10, None, allowed=[1, 4], within=2)) == [4]
    assert index.search("fast heart rate", 10, within=4) == []


def test_queries_without_tokens_match_nothing(index) -> None:
    assert index.search("of the", 10) == []
    assert index.search("  ;; ", 10) == []
    assert index.search("xylophone", 10) == []


def test_a_private_index_copy_left_by_a_process_that_is_gone_is_removed(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    orphan = tmp_path / f"{COPY_PREFIX}{gone.stdout.strip()}-abc"
    mine = tmp_path / f"{COPY_PREFIX}{os.getpid()}-def"
    for path in (orphan, mine):
        (path / "meta.json").parent.mkdir()
        (path / "meta.json").write_text("{}")
    assert remove_orphaned_copies(tmp_path) == [orphan]
    assert not orphan.exists() and mine.exists()
