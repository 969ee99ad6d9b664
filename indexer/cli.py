"""``python -m indexer``: migrate the store, load terminologies, export the model, build bundles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from typer.core import TyperGroup

from indexer.bundle import Bundle, BundleError, current_bundle, read_manifest, verify
from indexer.encoders import EncoderError, default_model_dir, load_encoder
from indexer.errors import IndexerError
from indexer.knowledge import supplements
from indexer.knowledge.supplements import SupplementError, add_supplement, remove_supplement
from indexer.pipeline import BuildError, build_bundle
from indexer.records import SourceError
from indexer.remote import BackendUnavailable
from indexer.settings import Settings, get_settings
from indexer.sources import SOURCES, open_source
from indexer.store import StoreReader, load_source, make_engine, migrate


class _Commands(TyperGroup):
    """Every command: an :class:`IndexerError` is printed as one line (``Error: …``, exit 1)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except IndexerError as exc:
            raise click.ClickException(str(exc)) from exc


cli = typer.Typer(help=__doc__, no_args_is_help=True, pretty_exceptions_enable=False, cls=_Commands)
console = Console(stderr=True)
OPEN_SYSTEMS = ("hpo", "icd10cm")


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/red] {message}")
    return typer.Exit(code=1)


@cli.command("migrate")
def migrate_command() -> None:
    """Create or upgrade the store schema (alembic upgrade head)."""
    settings = get_settings()
    migrate(settings.store.url)
    console.print(f"store at revision head: {settings.store.url}")


@cli.command("load")
def load_command(
    name: Annotated[str, typer.Argument(help=f"Source format: {', '.join(SOURCES)}")],
    path: Annotated[Path | None, typer.Argument(help="Release file or directory (open sources default to the shipped file)")] = None,
    language_refset: Annotated[str | None, typer.Option(help="snomed: language refset of the displays")] = None,
    sab: Annotated[str | None, typer.Option(help="umls: source vocabularies to keep, e.g. SNOMEDCT_US,MSH")] = None,
    lang: Annotated[str | None, typer.Option(help="umls: languages to keep, e.g. ENG or FRE,ENG")] = None,
    as_sab: Annotated[str | None, typer.Option(help="umls: one source's codes as their own system")] = None,
    include_suppressed: Annotated[bool, typer.Option(help="umls: keep suppressible atoms, inactive")] = False,
) -> None:
    """Load one terminology release into the store (one transaction; a loaded version is skipped)."""
    settings = get_settings()
    migrate(settings.store.url)
    options = {
        "language_refset": language_refset,
        "sab": _split(sab),
        "lang": _split(lang),
        "as_sab": as_sab,
        "include_suppressed": include_suppressed or None,
    }
    try:
        result = _load(settings, name, path, {key: value for key, value in options.items() if value is not None})
    except (SourceError, ValueError, FileNotFoundError) as exc:
        raise _fail(str(exc)) from exc
    if not result.loaded:
        console.print(
            f"skipped: {result.system} {result.version} is already in the store ({result.concepts} concepts); "
            "the file was not read or checked"
        )
        return
    console.print(
        f"loaded {result.system} {result.version}: {result.concepts} concepts, "
        f"{result.designations} designations, {result.definitions} definitions, {result.relationships} edges"
    )


def _split(values: str | None) -> list[str] | None:
    return [value.strip() for value in values.split(",") if value.strip()] if values else None


def _load(settings: Settings, name: str, path: Path | None, options: dict[str, Any]):  # noqa: ANN202
    source = open_source(name, path, **options)
    engine = make_engine(settings.store.url)
    try:
        with Progress(console=console) as progress:
            task = progress.add_task(f"load {source.info.key} {source.info.version}", total=None)
            return load_source(engine, source, lambda n: progress.advance(task, n))
    finally:
        engine.dispose()


@cli.command("export-model")
def export_model_command() -> None:
    """Export the untrained all-MiniLM-L6-v2 to int8 ONNX (the baseline the shipped model beats)."""
    from indexer.encoders.export import ensure_default_model  # needs torch: only here

    settings = get_settings()
    model_dir = ensure_default_model(settings.models_dir, _parity_texts(StoreReader(make_engine(settings.store.url))))
    console.print(f"model ready: {model_dir}")


def _parity_texts(reader: StoreReader) -> list[str]:
    """Real labels spread over the loaded systems, for the export's parity checks."""
    from indexer.encoders.export import PARITY_TEXTS

    texts = reader.spread_displays(PARITY_TEXTS)
    if not texts:
        raise _fail("the store is empty; load a terminology first (its labels drive the parity check)")
    return texts


