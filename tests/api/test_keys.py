"""API keys: the example key of ``.env.example`` is refused at start-up, and wrong keys are
throttled per client (429 with ``Retry-After``) before any comparison."""

from __future__ import annotations

from pathlib import Path

import pytest
from dotenv import dotenv_values
from pydantic import ValidationError

from indexer.settings import PLACEHOLDER_KEY, ApiSettings

ENV_EXAMPLE = Path(__file__).resolve().parents[2] / ".env.example"


def test_the_example_key_is_refused_when_auth_is_on() -> None:
    assert dotenv_values(ENV_EXAMPLE)["TERMSEARCH_API__API_KEYS"] == PLACEHOLDER_KEY
    with pytest.raises(ValidationError, match="holds the placeholder 'change-me-to-a-long-random-key' from .env.example"):
        ApiSettings(auth_enabled=True, api_keys=f"{'k' * 32},{PLACEHOLDER_KEY}")
    assert ApiSettings(auth_enabled=True, api_keys="k" * 32).keys == ["k" * 32]
