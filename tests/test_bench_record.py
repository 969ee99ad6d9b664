"""bench/RESULTS.md holds one section per benchmark: a new run replaces its section."""

from __future__ import annotations

from bench.common import replace_section

DOCUMENT = "# Benchmark results\n\nintro\n\n## A\n\nRun: old\n\n## B\n\nRun: old b\n"


def test_a_run_replaces_its_benchmarks_section_and_a_new_one_goes_last() -> None:
    assert replace_section(DOCUMENT, "A", "## A\n\nRun: new\n") == "# Benchmark results\n\nintro\n\n## A\n\nRun: new\n\n## B\n\nRun: old b\n"
    assert replace_section(DOCUMENT, "B", "## B\n\nRun: new b\n").endswith("## A\n\nRun: old\n\n## B\n\nRun: new b\n")
    assert replace_section(DOCUMENT, "C", "## C\n\nRun: c\n") == DOCUMENT + "\n## C\n\nRun: c\n"
    assert replace_section(DOCUMENT, "A (other)", "## A (other)\n").count("## A") == 2  # titles match whole
