"""What curators approved, served at once without a rebuild: the ranking core reads it.

- **phrasings**: an approved phrasing of a concept is searched as that concept's name, as a
  bridge is ("burning behind my breastbone" → *Heartburn*); the row says so in its ``why``.
- **denials**: the labels an approved denial stops (a lent name, or every name one alignment
  lent) are never matched, by any channel, bridge or count of meanings.

The next build makes the phrasings labels and applies the denials (``indexer.knowledge.learned``);
the overlay then says again what the bundle says, which changes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import Engine, func, select
from sqlalchemy.exc import SQLAlchemyError

from indexer.bundle import Bundle
from indexer.knowledge.learned import DENIAL, DESIGNATION, Learned, approved, read
from indexer.lexical.normalise import fold, name_key
from indexer.store.models import LearnedRow

if TYPE_CHECKING:
    from app.search.service import SearchService

log = logging.getLogger("termsearch")

MAX_PHRASINGS = 3  # concepts one query may be taught to mean


@dataclass(frozen=True)
class Taught:
    """An approved phrasing of a concept of the bundle."""

    row: int
    text: str
    origin: str


class Overlay:
    def __init__(self, bundle: Bundle, learned: list[Learned], stamp: int | None = None) -> None:
        self.stamp = stamp  # the latest decision it holds (None: none)
        self.phrasings: dict[str, list[Taught]] = defaultdict(list)
        for item in approved(learned, DESIGNATION):
            row = bundle.concept_index(item.system, item.code)
            if row is not None and len(self.phrasings[item.key]) < MAX_PHRASINGS:
                self.phrasings[item.key].append(Taught(row, item.text, item.origin))
        denied: set[int] = set()
        for item in approved(learned, DENIAL):
            row = bundle.concept_index(item.system, item.code)
            if row is not None:
                denied |= _denied_labels(bundle, row, item)
        self.denied_labels = frozenset(denied)
        self.denied = np.fromiter(sorted(denied), dtype=np.int64, count=len(denied)) if denied else None
        self.size = sum(map(len, self.phrasings.values()))

    @classmethod
    def empty(cls, bundle: Bundle) -> Overlay:
        return cls(bundle, [])

    def taught(self, query: str) -> list[Taught]:
        """The concepts ``query`` was taught to mean (up to case, word order and punctuation)."""
        return self.phrasings.get(name_key(query), [])


def _denied_labels(bundle: Bundle, row: int, item: Learned) -> set[int]:
    """The labels of concept ``row`` a denial stops: the name (where a knowledge source gave it),
    or every name the denied alignment lent."""
    labels = bundle.concept_labels(row)
    lender = item.lender
    if lender is not None:
        prefix = f"via {lender[0].upper()} {lender[1]} "
        return {label for label in labels if (bundle.label_origin[label] or "").startswith(prefix)}
    return set(given_labels(bundle, row, item.text))


def given_labels(bundle: Bundle, row: int, name: str) -> list[int]:
    """The labels ``name`` (up to case) of concept ``row`` that a knowledge source gave: those a
    curator may deny (never a name the terminology states)."""
    folded = fold(name).strip()
    return [
        label
        for label in bundle.concept_labels(row)
        if bundle.label_knowledge[label] is not None and fold(bundle.label_text[label] or "").strip() == folded
    ]


class Learning:
    """Keeps a service's overlay in step with the store's decisions: re-read when a decision was
    recorded since (by this process or another worker) or the service is new (a bundle swap)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()

    def apply(self, service: SearchService | None) -> None:
        if service is None:
            return
        with self._lock:
            with self.engine.connect() as conn:
                latest = conn.execute(select(func.max(LearnedRow.id))).scalar()
            if latest != service.overlay.stamp:
                service.overlay = Overlay(service.bundle, read(self.engine), latest)

    def refresh(self, service: SearchService | None) -> None:
        """:meth:`apply`, off the request path (start-up, the bundle watcher): never raises (the
        overlay it has keeps serving while the store does not answer)."""
        try:
            self.apply(service)
        except SQLAlchemyError as exc:
            log.warning("learned knowledge not re-read: the store did not answer (%s)", type(exc).__name__)
