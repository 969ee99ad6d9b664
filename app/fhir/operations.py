"""The FHIR operations served and their parameters, each declared once.

The declarations drive everything that names a parameter: :class:`~app.fhir.params.OperationParams`
reads only what an operation declares, with the getter its type calls for; the routes, their
OpenAPI description, the CapabilityStatement, TerminologyCapabilities, the OperationDefinitions
(``GET /fhir/OperationDefinition/{id}``) and the docs table (``docs/FHIR_PARAMETERS.md``) are
written from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from app.checks import SEARCH
from app.settings import FhirSettings

HL7_DEFINITIONS = "http://hl7.org/fhir/OperationDefinition"
TEXTS = frozenset({"string", "uri", "canonical", "code", "id"})  # read as text
POST_ONLY = frozenset({"Coding", "CodeableConcept", "Resource"})  # no query-string form


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # its FHIR data type
    documentation: str
    required: bool = False  # by GET; a POSTed Parameters may give a resource in its stead
    repeats: bool = False
    echoed: bool = False  # repeated in the answer when given ($expand's expansion.parameter)
    limits: dict[str, Any] = field(default_factory=dict, compare=False)  # JSON-schema limits beyond the type's
    alias_of: str | None = None  # another name (R5's) of this operation's parameter of that name, read as it

    @property
    def max(self) -> str:
        return "*" if self.repeats else "1"

    @property
    def value_key(self) -> str:
        """``valueString``, ``valueInteger``... as a ``Parameters`` resource carries it."""
        return f"value{self.type[0].upper()}{self.type[1:]}"


@dataclass(frozen=True)
class Operation:
    resource: str  # the resource type it is invoked on
    code: str  # ``expand``: served as ``/fhir/ValueSet/$expand``
    documentation: str
    parameters: tuple[Parameter, ...]
    returns: tuple[Parameter, ...]  # the answer's parameters (``return``: the resource answered)
    instance: str | None = None  # the parameter an instance (``/ValueSet/{id}/$expand``) supplies; None: type level only
    by_get: bool = True  # served by GET too; False: POST only (a parameter it needs is a resource)
    hl7: bool = True  # defined by HL7 (its base); False: tx.fhir.org's own ($batch-validate), with no HL7 definition

    @property
    def id(self) -> str:
        return f"{self.resource}-{self.code}"

    @property
    def path(self) -> str:
        return f"/{self.resource}/${self.code}"

    @property
    def instance_path(self) -> str | None:
        """``/ValueSet/{id}/$expand``: the operation on one resource, which supplies :attr:`instance`."""
        return None if self.instance is None else f"/{self.resource}/{{id}}/${self.code}"

    @property
    def base(self) -> str | None:
        """The HL7 definition this one implements (and extends); None where HL7 defines none."""
        return f"{HL7_DEFINITIONS}/{self.id}" if self.hl7 else None

    def parameter(self, name: str) -> Parameter | None:
        return next((parameter for parameter in self.parameters if parameter.name == name), None)

    def names_of(self, name: str) -> tuple[str, ...]:
        """``name`` and the names declared as its aliases (``code``, ``sourceCode``)."""
        return (name, *(p.name for p in self.parameters if p.alias_of == name))


def _text(name: str, documentation: str, **options: Any) -> Parameter:
    return Parameter(name, "string", documentation, **options)


def _canonicals(name: str, documentation: str) -> Parameter:
    return Parameter(name, "canonical", documentation, repeats=True)


def _flag(name: str, documentation: str, echoed: bool = False) -> Parameter:
    return Parameter(name, "boolean", documentation, echoed=echoed)


_FHIR = FhirSettings()
INT32 = 2**31 - 1
_SUPPLEMENT = Parameter(
    "useSupplement", "canonical", "a CodeSystem supplement to use (its designations and properties)", repeats=True
)
_LANGUAGE = Parameter(
    "displayLanguage", "code", "the display in this language (or an Accept-Language header)",
    limits={"pattern": r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"},
)
_VALUE_SET = (
    Parameter(
        "url", "uri",
        "the value set: implicit, {system}?fhir_vs (every code), {system}?fhir_vs=isa/{code} (a subtree) or "
        "{system}?fhir_vs=billable (the billable codes of a system that has them: ICD-10-CM), a stored one, "
        "or a tx-resource's url",
        required=True,
    ),
    Parameter("valueSet", "Resource", "the value set itself, in place of url (POST)"),
    _text("valueSetVersion", "the version of the value set named by url"),
    Parameter("tx-resource", "Resource", "ValueSets and ConceptMaps the request may refer to (POST)", repeats=True),
    _canonicals("default-valueset-version", "url|version: the version of a value set imported without one"),
    _canonicals("system-version", "system|version: the version of a code system where the value set names none"),
    _canonicals("check-system-version", "system|version: an error unless this version is the one used"),
    _canonicals("force-system-version", "system|version: the version used whatever the value set says"),
    _SUPPLEMENT,
)
_CODE = Parameter("code", "code", "a code of the system")
_SYSTEM = Parameter("system", "uri", "code system URI")
_DISPLAY = _text("display", "a display to check")
_CODING = Parameter("coding", "Coding", "the code as a Coding, in place of system and code (POST)")
_CODEABLE = Parameter("codeableConcept", "CodeableConcept", "the codings to check; valid when one of them is (POST)")
_VERSION = _text("version", "code system version (the loaded one)")
_PROPERTY = Parameter(
    "property", "code", "properties to list (parent, child, definition, inactive, the code system's own; * for all)", repeats=True
)
_ABSTRACT = _flag("abstract", "false: an abstract code (ICD-10-CM chapter, block) is not valid")
_CHECKS = (
    _flag("activeOnly", "true: an inactive code is not valid"),
    _ABSTRACT,
    _flag("lenient-display-validation", "true: a wrong display is a warning, not an error"),
    _flag("valueset-membership-only", "true: membership only, no display check"),
    _LANGUAGE,
)
_VALIDATED = (
    Parameter("result", "boolean", "whether the code is valid", required=True),
    _text("message", "why not, or what to note"),
    _text("display", "the code's display"),
    Parameter("inactive", "boolean", "true: the code is inactive (valid, with a warning)"),
    Parameter("status", "code", "an inactive code's status: retired (an obsolete HPO term)"),
    Parameter("issues", "Resource", "an OperationOutcome with each problem"),
)

EXPAND = Operation(
    "ValueSet", "expand",
    "The codes of a value set; with filter, ranked by meaning (semantic search), best first.",
    (
        *_VALUE_SET,
        _text(
            "filter",
            "text to search for by meaning, ranked best first (the last, unfinished word completed); "
            "a code whose display holds every word is always listed",
            echoed=True,
            limits={"maxLength": SEARCH.max_query_length},
        ),
        Parameter("count", "integer", "codes per page", echoed=True, limits={"minimum": 0, "maximum": _FHIR.max_count}),
        Parameter("offset", "integer", "where the page starts", echoed=True, limits={"minimum": 0, "maximum": INT32}),
        _flag("activeOnly", "leave out inactive codes", echoed=True),
        _flag("includeDesignations", "list each code's designations", echoed=True),
        replace(_LANGUAGE, echoed=True),
        _flag("excludeNotForUI", "leave out abstract codes (ICD-10-CM chapters, blocks), listed otherwise as abstract", True),
        _flag("excludeNested", "accepted with either value: expansions are always flat", echoed=True),
        _flag("abstract", "false: leave out abstract codes (as excludeNotForUI)", echoed=True),
        _flag("includeDefinition", "the value set's definition (compose), and each code's definition"),
        _PROPERTY,
        Parameter(
            "min_confidence", "decimal",
            f"least confidence of a filtered code (default {SEARCH.confidence_threshold})",
            echoed=True,
            limits={"minimum": 0, "maximum": 1},
        ),
    ),
    (Parameter("return", "Resource", "the ValueSet with its expansion", required=True),),
    instance="url",
)
VALUE_SET_VALIDATE = Operation(
    "ValueSet", "validate-code",
    "Whether a code (coding, codeable concept) is in a value set, with its display checked.",
    (
        *_VALUE_SET, _SYSTEM, _CODE, _text("systemVersion", "the code's system version"), _DISPLAY, _CODING, _CODEABLE,
        _flag("inferSystem", "true: a code without a system is of the value set's (single) system"), *_CHECKS,
    ),
    _VALIDATED,
    instance="url",
)
# What one $validate-code of a batch names for itself: the code (the rest may be shared by the batch).
_THE_CODE = frozenset({"system", "code", "systemVersion", "display", "coding", "codeableConcept"})
BATCH_VALIDATE = Operation(
    "ValueSet", "batch-validate",
    "Many ValueSet/$validate-code requests in one (tx.fhir.org's operation): each validation is the Parameters of "
    "one $validate-code, answered as that operation answers it, or with the OperationOutcome of its error; a "
    "parameter given beside the validations applies to each that does not give it (tx-resource: to each).",
    (
        Parameter(
            "validation", "Resource", "the Parameters of one ValueSet/$validate-code (one per code)",
            required=True, repeats=True,
        ),
        *(replace(p, required=False) for p in VALUE_SET_VALIDATE.parameters if p.name not in _THE_CODE),
    ),
    (
        Parameter(
            "validation", "Resource",
            "for each validation, in order: the Parameters $validate-code answers, or the OperationOutcome of its error",
            required=True, repeats=True,
        ),
    ),
    by_get=False,
    hl7=False,
)
CODE_SYSTEM_VALIDATE = Operation(
    "CodeSystem", "validate-code",
    "Whether a code (coding, codeable concept) is a code of a code system, with its display checked.",
    (
        Parameter("url", "uri", "code system URI", required=True), _CODE, _VERSION, _DISPLAY,
        Parameter("system", "uri", "code system URI (as url)"), _CODING, _CODEABLE, *_CHECKS, _SUPPLEMENT,
    ),
    _VALIDATED,
    instance="url",
)
LOOKUP = Operation(
    "CodeSystem", "lookup",
    "A code's display, designations and properties (parent, child, definition, inactive, the code system's own).",
    (
        Parameter("system", "uri", "code system URI", required=True),
        Parameter("code", "code", "a code of the system", required=True),
        _VERSION, _CODING, _LANGUAGE, _PROPERTY, _SUPPLEMENT,
    ),
    (
        _text("name", "the code system's name", required=True),
        _text("version", "its version"),
        _text("display", "the code's display", required=True),
        Parameter("designation", "Resource", "each designation besides the display (parts)", repeats=True),
        Parameter("property", "Resource", "each property asked (parts)", repeats=True),
    ),
    instance="system",
)
SUBSUMES = Operation(
    "CodeSystem", "subsumes",
    "How two codes of a code system are related by its is-a hierarchy: equivalent (the same code), subsumes "
    "(B is below A), subsumed-by (A is below B) or not-subsumed.",
    (
        Parameter("codeA", "code", "the first code (of system)"),
        Parameter("codeB", "code", "the second code (of system)"),
        Parameter("system", "uri", "code system URI of codeA and codeB (and of a coding without one)"),
        _VERSION,
        Parameter("codingA", "Coding", "the first code as a Coding, in place of codeA (POST)"),
        Parameter("codingB", "Coding", "the second code as a Coding, in place of codeB (POST)"),
    ),
    (Parameter("outcome", "code", "equivalent | subsumes | subsumed-by | not-subsumed", required=True),),
    instance="system",
)
TRANSLATE = Operation(
    "ConceptMap", "translate",
    "Stored mappings, alignments and semantic candidates of a code in another code system or value set.",
    (
        Parameter("system", "uri", "code system URI of the code"),
        Parameter("code", "code", "the code to translate (with system)"),
        _VERSION, _DISPLAY, _CODING,
        Parameter(
            "codeableConcept", "CodeableConcept",
            "the code as a CodeableConcept (POST): its first coding of a loaded code system is translated (else its first)",
        ),
        Parameter("url", "uri", "a ConceptMap given as tx-resource or conceptMap, by url"),
        Parameter("conceptMap", "Resource", "a ConceptMap to translate with (POST)"),
        Parameter("tx-resource", "Resource", "ConceptMaps to translate with (POST)", repeats=True),
        Parameter("targetsystem", "uri", "code system URI to translate into"),
        Parameter("target", "uri", "value set URL to translate into (e.g. a subtree)"),
        _flag("reverse", "true: the concepts that map to the code"),
        Parameter("sourceCode", "code", "R5's name of code", alias_of="code"),
        Parameter("sourceSystem", "uri", "R5's (and HL7's test suite's) name of system", alias_of="system"),
        Parameter("sourceCoding", "Coding", "R5's name of coding (POST)", alias_of="coding"),
        Parameter("sourceCodeableConcept", "CodeableConcept", "R5's name of codeableConcept (POST)", alias_of="codeableConcept"),
        Parameter("targetSystem", "uri", "R5's name of targetsystem", alias_of="targetsystem"),
        Parameter("targetScope", "uri", "R5's name of target", alias_of="target"),
    ),
    (
        Parameter("result", "boolean", "whether a mapping or alignment was found", required=True),
        _text("message", "what the candidates are when none was"),
        Parameter("match", "Resource", "each match: equivalence, concept, source (parts)", repeats=True),
    ),
)
# What the id of an instance-level operation names.
INSTANCE_IDS = {
    "ValueSet": "of a stored ValueSet (`GET /fhir/ValueSet/{id}`)",
    "CodeSystem": "of a loaded code system (`GET /fhir/CodeSystem/{id}`: `hpo`, `icd10cm`)",
}
OPERATIONS = (EXPAND, VALUE_SET_VALIDATE, BATCH_VALIDATE, LOOKUP, CODE_SYSTEM_VALIDATE, SUBSUMES, TRANSLATE)
BY_ID = {operation.id: operation for operation in OPERATIONS}


def definition_url(operation: Operation, base_url: str | None) -> str:
    """This server's OperationDefinition of ``operation``: under the configured base, else a URN."""
    if base_url:
        return f"{base_url.rstrip('/')}/OperationDefinition/{operation.id}"
    return f"urn:termsearch:fhir:OperationDefinition:{operation.id}"


