"""Operation parameters, from a query string (GET) or a ``Parameters`` resource (POST), read
the same way: typed getters that refuse malformed or repeated values with an OperationOutcome."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from app.errors import InvalidLanguage, InvalidParameter, NotAcceptable
from app.fhir.operations import TEXTS, Operation

_LANGUAGE = re.compile(r"^([A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*|\*)$")
_BOOLEANS = {"true": True, "false": False}
TX_RESOURCE_KINDS = frozenset({"ValueSet", "ConceptMap"})  # code systems are the loaded ones only
INT32 = (-(2**31), 2**31 - 1)
_INTEGERS = {"Integer", "UnsignedInt", "PositiveInt"}
_STRINGS = {"String", "Uri", "Url", "Canonical", "Code", "Id", "Oid", "Uuid", "Markdown", "Date", "DateTime", "Instant", "Time"}


def _kind(value: Any) -> str:
    """What a JSON value is, for messages (never the value itself, which may be huge)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), "null")


def _check_value(name: str, key: str, value: Any) -> None:
    """``value[x]`` holds a JSON value of its FHIR type (R4 JSON: integers are 32-bit)."""
    suffix = key.removeprefix("value")
    if suffix in _INTEGERS:
        if not isinstance(value, int) or isinstance(value, bool) or not INT32[0] <= value <= INT32[1]:
            got = value if isinstance(value, int) and not isinstance(value, bool) else _kind(value)
            raise InvalidParameter(f"{name}: {key} must be a 32-bit integer (got {got})", name)
    elif suffix == "Decimal":
        if not isinstance(value, int | float | Decimal) or isinstance(value, bool):
            raise InvalidParameter(f"{name}: {key} must be a number (got {_kind(value)})", name)
    elif suffix == "Boolean":
        if not isinstance(value, bool):
            raise InvalidParameter(f"{name}: {key} must be true or false (got {_kind(value)})", name)
    elif suffix in _STRINGS:
        if not isinstance(value, str):
            raise InvalidParameter(f"{name}: {key} must be a string (got {_kind(value)})", name)
    elif not isinstance(value, dict):  # Coding, CodeableConcept and the other complex types
        raise InvalidParameter(f"{name}: {key} must be an object (got {_kind(value)})", name)


@dataclass(frozen=True)
class Coding:
    system: str | None
    code: str
    version: str | None = None
    display: str | None = None


class UndeclaredParameter(LookupError):
    """The code reads a parameter its operation does not declare, or as another type: a defect
    of the server, caught by the tests (the declarations are what clients are told)."""


# Parameters of every FHIR interaction (http://hl7.org/fhir/R4/http.html#parameters), read by none
# of the operations: the answer is FHIR JSON whatever ``_pretty``, ``_summary`` or ``_elements`` say.
GENERAL = frozenset({"_format", "_pretty", "_summary", "_elements"})
JSON_FORMATS = frozenset({"json", "application/json", "application/fhir+json", "application/json+fhir"})


def check_format(formats: Iterable[Any], accept: str | None = None) -> None:
    """406 for a ``_format`` other than JSON, or an ``Accept`` that takes no JSON: this server
    writes FHIR JSON only."""
    for value in formats:
        if not isinstance(value, str) or value.split(";")[0].strip().lower() not in JSON_FORMATS:
            raise NotAcceptable(f"_format: {value!r} is not served; this server answers FHIR JSON only (_format=json)", "_format")
    types = [part.split(";")[0].strip().lower() for part in (accept or "").split(",") if part.strip()]
    if types and not any(t in JSON_FORMATS or t.endswith(("/*", "+json")) or t == "*/*" for t in types):
        detail = f"Accept: {accept!r} is not served; this server answers FHIR JSON only (application/fhir+json)"
        raise NotAcceptable(detail, "Accept")


def _known(operation: Operation, values: dict[str, list[Any]], strict: bool) -> dict[str, list[Any]]:
    """``values``; with ``strict`` (``Prefer: handling=strict``), each must be named a parameter
    ``operation`` declares or a general one (leniently, as the spec's default and HL7's own test
    suite expect, others are ignored); a ``_format`` other than JSON is 406."""
    unknown = sorted(name for name in values if name not in GENERAL and operation.parameter(name) is None) if strict else []
    if unknown:
        declared = ", ".join(p.name for p in operation.parameters)
        where = f"{operation.resource}/${operation.code}"
        raise InvalidParameter(f"{unknown[0]}: not a parameter of {where} (its parameters: {declared})", unknown[0])
    check_format(values.get("_format", []))
    return values


