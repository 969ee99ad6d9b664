"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

router = APIRouter(tags=["health"])


@router.get("/health")
def health() -> dict[str, str]:
    """The process is up (no dependency checked)."""
    return {"status": "ok"}


@router.get("/ready")
def ready(request: Request) -> JSONResponse:
    """200 when a bundle is serving and the store answers; 503 otherwise, saying which part is down."""
    state = request.app.state
    checks: dict[str, dict[str, object]] = {}
    service = state.service
    checks["bundle"] = (
        {"up": True, "id": service.bundle.id, "encoder": service.encoder.id}
        if service is not None
        else {"up": False, "error": state.bundle_error}
    )
    try:
        with state.reader.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["store"] = {"up": True}
    except Exception as exc:  # noqa: BLE001 - any driver error means "down"
        checks["store"] = {"up": False, "error": type(exc).__name__}
    is_ready = all(check["up"] for check in checks.values())
    return JSONResponse({"ready": is_ready, "checks": checks}, status_code=200 if is_ready else 503)