def operation_definition(operation: Operation, base_url: str | None) -> dict[str, Any]:
    """The OperationDefinition resource of ``operation``, based on HL7's."""

    def described(parameter: Parameter, use: str) -> dict[str, Any]:
        return {
            "name": parameter.name,
            "use": use,
            "min": int(parameter.required),
            "max": parameter.max,
            "documentation": parameter.documentation,
            "type": parameter.type,
        }

    return {
        "resourceType": "OperationDefinition",
        "id": operation.id,
        "url": definition_url(operation, base_url),
        "name": operation.id.replace("-", ""),
        "title": f"{operation.resource} ${operation.code}",
        "status": "active",
        "kind": "operation",
        "description": operation.documentation,
        "code": operation.code,
        **({"base": operation.base} if operation.base else {}),
        "resource": [operation.resource],
        "system": False,
        "type": True,
        "instance": operation.instance is not None,
        "parameter": [described(p, "in") for p in operation.parameters] + [described(p, "out") for p in operation.returns],
    }


def docs_table() -> str:
    """``docs/FHIR_PARAMETERS.md``: each operation's parameters as the server reads them."""
    lines = [
        "# FHIR operation parameters",
        "",
        "Written from the declarations the server parses by (`app/fhir/operations.py`; "
        "`python -m app.fhir.operations > docs/FHIR_PARAMETERS.md`). GET takes the parameters as a query string "
        "(a Coding, CodeableConcept or resource only in a POSTed `Parameters`); a parameter given more than once "
        "where it may not repeat is refused.",
    ]
    for operation in OPERATIONS:
        lines += ["", f"## `{operation.path}`", "", operation.documentation]
        if not operation.by_get:
            lines += ["", "POST only: a `Parameters` resource (GET is 405)."]
        if operation.instance is not None:
            ids, supplied = INSTANCE_IDS[operation.resource], operation.instance
            lines += ["", f"Also on one {operation.resource}: `{operation.instance_path}`, the id {ids}, "
                          f"which supplies `{supplied}` (a `{supplied}` given must name the same)."]
        lines += ["", "| parameter | type | repeats | what it does |", "|---|---|---|---|"]
        for p in operation.parameters:
            name = f"`{p.name}`{' (required)' if p.required else ''}"
            lines.append(f"| {name} | {p.type} | {'yes' if p.repeats else 'no'} | {_cell(p.documentation)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


if __name__ == "__main__":
    print(docs_table(), end="")
