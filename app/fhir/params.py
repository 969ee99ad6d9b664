"""Operation parameters, from a query string (GET) or a ``Parameters`` resource (POST), read
the same way: typed getters that refuse malformed or repeated values with an OperationOutcome."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.fhir.outcome import InvalidRequest

_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")
_BOOLEANS = {"true": True, "false": False}


@dataclass(frozen=True)
class Coding:
    system: str | None
    code: str
    version: str | None = None
    display: str | None = None


class OperationParams:
    def __init__(self, values: dict[str, list[Any]]) -> None:
        self._values = values

    @classmethod
    def from_query(cls, items: Iterable[tuple[str, str]]) -> OperationParams:
        values: dict[str, list[Any]] = {}
        for name, value in items:
            values.setdefault(name, []).append(value)
        return cls(values)

    @classmethod
    def from_resource(cls, body: Any) -> OperationParams:
        """Each ``parameter`` needs a ``name`` and exactly one ``value[x]``."""
        if not isinstance(body, dict) or body.get("resourceType") != "Parameters":
            raise InvalidRequest("body: expected a Parameters resource")
        values: dict[str, list[Any]] = {}
        for number, parameter in enumerate(body.get("parameter") or []):
            name = parameter.get("name") if isinstance(parameter, dict) else None
            if not isinstance(name, str) or not name:
                raise InvalidRequest(f"body: parameter {number} has no name")
            given = [value for key, value in parameter.items() if key.startswith("value")]
            if len(given) != 1:
                raise InvalidRequest(f"{name}: expected exactly one value[x]")
            values.setdefault(name, []).append(given[0])
        return cls(values)

    def _one(self, name: str) -> Any:
        values = self._values.get(name, [])
        if len(values) > 1:
            raise InvalidRequest(f"{name}: given {len(values)} times, allowed once")
        return values[0] if values else None

    def text(self, name: str) -> str | None:
        value = self._one(name)
        if value is not None and not isinstance(value, str):
            raise InvalidRequest(f"{name}: expected a string")
        return value

    def required_text(self, name: str) -> str:
        value = self.text(name)
        if not value:
            raise InvalidRequest(f"{name}: required")
        return value

    def texts(self, name: str) -> list[str]:
        values = self._values.get(name, [])
        if not all(isinstance(value, str) for value in values):
            raise InvalidRequest(f"{name}: expected strings")
        return values

    def integer(self, name: str, minimum: int = 0) -> int | None:
        given = self._one(name)
        value = int(given) if isinstance(given, str) and re.fullmatch(r"-?\d{1,9}", given) else given
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < minimum):
            raise InvalidRequest(f"{name}: expected an integer of at least {minimum} (got {given!r})")
        return value

    def decimal(self, name: str) -> float | None:
        given = self._one(name)
        value = given
        if isinstance(given, str):
            try:
                value = float(given) if re.fullmatch(r"-?\d{1,6}(\.\d{1,12})?", given) else given
            except ValueError:
                value = given
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise InvalidRequest(f"{name}: expected a decimal (got {given!r})")
        return None if value is None else float(value)

    def boolean(self, name: str) -> bool | None:
        value = self._one(name)
        if isinstance(value, str):
            value = _BOOLEANS.get(value, value)
        if value is not None and not isinstance(value, bool):
            raise InvalidRequest(f"{name}: expected true or false (got {value!r})")
        return value

    def language(self, name: str) -> str | None:
        value = self.text(name)
        if value is not None and not _LANGUAGE.match(value):
            raise InvalidRequest(f"{name}: expected a language tag such as en or en-US (got {value!r})")
        return value

    def coding(self, code_name: str, system_name: str, coding_name: str = "coding") -> Coding | None:
        """A coding given as ``coding`` (POST), or as separate code, system, version and display."""
        value = self._one(coding_name)
        if value is not None:
            if not isinstance(value, dict) or not isinstance(value.get("code"), str):
                raise InvalidRequest(f"{coding_name}: expected a Coding with a code")
            return Coding(value.get("system"), value["code"], value.get("version"), value.get("display"))
        code = self.text(code_name)
        if not code:
            return None
        return Coding(self.text(system_name), code, self.text("version"), self.text("display"))
