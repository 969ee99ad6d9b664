"""``python -m training`` answers bad input with a one-line error naming the problem."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from training.cli import cli


def test_export_base_names_a_directory_that_is_not_a_model(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["export-base", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert f"error: {tmp_path}: not a sentence-transformers model directory (no modules.json)" in result.output
    assert not (tmp_path / "out").exists()
