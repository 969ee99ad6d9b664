"""HL7's terminology-ecosystem test suite (``hl7/``, unmodified) and its adaptation to the content
this server holds (``adapted/``): every test of the suite is either run, adapted to HPO and
ICD-10-CM, or listed as not applicable with the reason.

The suite assumes a server that accepts code systems on the fly; its documentation asks a server
that cannot to rewrite the tests over the code systems it supports. ``adapted/<suite>.json`` does so:

    {"suite": "<suite name>",
     "setup": ["<dir>/<ValueSet>.json", ...],            # passed as tx-resource, as HL7's runner does
     "tests": {"<test name>": {"request": "...", "response": "...", "http-code": 200,
                               "adaptation": "what changed", "fails": "why (known failure)"}},
     "not-applicable": {"<test name>": "why"}}

A suite with no file there is not applicable as a whole; ``not_applicable_suites.json`` says why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from tests.fhir.tx_ecosystem.compare import contains, differences
from tests.fhir.tx_ecosystem.r5 import to_r5

HERE = Path(__file__).parent
HL7 = HERE / "hl7"
ADAPTED = HERE / "adapted"

# The R4 operation endpoints of the suite's operation names.
ENDPOINTS = {
    "expand": ("POST", "/fhir/ValueSet/$expand"),
    "validate-code": ("POST", "/fhir/ValueSet/$validate-code"),
    "batch-validate": ("POST", "/fhir/ValueSet/$batch-validate"),
    "cs-validate-code": ("POST", "/fhir/CodeSystem/$validate-code"),
    "lookup": ("POST", "/fhir/CodeSystem/$lookup"),
    "translate": ("POST", "/fhir/ConceptMap/$translate"),
    "metadata": ("GET", "/fhir/metadata"),
    "term-caps": ("GET", "/fhir/metadata?mode=terminology"),
}


@dataclass(frozen=True)
class Case:
    """One test of HL7's suite, as this server runs it (or why it does not)."""

    suite: str
    name: str
    operation: str
    request: Path | None = None
    response: Path | None = None
    http_code: int | str = 200  # or a class: "4xx"
    setup: tuple[Path, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)
    not_applicable: str | None = None
    fails: str | None = None
    adapted: bool = False

    @property
    def id(self) -> str:
        return f"{self.suite}/{self.name}"


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8-sig"))  # some of the suite's files start with a BOM


@cache
def cases() -> tuple[Case, ...]:
    """Every test of the suite, in its order; one neither adapted nor not applicable is not accounted for."""
    suites = _json(HL7 / "test-cases.json")["suites"]
    whole = _json(HERE / "not_applicable_suites.json")
    found = []
    for suite in suites:
        name = suite["name"]
        adapted_file = ADAPTED / f"{name}.json"
        if not adapted_file.exists():
            reason = whole.get(name)  # None: not accounted for, which the completeness test refuses
            found += [Case(name, test["name"], test["operation"], not_applicable=reason) for test in suite["tests"]]
            continue
        adaptation = _json(adapted_file)
        setup = tuple(ADAPTED / path for path in adaptation.get("setup", []))
        for test in suite["tests"]:
            found.append(_case(name, test, adaptation, setup))
        unknown = (set(adaptation.get("tests", {})) | set(adaptation.get("not-applicable", {}))) - {
            test["name"] for test in suite["tests"]
        }
        if unknown:
            raise AssertionError(f"{adapted_file.name} names tests the suite does not have: {sorted(unknown)}")
    return tuple(found)


def _case(suite: str, test: dict[str, Any], adaptation: dict[str, Any], setup: tuple[Path, ...]) -> Case:
    name = test["name"]
    common = {"suite": suite, "name": name, "operation": test["operation"]}
    if name in adaptation.get("not-applicable", {}):
        return Case(**common, not_applicable=adaptation["not-applicable"][name])
    spec = adaptation.get("tests", {}).get(name)
    if spec is None:  # not accounted for, which the completeness test refuses
        return Case(**common)
    headers = {"Accept-Language": spec["Accept-Language"]} if "Accept-Language" in spec else {}
    return Case(
        **common,
        request=ADAPTED / spec["request"] if "request" in spec else None,
        response=ADAPTED / spec["response"],
        http_code=spec.get("http-code", 200),
        setup=tuple(ADAPTED / path for path in spec.get("setup", [])) or setup,
        headers=headers,
        fails=spec.get("fails"),
        adapted=True,
    )


def request_body(case: Case) -> dict[str, Any] | None:
    """The request's Parameters with the suite's setup resources added as ``tx-resource``."""
    if case.request is None:
        return None
    body = _json(case.request)
    body.setdefault("parameter", [])
    body["parameter"] += [{"name": "tx-resource", "resource": _json(path)} for path in case.setup]
    return body


def expected(case: Case) -> Any:
    assert case.response is not None
    return _json(case.response)


def run(case: Case, client: Any) -> list[str]:
    """Run ``case`` with ``client`` (a TestClient or an httpx.Client on the server) and return
    the differences from the expected answer (empty: the test passes)."""
    method, path = ENDPOINTS[case.operation]
    headers = {"Accept": "application/fhir+json", **case.headers}
    if method == "GET":
        response = client.get(path, headers=headers)
    else:
        response = client.post(
            path, json=request_body(case), headers={**headers, "Content-Type": "application/fhir+json"}
        )
    status = str(response.status_code)
    wanted = str(case.http_code)
    found = [] if status == wanted or (wanted.endswith("xx") and status[0] == wanted[0]) else [f"HTTP {status}, expected {wanted}"]
    try:
        body = response.json()
    except ValueError:
        return [*found, f"not JSON: {response.text[:200]}"]
    compare = contains if case.operation in ("metadata", "term-caps") else differences
    return found + compare(expected(case), to_r5(body))
