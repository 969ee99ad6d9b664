"""Calibrated confidence: the probability that a ranked concept is a right answer.

A concept's features (:data:`FEATURES`, each in [0, 1]) are mapped by a logistic model,
``σ(w·f + b)``, fitted on held-out items (``bench/bench_ranking.py --fit`` writes
:data:`CALIBRATION_FILE`; the fit, its items and its reliability are recorded in
bench/RESULTS.md). The hybrid ranking orders concepts by it, so the score a row shows and the
threshold a caller sets (``min_confidence``) are on one scale for every query.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FEATURES = (
    "cosine",  # dense: cosine of the query with the concept's nearest label
    "char",  # character 3-gram TF-IDF cosine with its most similar label
    "words",  # idf-weighted share of the query's words found in one of its labels
    "label_words",  # share of that label's words found in the query
    "bm25",  # BM25 of its best label over the query's top BM25 (0 when BM25 did not find it)
    "code",  # 1 when the query is its code, typed in any usual form
    "corrected",  # 1 when the features come from the spelling-corrected query
)
CALIBRATION_FILE = Path(__file__).with_name("calibration.json")


@dataclass(frozen=True)
class Calibration:
    weights: tuple[float, ...]
    bias: float
    fitted_on: str = ""  # what the items were (recorded with the fit)

    def logit(self, features: np.ndarray) -> np.ndarray:
        return features @ np.asarray(self.weights, dtype=np.float32) + self.bias

    def confidence(self, features: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logit(features)))

    def save(self, path: Path) -> None:
        body = {"features": list(FEATURES), "weights": list(self.weights), "bias": self.bias, "fitted_on": self.fitted_on}
        path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path = CALIBRATION_FILE) -> Calibration:
        body = json.loads(path.read_text(encoding="utf-8"))
        if tuple(body["features"]) != FEATURES:
            raise ValueError(f"{path}: fitted on features {body['features']}, the core computes {list(FEATURES)}")
        return cls(tuple(float(w) for w in body["weights"]), float(body["bias"]), body.get("fitted_on", ""))


def fit(features: np.ndarray, labels: np.ndarray, fitted_on: str) -> Calibration:
    """Logistic regression of ``labels`` (1: a right answer) on the concept features."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=10.0, max_iter=2000).fit(features, labels)
    return Calibration(tuple(float(w) for w in model.coef_[0]), float(model.intercept_[0]), fitted_on)
