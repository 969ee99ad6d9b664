"""Embedded BM25 with tantivy. Text arrives already normalised (see ``normalise.tokens``)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tantivy

from indexer.lexical.base import IdRange, Label
from indexer.lexical.normalise import tokens

BACKEND = "tantivy"
COPY_PREFIX = "termsearch-lexical-"  # then the serving process's id: a copy whose process is gone is removed


def remove_orphaned_copies(directory: Path | None = None) -> list[Path]:
    """Remove the private index copies (in the temp directory) of processes that no longer run:
    a worker killed without its clean-up leaves its copy behind, and every start would add one."""
    removed = []
    for path in Path(directory or tempfile.gettempdir()).glob(f"{COPY_PREFIX}*-*"):
        pid = path.name.removeprefix(COPY_PREFIX).partition("-")[0]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("label_id", stored=True, indexed=True, fast=True)
    builder.add_text_field("text", stored=False, tokenizer_name="whitespace", index_option="freq")
    builder.add_unsigned_field("within", stored=False, indexed=True)  # Label.within: a subtree is one term
    return builder.build()


class TantivyBuilder:
    backend = BACKEND

    def __init__(self, heap_bytes: int = 200_000_000) -> None:
        self.heap_bytes = heap_bytes

    def build(self, directory: Path, labels: Iterable[Label]) -> dict[str, Any]:
        with self.writer(directory) as add:
            for label in labels:
                add(label)
        return {}

    @contextmanager
    def writer(self, directory: Path) -> Iterator[Callable[[Label], None]]:
        """Adds labels one at a time, committed when the block ends without an error (an
        Elasticsearch build fills its embedded fallback in the pass that loads the cluster)."""
        directory.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(_schema(), path=str(directory))
        writer = index.writer(heap_size=self.heap_bytes, num_threads=1)

        def add(label: Label) -> None:
            document = tantivy.Document()
            document.add_unsigned("label_id", label.id)
            document.add_text("text", " ".join(tokens(label.text)))
            for row in label.within:
                document.add_unsigned("within", row)
            writer.add_document(document)

        yield add
        writer.commit()
        writer.wait_merging_threads()


class TantivyIndex:
    backend = BACKEND

    def __init__(self, directory: Path) -> None:
        # tantivy memory-maps its segments, and a mapped file truncated on disk kills the process
        # (SIGBUS): it serves a private copy of the (small) index, removed with this object.
        remove_orphaned_copies()
        self._copy = tempfile.TemporaryDirectory(prefix=f"{COPY_PREFIX}{os.getpid()}-")
        shutil.copytree(directory, self._copy.name, dirs_exist_ok=True)
        self._schema = _schema()
        self._index = tantivy.Index.open(self._copy.name)
        self._searcher = self._index.searcher()

    def __len__(self) -> int:
        return self._searcher.num_docs

    def search(
        self, query: str, k: int, id_range: IdRange | None = None, allowed: Sequence[int] | None = None, within: int | None = None
    ) -> list[tuple[int, float]]:
        terms = dict.fromkeys(tokens(query))
        if not terms or k <= 0:
            return []
        should = [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "text", t)) for t in terms]
        clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
        if id_range is not None and (id_range[0] > 0 or id_range[1] < self._searcher.num_docs):  # else: no filter to apply
            in_range = tantivy.Query.range_query(
                self._schema, "label_id", tantivy.FieldType.Unsigned, id_range[0], id_range[1], True, False
            )
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(in_range, 0.0)))
        if allowed is not None:
            among = tantivy.Query.term_set_query(self._schema, "label_id", [int(i) for i in allowed])
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(among, 0.0)))
        if within is not None:
            below = tantivy.Query.term_query(self._schema, "within", int(within))
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(below, 0.0)))
        hits = self._searcher.search(tantivy.Query.boolean_query(clauses), limit=k, count=False).hits
        # The label ids from their fast field: fetching each stored document took 2.3 times as long.
        ids = self._searcher.fast_field_values("label_id", [address for _, address in hits])
        return [(label, score) for label, (score, _) in zip(ids, hits, strict=True)]
