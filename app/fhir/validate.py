"""``CodeSystem/$validate-code`` and ``ValueSet/$validate-code`` (FHIR R4).

The code comes as ``code`` (with ``system``, and ``version`` for a code system or
``systemVersion`` for a value set, and ``display``), as a ``coding``, or as a ``codeableConcept``
(valid when one of its codings is). Every answer about the code is a 200 Parameters with
``result``: false for a code without a system, an unknown code system or version, an unknown code,
a code outside the value set, a wrong display, an inactive code with ``activeOnly=true``, an
abstract code (an ICD-10-CM chapter or block) with ``abstract=false``, and, against a billable
value set (``{system}?fhir_vs=billable``), a code that is not billable, its ``not-in-vs`` issue
naming what it is (a block, a category, not selectable); an inactive code is valid with a warning,
and its answer says so (``inactive`` true, ``status`` retired: an obsolete HPO term). Each
reason is an issue of ``issues`` (an OperationOutcome) whose ``expression`` names the input
element (``code``, ``Coding.display``, ``CodeableConcept.coding[1].system``), and ``message``
joins their texts. An unknown code system, or version, to validate against adds
``x-caused-by-unknown-system`` (as HL7's terminology test suite expects). Only missing or malformed
parameters and an unknown value set are errors (4xx OperationOutcomes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.errors import InvalidParameter, UnknownSystem, UnresolvedImport
from app.fhir.context import FhirContext, concept_status
from app.fhir.designations import displays, has_language
from app.fhir.outcome import TX_ISSUE_TYPE, issue
from app.fhir.params import Coding, OperationParams
from app.fhir.supplements import PREFIX as SUPPLEMENT_PREFIX
from app.fhir.supplements import requested
from app.fhir.valuesets import ValueSetRef, operation_value_set
from app.search.designations import all_designations
from indexer.bundle import CatalogConcept, SystemRange


@dataclass(frozen=True)
class _Given:
    """A coding to validate, and where it is in the request (for issue expressions)."""

    coding: Coding
    path: str | None  # "Coding", "CodeableConcept.coding[0]"; None: the code/system parameters

    def at(self, element: str) -> str:
        return element if self.path is None else f"{self.path}.{element}"

    @property
    def whole(self) -> str:
        return self.path or "code"


@dataclass(frozen=True)
class _Rules:
    value_set: ValueSetRef | None  # None: validate against a code system
    default_system: str | None  # the code system's url, or the value set's system with inferSystem
    inferred: bool  # the default system is inferred (inferSystem): a code it lacks leaves it unknown
    lenient_display: bool  # a wrong display is a warning (lenient-display-validation)
    membership_only: bool  # only whether the code is in the value set (valueset-membership-only)
    language: str | None  # displayLanguage
    sources: frozenset[str]  # knowledge sources whose designations are displays too (useSupplement)
    active_only: bool
    abstract_allowed: bool


@dataclass
class _Check:
    given: _Given
    uri: str | None  # the coding's system, else the default one
    issues: list[dict[str, Any]] = field(default_factory=list)
    system: SystemRange | None = None
    concept: CatalogConcept | None = None
    unknown_system: str | None = None  # canonical of the system (|version) that could not be found
    caused_by_unknown_system: bool = True  # whether the result is false for want of that system
    value_set_version_missing: bool = False  # the value set uses a version not loaded: membership unknown
    notes: list[dict[str, Any]] = field(default_factory=list)  # about the value set, not the code: no message

    @property
    def outside(self) -> bool:
        """Whether the coding was found outside the value set."""
        return any(found["details"].get("coding", [{}])[0].get("code") == "not-in-vs" for found in self.issues)

    @property
    def valid(self) -> bool:
        return not any(found["severity"] == "error" for found in self.issues)

    def error(self, text: str, code: str, tx_code: str, expression: str) -> None:
        self.issues.append(issue(text, code, tx_code, "error", expression))

    def unknown_code(self, system: SystemRange) -> None:
        text = f"unknown code {self.given.coding.code!r} in {system.uri} version {system.version}"
        self.error(text, "code-invalid", "invalid-code", self.given.at("code"))


def validate_in_code_system(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    sources = requested(context, params)  # an unknown supplement is refused
    givens = _givens(params, "version")
    url = params.text("url") or givens[0].coding.system
    if not url:
        raise InvalidParameter("url: required (or a coding with a system)")
    rules = _rules(params, None, url, sources=sources)
    checks = [_check(context, given, rules) for given in givens]
    return _answer(checks, params, rules)


def validate_in_value_set(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    givens = _givens(params, "systemVersion")
    try:
        value_set = operation_value_set(context, params)
        sources = requested(context, params, value_set.resource)  # an unknown supplement is refused
    except UnknownSystem as error:  # the value set draws on a system not loaded: the code cannot be validated
        named = error.value_set or "the value set"
        checks = [_over_unknown_system(context, given, error.uri, named) for given in givens]
        return _answer(checks, params, _rules(params, None, None))
    except UnresolvedImport as error:  # the code cannot be validated: an answer, not an error
        found = issue(error.detail, "not-found", "not-found")
        out = [{"name": "result", "valueBoolean": False}, {"name": "message", "valueString": error.detail}]
        concept_given = _codeable_concept(params, [given.coding for given in givens])
        out += [{"name": "codeableConcept", "valueCodeableConcept": concept_given}] if concept_given else []
        out.append({"name": "issues", "resource": {"resourceType": "OperationOutcome", "issue": [found]}})
        return {"resourceType": "Parameters", "parameter": out}
    inferred = value_set.systems[0].uri if params.boolean("inferSystem") and len(value_set.systems) == 1 else None
    rules = _rules(params, value_set, inferred, inferred=True, sources=sources)
    checks = [_check(context, given, rules) for given in givens]
    return _answer(checks, params, rules)


def _rules(
    params: OperationParams, value_set: ValueSetRef | None, default_system: str | None, inferred: bool = False,
    sources: frozenset[str] = frozenset(),
) -> _Rules:
    abstract = params.boolean("abstract")
    return _Rules(
        value_set, default_system, inferred and default_system is not None, bool(params.boolean("lenient-display-validation")),
        bool(params.boolean("valueset-membership-only")), params.language("displayLanguage"), sources,
        bool(params.boolean("activeOnly")), abstract is not False,
    )


def _givens(params: OperationParams, version_name: str) -> list[_Given]:
    codings = params.codeable_concept()
    if codings is not None:
        return [_Given(coding, f"CodeableConcept.coding[{number}]") for number, coding in enumerate(codings)]
    coding = params.coding("code", "system", version_name=version_name)
    if coding is None:
        raise InvalidParameter("code: required (or coding, or codeableConcept)")
    return [_Given(coding, "Coding" if params.value("coding") is not None else None)]


def _check(context: FhirContext, given: _Given, rules: _Rules) -> _Check:
    """The issues of one coding, against the code system or the value set of ``rules``."""
    coding, value_set = given.coding, rules.value_set
    uri = coding.system or rules.default_system
    check = _Check(given, uri)
    if rules.value_set is None and coding.system and coding.system != rules.default_system:
        text = f"the coding's system {coding.system} is not {rules.default_system}"
        check.error(text, "invalid", "invalid-data", given.at("system"))
        return check
    if not uri:
        text = "a code without a system has no defined meaning and cannot be validated; give its system"
        check.issues.append(issue(text, "invalid", "invalid-data", "warning", given.whole))
    system = context.system_or_none(uri)
    if value_set is not None and (system is None or system not in value_set.systems):
        text = f"{uri or ''}#{coding.code} is not in the value set {value_set.canonical}"
        check.error(text, "code-invalid", "not-in-vs", given.at("code"))
    if uri and system is None and uri.startswith(SUPPLEMENT_PREFIX):
        text = f"{uri} is a supplement, not a code system: a coding's system names a code system"
        check.error(text, "invalid", "invalid-data", given.at("system"))
        return check
    if uri and system is None and ("/ValueSet/" in uri or "?fhir_vs" in uri):  # an implicit value set's URL too
        text = f"{uri} is a value set, not a code system: a coding's system names a code system"
        check.error(text, "invalid", "invalid-data", given.at("system"))
        return check
    if uri and ":" not in uri:
        text = f"a coding's system is an absolute URI; {uri!r} is relative"
        check.error(text, "invalid", "invalid-data", given.at("system"))
    if uri and system is None:
        loaded = ", ".join(s.uri for s in context.bundle.systems.values())
        text = f"code system {uri!r} is not loaded, so the code cannot be validated; loaded: {loaded}"
        check.error(text, "not-found", "not-found", given.at("system"))
        # Against a code system, the answer is unknown because of it; against a value set of
        # another system, the code is simply not in the value set, from a system unknown here.
        check.unknown_system = uri
        check.caused_by_unknown_system = value_set is None
    if system is not None and value_set is not None and system not in value_set.systems:
        if context.bundle.concept_index(system.key, coding.code) is None:  # and not a code at all
            check.unknown_code(system)
        return check
    if system is None or not check.valid:
        return check
    check.system = system
    row = context.bundle.concept_index(system.key, coding.code)
    if _version_not_loaded(check, system, value_set):
        check.concept = None if row is None else context.concept(row)
        return check
    if value_set is not None and (row is None or row not in value_set):
        text = f"{system.uri}#{coding.code} is not in the value set {value_set.canonical}"
        if value_set.billable_only and row is not None:  # what it is instead
            text = _not_billable(context, system, row, value_set)
        check.error(text, "code-invalid", "not-in-vs", given.at("code"))
    if row is None and rules.inferred and not coding.system:
        text = f"the code system of {coding.code!r} cannot be inferred from the value set {value_set.canonical}"
        check.error(text, "not-found", "cannot-infer", given.at("code"))
        check.uri = check.system = None
        return check
    if row is None:
        if not (rules.membership_only and value_set is not None):
            check.unknown_code(system)
        return check
    concept = check.concept = context.concept(row)
    ref = f"{system.uri}#{concept.code}"
    if value_set is not None and value_set.deprecated(system, concept.code):
        text = f"{ref} is deprecated in the value set {value_set.canonical}"
        check.notes.append(issue(text, "business-rule", "code-comment", "warning", given.at("code")))
    for status, canonical in value_set.statuses if value_set is not None else ():
        check.notes.append(issue(f"the value set {canonical} is {status}", "business-rule", "status-check", "information"))
    if not concept.active:
        text = f"{ref} is inactive (status {concept_status(concept)}); its use should be reviewed"
        check.issues.append(issue(text, "business-rule", "code-comment", "warning", given.whole))
        if rules.active_only or (value_set is not None and value_set.active_only):
            text = f"{ref} is valid but not active, and active codes are asked for"
            check.error(text, "business-rule", "code-rule", given.at("code"))
            if value_set is not None and not check.outside:  # so not in the value set as used here
                text = f"{ref} is not in the value set {value_set.canonical} where only active codes are"
                check.error(text, "code-invalid", "not-in-vs", given.at("code"))
    if concept.grouping and not rules.abstract_allowed:
        text = f"{ref} is abstract (a {concept.kind}), and not allowed in this context"
        check.error(text, "business-rule", "code-rule", given.at("code"))
        if value_set is not None and not check.outside:  # so not in the value set as used here
            text = f"{ref} is not in the value set {value_set.canonical} where abstract codes are not allowed"
            check.error(text, "code-invalid", "not-in-vs", given.at("code"))
    if coding.display:
        _display(context, check, system, concept, rules)
    return check


# What ICD-10-CM calls a code of each kind that is not billable.
_UNBILLABLE = {"chapter": "a chapter", "block": "a block", "category": "a category", "code": "a subcategory"}


def _not_billable(context: FhirContext, system: SystemRange, row: int, value_set: ValueSetRef) -> str:
    """Why a code of the system is not in its billable value set: what it is instead."""
    concept = context.concept(row)
    what = f"{_UNBILLABLE[concept.kind]}, not a billable code" if concept.kind in _UNBILLABLE else "not a billable code"
    text = f"{system.uri}#{concept.code} is {what} (not selectable), so not in the value set {value_set.canonical}"
    return text + ("; record a billable code below it" if context.bundle.children(row) else "")


def _display(context: FhirContext, check: _Check, system: SystemRange, concept: CatalogConcept, rules: _Rules) -> None:
    """A wrong display is an error (a warning with ``lenient-display-validation``); a right one
    where the code system has no designation in ``displayLanguage`` is noted."""
    given, ref = check.given, f"{system.uri}#{concept.code}"
    detail = context.detail(system, concept.code)
    valid = displays(detail.concept) if detail is not None else {concept.display.casefold()}
    if detail is not None and rules.sources:  # a requested supplement's designations are displays too
        lent = all_designations(detail.concept, context.bundle, system.key, rules.sources)
        valid |= {d.text.casefold() for d in lent if d.active}
    display = given.coding.display or ""
    retired = {d.text.casefold() for d in detail.concept.designations if not d.active} if detail is not None else set()
    if display.casefold() not in valid and display.casefold() in retired:
        text = f"{display!r} is an inactive display of {ref}; its display is {concept.display!r}"
        check.notes.append(issue(text, "invalid", "display-comment", "warning", given.at("display")))
    elif display.casefold() not in valid:
        text = f"wrong display {display!r} for {ref}: it is {concept.display!r}"
        severity = "warning" if rules.lenient_display else "error"
        check.issues.append(issue(text, "invalid", "invalid-display", severity, given.at("display")))
    elif rules.language and detail is not None and not has_language(detail.concept, rules.language):
        text = f"{ref} has no display in {rules.language}; {display!r} is a valid display in its own language"
        check.issues.append(issue(text, "invalid", "invalid-display", "information", given.at("display")))


def _over_unknown_system(context: FhirContext, given: _Given, uri: str, value_set: str) -> _Check:
    """A coding against ``value_set``, which draws on the code system ``uri``, not loaded."""
    coding = given.coding
    check = _Check(given, coding.system)
    if coding.system != uri:
        text = f"{coding.system or ''}#{coding.code} is not in the value set {value_set}, whose system {uri} is not loaded"
        check.error(text, "code-invalid", "not-in-vs", given.at("code"))
    if coding.system and context.system_or_none(coding.system) is None:
        text = f"code system {coding.system!r} is not loaded, so the code cannot be validated"
        check.error(text, "not-found", "not-found", given.at("system"))
        check.unknown_system, check.caused_by_unknown_system = coding.system, coding.system == uri
    return check


def _version_not_loaded(check: _Check, system: SystemRange, value_set: ValueSetRef | None) -> bool:
    """Issues when the value set uses, or the coding names, a version of the system that is not
    loaded (the code cannot be validated then); whether there were any."""
    given, stated = check.given, check.given.coding.version
    used = value_set.system_version(system) if value_set is not None else None
    if used is not None and used != system.version:
        text = (
            f"the value set {value_set.canonical} uses {system.uri} version {used!r}, which is not loaded "
            f"(loaded: {system.version})"
        )
        check.error(text, "not-found", "not-found", given.at("system"))
        if stated and stated != used:
            text = f"the coding's version {stated!r} of {system.uri} is not the version {used!r} the value set uses"
            check.error(text, "invalid", "vs-invalid", given.at("version"))
        check.unknown_system = f"{system.uri}|{used}"
        check.value_set_version_missing = True
        return True
    if stated and stated != system.version:
        text = f"version {stated!r} of {system.uri} is not loaded; loaded: {system.version}"
        check.error(text, "not-found", "not-found", given.at("system"))
        if value_set is not None:  # an error where the value set states (or is given) its version
            expected = value_set.versions.expected(system.uri, value_set.stated_version(system))
            text = (
                f"the coding's version {stated!r} of {system.uri} is not the version {expected or system.version!r} "
                f"the value set {value_set.canonical} uses"
            )
            check.issues.append(issue(text, "invalid", "vs-invalid", "error" if expected else "warning", given.at("version")))
        check.unknown_system = f"{system.uri}|{stated}"
        return True
    return False


def _answer(checks: list[_Check], params: OperationParams, rules: _Rules) -> dict[str, Any]:
    """``result`` and what is known of the coding that answers: the one given, or of a
    CodeableConcept the first valid coding, else the first one found in the value set (invalid
    for another reason, a wrong display say); ``message`` and ``issues`` when there are issues.

    In a CodeableConcept a coding outside the value set is only information
    (``this-code-not-in-vs``), and the concept fails with one ``not-in-vs`` error when no coding
    is in it; any other error of any coding (an unknown code) fails it too."""
    concept_given = _codeable_concept(params, [check.given.coding for check in checks])
    if concept_given is None:
        chosen: _Check | None = checks[0]
        issues = checks[0].issues
    else:
        found_in = (c for c in checks if c.concept is not None and not c.outside and not c.value_set_version_missing)
        chosen = next((c for c in checks if c.valid), None) or next(found_in, None)
        issues = [_as_information(found) for c in checks for found in c.issues]
        unknown = any(c.value_set_version_missing for c in checks)  # then whether it is in is unknown
        if chosen is None and rules.value_set is not None and not unknown:
            text = f"no coding of the CodeableConcept is in the value set {rules.value_set.canonical}"
            issues.insert(0, issue(text, "code-invalid", "not-in-vs"))
    valid = chosen is not None and not any(found["severity"] == "error" for found in issues)
    out: list[dict[str, Any]] = [{"name": "result", "valueBoolean": valid}]
    if issues:
        out.append({"name": "message", "valueString": "; ".join(found["details"]["text"] for found in issues)})
    if chosen is not None:
        out += _coding_out(chosen)
    else:
        out += _unknown_system_out(next((c for c in checks if c.unknown_system is not None), None))
    if concept_given is not None:
        out.append({"name": "codeableConcept", "valueCodeableConcept": concept_given})
    issues += chosen.notes if chosen is not None else []
    if issues:
        out.append({"name": "issues", "resource": {"resourceType": "OperationOutcome", "issue": issues}})
    return {"resourceType": "Parameters", "parameter": out}


def _as_information(found: dict[str, Any]) -> dict[str, Any]:
    """A coding's not-in-vs error, within a CodeableConcept: information that this code is not."""
    if found["details"].get("coding", [{}])[0].get("code") != "not-in-vs":
        return found
    coding = [{"system": TX_ISSUE_TYPE, "code": "this-code-not-in-vs"}]
    return found | {"severity": "information", "details": found["details"] | {"coding": coding}}


