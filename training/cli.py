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
from training.packed import read_meta
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
    recipe, source = _recipe(recipe_path)
    run_dir, reader = _start(recipe.name, run_dir)
    model_dir = pipeline.run(recipe, source, reader, run_dir)
    typer.echo(f"model exported: {model_dir}")


@cli.command("pack")
def pack_command(
    recipe_path: Annotated[Path, typer.Argument(help="Recipe YAML, e.g. training/recipes/biolord-minilm-gpu.yaml")],
    out: Annotated[Path, typer.Option(help="Pack directory to write (data.npz, base/, pack.json)")],
    run_dir: Annotated[Path | None, typer.Option(help="Default: {data_dir}/training/{recipe name}")] = None,
) -> None:
    """The GPU recipe, step 1 (CPU): datasets with mined negatives, tokenised, and the base's fp16 weights."""
    recipe, source = _recipe(recipe_path)
    run_dir, reader = _start(recipe.name, run_dir)
    pipeline.pack(recipe, source, reader, run_dir, out)
    typer.echo(f"packed: {out} (then: python -m training.loop {out} --out WEIGHTS_DIR on the GPU)")


@cli.command("finish")
def finish_command(
    pack_dir: Annotated[Path, typer.Argument(help="The pack the loop trained from")],
    weights: Annotated[Path, typer.Option(help="The loop's output directory (fp16 shards)")],
    run_dir: Annotated[Path | None, typer.Option(help="Default: {data_dir}/training/{recipe name}")] = None,
) -> None:
    """The GPU recipe, step 3 (CPU): interpolation with the base on the dev split, then ONNX export to RUN_DIR/model."""
    try:
        name = Recipe.model_validate(read_meta(pack_dir)["recipe"]).name
    except (OSError, ValueError, KeyError) as exc:
        typer.echo(f"error: {pack_dir}: not a pack ({exc})", err=True)
        raise typer.Exit(code=1) from exc
    run_dir, reader = _start(name, run_dir)
    try:
        model_dir = pipeline.finish_packed(pack_dir, weights, reader, run_dir)
    except (FileNotFoundError, EncoderError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    typer.echo(f"model exported: {model_dir}")


def _start(recipe_name: str, run_dir: Path | None) -> tuple[Path, StoreReader]:
    """The run directory (default ``{data_dir}/training/{recipe name}``), logging to its train.log, and the store."""
    settings = get_settings()
    run_dir = run_dir or settings.data_dir / "training" / recipe_name
    run_dir.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.StreamHandler(), logging.FileHandler(run_dir / "train.log")],
    )
    return run_dir, StoreReader(make_engine(settings.store.url))


def _recipe(path: Path) -> tuple[Recipe, str]:
    """The recipe and its source text (:meth:`Recipe.read`), or the error and exit code 1."""
    try:
        return Recipe.read(path)
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
    recipe, _ = _recipe(recipe_path)
    settings = get_settings()
    encoders: dict[str, Encoder | None] = {"BM25": None} if bm25 else {}
    for spec in model or []:
        name, _, path = spec.partition("=")
        encoders[name] = load_encoder(Path(path), settings.encoder)
    results = compare.compare(recipe, StoreReader(make_engine(settings.store.url)), encoders)
    if output:
        output.write_text(json.dumps(results, indent=2))
    typer.echo(compare.markdown(results))
