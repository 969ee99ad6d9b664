"""Run HL7's terminology test suite, as adapted, on a built data directory and print the counts:

    python -m tests.fhir.tx_ecosystem --data-dir var [--suite simple-cases] [--show-failures]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.fhir.tx_ecosystem.suite import cases, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("var"))
    parser.add_argument("--suite", action="append", help="only these suites (repeatable)")
    parser.add_argument("--show-failures", action="store_true")
    args = parser.parse_args()
    chosen = [case for case in cases() if not args.suite or case.suite in args.suite]
    counts: dict[str, Counter[str]] = {}
    with TestClient(create_app(Settings(data_dir=args.data_dir, _env_file=None))) as client:
        for case in chosen:
            tally = counts.setdefault(case.suite, Counter())
            if not case.adapted:
                tally["not applicable" if case.not_applicable else "not accounted for"] += 1
                continue
            try:
                problems = run(case, client)
            except (OSError, ValueError) as error:  # an adaptation's file missing or malformed
                problems = [f"cannot run: {error}"]
            tally["pass" if not problems else "fail"] += 1
            if problems and args.show_failures:
                print(f"FAIL {case.id}" + (f" (known: {case.fails})" if case.fails else ""))
                for problem in problems[:8]:
                    print(f"    {problem}")
    total: Counter[str] = Counter()
    print("| suite | pass | fail | not applicable | not accounted for |\n|---|---|---|---|---|")
    for suite, tally in counts.items():
        total.update(tally)
        print(f"| {suite} | {tally['pass']} | {tally['fail']} | {tally['not applicable']} | {tally['not accounted for']} |")
    print(f"| **all** | {total['pass']} | {total['fail']} | {total['not applicable']} | {total['not accounted for']} |")


if __name__ == "__main__":
    main()
