"""Open the current bundle and its encoder for serving."""

from __future__ import annotations

from pathlib import Path

from threadpoolctl import ThreadpoolController

from app.search.service import SearchService
from app.settings import Settings
from indexer.bundle import Bundle, BundleError, current_bundle
from indexer.encoders import Encoder, EncoderError, load_encoder


def open_search_service(settings: Settings, encoder: Encoder | None = None, directory: Path | None = None) -> SearchService:
    """The service over ``directory`` (default ``{data_dir}/bundles/current``); ``encoder``
    overrides the bundled model.

    Raises BundleError or EncoderError with a message meant for ``/ready``.
    """
    directory = directory or current_bundle(settings.bundles_dir)
    if directory is None:
        raise BundleError(f"no bundle in {settings.bundles_dir}; run `python -m indexer build`")
    bundle = Bundle(directory, settings)
    expected = bundle.manifest.encoder
    if encoder is None:  # queries are encoded in the precision the labels were
        encoder = load_encoder(bundle.model_dir, settings.encoder, expected.precision)
    if (encoder.id, encoder.sha256, encoder.precision) != (expected.id, expected.sha256, expected.precision):
        raise EncoderError(
            f"encoder {encoder.id} ({encoder.precision}) does not match the bundle's {expected.id} ({expected.precision})"
        )
    blas_on_the_calling_thread()
    service = SearchService(bundle, encoder, settings.search)
    service.warm()  # off the request path: start-up or the bundle watcher
    return service


def blas_on_the_calling_thread() -> None:
    """A request's BLAS products (a few thousand labels' cosines) run on its own thread: the worker
    threads of a BLAS with threads of its own (numpy's OpenBLAS), idle between such small products,
    spun on the other core and took it from the requests beside (CPU per hybrid query 16.7 -> 8.8 ms,
    /search hybrid p50 over HTTP 12.5 -> 9.0 ms; bench/RESULTS.md). A BLAS on OpenMP threads follows
    the calling thread's OpenMP setting instead (:func:`indexer.vector.search_on_one_core`)."""
    for library in ThreadpoolController().lib_controllers:
        if library.user_api == "blas" and getattr(library, "threading_layer", None) != "openmp":
            library.set_num_threads(1)
