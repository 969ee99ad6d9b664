"""The evaluation results page in headless Chromium: it plots the stored runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

ITEMS = [
    {"query": "fast heart rate", "gold": ["T:2"]},
    {"query": "can't hear well", "gold": ["T:4"]},
    {"query": "slow pulse", "gold": ["T:3"]},
]


def test_results_page_plots_the_stored_runs(toy_server: str, page: Page, screenshot: Callable[[str], Path]) -> None:
    runs = {
        mode: httpx.post(f"{toy_server}/evaluate", json={"system": "toy", "mode": mode, "items": ITEMS}, timeout=30).json()
        for mode in ("lexical", "dense")
    }
    page.goto(f"{toy_server}/evaluations/view")
    expect(page.locator("body")).to_have_attribute("data-rendered", "true")
    expect(page.locator("#dataset")).to_have_value("posted items (toy)")

    for mode, run in runs.items():
        series = f"fake-hash-32 · {mode}"
        expect(page.locator("#legend")).to_contain_text(series)
        for metric, value in run["metrics"].items():
            bar = page.locator(f'#hits-chart rect.bar[data-series="{series}"][data-metric="{metric}"]')
            expect(bar).to_have_attribute("data-value", f"{value:.4f}")
        points = page.locator(f'#overlap-chart circle.point[data-series="{series}"]')
        plotted = {p.get_attribute("data-bin"): float(p.get_attribute("data-value")) for p in points.all()}
        assert plotted == {name: b["hits"] for name, b in run["overlap"].items() if b["hits"] is not None}
        expect(page.locator(f'#overlap-chart path.line[data-series="{series}"]')).to_have_count(1)

    bar = page.locator('#hits-chart rect.bar[data-metric="hits@10"]').first
    assert bar.bounding_box()["height"] >= 0  # laid out in the page, not just in the DOM
    expect(page.locator("#runs tbody tr")).to_have_count(2)
    screenshot("plotted")


def test_results_page_without_runs_says_so(toy_server: str, page: Page) -> None:
    page.goto(f"{toy_server}/evaluations/view")
    expect(page.locator("body")).to_have_attribute("data-rendered", "empty")
    expect(page.locator("#empty")).to_be_visible()
