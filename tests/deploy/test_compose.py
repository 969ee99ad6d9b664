"""docker-compose.yml: valid to Docker Compose itself (its `config`, no engine needed), and the
shape that matters: healthchecks, start order, named volumes, matching Elasticsearch versions,
settings the app accepts, and every setting documented in .env.example."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest
from elasticsearch import __versionstr__ as client_version
from pydantic import BaseModel, ValidationError

from app.settings import Settings
from tests.deploy.tools import REPO, compose_binary


def _config(*files: str, env_file: str = ".env.example") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGRES_", "TERMSEARCH_", "ES_"))}
    args = [str(compose_binary()), "--env-file", env_file]
    for name in files:
        args += ["--file", name]
    command = [*args, "config", "--format", "json"]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    result = _config("docker-compose.yml")
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    assert set(config["volumes"]) == {"pgdata", "esdata", "data"}
    return config["services"]


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    return {v["target"]: v["source"] for v in service["volumes"] if v["type"] == "volume"}


def test_services_start_in_order_on_health(services: dict[str, Any]) -> None:
    assert set(services) == {"db", "elasticsearch", "indexer", "api"}
    healthy = {"condition": "service_healthy", "required": True}
    assert services["indexer"]["depends_on"] == {"db": healthy, "elasticsearch": healthy}
    assert services["api"]["depends_on"] == {
        "db": healthy,
        "elasticsearch": healthy,
        "indexer": {"condition": "service_completed_successfully", "required": True},
    }
    for name in ("db", "elasticsearch", "api"):
        assert services[name]["healthcheck"]["test"], name
    assert services["indexer"]["restart"] == "no"
    assert services["indexer"]["command"] == ["python", "-m", "indexer", "setup"]


def test_images_and_volumes(services: dict[str, Any]) -> None:
    assert services["db"]["image"].startswith("postgres:")
    assert _mounts(services["db"]) == {"/var/lib/postgresql/data": "pgdata"}
    assert _mounts(services["elasticsearch"]) == {"/usr/share/elasticsearch/data": "esdata"}
    assert _mounts(services["indexer"]) == _mounts(services["api"]) == {"/data": "data"}
    assert (services["indexer"]["build"]["target"], services["api"]["build"]["target"]) == ("training", "api")
    assert services["api"]["ports"][0]["target"] == 8000


def test_elasticsearch_node_is_explicit_and_matches_the_client(services: dict[str, Any]) -> None:
    node = services["elasticsearch"]
    image, tag = node["image"].rsplit(":", 1)
    assert image == "docker.elastic.co/elasticsearch/elasticsearch"
    assert tag.split(".")[0] == client_version.split(".")[0], "server and client major versions differ"
    env = node["environment"]
    assert env["discovery.type"] == "single-node"
    assert env["xpack.security.enabled"] == "false"  # stated, not left to the image's default
    heap = env["ES_JAVA_OPTS"].split()
    assert heap[0].removeprefix("-Xms") == heap[1].removeprefix("-Xmx") == "1g"
    assert "ports" not in node  # only the compose network reaches it while security is off


def test_app_settings_from_the_compose_environment_are_valid_once_the_example_key_is_replaced(
    services: dict[str, Any], monkeypatch
) -> None:
    env = services["api"]["environment"]
    assert env == services["indexer"]["environment"]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError, match="holds the placeholder"):
        Settings(_env_file=None)
    monkeypatch.setenv("TERMSEARCH_API__API_KEYS", "0123456789abcdef0123456789abcdef")
    settings = Settings(_env_file=None)
    assert settings.store.url == "postgresql+psycopg://termsearch:change-me@db:5432/termsearch"
    assert (settings.lexical.backend, settings.elasticsearch.url) == ("elasticsearch", "http://elasticsearch:9200")


def test_gpu_override_builds_the_cuda_variant_and_reserves_a_gpu() -> None:
    result = _config("docker-compose.yml", "docker-compose.gpu.yml")
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    for name in ("indexer", "api"):
        assert services[name]["build"]["args"] == {"VARIANT": "gpu"}
        (device,) = services[name]["deploy"]["resources"]["reservations"]["devices"]
        assert (device["driver"], device["capabilities"]) == ("nvidia", ["gpu"])


@pytest.mark.parametrize(
    ("given", "missing"),
    [("TERMSEARCH_API__API_KEYS=0123456789abcdef\n", "POSTGRES_PASSWORD"), ("POSTGRES_PASSWORD=change-me\n", "TERMSEARCH_API__API_KEYS")],
)
def test_a_database_password_and_api_keys_are_required(tmp_path, given: str, missing: str) -> None:  # noqa: ANN001
    """One required variable left out at a time: compose names whichever it meets first."""
    env = tmp_path / "partial.env"
    env.write_text(given)
    result = _config("docker-compose.yml", env_file=str(env))
    assert result.returncode != 0
    assert f"set {missing} in .env" in result.stderr


def _variables(model: BaseModel, prefix: str = "TERMSEARCH_") -> list[str]:
    names = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        key = prefix + name.upper()
        names += _variables(value, key + "__") if isinstance(value, BaseModel) else [key]
    return names


def test_env_example_documents_every_setting() -> None:
    documented = (REPO / ".env.example").read_text()
    missing = [name for name in _variables(Settings(_env_file=None)) if f"{name}=" not in documented]
    assert not missing, f".env.example does not document {missing}"
