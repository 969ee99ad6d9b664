"""Label vectors, each text embedded once per encoder and kept on disk.

The cache directory is keyed by the encoder (id and weights hash) and holds chunks of up to
``CHUNK`` texts: ``NNNNN.npy`` (vectors) and ``NNNNN.json`` (their texts, written last, so a
chunk without its texts is an interrupted write and is ignored). A build that stops midway
resumes from the chunks it finished; a rebuild that adds a few labels (a supplement, the
knowledge sources) embeds only those.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from rich.progress import Progress

from indexer.encoders import Encoder

VERSION = 2  # of how vectors are computed (2: each text alone); older caches are not read
CHUNK = 8192  # texts per checkpoint
STEP = 256  # texts per encoder call (progress granularity)


class EmbeddingCache:
    def __init__(self, root: Path, encoder: Encoder) -> None:
        digest = hashlib.sha256(f"{encoder.id}\0{encoder.sha256}\0{VERSION}".encode()).hexdigest()[:24]
        self.directory = root / digest
        self.encoder = encoder
        self.directory.mkdir(parents=True, exist_ok=True)
        for stale in root.iterdir():  # another encoder's vectors are never read again
            if stale != self.directory:
                shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink()
        self._rows: dict[str, tuple[int, int]] = {}  # text -> (chunk number, row)
        self._chunks: list[np.ndarray] = []
        for texts_file in sorted(self.directory.glob("*.json")):
            vectors = np.load(texts_file.with_suffix(".npy"))
            texts = json.loads(texts_file.read_text(encoding="utf-8"))
            if len(texts) != len(vectors):
                continue  # a chunk from an interrupted write: its texts are embedded again
            number = len(self._chunks)
            self._chunks.append(vectors)
            for row, text in enumerate(texts):
                self._rows[text] = (number, row)

    def vectors(self, texts: Sequence[str], progress: Progress, description: str = "embed labels") -> np.ndarray:
        """One vector per text (in order), embedding the texts not cached yet."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._rows]
        task = progress.add_task(description, total=len(missing))
        for start in range(0, len(missing), CHUNK):
            self._save(missing[start : start + CHUNK], progress, task)
        if not texts:
            return np.empty((0, self.encoder.dimension), np.float32)
        return np.stack([self._chunks[c][r] for c, r in (self._rows[t] for t in texts)])

    def _save(self, texts: list[str], progress: Progress, task: int) -> None:
        parts = []
        for i in range(0, len(texts), STEP):
            parts.append(self.encoder.encode(texts[i : i + STEP]))
            progress.advance(task, len(texts[i : i + STEP]))
        vectors = np.concatenate(parts).astype(np.float32, copy=False)
        number = len(self._chunks)
        taken = [int(p.name.split(".")[0]) for p in self.directory.iterdir() if p.name.split(".")[0].isdigit()]
        stem = self.directory / f"{max(taken, default=-1) + 1:05d}"
        np.save(stem.with_suffix(".npy"), vectors)
        tmp = stem.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        tmp.rename(stem.with_suffix(".json"))
        self._chunks.append(vectors)
        for row, text in enumerate(texts):
            self._rows[text] = (number, row)
