"""/docs (Swagger UI) and /redoc in headless Chromium with no network beyond the app: their
scripts and styles are served by the app itself (package fastapi-offline), never a CDN."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route, expect


@pytest.mark.parametrize(("path", "rendered"), [("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")])
def test_api_docs_render_offline(toy_server: str, page: Page, path: str, rendered: str) -> None:
    own = urlsplit(toy_server).netloc
    elsewhere: list[str] = []

    def offline(route: Route) -> None:
        if urlsplit(route.request.url).netloc == own:
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", offline)
    page.goto(f"{toy_server}{path}")
    expect(page.locator(rendered).first).to_contain_text("termsearch", timeout=15_000)
    if path == "/docs":
        expect(page.locator(".opblock-summary-path", has_text="/search").first).to_be_visible()
    assert elsewhere == []
