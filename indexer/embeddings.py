"""Label vectors, each text embedded once per encoder and kept on disk.

The cache directory is keyed by the encoder (id and weights hash) and holds chunks of up to
``CHUNK`` texts: ``NNNNN.npy`` (vectors) and ``NNNNN.json`` (their texts, written last, so a
chunk without its texts is an interrupted write and is ignored). A build that stops midway
resumes from the chunks it finished; a rebuild that adds a few labels (a supplement, the
knowledge sources) embeds only those. Chunks are read when needed, a few at a time, and a build
streams the label vectors into one file (:meth:`EmbeddingCache.write`), so memory holds a few
chunks and one block, never every vector.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from rich.progress import Progress

from indexer.encoders import Encoder
from indexer.vector.rows import VectorWriter, open_rows

VERSION = 2  # of how vectors are computed (2: each text alone); older caches are not read
CHUNK = 8192  # texts per checkpoint
# Texts per encoder call (and the progress bar's step): whole CUDA batches of 1,024, each of texts
# of like length (the encoder sorts a call's texts by length before batching them).
STEP = 2048
LOADED = 16  # chunks held in memory at once (a build reads them in order: each about once)


class EmbeddingCache:
    def __init__(self, root: Path, encoder: Encoder) -> None:
        key = f"{encoder.id}\0{encoder.sha256}\0{encoder.precision}\0{VERSION}"
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        self.directory = root / digest
        self.encoder = encoder
        self.directory.mkdir(parents=True, exist_ok=True)
        for stale in root.iterdir():  # another encoder's vectors are never read again
            if stale != self.directory:
                shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink()
        self._rows: dict[str, tuple[int, int]] = {}  # text -> (chunk number, row)
        self._files: list[Path] = []  # chunk number -> its vectors, read when asked
        for texts_file in sorted(self.directory.glob("*.json")):
            texts = json.loads(texts_file.read_text(encoding="utf-8"))
            vectors = texts_file.with_suffix(".npy")
            if not vectors.is_file() or np.load(vectors, mmap_mode="r").shape[0] != len(texts):
                continue  # a chunk from an interrupted write: its texts are embedded again
            self._add_chunk(vectors, texts)
        self._chunk = lru_cache(maxsize=LOADED)(lambda number: np.load(self._files[number]))

    def vectors(self, texts: Sequence[str], progress: Progress, description: str = "embed labels") -> np.ndarray:
        """One vector per text (in order), embedding the texts not cached yet."""
        self._embed_missing(texts, progress, description)
        return self._gather(texts)

    def write(self, texts: Sequence[str], path: Path, progress: Progress, block: int) -> np.ndarray:
        """Embed the texts not cached yet, then write one vector per text (in order) into the
        ``.npy`` file ``path``, ``block`` at a time; the file, memory-mapped read-only."""
        self._embed_missing(texts, progress, "embed labels")
        with VectorWriter(path, len(texts), self.encoder.dimension) as out:
            for start in range(0, len(texts), block):
                out.write(self._gather(texts[start : start + block]))
        return open_rows(path)

    def _embed_missing(self, texts: Sequence[str], progress: Progress, description: str) -> None:
        missing = [t for t in dict.fromkeys(texts) if t not in self._rows]
        task = progress.add_task(description, total=len(missing))
        for start in range(0, len(missing), CHUNK):
            self._save(missing[start : start + CHUNK], progress, task)

    def _gather(self, texts: Sequence[str]) -> np.ndarray:
        """The cached vectors of ``texts``, reading each chunk they need once."""
        out = np.empty((len(texts), self.encoder.dimension), np.float32)
        if not texts:
            return out
        places = np.asarray([self._rows[t] for t in texts], dtype=np.int64).reshape(-1, 2)
        for number in np.unique(places[:, 0]).tolist():
            mine = places[:, 0] == number
            out[mine] = self._chunk(number)[places[mine, 1]]
        return out

    def _save(self, texts: list[str], progress: Progress, task: int) -> None:
        parts = []
        for i in range(0, len(texts), STEP):
            parts.append(self.encoder.encode(texts[i : i + STEP]))
            progress.advance(task, len(texts[i : i + STEP]))
        vectors = np.concatenate(parts).astype(np.float32, copy=False)
        taken = [int(p.name.split(".")[0]) for p in self.directory.iterdir() if p.name.split(".")[0].isdigit()]
        stem = self.directory / f"{max(taken, default=-1) + 1:05d}"
        np.save(stem.with_suffix(".npy"), vectors)
        tmp = stem.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        tmp.rename(stem.with_suffix(".json"))
        self._add_chunk(stem.with_suffix(".npy"), texts)

    def _add_chunk(self, vectors: Path, texts: list[str]) -> None:
        number = len(self._files)
        self._files.append(vectors)
        for row, text in enumerate(texts):
            self._rows[text] = (number, row)
