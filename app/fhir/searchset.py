"""A FHIR search answer: a ``searchset`` Bundle of the matching resources."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any


def searchset(found: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """``found``: (full URL, resource) of each match."""
    bundle: dict[str, Any] = {
        "resourceType": "Bundle",
        "id": str(uuid.uuid4()),
        "meta": {"lastUpdated": datetime.now(UTC).isoformat(timespec="seconds")},
        "type": "searchset",
        "total": len(found),
    }
    if found:  # FHIR JSON has no empty arrays
        bundle["entry"] = [{"fullUrl": url, "resource": resource, "search": {"mode": "match"}} for url, resource in found]
    return bundle
