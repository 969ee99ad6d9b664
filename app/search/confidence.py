"""Calibrated confidence: the probability that a ranked concept is a right answer.

A concept's features (:data:`FEATURES`, each in [0, 1] but the centred prior: how its labels match
the query, how common it is, and how its name agrees with the details the query states,
:mod:`app.search.details`) are mapped to ``σ(w·f + b)``, fitted
on held-out items in two steps (:func:`fit`): the direction ``w`` by pairwise logistic
regression (a right concept against each wrong candidate of the same query: a ranking
objective), then the scale and offset by logistic regression of whether each query's top row
is right on its score (Platt scaling), so that the confidence of a top row is the probability
that it is right. ``bench/bench_ranking.py --fit`` writes it into the model directory
(``calibration.json``, beside the encoder whose cosines it scales), so every bundle built with
that model carries it (:meth:`Calibration.of_bundle`); the fit, its items and its reliability
are recorded in bench/RESULTS.md. The hybrid ranking orders
concepts by it, so the score a row shows and the threshold a caller sets (``min_confidence``)
are on one scale for every query.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.search.details import DETAIL_FEATURES
from indexer.bundle import Bundle
from indexer.encoders import SHIPPED_MODEL_DIR
from indexer.encoders.manifest import CALIBRATION_FILE

LABEL_FEATURES = (
    "cosine",  # dense: cosine of the query with the concept's nearest label
    "char",  # character 3-gram TF-IDF cosine with its most similar label
    "words",  # idf-weighted share of the query's words found in one of its labels
    "label_words",  # share of that label's words found in the query
    "code",  # 1 when the query is its code, typed in any usual form
    "rewritten",  # 1 when the features come from a rewrite of the query (spelling corrected, or
    # another terminology's name for what the query names exactly)
    "cosine_top",  # the cosine when it is the highest among the query's candidates, else 0
    "char_top",  # for a query with a word the labels do not hold (a misspelling), the char
    # similarity when it is the highest among the candidates, else 0: a misspelling's right
    # concept is the one nearest in characters even when another is nearer in meaning
    "prior",  # how common the concept is: of the diseases annotated with it, log(1 + n) / log(1 + max n)
    # less its count-weighted mean, about -0.6 to 0.4 (indexer.knowledge.hpoa; 0 in a system without
    # annotations); its weight is chosen on the development sets (bench/bench_prior.py), not fitted:
    # the fit's generated items pick concepts uniformly
)
FEATURES = LABEL_FEATURES + DETAIL_FEATURES  # and the details the query states against the concept's name
PRIOR = FEATURES.index("prior")
SHIPPED_CALIBRATION = SHIPPED_MODEL_DIR / CALIBRATION_FILE  # in a model directory, so in every bundle built with it


@dataclass(frozen=True)
class Calibration:
    weights: tuple[float, ...]
    bias: float
    fitted_on: str = ""  # what the items were (recorded with the fit)
    # A second Platt step, (scale, offset) of the logit, fitted on the top rows of real queries as
    # well as generated ones (bench/bench_recalibration.py): the generated items never equal a label,
    # so alone they leave an exact match of an everyday phrasing at 0.8 when it is right 19 times in
    # 20. Monotone: it changes no order of a query's candidates, only the confidence shown and compared
    # with thresholds; the ascent's margin is on the ranker's own scale (:meth:`own_scale`).
    recalibration: tuple[float, float] = (1.0, 0.0)
    recalibrated_on: str = ""

    @property
    def version(self) -> str:
        """A digest of the features, weights, bias and recalibration: two rankers answer alike exactly when it is equal."""
        body = {"features": list(FEATURES), "weights": list(self.weights), "bias": self.bias}
        if self.recalibration != (1.0, 0.0):
            body["recalibration"] = list(self.recalibration)
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]

    def describe(self) -> dict[str, object]:
        """What ``/ready`` shows of the ranker."""
        return {
            "model": "logistic",
            "version": self.version,
            "features": list(FEATURES),
            "fitted_on": self.fitted_on,
            "recalibration": {"scale": self.recalibration[0], "offset": self.recalibration[1], "fitted_on": self.recalibrated_on},
        }

    @property
    def prior_weight(self) -> float:
        """The prior's weight, chosen on real queries (bench/bench_prior.py), kept by a refit (:func:`fit`)."""
        return self.weights[PRIOR]

    def logit(self, features: np.ndarray) -> np.ndarray:
        return features @ np.asarray(self.weights, dtype=np.float32) + self.bias

    def confidence(self, features: np.ndarray) -> np.ndarray:
        return self.stepped(self.logit(features))

    def stepped(self, logit: np.ndarray) -> np.ndarray:
        """The confidence of a ranker logit: σ(a·z + b), the recalibration step applied."""
        scale, offset = self.recalibration
        return 1.0 / (1.0 + np.exp(-(scale * logit + offset)))

    def own_scale(self, confidence: float) -> float:
        """A confidence as the ranker's own fit gave it, before the recalibration step (margins that
        were chosen on that scale, the ascent's, keep their meaning)."""
        scale, offset = self.recalibration
        clipped = min(max(confidence, 1e-9), 1 - 1e-9)
        return float(1.0 / (1.0 + np.exp(-(np.log(clipped / (1 - clipped)) - offset) / scale)))

    def save(self, path: Path) -> None:
        body = {"features": list(FEATURES), "weights": list(self.weights), "bias": self.bias, "fitted_on": self.fitted_on}
        if self.recalibration != (1.0, 0.0):
            body |= {"recalibration": list(self.recalibration), "recalibrated_on": self.recalibrated_on}
        path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def of_bundle(cls, bundle: Bundle) -> Calibration:
        """The calibration stored with the bundle (fitted with its model), else the shipped model's."""
        stored = bundle.model_dir / CALIBRATION_FILE
        return cls.load(stored if stored.is_file() else SHIPPED_CALIBRATION)

    @classmethod
    def load(cls, path: Path = SHIPPED_CALIBRATION) -> Calibration:
        body = json.loads(path.read_text(encoding="utf-8"))
        if tuple(body["features"]) != FEATURES:
            raise ValueError(f"{path}: fitted on features {body['features']}, the core computes {list(FEATURES)}")
        scale, offset = body.get("recalibration", (1.0, 0.0))
        return cls(
            tuple(float(w) for w in body["weights"]),
            float(body["bias"]),
            body.get("fitted_on", ""),
            (float(scale), float(offset)),
            body.get("recalibrated_on", ""),
        )


