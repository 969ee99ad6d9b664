"""OperationOutcome: the body of every error under ``/fhir``.

Each issue has a severity, an issue type (``http://hl7.org/fhir/issue-type``), and ``details``
with a coding from the terminology issue types (``tx-issue-type``) and a readable text.
"""

from __future__ import annotations

from typing import Any

FHIR_JSON = "application/fhir+json"
TX_ISSUE_TYPE = "http://hl7.org/fhir/tools/CodeSystem/tx-issue-type"


def operation_outcome(text: str, code: str, tx_code: str | None, severity: str = "error") -> dict[str, Any]:
    details: dict[str, Any] = {"text": text}
    if tx_code is not None:
        details["coding"] = [{"system": TX_ISSUE_TYPE, "code": tx_code}]
    return {"resourceType": "OperationOutcome", "issue": [{"severity": severity, "code": code, "details": details}]}


class FhirError(Exception):
    """A request the terminology operations refuse; rendered as an OperationOutcome."""

    status = 400
    code = "invalid"
    tx_code = "invalid-data"

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def outcome(self) -> dict[str, Any]:
        return operation_outcome(self.text, self.code, self.tx_code)


class InvalidRequest(FhirError):
    """A parameter or body that is missing, malformed or out of range."""


class NotFound(FhirError):
    """An unknown code system or value set."""

    status = 404
    code = "not-found"
    tx_code = "not-found"


class UnknownCode(FhirError):
    """A code that is not in the code system."""

    status = 404
    code = "code-invalid"
    tx_code = "invalid-code"


class TooCostly(FhirError):
    """More work than the configured limits allow (``TERMSEARCH_FHIR__*``)."""

    status = 422
    code = "too-costly"
    tx_code = "vs-invalid"


def outcome_for_status(status: int, text: str) -> dict[str, Any]:
    """The OperationOutcome for an error that another layer answered with ``status``
    (routing 404/405, request validation, service unavailable, ...)."""
    if status >= 500:
        return operation_outcome(text, "transient" if status == 503 else "exception", None, "fatal")
    code = {404: "not-found", 405: "not-supported", 413: "too-costly", 429: "throttled"}.get(status, "invalid")
    return operation_outcome(text, code, "not-found" if status == 404 else "invalid-data")
