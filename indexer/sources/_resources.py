"""Data files shipped inside installed packages, found without importing those packages.

``importlib.resources.files(package)`` imports the package first; ``simple_icd_10_cm`` parses
its whole XML at import (about 2 s), so the package directory is taken from its import spec.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path


def package_file(package: str, *parts: str) -> Path:
    """Path of ``parts`` inside the installed top-level ``package`` (not imported)."""
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {package!r} is not installed; pass the file's path")
    return Path(next(iter(spec.submodule_search_locations)), *parts)
