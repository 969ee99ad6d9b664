"""A bundle a coder and a terminologist browse in the tests: the toy phenotypes (``tests/toy.py``;
Tachycardia also cross-references ICD-10-CM's R00.0) and a slice of the real ICD-10-CM tabular
(the categories and codes in ``SLICE`` with everything below and above them, read by the
source). ``coder_server`` (tests/browser/conftest.py) serves it."""

from __future__ import annotations

import dataclasses
from functools import cache

from indexer.records import CodeSystemInfo, Concept
from indexer.sources.icd10cm import Icd10cmSource
from tests.toy import toy_concepts

SLICE = ("I21", "I22", "I25.2", "I10", "R00", "E11", "S72.0", "Z87.891")  # categories (and codes) kept, with all below them


@cache
def icd10cm_slice() -> tuple[CodeSystemInfo, tuple[Concept, ...]]:
    source = Icd10cmSource()
    concepts = {c.code: c for c in source}
    parent = {c.code: c.relationships[0].target for c in concepts.values() if c.relationships}
    kept = {code for code in concepts if any(_within(code, s) for s in SLICE)}
    for code in list(kept):
        while code in parent:
            code = parent[code]
            kept.add(code)
    return source.info, tuple(c for code, c in concepts.items() if code in kept)


def _within(code: str, kept: str) -> bool:
    return code.startswith(kept) if "." in kept else code == kept or code.startswith(f"{kept}.")


def toy_with_xrefs() -> list[Concept]:
    """The toy phenotypes; Tachycardia also cross-references ICD-10-CM's R00.0."""
    return [
        dataclasses.replace(c, xrefs=[*c.xrefs, "ICD10CM:R00.0", "NOPE:1"]) if c.display == "Tachycardia" else c
        for c in toy_concepts()
    ]


