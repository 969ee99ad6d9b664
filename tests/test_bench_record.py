"""bench/RESULTS.md holds one section per benchmark: a new run replaces its section."""

from __future__ import annotations

from app.search.values import Mode
from bench.bench_understanding import below_a_channel
from bench.common import replace_section

DOCUMENT = "# Benchmark results\n\nintro\n\n## A\n\nRun: old\n\n## B\n\nRun: old b\n"


def test_a_run_replaces_its_benchmarks_section_and_a_new_one_goes_last() -> None:
    assert replace_section(DOCUMENT, "A", "## A\n\nRun: new\n") == "# Benchmark results\n\nintro\n\n## A\n\nRun: new\n\n## B\n\nRun: old b\n"
    assert replace_section(DOCUMENT, "B", "## B\n\nRun: new b\n").endswith("## A\n\nRun: old\n\n## B\n\nRun: new b\n")
    assert replace_section(DOCUMENT, "C", "## C\n\nRun: c\n") == DOCUMENT + "\n## C\n\nRun: c\n"
    assert replace_section(DOCUMENT, "A (other)", "## A (other)\n").count("## A") == 2  # titles match whole


def test_the_understanding_bench_names_each_kind_where_a_single_channel_beats_the_hybrid_ranking() -> None:
    served = {
        Mode.HYBRID: {"lay": 0.80, "shorthand": 0.70, "all": 0.75},
        Mode.DENSE: {"lay": 0.85, "shorthand": 0.60, "all": 0.72},
        Mode.LEXICAL: {"lay": 0.40, "shorthand": 0.70, "all": 0.55},
    }
    assert below_a_channel(served) == ["lay: dense 0.850 > hybrid 0.800"]  # a tie is no loss
    assert below_a_channel({Mode.HYBRID: served[Mode.HYBRID]}) == []
