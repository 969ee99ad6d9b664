"""The search page in headless Chromium: one box (suggestions as you type; Enter without choosing
one lists every match), the result count, paging, and the facets (kind, billable, inactive),
by keyboard; without script, the plain form. On the coder's bundle (tests/browser/coder_bundle.py)."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect


def test_one_box_suggests_and_lists_every_match_with_a_count_and_pages(page: Page, coder_server: str) -> None:
    page.goto(f"{coder_server}/browse?system=icd10cm")
    box = page.locator("#picker").get_by_role("combobox")
    expect(box).to_be_visible()
    expect(page.locator("#q")).to_be_hidden()  # the form's field gives way to the widget: one box for the words
    expect(page.get_by_role("textbox")).to_have_count(1)  # besides it, only "within"
    box.press_sequentially("fracture of neck of femur", delay=20)
    expect(page.locator("#picker").get_by_role("option").first).to_be_visible()
    box.press("Enter")  # no suggestion chosen: the list of every match
    expect(page.locator("#results-title")).to_have_text("Results for “fracture of neck of femur”")
    count = page.locator("#count")
    expect(count).to_have_text(re.compile(r"^\d+ results above the confidence threshold; 1–20 shown \(page 1 of \d+\)$"))
    total = int(count.inner_text().split()[0])
    assert total > 20
    expect(page.locator("#results > li")).to_have_count(20)
    expect(box).to_have_value("fracture of neck of femur")  # the box keeps the words

    page.get_by_role("link", name="Next →").click()
    expect(count).to_contain_text("21–")
    expect(page.locator("#results")).to_have_attribute("start", "21")
    assert "page=2" in page.url
    page.get_by_role("link", name="← Previous").click()
    expect(count).to_contain_text("1–20 shown")


def test_facets_narrow_the_results(page: Page, coder_server: str) -> None:
    page.goto(f"{coder_server}/browse?system=icd10cm&q=fracture+of+femur")
    page.locator("#kind").select_option("category")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#results > li").first).to_be_visible()
    kinds = page.locator("#results > li .badge").all_inner_texts()
    assert kinds and set(kinds) == {"category"}
    assert "kind=category" in page.url
    page.goto(f"{coder_server}/browse?system=icd10cm&q=fracture+of+femur&billable=false")
    assert "S72.001A" not in page.locator("#results").inner_text()
    expect(page.locator("#billable")).to_have_value("false")
    page.goto(f"{coder_server}/browse?system=icd10cm&q=fracture+of+femur&billable=")  # "any", as the form sends it
    expect(page.locator("#results > li").first).to_be_visible()
    # An ontology has no kinds: no kind or billable facet; inactive concepts only when asked.
    page.goto(f"{coder_server}/browse?system=toy&q=obsolete+rapid+pulse")
    expect(page.locator("#kind")).to_have_count(0)
    expect(page.locator("#billable")).to_have_count(0)
    expect(page.locator("#results").get_by_role("link", name="obsolete Rapid pulse")).to_have_count(0)
    page.locator("#inactive").check()
    page.get_by_role("button", name="Search").click()
    hit = page.locator("#results > li").filter(has_text="obsolete Rapid pulse")
    expect(hit.locator(".badge.inactive")).to_have_text("inactive")


def test_search_by_keyboard(page: Page, coder_server: str) -> None:
    page.goto(f"{coder_server}/browse?system=toy")
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement?.id") == "picker":
            break
    page.keyboard.type("fast heart", delay=30)
    expect(page.locator("#picker").get_by_role("option").first).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("#results").get_by_role("link", name="Tachycardia", exact=True)).to_be_visible()
    expect(page.locator("#count")).to_have_text(re.compile(r"^\d+ results? above the confidence threshold"))


def test_without_script_the_form_still_searches(browser: Browser, coder_server: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{coder_server}/browse?system=toy")
        page.locator("#q").fill("fast heart")
        page.get_by_role("button", name="Search").click()
        expect(page.locator("#results").get_by_role("link", name="Tachycardia", exact=True)).to_be_visible()
        expect(page.locator("#count")).to_be_visible()
    finally:
        context.close()
