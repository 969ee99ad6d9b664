"""The input checks every surface shares (REST, FHIR, /match, /evaluate), written once: each one
refuses with :class:`~app.errors.InvalidParameter` naming the parameter (422, or 400 under
``/fhir``), in the same words wherever the parameter comes from.

:func:`documented` writes the same limits into the OpenAPI schema (their defaults:
``TERMSEARCH_*`` may change them), so clients and schema-driven fuzzers know them; enforcement
stays here, with messages that name the configured limit."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from app.errors import InvalidParameter
from app.settings import MatchSettings, SearchSettings

SEARCH, MATCH = SearchSettings(), MatchSettings()
_KEYWORDS = {"min_length": "minLength", "max_length": "maxLength", "min_items": "minItems", "max_items": "maxItems"}


def documented(**keywords: Any) -> dict[str, Any]:
    """Keyword arguments of ``Query``/``Field`` that document limits: ``documented(minimum=1)``."""
    return {"json_schema_extra": {_KEYWORDS.get(name, name): value for name, value in keywords.items()}}


K = documented(minimum=1, maximum=SEARCH.max_k)
QUERY = documented(min_length=1, max_length=SEARCH.max_query_length)
FRACTION = documented(minimum=0, maximum=1)


def check_length(text: str, limit: int, param: str) -> None:
    """At most ``limit`` characters (``search.max_query_length`` for queries and labels)."""
    if len(text) > limit:
        raise InvalidParameter(f"{param}: longer than {limit} characters ({len(text)})", param)


def check_query(text: str, limit: int, param: str) -> None:
    """Not blank, at most ``limit`` characters."""
    if not text.strip():
        raise InvalidParameter(f"{param}: must not be empty", param)
    check_length(text, limit, param)


def check_range(value: float, low: float, high: float, param: str) -> None:
    """``low`` ≤ ``value`` ≤ ``high`` (``k``: 1 to ``max_k``; scores and confidences: 0 to 1)."""
    if not low <= value <= high:
        raise InvalidParameter(f"{param}: must be between {low:g} and {high:g} (got {value})", param)


def check_system(loaded: Collection[str], key: str | None, param: str) -> str:
    """``key`` is a code system of the served bundle."""
    if key not in loaded:
        raise InvalidParameter(f"{param}: unknown code system {key!r}; loaded: {', '.join(loaded)}", param)
    return key


def parse_systems(loaded: Collection[str], value: str | None, param: str) -> list[str]:
    """Comma-separated system keys, each one loaded (none given: an empty list)."""
    keys = [key.strip() for key in (value or "").split(",") if key.strip()]
    for key in keys:
        check_system(loaded, key, param)
    return keys
