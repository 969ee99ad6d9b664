"""An R4 answer in the R5 form of the suite's expectations, as HL7's runner converts it
(the suite's ``r4`` page): the cross-version extensions for ``expansion.property`` and
``expansion.contains.property`` become those elements. Extensions in this server's own
``urn:termsearch:`` namespace (a filtered expansion's matched term, score and confidence) are
dropped: FHIR lets any server add extensions, and the suite cannot expect them."""

from __future__ import annotations

from typing import Any

CROSS_VERSION = "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion."
OWN = "urn:termsearch:"


def to_r5(resource: Any) -> Any:
    resource = _without_own(resource)
    if not isinstance(resource, dict) or resource.get("resourceType") != "ValueSet" or "expansion" not in resource:
        return resource
    expansion = dict(resource["expansion"])
    _lift(expansion, "property")
    if "contains" in expansion:
        expansion["contains"] = [_contains(entry) for entry in expansion["contains"]]
    return {**resource, "expansion": expansion}


def _contains(entry: dict[str, Any]) -> dict[str, Any]:
    entry = dict(entry)
    _lift(entry, "contains.property")
    if "contains" in entry:
        entry["contains"] = [_contains(child) for child in entry["contains"]]
    return entry


def _lift(element: dict[str, Any], name: str) -> None:
    """Move ``element``'s cross-version extensions for ``name`` into ``element[<last part>]``."""
    extensions = element.pop("extension", [])
    url = CROSS_VERSION + name
    lifted = [_fields(extension) for extension in extensions if extension.get("url") == url]
    kept = [e for e in extensions if e.get("url") != url]
    if kept:
        element["extension"] = kept
    if lifted:
        element[name.rsplit(".", 1)[-1]] = lifted


def _fields(extension: dict[str, Any]) -> dict[str, Any]:
    """A cross-version extension's parts as R5 fields: ``code``, ``uri`` and a typed ``value[x]``."""
    fields: dict[str, Any] = {}
    for part in extension["extension"]:
        values = {key: value for key, value in part.items() if key.startswith("value")}
        if part["url"] == "value":
            fields |= values
        else:
            fields[part["url"]] = next(iter(values.values()))
    return fields


def _without_own(value: Any) -> Any:
    """``value`` without this server's own extensions, wherever they are."""
    if isinstance(value, list):
        return [_without_own(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _without_own(item) for key, item in value.items()}
    if "extension" in out:
        out["extension"] = [e for e in out["extension"] if not str(e.get("url", "")).startswith(OWN)]
        if not out["extension"]:
            del out["extension"]
    return out