class OperationParams:
    """The parameters of a request to ``operation``, read only as it declares them."""

    def __init__(self, operation: Operation, values: dict[str, list[Any]], instance: dict[str, Any] | None = None) -> None:
        self.operation = operation
        self._values = values
        self.instance = instance  # the resource the operation is invoked on (``ValueSet/{id}/$expand``), if one

    @classmethod
    def from_query(cls, operation: Operation, items: Iterable[tuple[str, str]], strict: bool = False) -> OperationParams:
        values: dict[str, list[Any]] = {}
        for name, value in items:
            values.setdefault(name, []).append(value)
        return cls(operation, _known(operation, values, strict))

    @classmethod
    def from_resource(cls, operation: Operation, body: Any, strict: bool = False, where: str = "body") -> OperationParams:
        """Each ``parameter`` needs a ``name`` and exactly one ``value[x]`` of its type; ``where``
        names the resource in messages (the body, or one ``validation`` of a batch)."""
        if not isinstance(body, dict) or body.get("resourceType") != "Parameters":
            got = f" (got {body.get('resourceType')!r})" if isinstance(body, dict) and where != "body" else ""
            raise InvalidParameter(f"{where}: expected a Parameters resource{got}", where)
        parameters = body.get("parameter") or []
        if not isinstance(parameters, list):
            raise InvalidParameter(f"parameter: expected a list of parameters (got {_kind(parameters)})", "parameter")
        values: dict[str, list[Any]] = {}
        for number, parameter in enumerate(parameters):
            name = parameter.get("name") if isinstance(parameter, dict) else None
            if not isinstance(name, str) or not name:
                raise InvalidParameter(f"{where}: parameter {number} has no name", f"parameter.{number}")
            given = [(key, value) for key, value in parameter.items() if key.startswith("value")]
            if "resource" in parameter and not given:  # valueSet, tx-resource
                resource = parameter["resource"]
                if not isinstance(resource, dict) or not isinstance(resource.get("resourceType"), str):
                    raise InvalidParameter(f"{name}: resource must be a FHIR resource (got {_kind(resource)})", name)
                values.setdefault(name, []).append(resource)
                continue
            if len(given) != 1:
                raise InvalidParameter(f"{name}: expected exactly one value[x]", name)
            _check_value(name, *given[0])
            values.setdefault(name, []).append(given[0][1])
        return cls(operation, _known(operation, values, strict))

    def declares(self, name: str) -> bool:
        return self.operation.parameter(name) is not None

    def _declared(self, name: str, types: Collection[str]) -> None:
        parameter = self.operation.parameter(name)
        if parameter is None or (types and parameter.type not in types):
            declared = f"declared as {parameter.type}" if parameter else "not declared"
            raise UndeclaredParameter(f"{self.operation.id} reads {name!r} as {'/'.join(sorted(types))}, {declared}")

    def defaulting(self, name: str, value: Any) -> OperationParams:
        """These parameters, with ``name`` set to ``value`` where it is not given (by any of its
        names) and value is not None."""
        if value is None or self.given(name):
            return self
        return OperationParams(self.operation, {**self._values, name: [value]}, self.instance)

    def within(self, shared: OperationParams, joined: Collection[str] = ("tx-resource",)) -> OperationParams:
        """These parameters, with each of ``shared`` (another operation's: a batch's) that they do
        not give and their operation declares; a ``joined`` one (``tx-resource``) is both theirs
        and ``shared``'s."""
        values = dict(self._values)
        for name, given in shared._values.items():
            if not self.declares(name):
                continue
            if name in joined:
                values[name] = [*given, *values.get(name, [])]
            elif not self.given(name):
                values[name] = given
        return OperationParams(self.operation, values, self.instance)

    def on_instance(self, resource: dict[str, Any]) -> OperationParams:
        """These parameters, of the operation invoked on ``resource`` (a stored ValueSet)."""
        return OperationParams(self.operation, self._values, resource)

    def given(self, name: str) -> bool:
        """Whether the request gives ``name`` (by any of its names)."""
        return any(given in self._values for given in self.operation.names_of(name))

    def _name_given(self, name: str) -> str:
        """The name ``name`` is given by (``sourceCoding`` for ``coding``), for messages."""
        return next((given for given in self.operation.names_of(name) if given in self._values), name)

    def _values_of(self, name: str) -> list[Any]:
        """The values of ``name``, given by it or by one of its aliases (R5's name of an R4
        parameter): by two names, only if they are the same values."""
        given = [(each, self._values[each]) for each in self.operation.names_of(name) if each in self._values]
        if any(values != given[0][1] for _, values in given[1:]):
            names = " and ".join(each for each, _ in given)
            raise InvalidParameter(f"{names}: one parameter by two names, with different values; give one", given[-1][0])
        return given[0][1] if given else []

    def _one(self, name: str, *types: str) -> Any:
        self._declared(name, types)
        values = self._values_of(name)
        if len(values) > 1:
            raise InvalidParameter(f"{self._name_given(name)}: given {len(values)} times, allowed once")
        return values[0] if values else None

    def value(self, name: str) -> Any:
        """The value of ``name`` as given (at most once), of any type."""
        return self._one(name)

    def resources(self, name: str, kind: str) -> list[dict[str, Any]]:
        """The resources of ``resourceType`` ``kind`` given as ``name`` (POST only). ``tx-resource``
        may carry ValueSets and ConceptMaps, each operation taking the kind it uses; any other
        parameter, and any other kind, is refused."""
        self._declared(name, {"Resource"})
        values = self._values_of(name)
        allowed = TX_RESOURCE_KINDS if name == "tx-resource" else {kind}
        for value in values:
            if not isinstance(value, dict) or value.get("resourceType") not in allowed:
                got = value.get("resourceType") if isinstance(value, dict) else _kind(value)
                expected = " or ".join(sorted(allowed))
                raise InvalidParameter(f"{name}: expected a {expected} resource (got {got!r})", name)
        return [value for value in values if value.get("resourceType") == kind]

    def resources_of_any_kind(self, name: str) -> list[Any]:
        """The values of ``name`` (a resource parameter) as given, whatever they are (POST only):
        for the caller to answer each one as it can."""
        self._declared(name, {"Resource"})
        return list(self._values_of(name))

    def text(self, name: str) -> str | None:
        value = self._one(name, *TEXTS)
        if value is not None and not isinstance(value, str):
            raise InvalidParameter(f"{name}: expected a string")
        return value

    def required_text(self, name: str) -> str:
        value = self.text(name)
        if not value:
            raise InvalidParameter(f"{name}: required")
        return value

    def texts(self, name: str) -> list[str]:
        self._declared(name, TEXTS)
        values = self._values_of(name)
        if not all(isinstance(value, str) for value in values):
            raise InvalidParameter(f"{name}: expected strings")
        return values

    def integer(self, name: str, minimum: int = 0) -> int | None:
        """A FHIR integer (32-bit signed) of at least ``minimum``, given as a query string or as a
        ``valueInteger``: the same bounds either way."""
        given = self._one(name, "integer")
        value = int(given) if isinstance(given, str) and re.fullmatch(r"-?\d{1,10}", given) else given
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= INT32[1]):
            raise InvalidParameter(f"{name}: expected an integer from {minimum} to {INT32[1]} (got {given!r})")
        return value

    def decimal(self, name: str) -> float | None:
        given = self._one(name, "decimal")
        value = given
        if isinstance(given, str):
            try:
                value = float(given) if re.fullmatch(r"-?\d{1,6}(\.\d{1,12})?", given) else given
            except ValueError:
                value = given
        if value is not None and (not isinstance(value, int | float | Decimal) or isinstance(value, bool)):
            raise InvalidParameter(f"{name}: expected a decimal (got {given!r})")
        return None if value is None else float(value)

    def boolean(self, name: str) -> bool | None:
        value = self._one(name, "boolean")
        if isinstance(value, str):
            value = _BOOLEANS.get(value, value)
        if value is not None and not isinstance(value, bool):
            raise InvalidParameter(f"{name}: expected true or false (got {value!r})")
        return value

    def typed(self, name: str) -> Any:
        """The value of ``name`` as its declared type reads it (a string, integer, boolean or number)."""
        kind = self.operation.parameter(name)
        readers: dict[str, Callable[[str], Any]] = {"integer": self.integer, "boolean": self.boolean, "decimal": self.decimal}
        reader = readers.get(kind.type if kind else "", self.text)
        return reader(name)

    def language(self, name: str) -> str | None:
        """A language tag, or the first of a list as Accept-Language writes it (``de, en;q=0.8``)."""
        value = self.text(name)
        if value is None:
            return None
        tags = [part.split(";")[0].strip() for part in value.split(",")]
        if not tags or not all(_LANGUAGE.match(tag) for tag in tags):
            raise InvalidLanguage(f"{name}: expected a language tag such as en or en-US, or a list of them (got {value!r})", name)
        return tags[0]

    def coding(
        self, code_name: str, system_name: str, coding_name: str = "coding", version_name: str = "version"
    ) -> Coding | None:
        """A coding given as ``coding`` (POST), or as separate code, system, version and display
        (where the operation takes a display)."""
        coding = self.coding_of(coding_name)
        if coding is not None:
            return coding
        code = self.text(code_name)
        if not code:
            return None
        display = self.text("display") if self.declares("display") else None
        return Coding(self.text(system_name), code, self.text(version_name), display)

    def coding_of(self, name: str) -> Coding | None:
        """A Coding parameter (POST), as given."""
        value = self._one(name, "Coding")
        return None if value is None else _coding(self._name_given(name), value)

    def codeable_concept(self, name: str = "codeableConcept") -> list[Coding] | None:
        """The codings of a CodeableConcept (POST), at least one."""
        value = self._one(name, "CodeableConcept")
        if value is None:
            return None
        name = self._name_given(name)
        codings = value.get("coding") if isinstance(value, dict) else None
        if not isinstance(codings, list) or not codings:
            raise InvalidParameter(f"{name}: expected a CodeableConcept with a coding", name)
        return [_coding(f"{name}.coding.{number}", coding) for number, coding in enumerate(codings)]


def _coding(param: str, value: Any) -> Coding:
    if not isinstance(value, dict) or not isinstance(value.get("code"), str):
        raise InvalidParameter(f"{param}: expected a Coding with a code", param)
    for element in ("system", "version", "display"):
        if not isinstance(value.get(element, ""), str):
            raise InvalidParameter(f"{param}.{element}: expected a string (got {_kind(value[element])})", f"{param}.{element}")
    return Coding(value.get("system"), value["code"], value.get("version"), value.get("display"))
