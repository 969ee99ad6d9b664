"""OperationOutcome: the body of every error under ``/fhir`` (rendered from ``app.errors`` by
``app/api/errors.py``) and of the ``issues`` of a negative ``$validate-code``.

Each issue has a severity, an issue type (``http://hl7.org/fhir/issue-type``), ``details`` with a
coding from the terminology issue types (``tx-issue-type``) and a readable text, and in
``$validate-code`` answers the ``expression`` (and ``location``) of the input element it is about.
"""

from __future__ import annotations

from typing import Any

from app.errors import ApiError

FHIR_JSON = "application/fhir+json"
TX_ISSUE_TYPE = "http://hl7.org/fhir/tools/CodeSystem/tx-issue-type"


def issue(text: str, code: str, tx_code: str | None, severity: str = "error", expression: str | None = None) -> dict[str, Any]:
    """One issue; ``expression`` names the input element it is about (``Coding.display``)."""
    details: dict[str, Any] = {"text": text}
    if tx_code is not None:
        details["coding"] = [{"system": TX_ISSUE_TYPE, "code": tx_code}]
    found: dict[str, Any] = {"severity": severity, "code": code, "details": details}
    if expression is not None:  # and R4's deprecated location, which clients such as HL7's tests still read
        found["location"] = found["expression"] = [expression]
    return found


def operation_outcome(
    text: str, code: str, tx_code: str | None, severity: str = "error", expression: str | None = None
) -> dict[str, Any]:
    return {"resourceType": "OperationOutcome", "issue": [issue(text, code, tx_code, severity, expression)]}


def error_status(error: ApiError) -> int:
    """The HTTP status of ``error`` under ``/fhir``."""
    return error.fhir_status or error.status


def error_outcome(error: ApiError) -> dict[str, Any]:
    """``error`` as an OperationOutcome: the body of its answer under ``/fhir``, and of a batch's
    entry that failed (``$batch-validate``)."""
    severity = "fatal" if error_status(error) >= 500 else "error"
    return operation_outcome(error.detail, error.issue, error.tx_code, severity, error.expression)
