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


def test_run_names_the_recipe_file_and_its_wrong_field(tmp_path: Path) -> None:
    recipe = tmp_path / "bad.yaml"
    recipe.write_text("name: x\nexport: {model_id: x}\nlay: {datasets: [lay, synonym]}\n")
    result = CliRunner().invoke(cli, ["run", str(recipe), "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 1
    assert result.output == (
        f"error: {recipe}: lay.datasets.1: Input should be 'definitions', 'descriptions', 'entries', 'hierarchy', 'synonyms', 'triplets' or 'lay'\n"
    )
    assert not (tmp_path / "run").exists()


def test_compare_names_a_missing_recipe(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["compare", str(tmp_path / "none.yaml"), "--no-bm25"])
    assert result.exit_code == 1
    assert result.output == f"error: {tmp_path / 'none.yaml'}: No such file or directory\n"
