"""POST /match/jobs: progress, the result in every format, and a job surviving an app restart."""

from __future__ import annotations

import csv
import io
import threading
import time
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from fhir.resources.R4B.conceptmap import ConceptMap
from sqlalchemy import update
from sssom.parsers import parse_sssom_table
from sssom.validators import validate

from app.main import create_app
from app.matching import jobs as jobs_module
from app.matching.matcher import Matcher
from app.settings import MatchSettings, Settings
from app.tables import MatchJobRow
from indexer.encoders import FakeEncoder

BODY = {"target_system": "toy", "source_system": "toyicd", "k": 3}
RUN_FIELDS = ("run_id", "created_at")  # differ between any two runs


def _wait(client: TestClient, location: str, until: Callable[[dict], bool], timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(location).json()
        if until(job):
            return job
        time.sleep(0.02)
    raise AssertionError(f"job {location} did not get there: {job}")


def _same_run(a: dict, b: dict) -> None:
    """Equal but for run id and time, and scores to 1e-5 (BLAS sums depend on the batch's shape)."""

    def parts(run: dict) -> tuple[dict, list[float]]:
        scores = [c.pop("score") for r in run["results"] for c in r["candidates"]]
        return {k: v for k, v in run.items() if k not in RUN_FIELDS}, scores

    (left, left_scores), (right, right_scores) = parts(a), parts(b)
    assert left == right
    assert left_scores == pytest.approx(right_scores, abs=1e-5)


def _app(settings: Settings) -> TestClient:
    return TestClient(create_app(settings, encoder=FakeEncoder(32)))


@pytest.fixture
def chunked(built: Settings) -> Settings:
    built.match = MatchSettings(job_chunk=2)  # the 5 toyicd sources take 3 steps
    return built


def test_a_job_reports_progress_then_its_result(chunked: Settings) -> None:
    with _app(chunked) as client:
        submitted = client.post("/match/jobs", json=BODY)
        assert submitted.status_code == 202
        job = submitted.json()
        assert submitted.headers["location"] == f"/match/jobs/{job['id']}"
        assert job["status"] in ("queued", "running") and job["progress"]["total"] == 5 and job["result"] is None
        done = _wait(client, submitted.headers["location"], lambda j: j["status"] == "done")
        assert done["progress"] == {"done": 5, "total": 5} and done["error"] is None
        assert done["finished_at"] >= done["created_at"]
        _same_run(done["result"], client.post("/match", json=BODY).json())  # the same answer as a synchronous match


def test_a_finished_job_answers_sssom_and_conceptmap(chunked: Settings) -> None:
    with _app(chunked) as client:
        location = client.post("/match/jobs", json=BODY).headers["location"]
        result = _wait(client, location, lambda j: j["status"] == "done")["result"]
        tsv = client.get(location, headers={"accept": "text/tab-separated-values"})
        assert tsv.headers["content-type"].startswith("text/tab-separated-values")
        msdf = parse_sssom_table(io.StringIO(tsv.text), propagate=False)
        validate(msdf, fail_on_error=True)
        assert msdf.metadata["mapping_set_id"] == f"urn:uuid:{result['run_id']}"
        assert len(msdf.df) == sum(len(r["candidates"]) or 1 for r in result["results"])
        fhir = client.get(location, headers={"accept": "application/fhir+json"})
        resource = ConceptMap.model_validate(fhir.json())
        assert resource.id == result["run_id"]
        assert [e.code for e in resource.group[0].element] == [r["id"] for r in result["results"]]


def test_jobs_are_listed_newest_first_with_their_progress(chunked: Settings) -> None:
    with _app(chunked) as client:
        first = client.post("/match/jobs", json=BODY).json()["id"]
        second = client.post("/match/jobs", json={**BODY, "k": 1}).json()["id"]
        for job_id in (first, second):
            _wait(client, f"/match/jobs/{job_id}", lambda j: j["status"] == "done")
        listed = client.get("/match/jobs").json()
        assert [job["id"] for job in listed] == [second, first]
        assert all(job["progress"] == {"done": 5, "total": 5} and job["result"] is None for job in listed)
        assert [job["id"] for job in client.get("/match/jobs", params={"limit": 1}).json()] == [second]
        refused = client.get("/match/jobs", params={"limit": 0})
        assert (refused.status_code, refused.json()["detail"]) == (422, "limit: must be between 1 and 1000 (got 0)")


def test_a_finished_job_answers_a_review_sheet(chunked: Settings) -> None:
    with _app(chunked) as client:
        location = client.post("/match/jobs", json=BODY).headers["location"]
        result = _wait(client, location, lambda j: j["status"] == "done")["result"]
        sheet = client.get(location, headers={"accept": "text/csv"})
        assert sheet.headers["content-type"].startswith("text/csv")
        assert sheet.headers["content-disposition"] == f'attachment; filename="match-{result["run_id"]}.csv"'
        rows = list(csv.DictReader(io.StringIO(sheet.text)))
        expected = [(r["id"], str(c["rank"]), c["code"]) for r in result["results"] for c in r["candidates"]]
        assert [(row["source_id"], row["rank"], row["target_code"]) for row in rows if row["rank"]] == expected
        for row in rows:
            assert row["decision"] == row["reviewer"] == row["note"] == ""
            confident = row["rank"] == "1" and float(row["confidence"]) >= Settings().search.confidence_threshold
            assert row["suggested"] == ("close match" if confident else "candidate")


def test_formats_wait_for_the_job_and_unknown_jobs_are_404(chunked: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real = Matcher.match

    def held(self: Matcher, *args: object, **kwargs: object) -> object:
        release.wait(30)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(jobs_module.Matcher, "match", held)
    with _app(chunked) as client:
        location = client.post("/match/jobs", json=BODY).headers["location"]
        job_id = location.rsplit("/", 1)[1]
        _wait(client, location, lambda j: j["status"] == "running")  # the worker holds it before its first step
        response = client.get(location, headers={"accept": "text/tab-separated-values"})
        assert response.status_code == 409
        assert response.json() == {
            "type": "/problems/not-ready",
            "title": "Not ready",
            "status": 409,
            "detail": f"job_id: job {job_id} is running (0 of 5 sources); its SSSOM is ready once it is done",
            "param": "job_id",
        }
        release.set()
        _wait(client, location, lambda j: j["status"] == "done")
        missing = client.get("/match/jobs/no-such-job")
        assert missing.status_code == 404
        assert missing.json() == {
            "type": "/problems/not-found",
            "title": "Not found",
            "status": 404,
            "detail": "job_id: no match job 'no-such-job'",
            "param": "job_id",
        }


class Crash(BaseException):
    """Stands for the process dying: not an Exception, so the worker does not catch it."""


def test_a_job_survives_an_app_restart(chunked: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Matcher.match
    calls: list[int] = []

    def crash_on_second_step(self: Matcher, sources, *args, **kwargs):
        calls.append(len(sources))
        if len(calls) == 2:
            raise Crash
        return real(self, sources, *args, **kwargs)

    monkeypatch.setattr(jobs_module.Matcher, "match", crash_on_second_step)
    monkeypatch.setattr(threading, "excepthook", lambda args: None)  # the "dead process" needs no traceback
    with _app(chunked) as first:
        location = first.post("/match/jobs", json=BODY).headers["location"]
        stopped = _wait(first, location, lambda j: len(calls) == 2 and j["progress"]["done"] == 2)
        assert stopped["status"] == "running"  # as a killed process leaves it: one step saved
        expected = first.post("/match", json=BODY).json()

    calls.clear()
    monkeypatch.setattr(jobs_module.Matcher, "match", lambda self, sources, *a, **kw: calls.append(len(sources)) or real(self, sources, *a, **kw))
    with _app(chunked) as second:  # a new process over the same store resumes the job
        done = _wait(second, location, lambda j: j["status"] == "done")
    assert calls == [2, 1]  # only the sources not yet saved were matched again
    assert done["progress"] == {"done": 5, "total": 5}
    _same_run(done["result"], expected)


def test_a_queued_job_is_not_lost_by_a_shutdown(chunked: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    started = threading.Event()
    release = threading.Event()
    real = Matcher.match

    def slow(self: Matcher, *args: object, **kwargs: object) -> object:
        started.set()
        release.wait(30)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(jobs_module.Matcher, "match", slow)
    with _app(chunked) as first:
        running = first.post("/match/jobs", json=BODY).headers["location"]
        queued = first.post("/match/jobs", json={**BODY, "mode": "lexical"}).headers["location"]
        assert started.wait(30)
        assert first.get(queued).json()["status"] == "queued"
        threading.Timer(0.2, release.set).start()  # shutdown waits for the step in progress
    monkeypatch.setattr(jobs_module.Matcher, "match", real)
    with _app(chunked) as second:
        for location in (running, queued):
            assert _wait(second, location, lambda j: j["status"] == "done")["progress"]["done"] == 5


def test_a_job_on_a_bundle_no_longer_served_fails_and_says_why(chunked: Settings) -> None:
    with _app(chunked) as client:
        runner = client.app.state.jobs
        location = client.post("/match/jobs", json=BODY).headers["location"]
        _wait(client, location, lambda j: j["status"] == "done")
        job_id = location.rsplit("/", 1)[1]
        job = runner.store.get(job_id)
        with runner.store.engine.begin() as conn:  # queued again, as if accepted on an older bundle
            document = {"request": job.request.model_dump(mode="json"), "info": {**job.info.to_dict(), "bundle_id": "old"}}
            conn.execute(update(MatchJobRow).where(MatchJobRow.id == job_id).values(request=document, status="queued"))
        runner.wake()
        failed = _wait(client, location, lambda j: j["status"] == "failed")
        serving = client.app.state.service.bundle.id
        assert failed["error"] == f"the job was accepted on bundle old, now {serving} is served; submit it again"
