"""``CodeSystem/$subsumes`` (FHIR R4): how two codes of one code system are related by its is-a
hierarchy, the bundle's parent links (those of ``$lookup``'s ``parent`` property and of the
``fhir_vs=isa/`` subtrees): ``equivalent`` (the same code), ``subsumes`` (codeB is below codeA),
``subsumed-by`` (codeA is below codeB), else ``not-subsumed``.

The codes come as ``codeA``/``codeB`` with ``system`` (and ``version``), or as ``codingA``/
``codingB`` (POST), each with its own system or else ``system``'s; both of one loaded code
system. A missing or contradictory parameter is a 400; an unknown code system or version, and an
unknown code (named by its parameter, ``codeB``), a 404, as ``$lookup`` answers them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.errors import InvalidParameter, NotFound, UnknownCode
from app.fhir.context import FhirContext
from app.fhir.params import Coding, OperationParams
from indexer.bundle import SystemRange

SIDES = ("A", "B")


def subsumes(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    named = params.text("system")
    codings = [_coding(params, side) for side in SIDES]
    uri = named or next((coding.system for coding in codings if coding.system), None)
    if not uri:
        raise InvalidParameter("system: required (or codings with a system)")
    for side, coding in zip(SIDES, codings, strict=True):
        if coding.system not in (None, uri):
            raise InvalidParameter(
                f"coding{side}.system: {coding.system} is not {uri}; subsumption is tested within one code system",
                f"coding{side}.system",
            )
    system = context.system(uri)
    for coding in codings:
        version = coding.version or params.text("version")
        if version and version != system.version:
            raise NotFound(f"version {version!r} of {system.uri} is not loaded; loaded: {system.version}")
    a, b = (_row(context, system, params, side, coding) for side, coding in zip(SIDES, codings, strict=True))
    return {"resourceType": "Parameters", "parameter": [{"name": "outcome", "valueCode": outcome(context, a, b)}]}


def outcome(context: FhirContext, a: int, b: int) -> str:
    """How catalog row ``a`` relates to row ``b`` by is-a."""
    if a == b:
        return "equivalent"
    lower, upper = context.bundle.above_pairs(np.asarray([a, b], dtype=np.int64))
    above = set(zip(lower.tolist(), upper.tolist(), strict=True))  # (lower, upper) positions in [a, b]
    if (1, 0) in above:
        return "subsumes"
    if (0, 1) in above:
        return "subsumed-by"
    return "not-subsumed"


def _coding(params: OperationParams, side: str) -> Coding:
    """codeA (with system and version) or codingA."""
    coding = params.coding(f"code{side}", "system", f"coding{side}")
    if coding is None:
        raise InvalidParameter(f"code{side}: required (or coding{side})")
    return coding


def _row(context: FhirContext, system: SystemRange, params: OperationParams, side: str, coding: Coding) -> int:
    row = context.bundle.concept_index(system.key, coding.code)
    if row is None:
        name = f"coding{side}.code" if params.value(f"coding{side}") is not None else f"code{side}"
        raise UnknownCode(f"{name}: unknown code {coding.code!r} in {system.uri} version {system.version}", name)
    return row
