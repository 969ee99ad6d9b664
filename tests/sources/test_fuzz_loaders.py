"""Loader fuzzing: each fixture release, mutated (byte flips, truncation, inserted bytes, deleted,
duplicated or swapped lines, swapped fields), either loads or fails with a :class:`SourceError`
naming the file and the line, never another exception; and a failed ``load_source`` leaves the
store exactly as it was (row counts and a checksum over every table's rows).

Bounded and deterministic for CI (derandomised, a few dozen examples per format and store).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select

from indexer.records import Source, SourceError
from indexer.sources import Icd10cmSource, OboSource, SnomedSource, UmlsSource
from indexer.store import load_source, make_engine, migrate
from indexer.store.models import Base
from tests.toy import toy_sources

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXAMPLES = 300  # per format and store: about a minute for the 8 tests on 2 cores
# Faults of a file as a whole have no line: nothing in it to key or date the system by, or a
# file that the release's index (MRFILES) does not list.
WHOLE_FILE = (
    "no [Term] stanza",
    "no <version> element",
    "no concepts",
    "no atom passes the filters",
    "is not listed, so its columns are unknown",
)


@dataclass(frozen=True)
class Format:
    release: str  # under tests/fixtures: a file, or a release directory
    files: tuple[str, ...]  # the files that may be mutated, relative to the release
    separator: bytes  # between the fields of a line
    open: Callable[[Path], Source]


RF2 = "SnomedCT_InternationalRF2_PRODUCTION_20250101T120000Z/Snapshot"
FORMATS = {
    "obo": Format("obo/mini.obo", ("",), b" ", OboSource),
    "icd10cm-xml": Format("icd10cm/mini-tabular.xml", ("",), b"<", Icd10cmSource),
    "rf2": Format(
        "rf2",
        tuple(f"{RF2}/{name}" for name in (
            "Terminology/sct2_Concept_Snapshot_INT_20250101.txt",
            "Terminology/sct2_Description_Snapshot-en_INT_20250101.txt",
            "Terminology/sct2_Relationship_Snapshot_INT_20250101.txt",
            "Terminology/sct2_TextDefinition_Snapshot-en_INT_20250101.txt",
            "Refset/Language/der2_cRefset_LanguageSnapshot-en_INT_20250101.txt",
            "Refset/Content/der2_cRefset_AssociationSnapshot_INT_20250101.txt",
        )),
        b"\t",
        SnomedSource,
    ),
    "rrf": Format(
        "umls/2025AA",
        tuple(f"META/{name}.RRF" for name in ("MRCONSO", "MRDEF", "MRREL", "MRSTY", "MRSAB", "MRRANK", "MRFILES", "MRCOLS")),
        b"|",
        UmlsSource,
    ),
}  # fmt: skip


# --- mutations --------------------------------------------------------------------------------


KINDS = ("flip", "truncate", "insert", "delete", "duplicate", "swap_lines", "swap_fields")


@dataclass(frozen=True)
class Mutation:
    """One edit of a file's bytes; ``at`` and ``other`` are positions as fractions of the bytes,
    lines or fields."""

    kind: str
    at: float
    other: float
    noise: bytes
    separator: bytes

    def __call__(self, data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        i, j, p = int(self.at * len(lines)), int(self.other * len(lines)), int(self.at * len(data))
        if self.kind == "flip":
            return data[:p] + bytes([data[p] ^ (self.noise[0] or 0xFF)]) + data[p + 1 :] if data else data
        if self.kind == "truncate":
            return data[:p]
        if self.kind == "insert":
            return data[:p] + self.noise + data[p:]
        if not lines:
            return data
        if self.kind == "delete":
            return b"".join(lines[:i] + lines[i + 1 :])
        if self.kind == "duplicate":
            return b"".join(lines[: i + 1] + lines[i:])
        if self.kind == "swap_lines":
            lines[i], lines[j] = lines[j], lines[i]
            return b"".join(lines)
        body = lines[i].rstrip(b"\r\n")
        fields = body.split(self.separator)
        a, b = int(self.other * len(fields)), int(self.at * len(fields))
        fields[a], fields[b] = fields[b], fields[a]
        lines[i] = self.separator.join(fields) + lines[i][len(body) :]
        return b"".join(lines)


def mutations(separator: bytes) -> st.SearchStrategy[Mutation]:
    fraction = st.floats(0, 1, exclude_max=True)
    return st.builds(Mutation, st.sampled_from(KINDS), fraction, fraction, st.binary(min_size=1, max_size=8), st.just(separator))


def mutated_release(fmt: Format, file: str, mutate: Mutation, directory: Path) -> tuple[Path, Path]:
    """A copy of the format's fixture release in ``directory`` with ``file`` mutated: (release, file)."""
    source = FIXTURES / fmt.release
    release = directory / source.name
    if source.is_dir():
        shutil.copytree(source, release)
    else:
        shutil.copy(source, release)
    target = release / file if file else release
    target.write_bytes(mutate(target.read_bytes()))
    return release, target


# --- the store --------------------------------------------------------------------------------


def store_snapshot(engine: Engine) -> dict[str, tuple[int, str]]:
    """Row count and sha256 over the ordered rows of every table."""
    snapshot = {}
    with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            rows = conn.execute(select(table).order_by(*table.primary_key.columns)).all()
            snapshot[table.name] = (len(rows), hashlib.sha256(repr(rows).encode()).hexdigest())
    return snapshot


@pytest.fixture
def store(store_url: str) -> Iterator[Engine]:
    """A migrated store holding the toy systems (so that there is something to keep)."""
    migrate(store_url)
    engine = make_engine(store_url)
    for source in toy_sources():
        load_source(engine, source)
    yield engine
    engine.dispose()


# --- the property -----------------------------------------------------------------------------


def parse(fmt: Format, release: Path) -> SourceError | None:
    """Open and read the whole release: None when it parses, else its SourceError."""
    try:
        records = list(fmt.open(release))
    except SourceError as error:
        return error
    codes = [concept.code for concept in records]
    assert len(set(codes)) == len(codes), "a release that parses has unique codes"
    return None


@pytest.mark.parametrize("name", FORMATS)
def test_mutated_releases_fail_with_file_and_line_and_leave_the_store_unchanged(name: str, store: Engine) -> None:
    fmt = FORMATS[name]
    before = store_snapshot(store)

    @given(file=st.sampled_from(fmt.files), mutate=mutations(fmt.separator))
    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def check(file: str, mutate: Mutation) -> None:
        with tempfile.TemporaryDirectory() as directory:
            release, target = mutated_release(fmt, file, mutate, Path(directory))
            error = parse(fmt, release)
            if error is None:
                return
            assert error.path.startswith(str(release)), error
            assert (error.line or 0) >= 1 or any(fault in str(error) for fault in WHOLE_FILE), error
            with pytest.raises(SourceError):
                load_source(store, fmt.open(release))
            assert store_snapshot(store) == before

    check()
