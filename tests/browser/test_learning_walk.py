"""Learning from use as people do it, in headless Chromium over real HTTP (issue 40): a user's
words find nothing, they find the concept by other words and open it, three times; a curator sees
the proposal at /review and approves it with their key; the same words then list that concept
first, saying it was learned from use. A name a supplement wrongly gave a concept is flagged on
its page, denied by the curator, and no longer matches."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.store import StoreReader
from tests.api.test_feedback import CURATOR_KEY, taught_bundle

WORDS = "my ticker keeps galloping"


@pytest.fixture
def server(serve_app: Callable, settings: Settings, toy_reader: StoreReader, tmp_path: Path) -> str:
    return serve_app(create_app(taught_bundle(settings, toy_reader, tmp_path, "dana"), encoder=FakeEncoder(32)))


def proposed(base: str, words: str, timeout_s: float = 10) -> None:
    """Wait until the reports sent as the pages closed (keepalive) are recorded and propose ``words``."""
    deadline = time.monotonic() + timeout_s
    while not any(p["text"] == words for p in httpx.get(f"{base}/review/queue").json()["proposals"]):
        assert time.monotonic() < deadline, f"{words!r} not proposed"
        time.sleep(0.2)


def search(page: Page, base: str, words: str) -> None:
    page.goto(f"{base}/browse?system=toy&q={words.replace(' ', '+')}")
    expect(page.locator("#count")).to_be_visible()


def approve_in_review(page: Page, base: str, table: str, button: str, row_text: str) -> None:
    page.goto(f"{base}/review")
    page.get_by_label("Curator key").fill(CURATOR_KEY)
    page.get_by_label("Curator key").dispatch_event("change")
    row = page.locator(f"#{table} tr", has_text=row_text)
    expect(row).to_be_visible()
    row.get_by_role("button", name=button).click()
    expect(page.locator("#status")).to_contain_text("Recorded: approved")
    expect(page.locator("tr", has_text=row_text)).to_have_count(0)  # nor among the unanswered queries


def test_words_that_found_nothing_are_taught_by_use_and_a_curator(page: Page, server: str) -> None:
    for _ in range(3):
        search(page, server, WORDS)
        expect(page.locator("#results")).to_have_text("Nothing above the confidence threshold.")
        search(page, server, "fast heart")
        page.locator("#results a", has_text="Tachycardia").click()
        expect(page.locator("h1")).to_contain_text("Tachycardia")
    proposed(server, WORDS)
    page.goto(f"{server}/review")
    expect(page.locator("#proposals tr", has_text=WORDS)).to_contain_text("Tachycardia")
    page.locator("#proposals tr", has_text=WORDS).get_by_role("button", name="Approve").click()
    expect(page.locator("#status")).to_contain_text("Not recorded: a curator key is required")  # no key yet
    approve_in_review(page, server, "proposals", "Approve", WORDS)
    search(page, server, WORDS)
    first = page.locator("#results li").first
    expect(first.locator("a")).to_have_text("Tachycardia")
    expect(first).to_contain_text("learned from use: 3 choices, approved by dana on ")


def test_a_wrong_name_flagged_on_its_page_and_denied_no_longer_matches(page: Page, server: str) -> None:
    search(page, server, "racing pulse")
    expect(page.locator("#results li").first).to_contain_text("Bradycardia")
    page.goto(f"{server}/browse/toy/T:3")
    row = page.locator("#designations tr", has_text="Racing pulse")
    row.get_by_role("button", name="Not this concept?").click()
    expect(row.get_by_role("status")).to_have_text("Reported: a curator will review it.")
    approve_in_review(page, server, "flags", "Deny the name", "Racing pulse")
    search(page, server, "racing pulse")
    expect(page.locator("#results li", has_text="Bradycardia")).to_have_count(0)
