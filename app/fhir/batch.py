"""``ValueSet/$batch-validate``: many ``ValueSet/$validate-code`` requests in one, as tx.fhir.org
defines it (HL7's terminology test suite, ``batch``).

The request is a ``Parameters`` whose ``validation`` parameters each carry, as a ``Parameters``
resource, the parameters of one ``$validate-code``; any other parameter beside them (``url``,
``valueSet``, ``lenient-display-validation``...) applies to each validation that does not give it,
and ``tx-resource``s to every one, besides its own. Each validation is answered by
:func:`~app.fhir.validate.validate_in_value_set`, the operation's own code, and the answer is a
``Parameters`` with one ``validation`` per input, in order: the ``Parameters`` that ``$validate-code``
answers, or, for a validation that operation would refuse (no code, a malformed parameter, an
unknown value set), the OperationOutcome of its error; one entry's error never fails the batch.
The batch itself is refused only when it is not a batch: no ``validation``, or more than
``fhir.max_batch_validations`` of them (422 too-costly, counted before any is answered).
"""

from __future__ import annotations

from typing import Any

from app.errors import ApiError, InvalidParameter, TooCostly
from app.fhir.context import FhirContext
from app.fhir.operations import VALUE_SET_VALIDATE
from app.fhir.outcome import error_outcome
from app.fhir.params import OperationParams
from app.fhir.validate import validate_in_value_set
from app.ops.limits import check_cancelled


def batch_validate(context: FhirContext, params: OperationParams, strict: bool = False) -> dict[str, Any]:
    """``strict``: each validation's parameters are read as the batch's are (``Prefer: handling=strict``)."""
    validations = params.resources_of_any_kind("validation")
    limit = context.settings.fhir.max_batch_validations
    if not validations:
        raise InvalidParameter("validation: required, the Parameters of one ValueSet/$validate-code each", "validation")
    if len(validations) > limit:
        raise TooCostly(
            f"validation: {len(validations)} validations, more than the {limit} a $batch-validate may have "
            "(fhir.max_batch_validations)"
        )
    answers = []
    for validation in validations:
        check_cancelled()  # a batch that timed out stops between its validations
        answers.append({"name": "validation", "resource": _validated(context, params, validation, strict)})
    return {"resourceType": "Parameters", "parameter": answers}


def _validated(context: FhirContext, shared: OperationParams, validation: Any, strict: bool) -> dict[str, Any]:
    """One validation's answer: its $validate-code result, or the OperationOutcome of its error."""
    try:
        own = OperationParams.from_resource(VALUE_SET_VALIDATE, validation, strict, where="validation")
        return validate_in_value_set(context, own.within(shared))
    except ApiError as error:
        return error_outcome(error)
