"""OperationOutcome: the body of every error under ``/fhir`` (rendered from ``app.errors`` by
``app/api/errors.py``) and of the ``issues`` of a negative ``$validate-code``.

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
