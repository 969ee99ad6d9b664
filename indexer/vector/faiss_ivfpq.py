"""FAISS IVF-PQ for bundles too large for float vectors in memory (SNOMED CT, UMLS).

Each vector is kept as ``dimension / 4`` bytes of 4-bit product-quantiser codes in inverted
lists, scanned with SIMD (FAISS "fast scan": a list is scanned several times faster than 8-bit
codes, and as well re-ranked, on the HPO + ICD-10-CM vectors: bench/RESULTS.md). A query probes ``ivf_nprobe`` lists
(more when a filter keeps a small share of the labels; a filter is applied while the lists are
scanned) for at least ``ivf_rerank`` candidates. They are re-ranked in two steps:
- from 4-bit scalar-quantised codes of every vector (``dimension / 2`` bytes, ``vectors.sq4.npy``,
  memory-mapped), scored for the candidates straight from their codes;
- the best ``ivf_refine`` of them exactly, from the bundle's float16 copy of every vector
  (``vectors.f16.npy``, memory-mapped: the copy the ranking core scores candidates' labels from).
So a search reads ``ivf_refine`` float16 rows, not ``ivf_rerank``: at UMLS size the float16
copy (733 MiB a million labels) can stay on disk, while the codes a search scans (about 275
MiB a million, both kinds) stay in memory. Filters that keep few labels are scored the same two
steps, over all their labels. Trained on a sample, filled a block at a time.

Unlike the smaller kinds, which are read into memory, the codes and the float16 copy are mapped:
a bundle of this size does not fit in each worker, and a mapped file truncated on disk while
served can take a worker down (the start checks every file's size; ``indexer verify`` checks
their hashes).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from indexer.settings import VectorSettings
from indexer.vector.base import IdRange, in_range
from indexer.vector.numpy_flat import top_k
from indexer.vector.rows import VectorWriter, blocks, open_rows, sample

FILE = "vectors.ivfpq.faiss"
MATRIX = "vectors.f16.npy"
CODEC = "vectors.sq4.faiss"  # the trained 4-bit scalar quantiser (a few KB)
CODES = "vectors.sq4.npy"


class IvfPqIndex:
    backend = "faiss-ivfpq"
    filter_limit = None  # a bitmap of the bundle's labels, whatever their number
    keeps_lineage = False

    def __init__(
        self,
        index: faiss.IndexIVFPQFastScan,
        codec: faiss.IndexScalarQuantizer,
        codes: np.ndarray,
        matrix: np.ndarray,
        settings: VectorSettings,
        directory: Path,
    ) -> None:
        # FAISS's int16 fast-scan kernel collecting into a reservoir, one query at a time (its
        # "implem 11"): for the single-query searches served, 1.5 ms against the automatic choice's
        # 2.2 ms (batched queries, 13) at 3M labels, recall@10 against exact unchanged (0.974).
        index.implem = 11
        self._index = index
        self._directory = directory
        self._codes = codes  # uint8 rows of sq4 codes, row = label id (read-only)
        # FAISS's 4-bit scalar quantiser decodes a code c of dimension d as vmin[d] + (c + 0.5) *
        # vdiff[d] / 15, so a query's inner product with a row is its nibbles times the query
        # scaled by the step, plus a constant: no row is decoded, and no OpenMP team is opened
        # (FAISS's decoder opened one a search; 0.17 ms for 1,024 rows against its 0.23 ms).
        vmin, vdiff = faiss.vector_to_array(codec.sq.trained).reshape(2, -1)
        self._step = (vdiff / 15).astype(np.float32)
        self._offset = (vmin + self._step / 2).astype(np.float32)
        self.matrix = matrix  # float16 rows, row = label id (read-only)
        self._nprobe = min(settings.ivf_nprobe, index.nlist)
        self._rerank = settings.ivf_rerank
        self._refine = settings.ivf_refine
        self._exact_below = settings.hnsw_exact_below

    @classmethod
    def build(cls, vectors: np.ndarray, settings: VectorSettings, directory: Path) -> IvfPqIndex:
        """Train on a sample of ``vectors`` (rows of a file or an array), add them a block at a
        time and write their float16 copy into ``directory``."""
        count, dimension = vectors.shape
        nlist = max(1, min(int(2 * math.sqrt(count)), count // 39))  # FAISS asks 39 points a list
        training = sample(vectors, min(count, max(settings.ivf_train_sample, 39 * nlist)), block=settings.build_block)
        subquantizers = next(m for m in range(max(dimension // 2, 1), 0, -1) if dimension % m == 0)
        index = faiss.index_factory(dimension, f"IVF{nlist},PQ{subquantizers}x4fs", faiss.METRIC_INNER_PRODUCT)
        index.cp.min_points_per_centroid = 1  # the sample is sized for the lists: no warning
        index.pq.cp.min_points_per_centroid = 1
        index.train(training)
        codec = faiss.IndexScalarQuantizer(dimension, faiss.ScalarQuantizer.QT_4bit, faiss.METRIC_INNER_PRODUCT)
        codec.train(training)
        del training
        with (
            VectorWriter(directory / MATRIX, count, dimension, np.float16) as matrix,
            VectorWriter(directory / CODES, count, codec.sa_code_size(), np.uint8) as codes,
        ):
            for first, block in blocks(vectors, settings.build_block):
                index.add_with_ids(block, np.arange(first, first + len(block), dtype=np.int64))
                matrix.write(block)
                codes.write(codec.sa_encode(block))
        faiss.write_index(index, str(directory / FILE))
        faiss.write_index(codec, str(directory / CODEC))
        return cls.load(directory, settings)

    @classmethod
    def load(cls, directory: Path, settings: VectorSettings) -> IvfPqIndex:
        index = faiss.read_index(str(directory / FILE), faiss.IO_FLAG_MMAP)
        codec = faiss.read_index(str(directory / CODEC))
        return cls(index, codec, open_rows(directory / CODES), open_rows(directory / MATRIX), settings, directory)

    def __len__(self) -> int:
        return self._index.ntotal

    def search(
        self, query: np.ndarray, k: int, id_range: IdRange | None = None, allowed: np.ndarray | None = None, within: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        total = self._index.ntotal
        if k <= 0 or total == 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        start, stop = id_range or (0, total)
        if allowed is not None:
            allowed = in_range(allowed, start, stop)
        size = len(allowed) if allowed is not None else stop - start
        if size <= self._exact_below:  # few: every one of them re-ranked
            return self._rescore(allowed if allowed is not None else np.arange(start, stop), query, k)
        selector, keep = self._selector(start, stop, allowed)
        # A filter that keeps a small share of the labels leaves few of them in the usual lists.
        nprobe = min(self._index.nlist, math.ceil(self._nprobe * math.sqrt(total / size)))
        params = faiss.SearchParametersIVF(sel=selector, nprobe=nprobe)
        wanted = max(k, self._rerank)
        _, ids = self._index.search(np.asarray(query, dtype=np.float32).reshape(1, -1), wanted, params=params)
        del keep
        return self._rescore(np.sort(ids[0][ids[0] >= 0]), query, k)

    def _rescore(self, ids: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` of ``ids`` (ascending): the best ``ivf_refine`` by their decoded 4-bit
        codes, then those exactly from float16."""
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        best = max(k, self._refine)
        if len(ids) > best:
            approximate = self.approximate(self._codes[ids], query)
            ids = np.sort(ids[np.argpartition(-approximate, best - 1)[:best]])
        return top_k(self.matrix, ids, query, k)

    def approximate(self, codes: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Inner products of ``query`` with the rows whose 4-bit codes are ``codes``."""
        dimension = len(self._step)
        nibbles = np.empty((len(codes), 2 * codes.shape[1]), dtype=np.float32)
        nibbles[:, 0::2] = codes & 15
        nibbles[:, 1::2] = codes >> 4
        return nibbles[:, :dimension] @ (query * self._step) + float(query @ self._offset)

    def _selector(self, start: int, stop: int, allowed: np.ndarray | None) -> tuple[faiss.IDSelector | None, Any]:
        """The search's filter and what it points into (kept alive while it searches)."""
        if allowed is None:
            return (faiss.IDSelectorRange(start, stop) if (start, stop) != (0, self._index.ntotal) else None), None
        bits = np.zeros(self._index.ntotal, dtype=bool)
        bits[allowed] = True
        bitmap = np.packbits(bits, bitorder="little")
        return faiss.IDSelectorBitmap(self._index.ntotal, faiss.swig_ptr(bitmap)), bitmap

    def save(self, directory: Path) -> dict[str, Any]:
        """The build wrote the files as it went: copied when ``directory`` is another one."""
        if directory.resolve() != self._directory.resolve():
            for name in (FILE, MATRIX, CODEC, CODES):
                shutil.copyfile(self._directory / name, directory / name)
        return {"nlist": self._index.nlist, "code_bytes": self._index.code_size}
