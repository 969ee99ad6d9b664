"""FHIR R4 terminology operations over the served bundle, free of the web framework:
implicit value sets (``valuesets``), ``$expand`` (``expand``), ``$lookup`` (``codes``),
``$validate-code`` (``validate``), ``$translate`` (``translate``), capability statements (``capabilities``) and the
OperationOutcome errors they raise (``outcome``). ``app/api/routes/fhir.py`` maps them to HTTP."""
