"""The Dockerfile: hadolint-clean, an API image without torch, non-root, with a healthcheck, and
every file it copies present and not excluded by .dockerignore."""

from __future__ import annotations

import fnmatch
import json
import logging.config
import re
import subprocess
import tomllib

from tests.deploy.tools import REPO, hadolint_binary

DOCKERFILE = (REPO / "Dockerfile").read_text()


def _stages() -> dict[str, str]:
    """Stage name -> its instructions."""
    parts = re.split(r"^FROM\s+\S+\s+AS\s+(\S+)\s*$", DOCKERFILE, flags=re.MULTILINE | re.IGNORECASE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_hadolint_finds_nothing() -> None:
    result = subprocess.run(
        [hadolint_binary(), "--no-color", "Dockerfile"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_api_image_installs_no_torch() -> None:
    stages = _stages()
    assert re.search(r'pip install --no-cache-dir "\.\[app,elasticsearch\]"', stages["api-venv"])
    assert "COPY --from=api-venv /opt/venv /opt/venv" in stages["api"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    serving = project["dependencies"] + extras["app"] + extras["elasticsearch"]
    heavy = [d for d in serving if re.match(r"(torch|transformers|sentence-transformers)\b", d)]
    assert not heavy, heavy
    assert "torch==2.13.0" in stages["training-venv"]


def test_final_images_run_as_a_user_and_the_api_checks_its_health() -> None:
    stages = _stages()
    assert list(stages)[-1] == "api"  # the default target
    for name in ("api", "training"):
        assert re.search(r"^USER 10001:10001$", stages[name], flags=re.MULTILINE), name
    healthcheck = re.search(r"^HEALTHCHECK .*CMD \[(.*)\]$", stages["api"].replace("\\\n", " "), flags=re.MULTILINE)
    probe = json.loads(f"[{healthcheck.group(1)}]")
    assert probe[:2] == ["python", "-c"] and "/health" in probe[2]
    compile(probe[2], "healthcheck", "exec")
    assert "--log-config" in stages["api"]
    logging.config.dictConfig(json.loads((REPO / "docker" / "logging.json").read_text()))


def test_the_variant_script_accepts_cpu_and_gpu_only() -> None:
    script = REPO / "docker" / "variant.sh"
    assert subprocess.run(["sh", str(script), "cpu"], check=False).returncode == 0
    wrong = subprocess.run(["sh", str(script), "tpu"], capture_output=True, text=True, check=False)
    assert (wrong.returncode, wrong.stderr.strip()) == (2, "VARIANT must be cpu or gpu, not 'tpu'")
    assert "onnxruntime-gpu" in script.read_text() and "faiss-gpu" in script.read_text()


def test_copied_files_exist_and_reach_the_build_context() -> None:
    ignored = [line for line in (REPO / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    sources = [
        source
        for args in re.findall(r"^COPY (?!--from)(.+)$", DOCKERFILE, flags=re.MULTILINE)
        for source in args.split()[:-1]
    ]
    assert sources
    for source in sources:
        assert (REPO / source).exists(), source
        assert not any(fnmatch.fnmatch(source, pattern) for pattern in ignored), source