def fit(groups: list[tuple[np.ndarray, int | None]], fitted_on: str, *, prior_weight: float) -> Calibration:
    """Fit on queries: each is its candidates' features and the index of the right one (None
    when no candidate is right, as for a nonsense query). The prior's weight is not fitted but
    kept (``prior_weight``, chosen on real queries by bench/bench_prior.py): generated items pick
    their concepts uniformly, so that how common a concept is tells nothing about them."""
    from sklearn.linear_model import LogisticRegression

    fitted = np.arange(len(FEATURES)) != PRIOR
    pairs = [
        features[right, fitted] - features[np.arange(len(features)) != right][:, fitted]
        for features, right in groups
        if right is not None
    ]
    differences = np.concatenate(pairs)
    x = np.concatenate([differences, -differences])
    y = np.r_[np.ones(len(differences)), np.zeros(len(differences))]
    direction = np.zeros(len(FEATURES))
    direction[fitted] = LogisticRegression(C=1.0, fit_intercept=False, max_iter=2000).fit(x, y).coef_[0]
    tops, right = [], []
    for features, answer in groups:
        scores = features @ direction
        tops.append(scores.max())
        right.append(int(answer is not None and int(np.argmax(scores)) == answer))
    platt = LogisticRegression(C=100.0, max_iter=2000).fit(np.asarray(tops).reshape(-1, 1), right)
    weights = direction * float(platt.coef_[0][0])
    weights[~fitted] = prior_weight
    return Calibration(tuple(float(w) for w in weights), float(platt.intercept_[0]), fitted_on)
