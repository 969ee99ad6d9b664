"""FHIR R4 terminology operations under ``/fhir`` (logic in ``app/fhir``).

Operations accept GET (query parameters) and POST (a ``Parameters`` resource); they read the
request on the event loop and do the search and store work in the thread pool. Answers are
``application/fhir+json``; errors are OperationOutcomes (``app/api/errors.py``). The OpenAPI schema
lists each operation's parameters (``app/api/fhir_schema.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.convertors import Convertor, register_url_convertor

from app.api.deps import ReaderDep, ServiceDep, SettingsDep
from app.api.errors import FHIR_ERROR_RESPONSES
from app.api.fhir_schema import get_operation, post_operation, value_set_body
from app.api.http import Route, read_json
from app.errors import InvalidParameter, NotFound, Unavailable
from app.fhir import capabilities, codesystems, operations
from app.fhir.batch import batch_validate
from app.fhir.codes import lookup
from app.fhir.context import FhirContext
from app.fhir.expand import expand
from app.fhir.instances import on_code_system, on_value_set
from app.fhir.operations import (
    BATCH_VALIDATE,
    BY_ID,
    CODE_SYSTEM_VALIDATE,
    EXPAND,
    LOOKUP,
    SUBSUMES,
    TRANSLATE,
    VALUE_SET_VALIDATE,
    Operation,
)
from app.fhir.outcome import FHIR_JSON
from app.fhir.params import OperationParams, check_format
from app.fhir.searchset import searchset
from app.fhir.stored import check_id
from app.fhir.subsumes import subsumes
from app.fhir.translate import translate
from app.fhir.validate import validate_in_code_system, validate_in_value_set
from app.fhir.valuesets import checked_value_set
from app.jsontext import encode_json


class _ResourceId(Convertor):
    """A resource id in a path: anything but an operation (``$expand``), so that an operation
    (``CodeSystem/$subsumes``) is never read as an id, and an unknown operation or another method
    on one is routed as before (404, 405 with ``Allow``)."""

    regex = r"[^/$][^/]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("resource_id", _ResourceId())

router = APIRouter(prefix="/fhir", tags=["fhir"], route_class=Route, responses=FHIR_ERROR_RESPONSES)

Answer = Callable[[FhirContext, OperationParams], dict[str, Any]]


async def _context(request: Request, service: ServiceDep, reader: ReaderDep, settings: SettingsDep) -> FhirContext:
    """One context per served bundle (a new bundle gets a new one, with fresh caches); on the
    event loop, so no two requests make one at once."""
    state = request.app.state
    context = getattr(state, "fhir", None)
    if context is None or context.service is not service:
        context = state.fhir = FhirContext(service, reader, settings)
    return context


ContextDep = Annotated[FhirContext, Depends(_context)]


class FhirJSONResponse(JSONResponse):
    """FHIR JSON: decimals written as they were given (:func:`~app.api.http.encode_json`)."""

    media_type = FHIR_JSON

    def render(self, content: Any) -> bytes:
        return encode_json(content)


def fhir_response(body: dict[str, Any], status: int = 200) -> JSONResponse:
    return FhirJSONResponse(body, status_code=status)


def _strict(request: Request) -> bool:
    """Whether the request asks for strict handling of parameters (``Prefer: handling=strict``)."""
    return "handling=strict" in request.headers.get("prefer", "").replace(" ", "").lower()


async def _params(operation: Operation, request: Request) -> OperationParams:
    """The operation's parameters (unknown ones refused with ``Prefer: handling=strict``, else
    ignored; a format other than JSON 406); an ``Accept-Language`` header (when well formed) stands for
    ``displayLanguage`` where the operation takes one and the request names none."""
    strict = _strict(request)
    check_format(request.query_params.getlist("_format"), request.headers.get("accept"))
    if request.method == "GET":
        params = OperationParams.from_query(operation, request.query_params.multi_items(), strict)
    else:
        params = OperationParams.from_resource(operation, await read_json(request, exact=True), strict)
    if not params.declares("displayLanguage"):
        return params
    languages = params.defaulting("displayLanguage", request.headers.get("accept-language"))
    try:
        languages.language("displayLanguage")
    except InvalidParameter:  # a header no one typed for this request: a malformed one is ignored
        return params
    return languages


async def _run(operation: Operation, answer: Answer, request: Request, context: FhirContext) -> JSONResponse:
    params = await _params(operation, request)
    return fhir_response(await run_in_threadpool(answer, context, params))


def _operation(operation: Operation, on: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Serve ``operation`` by GET (query parameters, where it is served by GET) and POST (a
    Parameters resource), each documented; ``on``: on one resource (``/ValueSet/{id}/$expand``),
    the endpoint's id parameter."""
    path = operation.path if on is None else f"/{operation.resource}/{{{on}:resource_id}}/${operation.code}"

    def register(endpoint: Callable[..., Any]) -> Callable[..., Any]:
        if operation.by_get:
            get = get_operation(operation, on_instance=on is not None)
            router.get(path, response_class=JSONResponse, openapi_extra=get)(endpoint)
        router.post(path, response_class=JSONResponse, openapi_extra=post_operation(operation))(endpoint)
        return endpoint

    return register


