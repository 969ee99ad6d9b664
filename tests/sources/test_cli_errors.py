"""``python -m indexer``: a refused file is one line naming file and line (exit 1), never a
traceback; a version already in the store says that the file was skipped unread."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexer.cli import cli


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TERMSEARCH_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.chdir(tmp_path)  # no .env from the checkout
    return tmp_path


def _obo(path: Path, second_id: str) -> Path:
    path.write_text(
        f"format-version: 1.4\ndata-version: v1\n\n[Term]\nid: X:1\nname: One\n\n[Term]\nid: {second_id}\nname: Two\n",
        encoding="utf-8",
    )
    return path


def test_a_duplicate_obo_id_is_one_line_naming_file_and_line(env: Path) -> None:
    path = _obo(env / "dup.obo", "X:1")
    result = CliRunner().invoke(cli, ["load", "obo", str(path)])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "IntegrityError" not in result.output
    assert f"{path}:8: duplicate id 'X:1' (first at line 4)" in " ".join(result.output.split())


def test_a_version_already_loaded_is_reported_as_skipped_unread(env: Path) -> None:
    good = _obo(env / "good.obo", "X:2")
    assert CliRunner().invoke(cli, ["load", "obo", str(good)]).exit_code == 0
    malformed = env / "same-version.obo"
    malformed.write_text(good.read_text(encoding="utf-8") + "\n[Term]\nnot a tag line\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["load", "obo", str(malformed)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0
    assert "skipped: x v1 is already in the store (2 concepts); the file was not read or checked" in said
