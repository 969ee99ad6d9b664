"""Every error a caller can see, framework-free: one tree carrying the HTTP status, the problem
type (RFC 9457) and the FHIR issue codes. ``app/api/errors.py`` renders any of them, as problem
JSON or, under ``/fhir``, as an OperationOutcome; services (``app/fhir``, ``app/matching``) raise
them directly.

The ``detail`` names the parameter first (``k: must be between 1 and 100 (got 0)``) and never
holds an exception message, a stack trace or a file path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar


class ApiError(Exception):
    """A request the service refuses. Subclasses set the class attributes."""

    status: ClassVar[int] = 400
    slug: ClassVar[str] = "bad-request"  # problem type: /problems/{slug}
    title: ClassVar[str] = "Bad request"
    issue: ClassVar[str] = "invalid"  # OperationOutcome issue type (http://hl7.org/fhir/issue-type)
    tx_code: ClassVar[str | None] = "invalid-data"  # tx-issue-type coding, when one fits
    fhir_status: ClassVar[int | None] = None  # the status under /fhir, when it differs

    def __init__(self, detail: str, param: str | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.param = param
        self.headers = dict(headers or {})

    @property
    def type(self) -> str:
        return f"/problems/{self.slug}"

    @property
    def expression(self) -> str | None:
        """The FHIRPath of the element at fault, for an OperationOutcome issue (None: none)."""
        return None

    def extra(self) -> dict[str, Any]:
        """Members of the problem JSON besides type, title, status, detail and param."""
        return {}


class MalformedBody(ApiError):
    """A body that is not JSON, or nests deeper than the service reads."""

    slug, title = "malformed-body", "Malformed request body"


class InvalidParameter(ApiError):
    """A missing, repeated, malformed or out-of-range parameter: 422, or 400 under ``/fhir``."""

    status, fhir_status = 422, 400
    slug, title = "invalid-parameter", "Invalid parameter"


class VersionMismatch(InvalidParameter):
    """A version a request checks for (``check-system-version``) that is not the one used."""

    tx_code = "version-error"


class InvalidLanguage(InvalidParameter):
    """A display language that is no language tag (``displayLanguage``)."""

    issue, tx_code = "processing", "invalid-display"


class InvalidValueSet(InvalidParameter):
    """A ValueSet's compose that cannot be resolved as written (a filter without a value...):
    ``param`` names the element, ``value set {url}.compose.include[0].filter[1]``."""

    tx_code = "vs-invalid"

    @property
    def expression(self) -> str | None:
        at = self.param or ""
        return "ValueSet" + at[at.index(".compose") :] if ".compose" in at else None


class TooCostly(ApiError):
    """More work than the configured limits allow (``TERMSEARCH_FHIR__*``)."""

    status, slug, title = 422, "too-costly", "Too costly"
    issue, tx_code = "too-costly", None


class Unauthorized(ApiError):
    status, slug, title, issue, tx_code = 401, "unauthorized", "Unauthorized", "login", None


class Forbidden(ApiError):
    """A key that may call but not do this (a curator's decision without a curator key)."""

    status, slug, title, issue, tx_code = 403, "forbidden", "Forbidden", "forbidden", None


class NotFound(ApiError):
    """An unknown route, code system, value set, concept, job or run."""

    status, slug, title, issue, tx_code = 404, "not-found", "Not found", "not-found", "not-found"


class CircularValueSet(ApiError):
    """A value set that imports itself, directly or through others."""

    status, slug, title = 422, "circular-value-set", "Circular value set"
    issue, tx_code = "processing", "vs-invalid"


class UnknownSystem(NotFound):
    """A code system that is not loaded, named by ``uri`` (a value set over one cannot be expanded;
    $validate-code answers ``result=false`` instead)."""

    def __init__(self, detail: str, uri: str) -> None:
        super().__init__(detail)
        self.uri = uri
        self.value_set: str | None = None  # url|version of the value set that draws on it, if one does


class UnresolvedImport(NotFound):
    """A value set that a value set's compose imports cannot be found ($validate-code answers
    ``result=false`` with the issue instead)."""


NO_ROUTE = "no route serves this path"


class UnknownCode(NotFound):
    """A code the code system does not have (FHIR ``$lookup``, ``$translate``)."""

    slug, title, issue, tx_code = "unknown-code", "Unknown code", "code-invalid", "invalid-code"


class MethodNotAllowed(ApiError):
    status, slug, title, issue = 405, "method-not-allowed", "Method not allowed", "not-supported"


class Conflict(ApiError):
    """Asked for something that is not ready yet (a match job's SSSOM before it is done)."""

    status, slug, title, issue, tx_code = 409, "not-ready", "Not ready", "conflict", None


class DuplicateResource(ApiError):
    """A resource whose identity another one already has (a ValueSet's ``url|version``)."""

    status, slug, title, issue, tx_code = 409, "duplicate", "Duplicate resource", "duplicate", None


class PayloadTooLarge(ApiError):
    status, slug, title, issue, tx_code = 413, "payload-too-large", "Payload too large", "too-costly", None


class NotAcceptable(ApiError):
    """A response format the service does not write (``_format=xml``: FHIR JSON only)."""

    status, slug, title, issue, tx_code = 406, "not-acceptable", "Not acceptable", "not-supported", None


class UnsupportedMediaType(ApiError):
    status, slug, title, issue = 415, "unsupported-media-type", "Unsupported media type", "not-supported"


class RateLimited(ApiError):
    status, slug, title, issue, tx_code = 429, "rate-limited", "Too many requests", "throttled", None


class InternalError(ApiError):
    status, slug, title, issue, tx_code = 500, "internal-error", "Internal server error", "exception", None


class Unavailable(ApiError):
    """No bundle is served, or a part the request needs is down."""

    status, slug, title, issue, tx_code = 503, "unavailable", "Service unavailable", "transient", None


class SearchBackendDown(Unavailable):
    """A remote index (Elasticsearch) cannot answer and the bundle has no embedded fallback for it."""

    slug, title = "backend-unavailable", "Search backend unavailable"


class StoreUnavailable(Unavailable):
    slug, title = "store-unavailable", "Concept store unavailable"


class RequestTimeout(Unavailable):
    slug, title, issue = "timeout", "Request timed out", "timeout"
