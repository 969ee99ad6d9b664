"""FHIR R4 terminology operations under ``/fhir`` (logic in ``app/fhir``).

Operations accept GET (query parameters) and POST (a ``Parameters`` resource); they read the
request on the event loop and do the search and store work in the thread pool. Answers are
``application/fhir+json``; errors are OperationOutcomes (``app/api/fhir_errors.py``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from app.api.deps import ReaderDep, ServiceDep, SettingsDep
from app.api.errors import Unavailable
from app.fhir import capabilities
from app.fhir.codes import lookup, validate_in_code_system, validate_in_value_set
from app.fhir.context import FhirContext
from app.fhir.expand import expand
from app.fhir.outcome import FHIR_JSON, InvalidRequest
from app.fhir.params import OperationParams
from app.fhir.translate import translate

router = APIRouter(prefix="/fhir", tags=["fhir"])
_context_lock = threading.Lock()

Operation = Callable[[FhirContext, OperationParams], dict[str, Any]]


def _context(request: Request, service: ServiceDep, reader: ReaderDep, settings: SettingsDep) -> FhirContext:
    """One context per served bundle (a new bundle gets a new one, with fresh caches)."""
    state = request.app.state
    with _context_lock:
        context = getattr(state, "fhir", None)
        if context is None or context.service is not service:
            context = state.fhir = FhirContext(service, reader, settings)
        return context


ContextDep = Annotated[FhirContext, Depends(_context)]


def fhir_response(body: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, media_type=FHIR_JSON)


async def _params(request: Request) -> OperationParams:
    if request.method == "GET":
        return OperationParams.from_query(request.query_params.multi_items())
    try:
        body = json.loads(await request.body())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"body: not JSON ({exc})") from exc
    return OperationParams.from_resource(body)


async def _run(operation: Operation, request: Request, context: FhirContext) -> JSONResponse:
    params = await _params(request)
    return fhir_response(await run_in_threadpool(operation, context, params))


GET_POST = ["GET", "POST"]


@router.api_route("/ValueSet/$expand", methods=GET_POST, response_class=JSONResponse)
async def value_set_expand(request: Request, context: ContextDep) -> JSONResponse:
    """Expand an implicit value set (``url``), optionally by semantic ``filter``; ``count``,
    ``offset``, ``activeOnly``, ``includeDesignations``, ``displayLanguage``."""
    return await _run(expand, request, context)


@router.api_route("/ValueSet/$validate-code", methods=GET_POST, response_class=JSONResponse)
async def value_set_validate_code(request: Request, context: ContextDep) -> JSONResponse:
    """Is ``system``/``code`` (or ``coding``) in the value set ``url``? (``display`` checked too)"""
    return await _run(validate_in_value_set, request, context)


@router.api_route("/CodeSystem/$lookup", methods=GET_POST, response_class=JSONResponse)
async def code_system_lookup(request: Request, context: ContextDep) -> JSONResponse:
    """Display, designations, parent/child/definition/inactive properties of ``system``/``code``."""
    return await _run(lookup, request, context)


@router.api_route("/CodeSystem/$validate-code", methods=GET_POST, response_class=JSONResponse)
async def code_system_validate_code(request: Request, context: ContextDep) -> JSONResponse:
    """Is ``code`` (or ``coding``) a code of the code system ``url``? (``display`` checked too)"""
    return await _run(validate_in_code_system, request, context)


@router.api_route("/ConceptMap/$translate", methods=GET_POST, response_class=JSONResponse)
async def concept_map_translate(request: Request, context: ContextDep) -> JSONResponse:
    """Stored mappings and semantic candidates for ``system``/``code`` into ``targetsystem``/``target``."""
    return await _run(translate, request, context)


@router.get("/metadata", response_class=JSONResponse)
def metadata(request: Request, mode: str | None = None) -> JSONResponse:
    """CapabilityStatement; ``mode=terminology``: TerminologyCapabilities."""
    if mode == "terminology":
        service = request.app.state.service
        if service is None:
            raise Unavailable(f"no search bundle is loaded: {request.app.state.bundle_error}")
        return fhir_response(capabilities.terminology_capabilities(service.bundle.systems.values()))
    if mode not in (None, "full", "normative"):
        raise InvalidRequest(f"mode: expected full, normative or terminology (got {mode!r})")
    return fhir_response(capabilities.capability_statement(str(request.base_url).rstrip("/") + "/fhir"))
