"""``python -m training``: train a BioLORD-style encoder from the concept store and export it."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer

from indexer.encoders import Encoder, EncoderError, load_encoder
from indexer.settings import get_settings
from indexer.store import StoreReader, make_engine
from training import compare, pipeline
from training.base_models import BaseModelError
from training.recipe import Recipe, RecipeError

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
    recipe = _recipe(recipe_path)
    recipe_text = recipe_path.read_text(encoding="utf-8")
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


def _recipe(path: Path) -> Recipe:
    try:
        return Recipe.load(path)
    except RecipeError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from exc


@cli.command("export-base")
def export_base_command(
    name: Annotated[str, typer.Argument(help="all-MiniLM-L6-v2, all-mpnet-base-v2, or a sentence-transformers directory")],
    out: Annotated[Path, typer.Option(help="Model directory to write")],
    systems: Annotated[str, typer.Option(help="Systems whose names drive the parity check")] = "hpo,icd10cm",
    quantize: Annotated[bool, typer.Option(help="int8 (as served); --no-quantize keeps fp32, for models that drift in int8")] = True,
) -> None:
    """Export an untrained base model (or a checkpoint directory) to ONNX, as a column for `compare`."""
    settings = get_settings()
    reader = StoreReader(make_engine(settings.store.url))
    try:
        model_dir = pipeline.export_base(name, reader, [s.strip() for s in systems.split(",") if s.strip()], out, quantize)
    except (BaseModelError, EncoderError) as exc:  # unknown base model, missing package, failed parity
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    typer.echo(f"model exported: {model_dir}")


@cli.command("compare")
def compare_command(
    recipe_path: Annotated[Path, typer.Argument(help="The recipe whose split defines the held-out test concepts")],
    model: Annotated[list[str] | None, typer.Option(help="NAME=MODEL_DIR (an exported model directory); repeatable")] = None,
    bm25: Annotated[bool, typer.Option(help="Add a BM25 column")] = True,
    output: Annotated[Path | None, typer.Option(help="Write the results as JSON here")] = None,
) -> None:
    """Evaluate exported models (and BM25) on the recipe's held-out concepts; print markdown tables."""
    recipe = _recipe(recipe_path)
    settings = get_settings()
    encoders: dict[str, Encoder | None] = {"BM25": None} if bm25 else {}
    for spec in model or []:
        name, _, path = spec.partition("=")
        encoders[name] = load_encoder(Path(path), settings.encoder)
    results = compare.compare(recipe, StoreReader(make_engine(settings.store.url)), encoders)
    if output:
        output.write_text(json.dumps(results, indent=2))
    typer.echo(compare.markdown(results))