def _codeable_concept(params: OperationParams, codings: list[Coding]) -> dict[str, Any] | None:
    """The CodeableConcept given, as read (its codings' system, version, code, display, and text)."""
    given = params.value("codeableConcept")
    if given is None:
        return None
    elements = ("system", "version", "code", "display")
    concept: dict[str, Any] = {"coding": [{e: getattr(c, e) for e in elements if getattr(c, e)} for c in codings]}
    if isinstance(given.get("text"), str) and given["text"]:
        concept["text"] = given["text"]
    return concept


def _coding_out(check: _Check) -> list[dict[str, Any]]:
    coding, system, concept = check.given.coding, check.system, check.concept
    out: list[dict[str, Any]] = [{"name": "code", "valueCode": concept.code if concept else coding.code}]
    if check.uri:
        out.append({"name": "system", "valueUri": check.uri})
    if system is not None:  # the version validated against, whatever the coding names
        out.append({"name": "version", "valueString": system.version})
    if concept is not None:
        out.append({"name": "display", "valueString": concept.display})
        if not concept.active:  # and its status, as HL7's test suite expects of a retired code
            out.append({"name": "inactive", "valueBoolean": True})
            out.append({"name": "status", "valueCode": concept_status(concept)})
    return out + _unknown_system_out(check)


def _unknown_system_out(check: _Check | None) -> list[dict[str, Any]]:
    if check is None or check.unknown_system is None:
        return []
    name = "x-caused-by-unknown-system" if check.caused_by_unknown_system else "x-unknown-system"
    return [{"name": name, "valueCanonical": check.unknown_system}]
