from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from indexer.encoders import FakeEncoder

from .conftest import REPO_ROOT

TEXTS = ["fast heart rate", "Rapid heart rate", "Hearing impairment", "Café au lait spots", ""]


def test_shape_dtype_and_unit_norm() -> None:
    vectors = FakeEncoder(dimension=48).encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 48)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_identity() -> None:
    encoder = FakeEncoder(dimension=16)
    assert (encoder.id, encoder.sha256, encoder.dimension) == ("fake-hash-16", "", 16)


def test_deterministic_across_instances_and_processes() -> None:
    here = FakeEncoder().encode(TEXTS)
    np.testing.assert_array_equal(here, FakeEncoder().encode(TEXTS))
    code = (
        "import json; from indexer.encoders import FakeEncoder; "
        f"print(json.dumps(FakeEncoder().encode({TEXTS!r}).tolist()))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    np.testing.assert_array_equal(here, np.array(json.loads(out.stdout), dtype=np.float32))


def test_shared_words_are_closer_than_unrelated() -> None:
    query, similar, unrelated = FakeEncoder().encode(["fast heart rate", "Rapid heart rate", "Hearing impairment"])
    assert query @ similar > query @ unrelated + 0.3


def test_case_and_accents_are_normalised() -> None:
    a, b = FakeEncoder().encode(["Café", "cafe"])
    np.testing.assert_allclose(a, b)


def test_empty_inputs() -> None:
    assert FakeEncoder(dimension=8).encode([]).shape == (0, 8)
    (vector,) = FakeEncoder(dimension=8).encode([" -- "])
    assert np.linalg.norm(vector) == pytest.approx(1.0)


def test_rejects_a_single_string() -> None:
    with pytest.raises(TypeError):
        FakeEncoder().encode("fast heart rate")
