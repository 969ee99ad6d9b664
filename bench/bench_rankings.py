"""Rankings snapshot: the top 10 of every query of the everyday sets and of every keystroke of
the autocomplete benchmark's phrases, written to a JSON file, and two snapshots compared.

A change that must not alter the ranking (a refactoring, a cache, a precomputation) is checked
by a snapshot taken before it and one after, on the same bundle:

    python bench/bench_rankings.py --dump before.json   # on the old code
    python bench/bench_rankings.py --dump after.json    # on the new code
    python bench/bench_rankings.py --compare before.json after.json [--record]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.autocomplete import Autocomplete  # noqa: E402
from app.search.loader import open_search_service  # noqa: E402
from app.search.scope import Scope  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.bench_autocomplete import phrases  # noqa: E402
from bench.bench_everyday import SETS, read_items  # noqa: E402
from bench.common import record  # noqa: E402


def snapshot(phrase_count: int) -> dict[str, list[list[object]]]:
    """ "set|query" -> [[code, confidence rounded to 6 places], ...] for the top 10."""
    settings = Settings()
    service = open_search_service(settings)
    typing = Autocomplete(service, settings.fhir.prefix_completions)
    out: dict[str, list[list[object]]] = {}

    def rows(ranking) -> list[list[object]]:  # noqa: ANN001
        return [[service.bundle.concepts[r.row].code, round(r.confidence, 6)] for r in ranking.rows]

    for name in SETS:
        for query, _, _ in read_items(name):
            out[f"{name}|{query}"] = rows(service.rank(query, Scope(("icd10cm",)), 10))
    for phrase, system in phrases(service, phrase_count):
        for end in range(3, len(phrase) + 1):
            out[f"keys {system}|{phrase[:end]}"] = rows(typing.rank(phrase[:end], Scope((system,)), 10))
    return out


def compare(before: dict[str, list[list[object]]], after: dict[str, list[list[object]]]) -> tuple[int, list[str]]:
    """How many queries both hold, and those whose rankings differ."""
    shared = sorted(set(before) & set(after))
    return len(shared), [key for key in shared if before[key] != after[key]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2)
    parser.add_argument("--phrases", type=int, default=100, help="autocomplete phrases per scope")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    if args.dump:
        args.dump.write_text(json.dumps(snapshot(args.phrases)), encoding="utf-8")
    if args.compare:
        before, after = (json.loads(path.read_text(encoding="utf-8")) for path in args.compare)
        count, differ = compare(before, after)
        body = f"{count} queries ranked by both; {len(differ)} rankings differ" + "".join(f"\n- {key}" for key in differ[:20])
        print(body)
        if args.record:
            record("Rankings unchanged", body, "python " + " ".join(sys.argv))


if __name__ == "__main__":
    main()
