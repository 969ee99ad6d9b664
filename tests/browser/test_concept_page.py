"""The concept page as a coder and a terminologist read it, in headless Chromium over real HTTP:
one column on a phone, ICD-10-CM's coding notes and 7th-character table near the top, children
and siblings in tabular code order, a side tree, copy code, view as FHIR JSON, linked cross-
references, and HTML error pages; all of it by keyboard.

On the coder's bundle (tests/browser/coder_bundle.py): the toy phenotypes and a slice of the
real ICD-10-CM tabular."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.coder_bundle import icd10cm_slice

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    yield context.new_page()
    context.close()


PAGES = ["/browse/toy/T:2", "/browse/icd10cm/S72.001", "/browse/icd10cm/E11", "/browse?system=toy&q=fast+heart"]


@pytest.mark.parametrize("path", PAGES)
def test_a_page_on_a_phone_is_one_column_without_sideways_scroll(phone: Page, coder_server: str, path: str) -> None:
    phone.goto(f"{coder_server}{path}")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    if path.startswith("/browse/"):
        main, side = phone.locator("main > div").first.bounding_box(), phone.locator("main > div").last.bounding_box()
        assert main and side and side["y"] >= main["y"] + main["height"]  # the side column below, not beside
        assert side["width"] <= PHONE["width"]


def test_icd10cm_concept_page_shows_the_coding_notes_first(page: Page, coder_server: str) -> None:
    page.goto(f"{coder_server}/browse/icd10cm/E11")
    notes = page.locator("#own-notes")
    excludes1 = notes.locator("[data-note=excludes1]")
    expect(excludes1.locator("h3")).to_have_text("Excludes1")
    expect(excludes1).to_contain_text("type 1 diabetes mellitus (E10.-)")
    expect(notes.locator("[data-note=use_additional_code]")).to_contain_text("insulin (Z79.4)")
    # Near the top: the notes come before the designations, and right after the title.
    headings = page.locator("main h2").all_inner_texts()
    assert headings.index("Coding notes") < headings.index("Designations")
    assert headings.index("Coding notes") == 0

    # A code inherits its category's notes; a code the note names is a link when it is loaded.
    page.goto(f"{coder_server}/browse/icd10cm/I21.01")
    inherited = page.locator("#notes details.inherited[data-from=I21]")
    expect(inherited).to_have_attribute("open", "")
    expect(inherited.locator("[data-note=excludes2]")).to_contain_text("old myocardial infarction (I25.2)")
    expect(inherited.locator("[data-note=use_additional_code]").get_by_role("link", name="Z87.891")).to_be_visible()
    inherited.locator("[data-note=excludes2]").get_by_role("link", name="I25.2").click()
    expect(page.locator("h1")).to_have_text("Old myocardial infarction")


def test_the_seventh_character_table(page: Page, coder_server: str) -> None:
    page.goto(f"{coder_server}/browse/icd10cm/S72.001")
    table = page.locator("#seventh-table")
    row_a = table.locator("tr", has=page.locator("td", has_text=re.compile("^A$")))
    expect(row_a).to_contain_text("initial encounter for closed fracture")
    expect(page.locator("#seventh")).to_contain_text("7th character is to be added to all codes from category S72")
    # The category shows the table of the first code below it; an extended code marks its own.
    page.goto(f"{coder_server}/browse/icd10cm/S72")
    expect(page.locator("#seventh")).to_contain_text("S72.001")
    page.goto(f"{coder_server}/browse/icd10cm/S72.001D")
    expect(page.locator("#seventh")).to_contain_text("This code's 7th character: D")
    own = page.locator("#seventh-table tr[aria-current]")
    expect(own).to_contain_text("subsequent encounter for closed fracture with routine healing")
    headings = page.locator("main h2").all_inner_texts()
    assert headings.index("7th characters") < headings.index("Designations")


def test_children_and_siblings_in_tabular_code_order(page: Page, coder_server: str) -> None:
    _, icd = icd10cm_slice()
    expected = [c.code for c in icd if c.relationships and c.relationships[0].target == "I21"]
    assert expected == sorted(expected) and len(expected) > 5  # the tabular's order is the codes'
    page.goto(f"{coder_server}/browse/icd10cm/I21")
    items = page.locator("#children > ul.tree > li")
    codes = items.locator("> .code, > details > summary > .code").all_inner_texts()
    assert codes == expected
    displays = page.locator("#children > ul.tree > li").all_inner_texts()
    assert displays != sorted(displays, key=str.casefold)  # not by display
    # The side tree lists the siblings in the same order; chapters by their number.
    page.goto(f"{coder_server}/browse/icd10cm/I21.9")
    assert page.locator("#siblings > li .code").all_inner_texts() == expected
    page.goto(f"{coder_server}/browse/icd10cm/I00-I99")
    chapters = page.locator("#siblings > li .code").all_inner_texts()
    assert chapters == ["E00-E89", "I00-I99", "R00-R99", "S00-T88", "Z00-Z99"]


def test_the_side_tree_shows_siblings_and_expandable_ancestors(page: Page, coder_server: str) -> None:
    page.goto(f"{coder_server}/browse/toy/T:2")
    tree = page.locator("#tree")
    current = tree.locator("li[aria-current=page]")
    expect(current).to_contain_text("Tachycardia")
    siblings = tree.locator("#siblings").get_by_role("link")
    expect(siblings).to_have_text(["Bradycardia", "Heart murmur"])  # by display in an ontology
    # The ancestors, root first, each one open and closable; a sibling opens by its link.
    ancestors = tree.locator("li.ancestor > details > summary > a")
    expect(ancestors).to_have_text(["Phenotypic abnormality", "Abnormality of the cardiovascular system"])
    outer = tree.locator("li.ancestor > details").first
    outer.locator("> summary").click(position={"x": 2, "y": 2})
    expect(current).to_be_hidden()
    outer.locator("> summary").click(position={"x": 2, "y": 2})
    expect(current).to_be_visible()
    # An ancestor shows its other children on demand, the path kept open among them.
    tree.get_by_role("button", name="Show the 1 other children of Phenotypic abnormality").click()
    expect(tree.get_by_role("link", name="Abnormality of the ear")).to_be_visible()
    expect(current).to_be_visible()
    expect(tree.get_by_role("link", name="Abnormality of the cardiovascular system")).to_be_focused()
    siblings.filter(has_text="Bradycardia").click()
    expect(page.locator("h1")).to_have_text("Bradycardia")
    expect(page.locator("#tree li[aria-current=page]")).to_contain_text("Bradycardia")
    # A sibling with children expands in place (ICD-10-CM: I21.0 under I21.9's side tree).
    page.goto(f"{coder_server}/browse/icd10cm/I21.9")
    sibling = page.locator("#siblings > li > details").filter(has_text="I21.0").first
    sibling.locator("summary").click(position={"x": 2, "y": 2})
    expect(sibling.get_by_role("link", name=re.compile("involving left main coronary artery"))).to_be_visible()


def test_copy_code_view_as_fhir_and_linked_xrefs(browser: Browser, coder_server: str) -> None:
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        page.goto(f"{coder_server}/browse/toy/T:2")
        page.get_by_role("button", name="Copy code").click()
        expect(page.locator("#copy-status")).to_have_text("Copied T:2")
        assert page.evaluate("navigator.clipboard.readText()") == "T:2"
        # Cross-references: in the browser when the system is loaded, plain text otherwise.
        xrefs = page.locator("#xrefs")
        expect(xrefs.get_by_role("link", name="UMLS:C0039231")).to_have_attribute("href", re.compile(r"^https://uts\.nlm\.nih\.gov/"))
        expect(xrefs.get_by_role("link", name="NOPE:1")).to_have_count(0)
        expect(xrefs).to_contain_text("NOPE:1")
        xrefs.get_by_role("link", name="ICD10CM:R00.0").click()
        expect(page.locator("h1")).to_have_text("Tachycardia, unspecified")
        assert page.url.endswith("/browse/icd10cm/R00.0")
        # View as FHIR JSON: the $lookup of the concept.
        page.get_by_role("link", name="View as FHIR JSON").click()
        body = json.loads(page.locator("body").inner_text())
        assert body["resourceType"] == "Parameters"
        assert {"name": "display", "valueString": "Tachycardia, unspecified"} in body["parameter"]
    finally:
        context.close()


def test_unknown_concepts_and_bad_parameters_are_html_pages(page: Page, coder_server: str) -> None:
    response = page.goto(f"{coder_server}/browse/icd10cm/NOPE")
    assert response is not None and response.status == 404
    assert response.headers["content-type"].startswith("text/html")
    expect(page.locator("h1")).to_contain_text("Not found")
    expect(page.locator("#error-detail")).to_have_text(re.compile(r"'NOPE' is not a code of icd10cm"))
    page.get_by_role("link", name="Search a terminology").click()
    expect(page.locator("h1")).to_have_text("Search a terminology")
    for path, status in [("/browse/nope/X", 404), ("/browse?system=icd10cm&within=NOPE", 422), ("/browse/icd10cm/I21/x/y", 404)]:
        response = page.goto(f"{coder_server}{path}")
        assert response is not None and response.status == status, path
        assert response.headers["content-type"].startswith("text/html"), path
        expect(page.locator("#error")).to_be_visible()
    # The API itself still answers problem JSON.
    response = page.goto(f"{coder_server}/concepts/icd10cm/NOPE")
    assert response is not None and response.status == 404 and response.json()["status"] == 404


def test_the_concept_page_by_keyboard(page: Page, coder_server: str) -> None:
    page.goto(f"{coder_server}/browse/toy/T:2")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])

    def tab_to(selector: str, limit: int = 80) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            if page.evaluate("(s) => document.activeElement.matches(s)", selector):
                return
        raise AssertionError(f"Tab never reached {selector}")

    tab_to("#copy-code")
    page.keyboard.press("Enter")
    expect(page.locator("#copy-status")).to_have_text("Copied T:2")
    tab_to("#tree li.ancestor summary")
    page.keyboard.press("Enter")  # closes the ancestor
    expect(page.locator("#tree li[aria-current=page]")).to_be_hidden()
    page.keyboard.press("Enter")
    expect(page.locator("#tree li[aria-current=page]")).to_be_visible()
    tab_to("#tree button.show-all")
    page.keyboard.press("Enter")
    expect(page.locator("#tree").get_by_role("link", name="Abnormality of the ear")).to_be_visible()
    tab_to("#siblings a")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Bradycardia")
