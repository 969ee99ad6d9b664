"""The registry: one name per loader, a clear error for the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.sources import SOURCES, open_source
from indexer.sources.hpo import default_path
from indexer.sources.icd10cm import Icd10cmSource
from indexer.sources.obo import OboSource


def test_registered_names() -> None:
    assert set(SOURCES) == {"hpo", "icd10cm", "obo", "snomed", "umls"}


def test_defaults_open_the_shipped_files() -> None:
    hpo = open_source("hpo")
    assert isinstance(hpo, OboSource) and hpo.info.key == "hpo"
    icd = open_source("icd10cm")
    assert isinstance(icd, Icd10cmSource) and icd.info.key == "icd10cm"


def test_generic_obo(fixture_dir: Path) -> None:
    assert open_source("obo", fixture_dir / "obo" / "mini.obo").info.key == "mini"
    assert open_source("obo", default_path()).info.key == "hp"
    assert open_source("obo", default_path(), key="hpo").info.key == "hpo"
    with pytest.raises(ValueError, match="needs the path"):
        open_source("obo")


def test_licensed_sources_need_a_path_and_take_their_options(fixture_dir: Path) -> None:
    for name in ("snomed", "umls"):
        with pytest.raises(ValueError, match="needs the path"):
            open_source(name)
    assert open_source("snomed", fixture_dir / "rf2", language_refset="900000000000508004").info.key == "snomedct"
    umls = open_source("umls", fixture_dir / "umls" / "2025AA" / "META", as_sab="MSH", lang=["ENG"])
    assert umls.info.key == "msh"


def test_unknown_name_lists_the_known_ones() -> None:
    known = "unknown source 'loinc'; known sources: hpo, icd10cm, obo, snomed, umls"
    with pytest.raises(ValueError, match=known):
        open_source("loinc")


def test_an_option_the_source_does_not_take_is_a_value_error(fixture_dir: Path) -> None:
    with pytest.raises(ValueError, match="source 'hpo': got an unexpected keyword argument 'sab'"):
        open_source("hpo", None, sab=["MSH"])
