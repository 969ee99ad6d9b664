"""JSON text whose decimals are written as they were read: FHIR requires a decimal's precision
kept ("1.10" is not "1.1"), so FHIR bodies are read with :class:`~decimal.Decimal` numbers
(``app.api.http.decode_json(exact=True)``) and written back by :func:`encode_json`, in answers
and in the store (:class:`ExactJSON`)."""

from __future__ import annotations

import json
import re
import secrets
from decimal import Decimal
from typing import Any

from sqlalchemy import Text
from sqlalchemy.types import TypeDecorator


def encode_json(value: Any) -> bytes:
    """``value`` as compact JSON, a :class:`~decimal.Decimal` written as it was read (FHIR decimals
    keep their precision); without one, exactly what ``json.dumps`` writes."""
    exact: list[str] = []
    marker = f"decimal-{secrets.token_hex(12)}-"  # this call's own: no text a client sent holds it

    def mark(number: Any) -> str:
        if not isinstance(number, Decimal) or not number.is_finite():
            raise TypeError(f"{type(number).__name__} is not JSON")
        exact.append(str(number))
        return f"{marker}{len(exact) - 1}"

    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=mark)
    if exact:
        text = re.sub(rf'"{marker}(\d+)"', lambda found: exact[int(found.group(1))], text)
    return text.encode("utf-8")


class ExactJSON(TypeDecorator[Any]):
    """A JSON column stored as text by :func:`encode_json` and read back with exact decimals."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else encode_json(value).decode("utf-8")

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else json.loads(value, parse_float=Decimal)
