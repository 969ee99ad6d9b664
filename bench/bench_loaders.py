"""Licensed-loader benchmark: stream generated SNOMED CT RF2 and UMLS RRF releases to records.

Writes synthetic releases in the exact formats at two sizes (half and full: 2M description rows
with their concept, language refset, relationship, text definition and association rows; 5M
MRCONSO rows with MRSTY, MRDEF and MRREL), then times each parse in a fresh subprocess (so the
peaks do not mix) from files to :class:`Concept` records, none written to a store, and reports
rows/s and the subprocess's peak RSS (VmHWM).

Run: ``.venv/bin/python -m bench.bench_loaders [--record]`` (``--scale 0.1`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO

from bench.common import record, rss_mib
from indexer.sources import open_source
from indexer.sources.snomed import (
    ASSOCIATION_COLUMNS,
    CONCEPT_COLUMNS,
    DESCRIPTION_COLUMNS,
    LANGUAGE_COLUMNS,
    RELATIONSHIP_COLUMNS,
    verhoeff_valid,
)

DESCRIPTIONS = 2_000_000
MRCONSO_ROWS = 5_000_000
WORDS = (
    "acute chronic left right upper lower anterior posterior lesion fracture infection disorder "
    "syndrome pain structure heart lung liver kidney bone skin muscle nerve artery vein valve "
    "tissue cell blood joint spine brain eye ear nose throat mouth tooth gland duct wall "
    "inflammation neoplasm cyst ulcer stenosis hypertrophy atrophy deficiency excess abnormal"
).split()
CORE, PRIMITIVE, INSENSITIVE = "900000000000207008", "900000000000074008", "900000000000448009"
FSN, SYNONYM, DEFINITION = "900000000000003001", "900000000000013009", "900000000000550004"
US, GB, PREFERRED, ACCEPTABLE = "900000000000509007", "900000000000508004", "900000000000548007", "900000000000549004"
IS_A, INFERRED, EXISTENTIAL = "116680003", "900000000000011006", "900000000000451002"
REPLACED_BY, DATE = "900000000000526001", "20250101"
RF2_FILES = {
    "concept": ("Terminology/sct2_Concept_Snapshot_INT_20250101.txt", CONCEPT_COLUMNS),
    "description": ("Terminology/sct2_Description_Snapshot-en_INT_20250101.txt", DESCRIPTION_COLUMNS),
    "definition": ("Terminology/sct2_TextDefinition_Snapshot-en_INT_20250101.txt", DESCRIPTION_COLUMNS),
    "relationship": ("Terminology/sct2_Relationship_Snapshot_INT_20250101.txt", RELATIONSHIP_COLUMNS),
    "language": ("Refset/Language/der2_cRefset_LanguageSnapshot-en_INT_20250101.txt", LANGUAGE_COLUMNS),
    "association": ("Refset/Content/der2_cRefset_AssociationSnapshot_INT_20250101.txt", ASSOCIATION_COLUMNS),
}
META_FILES = {
    "MRCONSO.RRF": "CUI,LAT,TS,LUI,STT,SUI,ISPREF,AUI,SAUI,SCUI,SDUI,SAB,TTY,CODE,STR,SRL,SUPPRESS,CVF",
    "MRSTY.RRF": "CUI,TUI,STN,STY,ATUI,CVF",
    "MRDEF.RRF": "CUI,AUI,ATUI,SATUI,SAB,DEF,SUPPRESS,CVF",
    "MRREL.RRF": "CUI1,AUI1,STYPE1,REL,CUI2,AUI2,STYPE2,RELA,RUI,SRUI,SAB,SL,RG,DIR,SUPPRESS,CVF",
}
ATOM_KINDS = (("MSH", "MH", "ENG", "P"), ("SNOMEDCT_US", "PT", "ENG", "S"), ("SNOMEDCT_US", "SY", "ENG", "S"),
              ("MSHFRE", "MH", "FRE", "P"))  # fmt: skip


def sctid(item: int, partition: str) -> str:
    digits = f"{item}{partition}"
    return next(f"{digits}{d}" for d in range(10) if verhoeff_valid(f"{digits}{d}"))


def _term(rng: random.Random, words: Sequence[str] = WORDS, cumulative: Sequence[float] | None = None) -> str:
    """2 to 5 words of ``words`` (drawn by their ``cumulative`` weights when given)."""
    return " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(2, 5))).capitalize()


class _Release:
    """Release files being written, by role: RF2 (tab-separated, CRLF, a header row) or RRF
    (pipe-terminated fields, LF, no header). Counts the data rows of each."""

    def __init__(self, stack: ExitStack, files: dict[str, tuple[Path, Sequence[str] | None]], rrf: bool) -> None:
        self.separator, self.ending = ("|", "|\n") if rrf else ("\t", "\r\n")
        self.rows: Counter[str] = Counter()
        self._out: dict[str, TextIO] = {}
        for role, (path, header) in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            self._out[role] = stack.enter_context(open(path, "w", encoding="utf-8", newline="", buffering=1 << 20))
            if header:
                self._out[role].write(self.separator.join(header) + self.ending)

    def row(self, role: str, *fields: object) -> None:
        self._out[role].write(self.separator.join(map(str, fields)) + self.ending)
        self.rows[role] += 1


def write_rf2(root: Path, descriptions: int) -> int:
    """An RF2 Snapshot with ``descriptions`` description rows (4 per concept, 5% inactive), each
    active one in the US and GB refsets, 4 inferred relationships per active concept (20%
    inactive), text definitions for 5% and REPLACED BY for the 3% inactive concepts."""
    rng = random.Random(7)
    concepts = descriptions // 4
    ids = [IS_A, *(sctid(1_000_000 + i, "00") for i in range(1, concepts))]
    types = ids[1:21]  # attribute types, kept active
    files = {role: (root / "Snapshot" / name, header) for role, (name, header) in RF2_FILES.items()}
    with ExitStack() as stack:
        out, item = _Release(stack, files, rrf=False), 10_000_000
        for number, concept in enumerate(ids):
            active = number < 21 or rng.random() > 0.03
            out.row("concept", concept, DATE, int(active), CORE, PRIMITIVE)
            term = _term(rng)
            names = ((FSN, f"{term} (disorder)", PREFERRED), (SYNONYM, term, PREFERRED))
            for kind, text, acceptability in (*names, *((SYNONYM, _term(rng), ACCEPTABLE) for _ in range(2))):
                item += 1
                live = rng.random() > 0.05
                description = sctid(item, "01")
                out.row("description", description, DATE, int(live), CORE, concept, "en", kind, text, INSENSITIVE)
                for refset in (US, GB) if live else ():
                    member = (refset, description, acceptability)
                    out.row("language", f"{rng.getrandbits(128):032x}", DATE, 1, CORE, *member)
            if number and rng.random() < 0.05:
                item += 1
                definition = (concept, "en", DEFINITION, f"{_term(rng)}.", INSENSITIVE)
                out.row("definition", sctid(item, "01"), DATE, 1, CORE, *definition)
            if not active:
                replacement = ids[rng.randrange(1, concepts)]
                out.row("association", f"{rng.getrandbits(128):032x}", DATE, 1, CORE, REPLACED_BY, concept, replacement)
                continue
            for _ in range(2 if number else 0):
                for type_, target in ((IS_A, ids[rng.randrange(number)]), (rng.choice(types), rng.choice(ids))):
                    item += 1
                    edge = (concept, target, 0, type_, INFERRED, EXISTENTIAL)
                    out.row("relationship", sctid(item, "02"), DATE, int(rng.random() > 0.2), CORE, *edge)
    return sum(out.rows.values())


def write_meta(meta: Path, atoms: int, words: Sequence[str] = WORDS, cumulative: Sequence[float] | None = None) -> int:
    """A META directory with ``atoms`` MRCONSO rows (4 per CUI, 2 languages, 3% obsolete), one
    MRSTY row per CUI, MRDEF for 5% and a CHD/PAR pair per CUI in MRREL (each CUI under a random
    earlier one), and its MRFILES; names of 2 to 5 ``words`` (by ``cumulative`` weights)."""
    rng = random.Random(11)
    with ExitStack() as stack:
        out, aui = _Release(stack, {name: (meta / name, None) for name in META_FILES}, rrf=True), 10_000_000
        for number in range(1, atoms // 4 + 1):
            cui = f"C{number:07d}"
            for sab, tty, lat, ts in ATOM_KINDS:
                aui += 1
                suppress = "O" if rng.random() < 0.03 else "N"
                atom = (f"L{aui}", "PF", f"S{aui}", "Y", f"A{aui}", "", "", f"D{number}", sab, tty, number,
                        _term(rng, words, cumulative))  # fmt: skip
                out.row("MRCONSO.RRF", cui, lat, ts, *atom, 0, suppress, "")
            out.row("MRSTY.RRF", cui, "T047", "B2.2.1.2.1", "Disease or Syndrome", f"AT{number}", "")
            if rng.random() < 0.05:
                out.row("MRDEF.RRF", cui, f"A{aui - 3}", f"AT{aui}", "", "MSH", f"{_term(rng, words, cumulative)}.", "N", "")
            if number > 1:
                parent, rest = f"C{rng.randrange(1, number):07d}", (f"R{number}", "", "MSH", "MSH", "", "", "N", "")
                out.row("MRREL.RRF", parent, "", "CUI", "CHD", cui, "", "CUI", "isa", *rest)
                out.row("MRREL.RRF", cui, "", "CUI", "PAR", parent, "", "CUI", "inverse_isa", *rest)
    listing = [(name, name, fmt, fmt.count(",") + 1, out.rows[name], 0) for name, fmt in META_FILES.items()]
    (meta / "MRFILES.RRF").write_text("".join("|".join(map(str, row)) + "|\n" for row in listing), encoding="utf-8")
    return sum(out.rows.values())


def parse(name: str, path: str, options: dict[str, object]) -> None:
    """In the subprocess: stream every concept, then print counts, seconds and peak RSS."""
    start = time.perf_counter()
    concepts = designations = 0
    for concept in open_source(name, path, **options):
        concepts += 1
        designations += len(concept.designations)
    seconds = time.perf_counter() - start
    peak = rss_mib(os.getpid())[1]
    print(json.dumps({"concepts": concepts, "designations": designations, "seconds": seconds, "peak_mib": peak}))


def measure(name: str, path: Path, options: dict[str, object]) -> dict[str, float]:
    command = [sys.executable, "-m", "bench.bench_loaders", "--parse", name, str(path), json.dumps(options)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def run(
    label: str, size: int, write: Callable[[Path, int], int], name: str, subpath: str, options: dict[str, object]
) -> str:
    with tempfile.TemporaryDirectory(prefix="bench-loaders-") as tmp:
        start = time.perf_counter()
        rows = write(Path(tmp) / subpath, size)
        written = time.perf_counter() - start
        result = measure(name, Path(tmp) / subpath, options)
    rate = rows / result["seconds"]
    print(f"{label}: {rows:,} rows written in {written:.0f} s; {result}", file=sys.stderr)
    return (
        f"| {label} | {size:,} | {rows:,} | {result['concepts']:,.0f} | {result['seconds']:.1f} | "
        f"{rate:,.0f} | {result['peak_mib']:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full sizes")
    parser.add_argument("--record", action="store_true", help="write the figures into bench/RESULTS.md")
    parser.add_argument("--parse", nargs=3, metavar=("SOURCE", "PATH", "OPTIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.parse:
        name, path, options = args.parse
        parse(name, path, json.loads(options))
        return
    rows = []
    for fraction in (0.5, 1.0):
        descriptions, atoms = int(DESCRIPTIONS * args.scale * fraction), int(MRCONSO_ROWS * args.scale * fraction)
        rows.append(run("SNOMED CT RF2", descriptions, write_rf2, "snomed", "rf2", {}))
        rows.append(run("UMLS (lang ENG)", atoms, write_meta, "umls", "META", {"lang": ["ENG"]}))
    body = "\n".join(
        [
            "| release | size (description / MRCONSO rows) | rows in all files | concepts | seconds | rows/s "
            "| peak RSS MiB |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            "Rows: every data row of every file read (RF2: concept, description, language refset, "
            "relationship, text definition, association; UMLS: MRCONSO, MRSTY, MRDEF, MRREL). "
            "Seconds: opening the source to its last record, in a fresh subprocess per run; peak RSS is "
            "that subprocess's VmHWM (the staging database is on disk, its page cache capped at 64 MiB).",
        ]
    )
    if args.record:
        command = " ".join([".venv/bin/python -m bench.bench_loaders", *sys.argv[1:]])
        record("SNOMED CT and UMLS loaders: file to records", body, command)
    else:
        print(body)


if __name__ == "__main__":
    main()
