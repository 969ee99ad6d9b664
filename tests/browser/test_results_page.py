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

    # A run's failures: the items not found first, with what came back instead.
    lexical = runs["lexical"]
    page.get_by_role("button", name=f"items of run {lexical['id']} not found first").click()
    expect(page.locator("body")).to_have_attribute("data-failures", str(lexical["id"]))
    missed = [item for item in lexical["items"] if item["rank"] != 1]
    rows = page.locator("#failures tbody tr")
    expect(rows).to_have_count(len(missed))
    for row, item in zip(rows.all(), missed, strict=True):
        expect(row.locator("td").first).to_have_text(item["query"])
        expect(row.locator("td").last).to_have_text(", ".join(item["results"][:5]))


def test_named_runs_on_another_gold_set_are_kept_apart(toy_server: str, page: Page) -> None:
    for name, items in (("baseline", ITEMS), ("icd", [{"query": "high blood pressure", "gold": ["I10"]}])):
        system = "toy" if name == "baseline" else "toyicd"
        body = {"system": system, "mode": "dense", "items": items, "run_name": name}
        assert httpx.post(f"{toy_server}/evaluate", json=body, timeout=30).status_code == 200
    page.goto(f"{toy_server}/evaluations/view")
    expect(page.locator("body")).to_have_attribute("data-rendered", "true")
    expect(page.locator("#dataset")).to_have_value("posted items (toyicd)")  # the newest run's gold set first
    expect(page.locator("#legend")).to_have_text("icd (fake-hash-32 · dense)")
    expect(page.locator("#runs tbody tr")).to_have_count(1)  # only the chosen gold set's runs
    expect(page.locator("#runs tbody tr td").nth(1)).to_have_text("icd")
    page.locator("#dataset").select_option("posted items (toy)")
    expect(page.locator("#legend")).to_have_text("baseline (fake-hash-32 · dense)")
    expect(page.locator("#runs tbody tr td").nth(1)).to_have_text("baseline")


def test_results_page_without_runs_says_so(toy_server: str, page: Page) -> None:
    page.goto(f"{toy_server}/evaluations/view")
    expect(page.locator("body")).to_have_attribute("data-rendered", "empty")
    expect(page.locator("#empty")).to_be_visible()
