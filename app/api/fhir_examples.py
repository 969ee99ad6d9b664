"""Examples in the OpenAPI description of the FHIR routes, drawn from the served bundle: a loaded
code system, one of its codes and that code's parent. `/docs`' "Try it out" and a schema fuzzer's
example phase then send requests that succeed on this deployment (a 2xx for every operation), not
only requests the server refuses.

The ValueSet routes on one resource name :data:`EXAMPLE_VALUE_SET_ID`, the id the example of
``PUT /fhir/ValueSet/{id}`` stores; ``DELETE`` names another (:data:`DELETED_VALUE_SET_ID`), so that a
client trying every route in turn does not delete what the operations after it are tried on.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from app.fhir.operations import OPERATIONS, POST_ONLY, VALUE_SET_VALIDATE, Operation
from indexer.bundle import Bundle

EXAMPLE_VALUE_SET_ID = "termsearch-example"
DELETED_VALUE_SET_ID = "termsearch-example-deleted"
_EXAMPLE_COUNT = 10
_VALUE_SET_PATH = "/fhir/ValueSet/{value_set_id}"
_PATH_PARAMETER = re.compile(r"\{[^}]+\}")


@dataclass(frozen=True)
class ServedExample:
    """A loaded system's first active concept that has a parent."""

    key: str
    uri: str
    code: str
    display: str
    parent: str

    @classmethod
    def of(cls, bundle: Bundle) -> ServedExample | None:
        for system in bundle.systems.values():
            for row in bundle.rows(system.key, include_inactive=False):
                concept = bundle.concepts[row]
                if concept.parents and concept.billable is not False:
                    parent = bundle.concepts[concept.parents[0]]
                    return cls(system.key, system.uri, concept.code, concept.display, parent.code)
        return None

    @property
    def word(self) -> str:
        """A word of the display, as a user would type to filter."""
        return max(re.findall(r"[^\W\d_]+", self.display) or [self.display], key=len)

    def value_set(self, value_set_id: str | None) -> dict[str, Any]:
        """A ValueSet of the code and its parent (``id`` given: the resource a PUT stores)."""
        name = value_set_id or f"{EXAMPLE_VALUE_SET_ID}-created"
        resource = {
            "resourceType": "ValueSet",
            "url": f"urn:termsearch:ValueSet:{name}",
            "status": "active",
            "compose": {"include": [{"system": self.uri, "concept": [{"code": self.code}, {"code": self.parent}]}]},
        }
        return resource | ({"id": value_set_id} if value_set_id else {})

    def arguments(self, operation: Operation, on_instance: bool) -> dict[str, Any]:
        """What the example request of ``operation`` gives, by parameter name; ``on_instance``:
        without the parameter the instance supplies."""
        url = {"ValueSet": f"{self.uri}?fhir_vs", "CodeSystem": self.uri}.get(operation.resource)
        wanted: dict[str, Any] = {"system": self.uri, "code": self.code, "codeA": self.code, "codeB": self.parent}
        if operation.resource == "ValueSet":
            wanted |= {"filter": self.word, "count": _EXAMPLE_COUNT}
        if url is not None:
            wanted["url"] = url
        declared = {p.name for p in operation.parameters if p.type not in POST_ONLY and p.alias_of is None}
        supplied = operation.instance if on_instance else None
        return {name: value for name, value in wanted.items() if name in declared and name != supplied}

    def body(self, operation: Operation, on_instance: bool) -> dict[str, Any]:
        """The example ``Parameters`` a POST of ``operation`` sends (``$batch-validate``: one validation)."""
        body = _parameters(operation, self.arguments(operation, on_instance))
        if any(p.name == "validation" for p in operation.parameters):
            one = _parameters(VALUE_SET_VALIDATE, {"system": self.uri, "code": self.code})
            body["parameter"].append({"name": "validation", "resource": one})
        return body

    def path_arguments(self, operation_id: str) -> dict[str, str]:
        return {"key": self.key, "value_set_id": EXAMPLE_VALUE_SET_ID, "operation_id": operation_id}


def _shape(path: str) -> str:
    """``path`` with its parameters unnamed: ``/fhir/ValueSet/{}/$expand``."""
    return _PATH_PARAMETER.sub("{}", path)


def _operation_of(path: str) -> tuple[Operation, bool] | None:
    """The FHIR operation ``path`` (under ``/fhir``) serves, and whether on one resource."""
    for operation in OPERATIONS:
        if path == f"/fhir{operation.path}":
            return operation, False
        if operation.instance_path and _shape(path) == _shape(f"/fhir{operation.instance_path}"):
            return operation, True
    return None


def _parameters(operation: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    keys = {p.name: p.value_key for p in operation.parameters}
    return {"resourceType": "Parameters", "parameter": [{"name": n, keys[n]: v} for n, v in arguments.items()]}


def _set_examples(method: dict[str, Any], arguments: dict[str, Any], body: dict[str, Any] | None) -> None:
    for parameter in method.get("parameters", []):
        if parameter["name"] in arguments:
            parameter["example"] = arguments[parameter["name"]]
    for media in method.get("requestBody", {}).get("content", {}).values() if body is not None else ():
        media["example"] = body


def with_examples(spec: dict[str, Any], bundle: Bundle | None) -> dict[str, Any]:
    """``spec`` (not changed) with examples for the FHIR routes from ``bundle`` (None: as it is)."""
    example = None if bundle is None else ServedExample.of(bundle)
    if example is None:
        return spec
    spec = copy.deepcopy(spec)
    # The stored ValueSet's own route first: a client walking the routes in order stores the example
    # (PUT) before it tries the operations on it.
    spec["paths"] = dict(sorted(spec["paths"].items(), key=lambda item: item[0] != _VALUE_SET_PATH))
    for path, methods in spec["paths"].items():
        if not path.startswith("/fhir/"):
            continue
        served = _operation_of(path)
        paths = example.path_arguments(served[0].id if served else OPERATIONS[0].id)
        for verb, method in methods.items():
            if served is not None:
                _set_examples(method, paths | example.arguments(*served), example.body(*served) if verb == "post" else None)
            elif path.startswith("/fhir/ValueSet") and verb in ("put", "post"):
                _set_examples(method, paths, example.value_set(EXAMPLE_VALUE_SET_ID if verb == "put" else None))
            else:
                _set_examples(method, paths | ({"value_set_id": DELETED_VALUE_SET_ID} if verb == "delete" else {}), None)
    return spec
