"""Open the current bundle and its encoder for serving."""

from __future__ import annotations

from pathlib import Path

from indexer.bundle import Bundle, BundleError, current_bundle
from indexer.encoders import Encoder, EncoderError, OnnxEncoder
from indexer.settings import Settings

from app.search.service import SearchService


def open_search_service(settings: Settings, encoder: Encoder | None = None, directory: Path | None = None) -> SearchService:
    """The service over ``directory`` (default ``{data_dir}/bundles/current``); ``encoder``
    overrides the bundled model.

    Raises BundleError or EncoderError with a message meant for ``/ready``.
    """
    directory = directory or current_bundle(settings.bundles_dir)
    if directory is None:
        raise BundleError(f"no bundle in {settings.bundles_dir}; run `python -m indexer build`")
    bundle = Bundle(directory, settings)
    if encoder is None:
        encoder = OnnxEncoder(
            bundle.model_dir,
            threads=settings.encoder.threads,
            batch_size=settings.encoder.batch_size,
            max_length=settings.encoder.max_length,
        )
    expected = bundle.manifest["encoder"]
    if (encoder.id, encoder.sha256) != (expected["id"], expected["sha256"]):
        raise EncoderError(f"encoder {encoder.id} does not match the bundle's {expected['id']}")
    service = SearchService(bundle, encoder, settings.search)
    service.warm()  # off the request path: start-up or the bundle watcher
    return service
