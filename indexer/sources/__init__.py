"""Terminology loaders, one module per format, behind one registry.

``open_source(name, path, **options)`` opens a registered source; each factory takes ``path``
(``None`` for its default, where it has one) and its own keyword options.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from indexer.records import Source
from indexer.sources.hpo import hpo_source
from indexer.sources.icd10cm import Icd10cmSource
from indexer.sources.obo import OboSource
from indexer.sources.snomed import SnomedSource
from indexer.sources.umls import UmlsSource

SOURCES: dict[str, Callable[..., Source]] = {
    "hpo": hpo_source,
    "icd10cm": Icd10cmSource,
    "obo": OboSource,  # any OBO file: path required; key defaults to its id prefix, lower-cased
    "snomed": SnomedSource,  # a licensed RF2 Snapshot release (directory or zip): key snomedct
    "umls": UmlsSource,  # a licensed UMLS META directory: key umls, or the SAB's with as_sab
}


def open_source(name: str, path: str | Path | None = None, **options: Any) -> Source:
    """Open the source registered as ``name``; an unknown name, or an option that source does not
    take, is a :class:`ValueError`."""
    try:
        factory = SOURCES[name]
    except KeyError:
        known = ", ".join(sorted(SOURCES))
        raise ValueError(f"unknown source {name!r}; known sources: {known}") from None
    try:
        inspect.signature(factory).bind(path, **options)
    except TypeError as e:
        raise ValueError(f"source {name!r}: {e}") from None
    return factory(path, **options)


__all__ = ["SOURCES", "Icd10cmSource", "OboSource", "SnomedSource", "UmlsSource", "hpo_source", "open_source"]
