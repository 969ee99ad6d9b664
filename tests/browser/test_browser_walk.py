"""The terminology browser as a terminologist uses it, in headless Chromium over real HTTP:
search "fast heart", open Tachycardia, read its designations with their types and origins, walk
up the breadcrumbs to the root and back down to a sibling (expanding a subtree in place on the
way), follow a mapping to the other loaded system, list every match of the search, and read
the mapped concept on a phone.

On the toy bundle by default. With ``TERMSEARCH_BROWSER_DATA`` naming a data directory holding
the real bundle (HPO and ICD-10-CM; ``var``), the same walk runs on it and its screenshots are
written to ``docs/browser/`` (how the ones there were made)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI
from playwright.sync_api import Page, expect

from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.knowledge.term_tables import ABBREVIATIONS
from indexer.pipeline import build_bundle
from indexer.store import StoreReader

REAL = os.environ.get("TERMSEARCH_BROWSER_DATA")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "browser"


@dataclass(frozen=True)
class Walk:
    system: str  # searched
    query: str
    concept: str  # opened
    lay: str  # a layperson designation it has
    sibling: str
    mapped: str  # the other system a mapping leads to
    elsewhere: str  # a subtree the concept is not in


TOY_WALK = Walk("toy", "fast heart", "Tachycardia", "Fast heart rate", "Bradycardia", "toyicd", "T:5")
REAL_WALK = Walk("hpo", "fast heart", "Tachycardia", "Fast heart rate", "Bradycardia", "icd10cm", "HP:0000598")


@pytest.fixture
def browse_server(serve_app: Callable[[FastAPI], str], settings: Settings, toy_reader: StoreReader) -> tuple[str, Walk]:
    if REAL:
        return serve_app(create_app(Settings(data_dir=Path(REAL), _env_file=None))), REAL_WALK
    settings.knowledge.align = [("toy", "toyicd")]  # Tachycardia ↔ Tachycardia, unspecified
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    return serve_app(create_app(settings, encoder=FakeEncoder(32))), TOY_WALK


def test_search_open_walk_up_and_down_and_follow_a_mapping(
    page: Page, browse_server: tuple[str, Walk], screenshot: Callable[[str], Path]
) -> None:
    base, walk = browse_server

    def shot(label: str) -> None:
        path = screenshot(label)
        if REAL:
            DOCS.mkdir(parents=True, exist_ok=True)
            (DOCS / f"{label}.png").write_bytes(path.read_bytes())

    # 1. Search as you type in the widget, choose with the keyboard: the concept page opens.
    page.goto(f"{base}/browse?system={walk.system}")
    box = page.locator("#picker").get_by_role("combobox")
    box.press_sequentially(walk.query, delay=40)
    option = page.locator("#picker").get_by_role("option").filter(has_text=walk.concept).first
    expect(option).to_be_visible()
    shot("1-search")
    options = [text.split("\n")[0] for text in page.locator("#picker").get_by_role("option").all_inner_texts()]
    for _ in range(options.index(walk.concept) + 1):
        box.press("ArrowDown")
    box.press("Enter")
    expect(page.locator("h1")).to_have_text(walk.concept)
    url = page.url
    assert re.search(rf"/browse/{walk.system}/", url)

    # 2. Designations with their types and origins; a shareable link.
    table = page.locator("#designations")
    expect(table.locator("tr", has_text=walk.lay)).to_contain_text("layperson")
    expect(table.locator("tr", has=page.locator("td", has_text=re.compile(r"^tachy$")))).to_contain_text(
        f"abbreviation table v{ABBREVIATIONS.version}, line"
    )
    shot("2-concept")

    # 3. Up the breadcrumbs to the root, one level at a time.
    path: list[str] = []
    while page.locator("nav.breadcrumbs a").count():
        path.append(page.locator("h1").inner_text())
        page.locator("nav.breadcrumbs a").last.click()
        expect(page.locator("h1")).not_to_have_text(path[-1])
    expect(page.locator("#parents")).to_contain_text("none: a root")
    shot("3-root")

    # 4. Back down: expand a child in place, then follow the path down to the parent and open the sibling.
    first = page.locator("#children details").first
    first.locator("summary").click(position={"x": 2, "y": 2})
    expect(first.locator("ul.tree li").first).to_be_visible()
    for display in reversed(path[1:]):
        page.locator("#children > ul.tree > li").filter(has=page.get_by_role("link", name=display, exact=True)).get_by_role(
            "link", name=display, exact=True
        ).click()
        expect(page.locator("h1")).to_have_text(display)
    page.locator("#children").get_by_role("link", name=walk.sibling, exact=True).click()
    expect(page.locator("h1")).to_have_text(walk.sibling)
    shot("4-sibling")

    # 5. Back to the concept, and across a mapping to the other system.
    page.goto(url)
    mapping = page.locator("#mappings a").first
    target = mapping.inner_text()
    mapping.click()
    expect(page.locator("h1")).to_have_text(target)
    assert f"/browse/{walk.mapped}/" in page.url
    shot("5-mapping")

    # 6. The one search box, Enter without choosing a suggestion: every match, counted, by pages.
    page.goto(f"{base}/browse?system={walk.system}")
    box = page.locator("#picker").get_by_role("combobox")
    box.press_sequentially(walk.query, delay=40)
    expect(page.locator("#picker").get_by_role("option").first).to_be_visible()
    box.press("Enter")
    expect(page.locator("#count")).to_contain_text("above the confidence threshold")
    expect(page.locator("#results").get_by_role("link", name=walk.concept, exact=True)).to_be_visible()
    shot("6-results")

    # 7. The mapped concept on a phone: one column, nothing scrolls sideways.
    page.set_viewport_size({"width": 390, "height": 844})
    page.go_back()
    page.go_back()
    expect(page.locator("h1")).to_have_text(target)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot("7-phone")


def test_results_without_script_and_a_clear_error_for_an_unknown_code(page: Page, browse_server: tuple[str, Walk]) -> None:
    base, walk = browse_server
    page.goto(f"{base}/browse?system={walk.system}&q={walk.query.replace(' ', '+')}")
    expect(page.locator("#results").get_by_role("link", name=walk.concept, exact=True)).to_be_visible()
    # Within another subtree the concept is not found, and the widget asks that subtree's value set.
    page.goto(f"{base}/browse?system={walk.system}&within={walk.elsewhere}&q={walk.query.replace(' ', '+')}")
    expect(page.locator("#results").get_by_role("link", name=walk.concept, exact=True)).to_have_count(0)
    expect(page.locator("#picker")).to_have_attribute("valueset", re.compile(rf"\?fhir_vs=isa/{re.escape(walk.elsewhere)}$"))
    # Errors are pages of the browser, saying what is wrong.
    response = page.goto(f"{base}/browse?system={walk.system}&within=NOPE:1&q=x")
    assert response is not None and response.status == 422
    expect(page.locator("#error-detail")).to_have_text(f"within: 'NOPE:1' is not a code of {walk.system}; name one system")
    response = page.goto(f"{base}/browse/{walk.system}/NOPE:1")
    assert response is not None and response.status == 404
    expect(page.locator("#error-detail")).to_contain_text(f"'NOPE:1' is not a code of {walk.system}")
