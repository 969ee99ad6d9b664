"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

from indexer.remote import backend_status

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """The process is up (no dependency checked; on the event loop, so busy worker threads do not
    make it fail)."""
    return {"status": "ok"}


@router.get("/ready")
def ready(request: Request) -> JSONResponse:
    """200 when a bundle is serving, the store answers and each index answers (itself, or its
    embedded fallback: then ``degraded``); 503 otherwise. Each check says which part is down."""
    state = request.app.state
    checks: dict[str, dict[str, object]] = {}
    service = state.service
    checks["bundle"] = (
        {"up": True, "id": service.bundle.id, "encoder": service.encoder.id, "ranker": service.calibration.describe()}
        if service is not None
        else {"up": False, "error": state.bundle_error}
    )
    if service is not None:
        checks["lexical"] = backend_status(service.bundle.lexical)
        checks["vector"] = backend_status(service.bundle.vectors)
    if state.reload_error:  # a newer bundle was refused (app/ops/bundle_watch.py)
        checks["reload"] = {"up": False, "fallback": f"serving bundle {service.bundle.id}", "error": state.reload_error}
    try:
        with state.reader.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["store"] = {"up": True}
    except Exception as exc:  # noqa: BLE001 - any driver error means "down"
        checks["store"] = {"up": False, "error": type(exc).__name__}
    if state.files_error:  # served from memory; a restart would refuse these files
        checks["files"] = {"up": False, "fallback": "serving the files verified at load, from memory", "error": state.files_error}
    jobs = state.jobs
    checks["jobs"] = {"up": True} if jobs.alive and jobs.error is None else {"up": False, "error": jobs.error or "the match-job worker stopped"}
    is_ready = all(check["up"] or "fallback" in check for check in checks.values())
    degraded = is_ready and not all(check["up"] for check in checks.values())
    body = {"ready": is_ready, "degraded": degraded, "checks": checks}
    return JSONResponse(body, status_code=200 if is_ready else 503)
