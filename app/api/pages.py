"""The browser's server-rendered pages: their templates, and errors under ``/browse`` as HTML
pages (a person reads them) rather than problem JSON; ``app/api/errors.py`` renders through
:func:`error_page` for those paths."""

from __future__ import annotations

from pathlib import Path

from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.errors import ApiError

TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parents[1] / "web" / "templates")
BROWSE_PREFIX = "/browse"


def is_browse(path: str) -> bool:
    return path == BROWSE_PREFIX or path.startswith(f"{BROWSE_PREFIX}/")


def error_page(error: ApiError) -> HTMLResponse:
    """``error`` as a page of the browser: its title and detail, with the status it carries."""
    html = TEMPLATES.get_template("browse_error.html").render(error=error, status=error.status)
    return HTMLResponse(html, status_code=error.status, headers=error.headers)
