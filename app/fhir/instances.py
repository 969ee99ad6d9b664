"""The operations invoked on one resource: ``ValueSet/{id}/$expand`` and ``/$validate-code`` on a
stored ValueSet, ``CodeSystem/{id}/$lookup``, ``/$validate-code`` and ``/$subsumes`` on a loaded
code system (its id is its key, ``hpo``, as ``GET /fhir/CodeSystem/{id}`` reads it).

The instance supplies the parameter its operation declares (``Operation.instance``: ``url`` or
``system``) and the type-level operation answers. A stored ValueSet is used as stored, not found
again by its url (another with the same url is not it). An unknown id is a 404; a parameter that
names another value set or code system than the instance is a 400.
"""

from __future__ import annotations

from app.errors import InvalidParameter
from app.fhir import codesystems
from app.fhir.context import FhirContext
from app.fhir.params import OperationParams
from app.fhir.stored import check_id
from app.fhir.valuesets import canonical_of


def on_value_set(context: FhirContext, params: OperationParams, value_set_id: str) -> OperationParams:
    """``params`` of the operation on the stored ``ValueSet/{value_set_id}``."""
    resource = context.value_sets.get(check_id(value_set_id, "id"))
    url, version = resource["url"], resource.get("version")
    named = params.text("url")
    if named is not None and named not in (url, canonical_of(url, version)):
        raise InvalidParameter(f"url: ValueSet/{value_set_id} is {canonical_of(url, version)}, not {named}", "url")
    asked = params.text("valueSetVersion")
    if asked is not None and asked != version:
        raise InvalidParameter(
            f"valueSetVersion: ValueSet/{value_set_id} is {canonical_of(url, version)}, not version {asked!r}", "valueSetVersion"
        )
    if params.given("valueSet"):
        raise InvalidParameter(f"valueSet: the operation is on ValueSet/{value_set_id}; give no other value set", "valueSet")
    return params.defaulting("url", url).on_instance(resource)


def on_code_system(context: FhirContext, params: OperationParams, key: str) -> OperationParams:
    """``params`` of the operation on the loaded code system ``CodeSystem/{key}``."""
    system = codesystems.by_id(context.bundle.systems, key)
    name = params.operation.instance
    assert name is not None, f"{params.operation.id} is not served on an instance"
    named = params.text(name)
    if named is not None and named != system.uri:
        raise InvalidParameter(f"{name}: CodeSystem/{key} is {system.uri}, not {named}", name)
    return params.defaulting(name, system.uri)
