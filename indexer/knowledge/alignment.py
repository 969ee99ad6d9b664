"""Concepts of two terminologies that mean the same thing, and the synonyms they lend each other.

Three kinds of evidence, strongest first:

- ``xref``: a concept cross-references a code of the other loaded system (HPO's ``UMLS:C…`` and
  ``SNOMEDCT_US:…`` xrefs when those releases are loaded); score 1.0.
- ``label``: a name of one (preferred name, exact synonym, inclusion or includes term) says the
  same as a name of the other, up to case, word order, bracketed modifiers and
  "unspecified"/"NOS" (:func:`~indexer.lexical.normalise.label_key`); score 0.9 to 1.0.
- ``dense`` (off unless ``knowledge.dense_threshold`` is set): for a concept with no such evidence, the two concepts are each other's nearest
  neighbour by the cosine of their names' vectors, at or above a threshold; score = cosine.

Only codable concepts align: active, not a chapter or block, not an ICD-10-CM 7th-character
extension, not a manifestation code ("in diseases classified elsewhere"). Along each alignment,
:func:`propagate` lends the source's preferred name and exact synonyms (layperson,
abbreviation, plural, UK spelling) to the target, as designations that keep their origin.
The threshold was chosen on a hand-checked sample (``alignment_sample.tsv``, measured by
``bench/bench_alignment.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from indexer.bundle import code_key
from indexer.catalog import Catalog, Entry
from indexer.lexical.normalise import label_key
from indexer.records import Designation, DesignationUse

KNOWLEDGE = "alignments"
XREF_PREFIXES = {"UMLS": "umls", "SNOMEDCT_US": "snomedct", "SNOMEDCT": "snomedct", "SCTID": "snomedct"}
NAME_TYPES = frozenset({"inclusion", "includes"})
LENT_TYPES = frozenset({None, "layperson", "abbreviation", "plural_form", "uk_spelling"})
BLOCK = 512  # source names per matrix product in the dense pass

Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Alignment:
    source: int  # catalog rows
    target: int
    score: float
    method: str  # xref, label, dense
    evidence: str

    def row(self) -> list:
        return [self.source, self.target, round(self.score, 4), self.method, self.evidence]


def codable(entry: Entry) -> bool:
    if not entry.active or entry.grouping or "classified elsewhere" in entry.display:
        return False
    return not (entry.system == "icd10cm" and len(code_key(entry.code)) >= 7)


def names(entry: Entry, lent: bool = False) -> list[Designation]:
    """The labels that say what the concept is (not broader, narrower or related terms): its
    own, and with ``lent`` those an alignment lent it too."""
    return [
        d
        for d in entry.labels
        if d.knowledge in ((None, KNOWLEDGE) if lent else (None,))
        and (
            d.use in (DesignationUse.PREFERRED, DesignationUse.FSN)
            or d.type in NAME_TYPES
            or (d.scope == "EXACT" and d.type != "abbreviation")
        )
    ]


def align(catalog: Catalog, source: str, target: str, embed: Embed, threshold: float | None) -> list[Alignment]:
    """Alignments from ``source`` concepts to ``target`` concepts, each pair once (strongest)."""
    sources = [e for e in catalog.of(source) if codable(e)]
    targets = [e for e in catalog.of(target) if codable(e)]
    found: dict[tuple[int, int], Alignment] = {}
    for alignment in (*_by_xref(catalog, sources, target), *_by_label(sources, targets)):
        found.setdefault((alignment.source, alignment.target), alignment)
    aligned = {s for s, _ in found}
    dense = _by_dense([e for e in sources if e.row not in aligned], targets, embed, threshold) if threshold else []
    for alignment in dense:
        found.setdefault((alignment.source, alignment.target), alignment)
    return sorted(found.values(), key=lambda a: (a.source, -a.score, a.target))


def _by_xref(catalog: Catalog, sources: list[Entry], target: str) -> list[Alignment]:
    out = []
    for entry in sources:
        for xref in entry.xrefs:
            prefix, _, code = xref.partition(":")
            other = catalog.get(target, code) if XREF_PREFIXES.get(prefix) == target else None
            if other is not None and codable(other):
                out.append(Alignment(entry.row, other.row, 1.0, "xref", f"{entry.code} xref {xref}"))
    return out


def _by_label(sources: list[Entry], targets: list[Entry]) -> list[Alignment]:
    index: dict[str, list[tuple[Entry, Designation]]] = defaultdict(list)
    for entry in targets:
        for d in names(entry):
            index[label_key(d.text)].append((entry, d))
    out = []
    for entry in sources:
        for d in names(entry):
            key = label_key(d.text)
            for other, o in index.get(key, ()) if key else ():
                preferred = (d.use == DesignationUse.PREFERRED) + (o.use == DesignationUse.PREFERRED)
                score = (0.9, 0.95, 1.0)[preferred]
                out.append(Alignment(entry.row, other.row, score, "label", f"'{d.text}' = '{o.text}'"))
    return sorted(out, key=lambda a: -a.score)


def _by_dense(sources: list[Entry], targets: list[Entry], embed: Embed, threshold: float) -> list[Alignment]:
    """Mutual nearest neighbours over the concepts' names, cosine ≥ ``threshold``."""
    source_names = [(e, d) for e in sources for d in names(e)]
    target_names = [(e, d) for e in targets for d in names(e)]
    if not source_names or not target_names:
        return []
    left = embed([d.text for _, d in source_names])
    right = embed([d.text for _, d in target_names])
    row_best = np.empty(len(left), dtype=np.int64)
    row_score = np.empty(len(left), dtype=np.float32)
    col_best = np.zeros(len(right), dtype=np.int64)
    col_score = np.full(len(right), -2.0, dtype=np.float32)
    for start in range(0, len(left), BLOCK):
        scores = left[start : start + BLOCK] @ right.T
        row_best[start : start + BLOCK] = scores.argmax(axis=1)
        row_score[start : start + BLOCK] = scores.max(axis=1)
        block_best = scores.argmax(axis=0)
        block_score = scores[block_best, np.arange(len(right))]
        better = block_score > col_score
        col_best[better] = block_best[better] + start
        col_score[better] = block_score[better]
    best_target = _best_per_entry(source_names, row_best, row_score)
    best_source = _best_per_entry(target_names, col_best, col_score)
    out = []
    for source_row, (name, other, score) in best_target.items():
        target_entry, target_name = target_names[other]
        back = best_source.get(target_entry.row)
        if score >= threshold and back is not None and source_names[back[1]][0].row == source_row:
            evidence = f"'{source_names[name][1].text}' ~ '{target_name.text}' (cosine {score:.3f})"
            out.append(Alignment(source_row, target_entry.row, float(score), "dense", evidence))
    return out


def _best_per_entry(
    rows: list[tuple[Entry, Designation]], best: np.ndarray, score: np.ndarray
) -> dict[int, tuple[int, int, float]]:
    """Per concept: (its best name's index, that name's nearest name on the other side, cosine)."""
    out: dict[int, tuple[int, int, float]] = {}
    for i, (entry, _) in enumerate(rows):
        if entry.row not in out or score[i] > out[entry.row][2]:
            out[entry.row] = (i, int(best[i]), float(score[i]))
    return out


def propagate(catalog: Catalog, alignments: list[Alignment]) -> int:
    """Lend each source concept's exact names to its aligned targets; the number of labels added."""
    added = 0
    for a in alignments:
        giver, taker = catalog.entries[a.source], catalog.entries[a.target]
        via = f"via {giver.system.upper()} {giver.code} {giver.display} ({a.method} alignment {a.score:.2f})"
        for d in giver.labels:
            lent = d.knowledge is None and (
                d.use == DesignationUse.PREFERRED or (d.scope == "EXACT" and d.type in LENT_TYPES)
            )
            if lent:
                added += taker.add(
                    Designation(d.text, DesignationUse.SYNONYM, d.language, "EXACT", d.type, True, via, KNOWLEDGE)
                )
    return added
