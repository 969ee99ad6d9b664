"""Calibration on a toy set: the fitted direction ranks the right candidate first, and the top
row's confidence tracks how often it is right."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app.search.confidence import FEATURES, PRIOR, Calibration, fit


def _groups(seed: int) -> list[tuple[np.ndarray, int | None]]:
    """Queries of 10 candidates; the right one has a higher first feature (cosine). A third of
    the queries have no right candidate (every cosine low)."""
    rng = np.random.default_rng(seed)
    groups: list[tuple[np.ndarray, int | None]] = []
    for number in range(300):
        features = rng.uniform(0, 0.5, size=(10, len(FEATURES))).astype(np.float32)
        if number % 3:
            right = int(rng.integers(10))
            features[right, 0] = rng.uniform(0.6, 1.0)
            groups.append((features, right))
        else:
            groups.append((features, None))
    return groups


def test_the_fit_ranks_right_answers_first_and_calibrates_the_top_row() -> None:
    calibration = fit(_groups(1), "toy", prior_weight=0.0)
    assert calibration.weights[0] > 0 and calibration.weights[0] == max(calibration.weights)
    test = _groups(2)
    tops = [
        (calibration.confidence(f).max(), right is not None and int(np.argmax(calibration.confidence(f))) == right)
        for f, right in test
    ]
    answered = [c for c, ok in tops if ok]
    unanswered = [c for (c, _), (_, right) in zip(tops, test, strict=True) if right is None]
    assert len(answered) == sum(right is not None for _, right in test)  # every right answer ranked first
    assert min(answered) > 0.5 > max(unanswered)
    confidence = np.array([c for c, _ in tops])
    correct = np.array([ok for _, ok in tops], dtype=float)
    assert abs(confidence.mean() - correct.mean()) < 0.05


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    calibration = Calibration(tuple(float(i) for i in range(len(FEATURES))), -1.5, "toy")
    calibration.save(tmp_path / "c.json")
    assert Calibration.load(tmp_path / "c.json") == calibration


def test_the_recalibration_step_keeps_the_order_moves_the_confidence_and_round_trips(tmp_path: Path) -> None:
    """σ(a·z + b) over the logit z: no order changes, the confidence does, the version says so,
    and a file without the step reads as the identity."""
    plain = Calibration(tuple(0.5 for _ in FEATURES), -2.0, "toy")
    stepped = Calibration(plain.weights, plain.bias, "toy", (1.1, 0.6), "real queries")
    features = np.random.default_rng(7).random((50, len(FEATURES)), dtype=np.float32)
    before, after = plain.confidence(features), stepped.confidence(features)
    assert (np.argsort(before) == np.argsort(after)).all() and (after > before).all()
    assert stepped.version != plain.version
    back = [stepped.own_scale(float(c)) for c in after]  # the ranker's own scale, where the ascent's margin is
    assert np.allclose(back, before, atol=1e-5)
    stepped.save(tmp_path / "stepped.json")
    assert Calibration.load(tmp_path / "stepped.json") == stepped
    plain.save(tmp_path / "plain.json")
    assert "recalibration" not in json.loads((tmp_path / "plain.json").read_text(encoding="utf-8"))
    assert Calibration.load(tmp_path / "plain.json").recalibration == (1.0, 0.0)


def test_a_calibration_of_other_features_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"features": ["cosine"], "weights": [1.0], "bias": 0.0}), encoding="utf-8")
    with pytest.raises(ValueError, match="fitted on features \\['cosine'\\], the core computes"):
        Calibration.load(path)


def test_the_shipped_calibration_matches_the_core() -> None:
    assert len(Calibration.load().weights) == len(FEATURES)


def test_the_calibration_travels_with_the_model_into_the_bundle(settings, toy_reader, tmp_path: Path) -> None:
    """A bundle built with a model directory serves that directory's calibration; a new fit in
    it makes the next build a new bundle; a bundle without one gets the shipped model's."""
    from indexer.bundle import Bundle, current_bundle
    from indexer.encoders import FakeEncoder
    from indexer.pipeline import build_bundle

    model = tmp_path / "model"
    model.mkdir()
    fitted = Calibration(tuple(0.5 for _ in FEATURES), -2.0, "toy fit")
    fitted.save(model / "calibration.json")
    first = build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], model_dir=model, show_progress=False)
    assert Calibration.of_bundle(Bundle(current_bundle(settings.bundles_dir))) == fitted
    Calibration(tuple(1.0 for _ in FEATURES), -3.0, "refit").save(model / "calibration.json")
    second = build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], model_dir=model, show_progress=False)
    assert second.built and second.bundle_id != first.bundle_id
    assert Calibration.of_bundle(Bundle(current_bundle(settings.bundles_dir))).fitted_on == "refit"
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    assert Calibration.of_bundle(Bundle(current_bundle(settings.bundles_dir))) == Calibration.load()


def test_the_fit_keeps_the_priors_weight_it_is_given_and_fits_the_rest_without_it() -> None:
    """Generated items pick concepts uniformly: the prior's weight is chosen on real queries
    (bench/bench_prior.py), and a refit neither learns it nor lets it move the other weights."""
    zeroed, noisy = _groups(1), _groups(1)
    rng = np.random.default_rng(3)
    for (plain, _), (features, right) in zip(zeroed, noisy, strict=True):
        plain[:, PRIOR] = 0.0
        features[:, PRIOR] = rng.uniform(-0.6, 0.4, size=len(features))
        if right is not None:
            features[right, PRIOR] = 0.4  # here the right concept is always the commonest
    fits = [fit(groups, "toy", prior_weight=1.25) for groups in (zeroed, noisy)]
    assert [c.prior_weight for c in fits] == [1.25, 1.25]
    others = [np.delete(np.asarray(c.weights), PRIOR) for c in fits]
    assert np.allclose(*others) and fits[0].bias == pytest.approx(fits[1].bias)
