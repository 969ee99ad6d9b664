"""The autocomplete widget on the demo page, in headless Chromium over real HTTP: typing,
suggestions with highlighting, keyboard selection, the emitted FHIR Coding, ARIA state."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.toy import TOY, toy_concepts

WIDGET = f'termsearch-autocomplete[system="{TOY.uri}"]'


def test_typing_hearing_loss_and_choosing_hearing_impairment_with_the_keyboard(
    page: Page, toy_server: str, screenshot: Callable[[str], Path]
) -> None:
    wanted = next(c for c in toy_concepts() if c.display == "Hearing impairment")
    page.goto(f"{toy_server}/")
    widget = page.locator(WIDGET)
    box = widget.get_by_role("combobox")
    expect(box).to_be_visible()
    page.evaluate(
        """selector => { window.codings = [];
             document.querySelector(selector).addEventListener('change', e => window.codings.push(e.detail)); }""",
        WIDGET,
    )

    box.press_sequentially("hearing loss", delay=40)
    options = widget.get_by_role("option")
    expect(options.filter(has_text="Hearing impairment")).to_have_count(1)
    expect(box).to_have_attribute("aria-expanded", "true")
    target = options.filter(has_text="Hearing impairment")
    expect(target.locator("mark").first).to_have_text("Hearing")
    expect(target).to_contain_text(wanted.code)
    expect(target).to_contain_text("matched: Hearing loss")
    screenshot("suggestions")

    position = [text.split("\n")[0] for text in options.all_inner_texts()].index("Hearing impairment")
    for _ in range(position + 1):
        box.press("ArrowDown")
    expect(target).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", target.get_attribute("id"))
    box.press("Enter")

    expect(box).to_have_value("Hearing impairment")
    expect(box).to_have_attribute("aria-expanded", "false")
    codings = page.evaluate("window.codings")
    assert codings == [{"system": TOY.uri, "version": TOY.version, "code": wanted.code, "display": wanted.display}]
    expect(page.locator("#selected")).to_contain_text(f'"code": "{wanted.code}"')
    screenshot("selected")


def test_escape_closes_the_suggestions_and_arrows_wrap(page: Page, toy_server: str) -> None:
    page.goto(f"{toy_server}/")
    box = page.locator(WIDGET).get_by_role("combobox")
    box.press_sequentially("heart", delay=30)
    options = page.locator(WIDGET).get_by_role("option")
    expect(options.first).to_be_visible()
    box.press("ArrowUp")  # from the box, up lands on the last suggestion
    expect(options.last).to_have_attribute("aria-selected", "true")
    box.press("Escape")
    expect(box).to_have_attribute("aria-expanded", "false")
    expect(page.locator(WIDGET).get_by_role("listbox", include_hidden=True)).to_be_hidden()
    box.press("Escape")
    expect(box).to_have_value("")


def test_demo_page_offers_a_widget_per_loaded_system_and_loads_nothing_from_elsewhere(
    page: Page, toy_server: str
) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{toy_server}/")
    expect(page.locator("termsearch-autocomplete")).to_have_count(2)
    labels = page.locator("termsearch-autocomplete label").all_inner_texts()
    assert labels == [f"{TOY.uri} ({TOY.version})", "http://example.org/toyicd (2026)"]
    assert requested and all(url.startswith(toy_server) for url in requested)