def _on_value_set(answer: Answer, value_set_id: str) -> Answer:
    """``answer`` on the stored ``ValueSet/{value_set_id}``."""
    return lambda context, params: answer(context, on_value_set(context, params, value_set_id))


def _on_code_system(answer: Answer, key: str) -> Answer:
    """``answer`` on the loaded ``CodeSystem/{key}``."""
    return lambda context, params: answer(context, on_code_system(context, params, key))


@_operation(EXPAND)
async def value_set_expand(request: Request, context: ContextDep) -> JSONResponse:
    """Expand an implicit value set (``url``), optionally by semantic ``filter``; ``count``,
    ``offset``, ``activeOnly``, ``includeDesignations``, ``displayLanguage``, ``min_confidence``."""
    return await _run(EXPAND, expand, request, context)


@_operation(VALUE_SET_VALIDATE)
async def value_set_validate_code(request: Request, context: ContextDep) -> JSONResponse:
    """Is ``system``/``code`` (or ``coding``) in the value set ``url``? (``display`` checked too)"""
    return await _run(VALUE_SET_VALIDATE, validate_in_value_set, request, context)


@_operation(BATCH_VALIDATE)
async def value_set_batch_validate(request: Request, context: ContextDep) -> JSONResponse:
    """``$validate-code`` of each ``validation`` (the Parameters of one), the other parameters
    shared by all; one answer (or OperationOutcome) per validation, in order."""
    strict = _strict(request)
    return await _run(BATCH_VALIDATE, lambda c, p: batch_validate(c, p, strict), request, context)


@_operation(LOOKUP)
async def code_system_lookup(request: Request, context: ContextDep) -> JSONResponse:
    """Display, designations, parent/child/definition/inactive properties of ``system``/``code``."""
    return await _run(LOOKUP, lookup, request, context)


@_operation(CODE_SYSTEM_VALIDATE)
async def code_system_validate_code(request: Request, context: ContextDep) -> JSONResponse:
    """Is ``code`` (or ``coding``) a code of the code system ``url``? (``display`` checked too)"""
    return await _run(CODE_SYSTEM_VALIDATE, validate_in_code_system, request, context)


@_operation(TRANSLATE)
async def concept_map_translate(request: Request, context: ContextDep) -> JSONResponse:
    """Stored mappings and semantic candidates for ``system``/``code`` into ``targetsystem``/``target``."""
    return await _run(TRANSLATE, translate, request, context)


@_operation(SUBSUMES)
async def code_system_subsumes(request: Request, context: ContextDep) -> JSONResponse:
    """How ``codeA`` and ``codeB`` (or ``codingA``, ``codingB``) of ``system`` are related by is-a."""
    return await _run(SUBSUMES, subsumes, request, context)


# --- The operations on one resource: a stored ValueSet, a loaded code system (by its id)


@_operation(EXPAND, on="value_set_id")
async def value_set_instance_expand(value_set_id: str, request: Request, context: ContextDep) -> JSONResponse:
    """``$expand`` of the stored ValueSet ``value_set_id`` (which supplies ``url``)."""
    return await _run(EXPAND, _on_value_set(expand, value_set_id), request, context)


@_operation(VALUE_SET_VALIDATE, on="value_set_id")
async def value_set_instance_validate_code(value_set_id: str, request: Request, context: ContextDep) -> JSONResponse:
    """``$validate-code`` against the stored ValueSet ``value_set_id`` (which supplies ``url``)."""
    return await _run(VALUE_SET_VALIDATE, _on_value_set(validate_in_value_set, value_set_id), request, context)


@_operation(LOOKUP, on="key")
async def code_system_instance_lookup(key: str, request: Request, context: ContextDep) -> JSONResponse:
    """``$lookup`` in the loaded code system ``key`` (``hpo``, ``icd10cm``; it supplies ``system``)."""
    return await _run(LOOKUP, _on_code_system(lookup, key), request, context)


@_operation(CODE_SYSTEM_VALIDATE, on="key")
async def code_system_instance_validate_code(key: str, request: Request, context: ContextDep) -> JSONResponse:
    """``$validate-code`` in the loaded code system ``key`` (it supplies ``url``)."""
    return await _run(CODE_SYSTEM_VALIDATE, _on_code_system(validate_in_code_system, key), request, context)


@_operation(SUBSUMES, on="key")
async def code_system_instance_subsumes(key: str, request: Request, context: ContextDep) -> JSONResponse:
    """``$subsumes`` in the loaded code system ``key`` (it supplies ``system``)."""
    return await _run(SUBSUMES, _on_code_system(subsumes, key), request, context)


