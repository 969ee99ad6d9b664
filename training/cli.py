"""``python -m training``: train a BioLORD-style encoder from the concept store and export it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from indexer.settings import get_settings
from indexer.store import StoreReader, make_engine
from training import pipeline
from training.recipe import Recipe

cli = typer.Typer(help=__doc__, no_args_is_help=True, pretty_exceptions_enable=False)


@cli.callback()
def main() -> None:
    """Recipes are YAML files in training/recipes/."""


@cli.command("run")
def run_command(
    recipe_path: Annotated[Path, typer.Argument(help="Recipe YAML, e.g. training/recipes/biolord-minilm.yaml")],
    run_dir: Annotated[Path | None, typer.Option(help="Default: {data_dir}/training/{recipe name}")] = None,
) -> None:
    """Train (resuming an interrupted run) and export the model directory to RUN_DIR/model."""
    recipe_text = recipe_path.read_text(encoding="utf-8")
    recipe = Recipe.load(recipe_path)
    settings = get_settings()
    run_dir = run_dir or settings.data_dir / "training" / recipe.name
    run_dir.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.StreamHandler(), logging.FileHandler(run_dir / "train.log")],
    )
    reader = StoreReader(make_engine(settings.store.url))
    model_dir = pipeline.run(recipe, recipe_text, reader, run_dir)
    typer.echo(f"model exported: {model_dir}")
