"""Open the current bundle and its encoder for serving."""

from __future__ import annotations

from pathlib import Path

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
    service = SearchService(bundle, encoder, settings.search)
    service.warm()  # off the request path: start-up or the bundle watcher
    return service
