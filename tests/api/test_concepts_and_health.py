"""GET /concepts/{system}/{code}, /health, /ready, and serving without a bundle."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.main import create_app
from app.search.confidence import FEATURES, Calibration
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.store import migrate


def test_concept_detail(client: TestClient) -> None:
    body = client.get("/concepts/toy/T:2").json()
    assert body["display"] == "Tachycardia"
    assert (body["system"], body["version"], body["status"]) == ("toy", "2025-01-16", "active")
    assert body["synonyms"][1] == {
        "text": "Fast heart rate", "use": "synonym", "language": "en", "scope": "EXACT", "type": "layperson",
        "kind": "layperson", "origin": None, "knowledge": None,
    }
    assert body["definitions"] == [{"text": "A heart rate that is faster than normal.", "source": "PMID:1"}]
    assert body["parents"] == [{"code": "T:1", "display": "Abnormality of the cardiovascular system"}]
    assert body["children"] == []
    assert body["xrefs"] == ["UMLS:C0039231"]


def test_inactive_concept_points_to_its_replacement(client: TestClient) -> None:
    body = client.get("/concepts/toy/T:6").json()
    assert (body["status"], body["associations"]) == ("inactive", {"replaced_by": ["T:2"]})


def test_unknown_concept_and_system_are_404_problems(client: TestClient) -> None:
    response = client.get("/concepts/toy/T:404")
    assert response.status_code == 404
    assert response.json() == {
        "type": "/problems/not-found",
        "title": "Not found",
        "status": 404,
        "detail": "code: 'T:404' is not a code of toy 2025-01-16",
        "param": "code",
    }
    assert client.get("/concepts/nope/X").json()["detail"] == "system: unknown code system 'nope'; loaded: toy, toyicd"


def test_unknown_route_is_a_problem(client: TestClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert response.json() == {
        "type": "/problems/not-found", "title": "Not found", "status": 404, "detail": "no route serves this path"
    }


def test_health_and_ready(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "ok"}
    ready = client.get("/ready")
    assert ready.status_code == 200
    body = ready.json()
    assert body["ready"] is True
    assert body["checks"]["bundle"]["encoder"] == "fake-hash-32"
    ranker = body["checks"]["bundle"]["ranker"]  # the feature set and the model version travel with the bundle
    shipped = Calibration.load()
    assert ranker == {
        "model": "logistic",
        "version": shipped.version,
        "features": list(FEATURES),
        "fitted_on": shipped.fitted_on,
        "recalibration": {
            "scale": shipped.recalibration[0],
            "offset": shipped.recalibration[1],
            "fitted_on": shipped.recalibrated_on,
        },
    }
    assert len(ranker["version"]) == 12 and Calibration(shipped.weights, shipped.bias + 1).version != ranker["version"]
    assert body["checks"]["store"] == {"up": True}


def test_without_bundle_search_is_503_and_not_ready(settings: Settings) -> None:
    migrate(settings.store.url)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        response = client.get("/search", params={"q": "heart"})
        assert response.status_code == 503
        assert response.json()["detail"].startswith("no search bundle is loaded: no bundle in")
        ready = client.get("/ready")
        assert ready.status_code == 503
        assert ready.json()["checks"]["bundle"]["up"] is False
