"""Browser tests: real pages in headless Chromium (Debian's ``/usr/bin/chromium``, which
``make install`` installs) driven by Playwright, against the app served over real HTTP.

Fixtures (names are stable; other browser tests build on them):

- ``serve_app(app) -> base_url`` (``tests/conftest.py``, shared with the FHIR client tests):
  serves a FastAPI app with uvicorn on a free 127.0.0.1 port until the test ends.
- ``toy_app``: the app over a bundle of the toy systems ``toy`` and ``toyicd`` (tests/toy.py),
  built with ``FakeEncoder(32)``; ``toy_server``: that app served, as its base URL.
- ``coder_server``: served, the app over the toy phenotypes and a slice of the real ICD-10-CM
  tabular (tests/browser/coder_bundle.py), aligned; as its base URL.
- ``browser`` (session): headless Chromium. ``page``: a fresh page (1280×800) in its own context;
  when the test ends, a screenshot of it is saved as
  ``var/test-artifacts/screenshots/{test name}.png``.
- ``screenshot(label)``: saves the page now as ``{test name}-{label}.png`` in the same folder.

Without Chromium the tests are skipped locally, and fail under CI (``CI`` set).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from playwright.sync_api import Browser, Page, sync_playwright

from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.browser.coder_bundle import icd10cm_slice, toy_with_xrefs
from tests.toy import TOY, ListSource

CHROMIUM = Path(os.environ.get("TERMSEARCH_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "test-artifacts" / "screenshots"


@pytest.fixture
def toy_app(settings: Settings, toy_reader: StoreReader) -> FastAPI:
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    return create_app(settings, encoder=FakeEncoder(32))


@pytest.fixture
def toy_server(serve_app: Callable[[FastAPI], str], toy_app: FastAPI) -> str:
    return serve_app(toy_app)


@pytest.fixture
def coder_server(serve_app: Callable[[FastAPI], str], settings: Settings) -> Iterator[str]:
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    info, icd = icd10cm_slice()
    load_source(engine, ListSource(TOY, toy_with_xrefs()))
    load_source(engine, ListSource(info, list(icd)))
    settings.knowledge.align = [("toy", "icd10cm")]
    build_bundle(settings, StoreReader(engine), FakeEncoder(32), ["toy", "icd10cm"], show_progress=False)
    yield serve_app(create_app(settings, encoder=FakeEncoder(32)))
    engine.dispose()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        message = f"{CHROMIUM} is missing; `make install` installs Debian's chromium"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield chromium
        chromium.close()


def _artefact_name(request: pytest.FixtureRequest) -> str:
    return re.sub(r"[^\w.-]+", "_", request.node.name)


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    yield page
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{_artefact_name(request)}.png"), full_page=True)
    context.close()


@pytest.fixture
def screenshot(page: Page, request: pytest.FixtureRequest) -> Callable[[str], Path]:
    def save(label: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{_artefact_name(request)}-{label}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save
