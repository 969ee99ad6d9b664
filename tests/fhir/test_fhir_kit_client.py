"""A FHIR client nobody here wrote, in Node (fhir-kit-client, as its README uses it; `make test`
fetches it into ``var/vendor``), against the app served over real HTTP (issue 41): ``update`` of a
ValueSet, instance-level ``$expand`` and ``$validate-code`` (``operation({id})``), a code system
instance's ``$lookup``, ``$subsumes``, ``$translate`` with R5's names, and an unknown instance's
404 OperationOutcome. Every answer validates with fhir.resources R4B."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fhir.resources.R4B import get_fhir_model_class

from tests.api.conftest import built  # noqa: F401
from tests.fhir.test_fhirpy_client import fhir, parameter  # noqa: F401 - the served toy app

ROOT = Path(__file__).resolve().parents[2]
FHIR_KIT = ROOT / "var" / "vendor" / "fhir-kit-client-1.9.2"
SCRIPT = Path(__file__).with_name("clients") / "fhir_kit_client.cjs"


def test_fhir_kit_client_calls_every_operation(fhir) -> None:  # noqa: ANN001, F811
    if not (FHIR_KIT / "node_modules" / "fhir-kit-client").is_dir() or shutil.which("node") is None:
        message = f"{FHIR_KIT} (or node) is missing; `make test` fetches fhir-kit-client from the npm registry"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    env = {**os.environ, "NODE_PATH": str(FHIR_KIT / "node_modules")}
    run = subprocess.run(["node", str(SCRIPT), fhir.url], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    answers: dict[str, Any] = json.loads(run.stdout)
    for name in ("update", "expand", "validate", "lookup", "subsumes", "translate"):
        get_fhir_model_class(answers[name]["resourceType"]).model_validate(answers[name])
    assert answers["update"]["id"] == "heart"
    assert [c["code"] for c in answers["expand"]["expansion"]["contains"]][:1] == ["T:3"]
    assert parameter(answers["validate"], "result") is False
    assert parameter(answers["lookup"], "display") == "Tachycardia"
    assert parameter(answers["subsumes"], "outcome") == "subsumes"
    assert isinstance(parameter(answers["translate"], "result"), bool)
    unknown = answers["unknown"]
    assert unknown["status"] == 404 and unknown["outcome"]["resourceType"] == "OperationOutcome"
