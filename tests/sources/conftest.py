"""The real shipped files, each parsed once per session (about a second each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.records import Concept
from indexer.sources.hpo import hpo_source
from indexer.sources.icd10cm import Icd10cmSource
from indexer.sources.obo import OboSource


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="session")
def hpo() -> OboSource:
    return hpo_source()


@pytest.fixture(scope="session")
def hpo_concepts(hpo: OboSource) -> dict[str, Concept]:
    return {c.code: c for c in hpo}


@pytest.fixture(scope="session")
def icd10cm() -> Icd10cmSource:
    return Icd10cmSource()


@pytest.fixture(scope="session")
def icd10cm_concepts(icd10cm: Icd10cmSource) -> dict[str, Concept]:
    concepts: dict[str, Concept] = {}
    for concept in icd10cm:
        assert concept.code not in concepts, f"duplicate code {concept.code}"
        concepts[concept.code] = concept
    return concepts