@router.get("/CodeSystem", response_class=JSONResponse)
def code_system_search(
    context: ContextDep,
    url: Annotated[str | None, Query(description="the code system's canonical URI")] = None,
    version: Annotated[str | None, Query(description="its version")] = None,
) -> JSONResponse:
    """The loaded code systems with this ``url`` and ``version``, as a searchset Bundle."""
    return fhir_response(codesystems.search(context, url, version))


@router.get("/CodeSystem/{key:resource_id}", response_class=JSONResponse)
def code_system_read(key: str, context: ContextDep) -> JSONResponse:
    """A loaded code system by id (its key: ``hpo``, ``icd10cm``), without its concepts."""
    return fhir_response(codesystems.read(context, key))


@router.get("/metadata", response_class=JSONResponse)
def metadata(
    request: Request,
    settings: SettingsDep,
    mode: Annotated[Literal["full", "normative", "terminology"] | None, Query(description="terminology: TerminologyCapabilities")] = None,
) -> JSONResponse:
    """CapabilityStatement; ``mode=terminology``: TerminologyCapabilities."""
    if mode == "terminology":
        service = request.app.state.service
        if service is None:
            raise Unavailable(f"no search bundle is loaded: {request.app.state.bundle_error}")
        systems = service.bundle.systems.values()
        return fhir_response(capabilities.terminology_capabilities(systems, settings.fhir.base_url))
    return fhir_response(capabilities.capability_statement(settings.fhir.base_url))


@router.get("/$versions", response_class=JSONResponse)
def fhir_versions() -> JSONResponse:
    """The FHIR versions this server answers in (4.0)."""
    return fhir_response(capabilities.versions())


@router.get("/OperationDefinition/{operation_id}", response_class=JSONResponse)
def operation_definition(operation_id: str, settings: SettingsDep) -> JSONResponse:
    """The OperationDefinition of an operation served (``ValueSet-expand``...), from the same
    declaration its parameters are read by."""
    operation = BY_ID.get(operation_id)
    if operation is None:
        raise NotFound(f"OperationDefinition/{operation_id} is not an operation of this server (those: {', '.join(BY_ID)})")
    return fhir_response(operations.operation_definition(operation, settings.fhir.base_url))


# --- ValueSet resources stored on the server



@router.get("/ValueSet", response_class=JSONResponse)
def value_set_search(
    context: ContextDep,
    url: Annotated[str | None, Query(description="the value set's canonical url")] = None,
    version: Annotated[str | None, Query(description="its version")] = None,
) -> JSONResponse:
    """Stored value sets with this ``url`` and ``version``, as a searchset Bundle."""
    found = context.value_sets.search(url, version)
    return fhir_response(searchset([(f"ValueSet/{vs['id']}", vs) for vs in found]))


@router.get("/ValueSet/{value_set_id:resource_id}", response_class=JSONResponse)
def value_set_read(value_set_id: str, context: ContextDep) -> JSONResponse:
    return fhir_response(context.value_sets.get(check_id(value_set_id, "id")))


@router.put("/ValueSet/{value_set_id:resource_id}", response_class=JSONResponse, status_code=200, openapi_extra=value_set_body())
async def value_set_update(value_set_id: str, request: Request, context: ContextDep) -> JSONResponse:
    """Store a ValueSet under this id (201 when new); its compose must resolve against the served bundle."""
    resource = _value_set_body(await read_json(request, exact=True), check_id(value_set_id, "id"))
    return await run_in_threadpool(_store_value_set, context, resource)


@router.post("/ValueSet", response_class=JSONResponse, status_code=201, openapi_extra=value_set_body())
async def value_set_create(request: Request, context: ContextDep) -> JSONResponse:
    """Store a ValueSet under a new id (201 with ``Location``)."""
    resource = _value_set_body(await read_json(request, exact=True), None)
    return await run_in_threadpool(_store_value_set, context, {**resource, "id": uuid.uuid4().hex})


@router.delete("/ValueSet/{value_set_id:resource_id}", status_code=204)
def value_set_delete(value_set_id: str, context: ContextDep) -> Response:
    context.value_sets.delete(check_id(value_set_id, "id"))
    return Response(status_code=204)


def _value_set_body(body: Any, value_set_id: str | None) -> dict[str, Any]:
    if not isinstance(body, dict) or body.get("resourceType") != "ValueSet":
        raise InvalidParameter("body: expected a ValueSet resource", "body")
    given = body.get("id")
    if value_set_id is not None and given not in (None, value_set_id):
        raise InvalidParameter(f"id: the resource's id {given!r} is not the id in the URL {value_set_id!r}", "id")
    return {**body, "id": value_set_id} if value_set_id is not None else body


def _store_value_set(context: FhirContext, resource: dict[str, Any]) -> JSONResponse:
    checked_value_set(context, resource)
    created = context.value_sets.put(resource)
    location = f"ValueSet/{resource['id']}"
    return FhirJSONResponse(resource, status_code=201 if created else 200, headers={"Location": location})