@cli.command("build")
def build_command(
    systems: Annotated[str, typer.Option(help="Comma-separated system keys")] = ",".join(OPEN_SYSTEMS),
    model: Annotated[Path | None, typer.Option(help="Model directory (model.onnx, tokenizer.json, model_manifest.json)")] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even if the current bundle has the same inputs")] = False,
) -> None:
    """Embed and index the given systems into a new bundle and switch to it atomically."""
    settings = get_settings()
    migrate(settings.store.url)  # a store from an older release gains the tables the build reads
    reader = StoreReader(make_engine(settings.store.url))
    keys = [key.strip() for key in systems.split(",") if key.strip()]
    try:
        model_dir = model or default_model_dir(settings.encoder)
        encoder = load_encoder(model_dir, settings.encoder)
        result = build_bundle(settings, reader, encoder, keys, model_dir=model_dir, force=force)
    except (BuildError, EncoderError) as exc:
        raise _fail(str(exc)) from exc
    if result.built:
        console.print(f"published bundle {result.bundle_id}: {result.labels} labels; stages (s): {result.seconds}")
    else:
        console.print(f"current bundle {result.bundle_id} already has these inputs; nothing to do (--force rebuilds)")


@cli.command("setup")
def setup_command() -> None:
    """Everything a fresh machine needs: migrate, load HPO and ICD-10-CM, build with the shipped model."""
    migrate_command()
    for name in OPEN_SYSTEMS:
        load_command(name, None)
    build_command()


@cli.command("info")
def info_command() -> None:
    """What the store holds and what the current bundle serves."""
    settings = get_settings()
    out = Console()
    table = Table("system", "version", "concepts", "loaded at", title=f"store: {settings.store.url}")
    for s in StoreReader(make_engine(settings.store.url)).systems():
        table.add_row(s.key, s.version, str(s.concept_count), s.loaded_at.isoformat(timespec="seconds"))
    out.print(table)
    current = current_bundle(settings.bundles_dir)
    if current is None:
        out.print("no bundle yet")
        return
    record = read_manifest(current).record()
    summary = {k: record[k] for k in ("bundle_id", "encoder", "counts", "vector", "lexical", "build_seconds")}
    out.print_json(json.dumps(summary))


@cli.command("verify")
def verify_command(
    bundle: Annotated[Path | None, typer.Argument(help="A bundle directory (default: the current bundle)")] = None,
) -> None:
    """Check every file of a bundle against the sha256 its manifest records (the app's start and
    swaps check sizes only), then that its catalog and indexes hold the labels it records."""
    settings = get_settings()
    directory = bundle or current_bundle(settings.bundles_dir)
    if directory is None:
        raise _fail("no bundle yet: run `python -m indexer build`")
    try:
        manifest = read_manifest(directory)
        verify(directory, manifest)
        Bundle(directory, settings).verify_counts()
    except (BundleError, BackendUnavailable) as exc:
        raise _fail(str(exc)) from exc
    labels = manifest.counts.labels
    files = len(manifest.files)
    console.print(f"{directory.name}: {files} files match the manifest; catalog and indexes hold its {labels} labels")


supplement_cli = typer.Typer(help="Local supplements: a site's own terms, abbreviations and translations.", no_args_is_help=True)
cli.add_typer(supplement_cli, name="supplement")


@supplement_cli.command("add")
def supplement_add_command(
    file: Annotated[Path, typer.Argument(help="A FHIR CodeSystem supplement (.json) or a CSV (.csv)")],
    name: Annotated[str | None, typer.Option(help="Name to list and remove it by (default: the file's stem)")] = None,
) -> None:
    """Add a supplement's terms, replacing one of the same name; a malformed file changes nothing."""
    settings = get_settings()
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    try:
        result = add_supplement(engine, file, name)
    except (SourceError, SupplementError) as exc:
        raise _fail(str(exc)) from exc
    finally:
        engine.dispose()
    systems = ", ".join(f"{key} {count}" for key, count in result.per_system.items())
    verb = "replaced" if result.replaced else "added"
    console.print(f"{verb} supplement {result.name} from {result.path}: {result.terms} terms ({systems})", soft_wrap=True)
    console.print("run `python -m indexer build` to serve it")


@supplement_cli.command("remove")
def supplement_remove_command(name: Annotated[str, typer.Argument(help="The supplement's name")]) -> None:
    """Remove a supplement and its terms from the store."""
    settings = get_settings()
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    try:
        terms = remove_supplement(engine, name)
    except SupplementError as exc:
        raise _fail(str(exc)) from exc
    finally:
        engine.dispose()
    console.print(f"removed supplement {name}: {terms} terms; run `python -m indexer build` to serve without it", soft_wrap=True)


@supplement_cli.command("list")
def supplement_list_command() -> None:
    """The supplements in the store."""
    settings = get_settings()
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    try:
        sources = [s for s in StoreReader(engine).knowledge_sources() if s.kind == supplements.KIND]
    finally:
        engine.dispose()
    table = Table("name", "terms", "file", "sha256", "loaded at", title="supplements")
    for s in sources:
        table.add_row(s.name, str(s.terms), s.path, s.sha256[:12], s.loaded_at.isoformat(timespec="seconds"))
    Console().print(table)
