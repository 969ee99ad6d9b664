"""The autocomplete widget (``/web/termsearch-autocomplete.js``) and its demo page (``/``); the
browser's feedback module (``/web/termsearch-feedback.js``)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

WEB = Path(__file__).resolve().parents[2] / "web"

router = APIRouter(tags=["web"], include_in_schema=False)


@router.get("/")
def demo() -> FileResponse:
    return FileResponse(WEB / "index.html", media_type="text/html")


@router.get("/web/termsearch-autocomplete.js")
def widget() -> FileResponse:
    return FileResponse(WEB / "termsearch-autocomplete.js", media_type="text/javascript")


@router.get("/web/termsearch-feedback.js")
def feedback_module() -> FileResponse:
    return FileResponse(WEB / "termsearch-feedback.js", media_type="text/javascript")
