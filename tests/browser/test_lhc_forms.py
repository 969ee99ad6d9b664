"""A real FHIR client nobody here wrote: NLM's LHC-Forms (npm ``lforms``, pinned; ``make test``
fetches it into ``var/vendor``) renders a Questionnaire on one origin whose autocomplete item's
``answerValueSet`` is this server's implicit value set, served from another origin (CORS). Typing
shows the server's ranked suggestions; the chosen coding is what the QuestionnaireResponse stores.
An item bound to a whole terminology without the autocomplete control (LHC-Forms then asks for the
whole expansion, once) gets the server's too-costly OperationOutcome when the terminology is larger
than one page: LHC-Forms renders the form and shows the error on that item."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from playwright.sync_api import Page, expect

from app.main import create_app
from app.settings import FhirSettings, Settings
from indexer.encoders import FakeEncoder
from tests.toy import TOY

LFORMS = Path(__file__).resolve().parents[2] / "var" / "vendor" / "lforms-40.1.3"

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>LHC-Forms against termsearch</title>
<link rel="stylesheet" href="/lforms/webcomponent/styles.css">
</head><body><div id="form"></div>
<script src="/lforms/webcomponent/assets/lib/zone.min.js"></script>
<script src="/lforms/webcomponent/runtime.js"></script>
<script src="/lforms/webcomponent/polyfills.js"></script>
<script src="/lforms/webcomponent/main.js"></script>
<script src="/lforms/fhir/R4/lformsFHIR.min.js"></script>
<script>
  const questionnaire = QUESTIONNAIRE;
  function render() {
    if (!window.LForms || !LForms.Util || !LForms.FHIR || !Object.keys(LForms.FHIR).length) return setTimeout(render, 50);
    LForms.Util.addFormToPage(questionnaire, "form", { fhirVersion: "R4" })
      .then(() => { window.rendered = true; },
            (errors) => { window.loadErrors = [].concat(errors).map((e) => (e && e.message) || String(e)); });
  }
  render();
</script></body></html>"""


def _questionnaire(server: str, *more: dict) -> dict:
    return {
        "resourceType": "Questionnaire",
        "status": "active",
        "title": "Phenotype",
        "item": [*more, {
            "linkId": "phenotype",
            "text": "Phenotype",
            "type": "choice",
            "answerValueSet": f"{TOY.uri}?fhir_vs",
            "extension": [
                {"url": "http://hl7.org/fhir/StructureDefinition/questionnaire-itemControl",
                 "valueCodeableConcept": {"coding": [{"system": "http://hl7.org/fhir/questionnaire-item-control", "code": "autocomplete"}]}},
                {"url": "http://hl7.org/fhir/StructureDefinition/preferredTerminologyServer", "valueUrl": f"{server}/fhir"},
            ],
        }],
    }


def _form_site(serve_app: Callable[[FastAPI], str], questionnaire: dict) -> str:
    if not (LFORMS / "webcomponent" / "main.js").is_file():
        message = f"{LFORMS} is missing; `make test` fetches LHC-Forms from the npm registry"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    site = FastAPI()
    html = PAGE.replace("QUESTIONNAIRE", json.dumps(questionnaire))
    site.add_api_route("/", lambda: HTMLResponse(html))
    site.mount("/lforms", StaticFiles(directory=LFORMS))
    return serve_app(site)  # another port: another origin than the terminology server's


@pytest.fixture
def form_page(serve_app: Callable[[FastAPI], str], toy_server: str) -> str:
    return _form_site(serve_app, _questionnaire(toy_server))


# An item bound to the whole toy terminology, with no item control: LHC-Forms loads its answers
# at once (``$expand?url=...`` without count), as it would for HPO or ICD-10-CM.
WHOLE = {"linkId": "whole", "text": "Any phenotype", "type": "choice", "answerValueSet": f"{TOY.uri}?fhir_vs"}


@pytest.fixture
def whole_terminology_page(serve_app: Callable[[FastAPI], str], toy_app: FastAPI, settings: Settings) -> tuple[str, str]:
    """The form with the whole-terminology item first, against the toy server with pages of 3
    codes (the toy system's 8 are too many at once, as HPO's 19,484 are at 1,000); as the form's
    URL and the server's."""
    small = settings.model_copy(update={"fhir": FhirSettings(max_count=3)})
    server = serve_app(create_app(small, encoder=FakeEncoder(32)))  # over the bundle toy_app built
    preferred = {"url": "http://hl7.org/fhir/StructureDefinition/preferredTerminologyServer", "valueUrl": f"{server}/fhir"}
    return _form_site(serve_app, _questionnaire(server, {**WHOLE, "extension": [preferred]})), server


def test_lhc_forms_on_another_origin_suggests_and_stores_the_coding(page: Page, form_page: str, screenshot: Callable[[str], Path]) -> None:
    page.goto(form_page)
    page.wait_for_function("window.rendered === true", timeout=30_000)
    field = page.locator("#form input[type=text]").first
    suggestions = page.locator("#lhc-tools-searchResults li")
    field.click()
    field.press_sequentially("fast heart", delay=60)
    expect(suggestions.first).to_have_text(re.compile(r"^Tachycardia"), timeout=15_000)  # ranked by meaning
    field.fill("")
    field.press_sequentially("hearing lo", delay=60)
    expect(suggestions.first).to_have_text(re.compile(r"^Hearing impairment"), timeout=15_000)
    screenshot("suggestions")
    field.press("ArrowDown")
    field.press("Enter")
    expect(field).to_have_value("Hearing impairment")
    stored = "LForms.Util.getFormFHIRData('QuestionnaireResponse', 'R4', document.getElementById('form'))"
    page.wait_for_function(f"({stored}).item !== undefined", timeout=10_000)  # the form's model settles after the field
    response = page.evaluate(stored)
    # LHC-Forms stores system, code and display (it keeps no version from an expansion's contains).
    assert response["item"][0]["answer"][0]["valueCoding"] == {"system": TOY.uri, "code": "T:4", "display": "Hearing impairment"}


def test_lhc_forms_renders_a_form_whose_item_binds_a_terminology_too_large_to_list(
    page: Page, whole_terminology_page: tuple[str, str]
) -> None:
    form, server = whole_terminology_page
    page.goto(form)
    page.wait_for_function("window.loadErrors !== undefined", timeout=30_000)  # loaded, but for one answer list
    asked = f"{server}/fhir/ValueSet/$expand?url={quote(WHOLE['answerValueSet'], safe='')}&_format=json"
    assert page.evaluate("window.loadErrors") == [f"Unable to load ValueSet {WHOLE['answerValueSet']} from {asked}"]
    expect(page.locator("#form .lhc-form-title")).to_contain_text("Phenotype")
    expect(page.locator("#form").get_by_text("Any phenotype")).to_be_visible()
    expect(page.locator("#form .lhc-item-error")).to_have_text("Error: Unable to load the answer list for this question.")
