"""Fault tolerance: a new bundle is served only once it verifies (else the old one keeps serving and
/ready says why), at start-up too (the newest older bundle that verifies is served); files of the
served bundle damaged on disk change nothing served (it is in memory) and /ready says so; an
unreachable store answers 503 problems where the store is needed while search
keeps answering from the bundle; a match job cut off by a restart that cannot resume it is marked
failed, not lost (its resumption on the same bundle: tests/api/test_match_jobs.py)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.matching import jobs as jobs_module
from app.settings import ApiSettings, Settings
from indexer.bundle import MANIFEST, current_bundle
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.settings import StoreSettings
from indexer.store import StoreReader


@pytest.fixture
def serving(built: Settings) -> Iterator[TestClient]:
    """The app over the toy bundle, checking for a new one only when the test asks."""
    settings = built.model_copy(update={"api": ApiSettings(bundle_check_s=0)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        yield client


def _publish_next(settings: Settings, reader: StoreReader, damage: Callable[[Path], None] | None = None) -> Path:
    """Build and publish another bundle (toy only); ``damage`` it once published."""
    build_bundle(settings, reader, FakeEncoder(32), ["toy"], show_progress=False)
    directory = current_bundle(settings.bundles_dir)
    if damage:
        damage(directory)
    return directory


def _serving_id(client: TestClient) -> str:
    return client.get("/ready").json()["checks"]["bundle"]["id"]


LABEL_TEXTS = "catalog/label_text.bytes.npy"


def _truncate_catalog(directory: Path) -> None:
    texts = directory / LABEL_TEXTS
    texts.write_bytes(texts.read_bytes()[:100])


def _change_manifest_encoder(directory: Path, field: str = "sha256", value: str = "0" * 64) -> None:
    manifest = json.loads((directory / MANIFEST).read_text())
    manifest["encoder"][field] = value
    (directory / MANIFEST).write_text(json.dumps(manifest))


def _change_manifest_precision(directory: Path) -> None:
    """Labels said to be embedded in int8, where the serving encoder runs in float."""
    _change_manifest_encoder(directory, "precision", "int8")


def test_a_verified_new_bundle_is_switched_to(serving: TestClient, built: Settings, toy_reader: StoreReader) -> None:
    old = _serving_id(serving)
    new = _publish_next(built, toy_reader).name
    serving.app.state.bundle_watcher.check()
    ready = serving.get("/ready").json()
    assert (ready["ready"], ready["degraded"], _serving_id(serving)) == (True, False, new) and new != old
    assert serving.get("/search", params={"q": "heart", "system": "toyicd"}).status_code == 422  # toy only now


def test_a_bundle_swap_under_load_drops_no_request(serving: TestClient, built: Settings, toy_reader: StoreReader) -> None:
    """Clients keep searching while a new bundle is published and switched to: every request is
    answered 200 with results, from the old bundle or the new one, never an error between."""
    old = _serving_id(serving)
    new = _publish_next(built, toy_reader).name
    answers: list[tuple[int, bool]] = []
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            response = serving.get("/search", params={"q": "fast heart rate", "system": "toy", "mode": "hybrid"})
            answers.append((response.status_code, bool(response.status_code == 200 and response.json()["results"])))

    workers = [threading.Thread(target=client) for _ in range(4)]
    for worker in workers:
        worker.start()
    time.sleep(0.3)
    before = len(answers)
    serving.app.state.bundle_watcher.check()  # opens the new bundle beside the old, then switches
    time.sleep(0.3)
    stop.set()
    for worker in workers:
        worker.join()
    assert _serving_id(serving) == new != old
    assert before > 0 and len(answers) > before  # requests ran before and after the switch
    assert set(answers) == {(200, True)}


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_truncate_catalog, f"files do not match the manifest: {LABEL_TEXTS}"),
        (_change_manifest_encoder, "does not match the bundle's"),
        (_change_manifest_precision, "encoder fake-hash-32 (float) does not match the bundle's fake-hash-32 (int8)"),
    ],
)
def test_a_broken_bundle_is_refused_and_the_old_one_keeps_serving(
    serving: TestClient, built: Settings, toy_reader: StoreReader, damage: Callable[[Path], None], reason: str
) -> None:
    old = _serving_id(serving)
    broken = _publish_next(built, toy_reader, damage)
    serving.app.state.bundle_watcher.check()
    response = serving.get("/ready")
    body = response.json()
    assert (response.status_code, body["ready"], body["degraded"], _serving_id(serving)) == (200, True, True, old)
    reload = body["checks"]["reload"]
    assert (reload["up"], reload["fallback"]) == (False, f"serving bundle {old}")
    assert reload["error"].startswith(f"bundle {broken.name} refused: ") and reason in reload["error"]
    assert str(built.data_dir.resolve()) not in response.text  # no host paths
    search = serving.get("/search", params={"q": "fast heart rate", "system": "toyicd"})
    assert search.status_code == 200 and search.json()["results"]


def _damage_served_files(directory: Path) -> list[str]:
    """Truncate the vectors and the largest tantivy segment file, flip a byte of the catalog."""
    segment = max((directory / "lexical").glob("*.*"), key=lambda path: path.stat().st_size)
    vectors = next(directory.glob("vectors.*"))  # the vector index's file, whatever its backend
    for path in (vectors, segment):
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 3)
    catalog = bytearray((directory / LABEL_TEXTS).read_bytes())
    catalog[len(catalog) // 2] ^= 0x01
    (directory / LABEL_TEXTS).write_bytes(bytes(catalog))
    return sorted([LABEL_TEXTS, vectors.name, f"lexical/{segment.name}"])


def test_served_files_damaged_on_disk_change_nothing_served_and_ready_says_so(serving: TestClient, built: Settings) -> None:
    directory = current_bundle(built.bundles_dir)
    before = {mode: serving.get("/search", params={"q": "fast heart rate", "system": "toy", "mode": mode}).json()["results"] for mode in ("dense", "lexical")}
    damaged = _damage_served_files(directory)
    for mode, results in before.items():  # no SIGBUS: nothing served is mapped from the bundle
        search = serving.get("/search", params={"q": "fast heart rate", "system": "toy", "mode": mode})
        assert search.status_code == 200 and search.json()["results"] == results
    serving.app.state.bundle_watcher.check()
    response = serving.get("/ready")
    body = response.json()
    assert (response.status_code, body["ready"], body["degraded"]) == (200, True, True)
    assert body["checks"]["files"] == {
        "up": False,
        "fallback": "serving the files verified at load, from memory",
        "error": f"files of bundle {directory.name} changed on disk since they were verified: {', '.join(damaged)}",
    }


def test_start_up_serves_the_newest_bundle_that_verifies(built: Settings, toy_reader: StoreReader) -> None:
    good = current_bundle(built.bundles_dir).name
    broken = _publish_next(built, toy_reader, _damage_served_files).name
    settings = built.model_copy(update={"api": ApiSettings(bundle_check_s=0)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        body = client.get("/ready").json()
        assert (body["ready"], body["degraded"], body["checks"]["bundle"]["id"]) == (True, True, good)
        assert body["checks"]["reload"]["fallback"] == f"serving bundle {good}"
        assert body["checks"]["reload"]["error"].startswith(f"bundle {broken} refused: {{data_dir}}/bundles/{broken}: files do not match the manifest: ")
        search = client.get("/search", params={"q": "fast heart rate", "system": "toyicd"})  # only the good bundle has toyicd
        assert search.status_code == 200 and search.json()["results"]
        client.app.state.bundle_watcher.check()  # the refused bundle is not verified again
        assert client.get("/ready").json()["checks"]["bundle"]["id"] == good


def test_the_watcher_switches_in_the_background(built: Settings, toy_reader: StoreReader) -> None:
    settings = built.model_copy(update={"api": ApiSettings(bundle_check_s=0.05)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        new = _publish_next(built, toy_reader).name
        deadline = time.monotonic() + 10
        while _serving_id(client) != new and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _serving_id(client) == new


def test_unreachable_store_503_where_needed_and_search_keeps_answering(built: Settings) -> None:
    closed_port = "postgresql+psycopg://nobody@127.0.0.1:9/none?connect_timeout=2"
    settings = built.model_copy(update={"store": StoreSettings(url=closed_port), "api": ApiSettings(bundle_check_s=0)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        search = client.get("/search", params={"q": "fast heart rate", "system": "toy"})
        assert search.status_code == 200 and search.json()["results"][0]["code"] == "T:2"
        expand = client.get("/fhir/ValueSet/$expand", params={"url": "http://example.org/toy?fhir_vs", "filter": "heart"})
        assert expand.status_code == 200 and expand.json()["expansion"]["contains"]
        lookup = client.get("/fhir/CodeSystem/$lookup", params={"system": "http://example.org/toy", "code": "T:2"})
        assert (lookup.status_code, lookup.headers["content-type"]) == (503, "application/fhir+json")
        assert lookup.json()["issue"][0]["code"] == "transient"
        ready = client.get("/ready")
        assert (ready.status_code, ready.json()["ready"], ready.json()["checks"]["store"]) == (
            503, False, {"up": False, "error": "OperationalError"}
        )
        concept = client.get("/concepts/toy/T:2")
        assert (concept.status_code, concept.headers["content-type"]) == (503, "application/problem+json")
        assert concept.json() == {
            "type": "/problems/store-unavailable",
            "title": "Concept store unavailable",
            "status": 503,
            "detail": "the concept store cannot be reached; try again later",
        }


class _Crash(BaseException):
    """Stands for the process dying mid-job: not an Exception, so the job worker does not catch it."""


def test_a_job_cut_off_by_a_restart_onto_another_bundle_is_marked_failed(
    built: Settings, toy_reader: StoreReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*_: object, **__: object) -> None:
        raise _Crash

    monkeypatch.setattr(jobs_module.Matcher, "match", crash)
    monkeypatch.setattr(threading, "excepthook", lambda args: None)  # the "dead process" needs no traceback
    settings = built.model_copy(update={"api": ApiSettings(bundle_check_s=0)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as first:
        accepted_on = _serving_id(first)
        location = first.post("/match/jobs", json={"target_system": "toy", "source_system": "toyicd"}).headers["location"]
        deadline = time.monotonic() + 30
        while first.get(location).json()["status"] != "running" and time.monotonic() < deadline:
            time.sleep(0.02)
    new = _publish_next(built, toy_reader).name  # while the app is down
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as second:
        deadline = time.monotonic() + 30
        while (job := second.get(location).json())["status"] in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(0.02)
    assert job["status"] == "failed"
    assert f"accepted on bundle {accepted_on}, now {new} is served; submit it again" in job["error"]
