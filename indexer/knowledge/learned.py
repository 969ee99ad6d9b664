"""What users taught the service, as a curator decided it (the store's ``learned`` table,
written by ``app/feedback``): approved phrasings become labels, approved denials stop a lent name
or an alignment, in every build after the decision (the app serves them at once as an overlay).

A denial of a name removes it from its concept (only a name a knowledge source gave, never one
the terminology states); a denial of an alignment (``lent_by`` names the origin its lent names
share, ``via HPO HP:0002020 ...``) stops the alignment before it lends, as a ``corrections.tsv``
row does.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import Engine, select

from indexer.catalog import Catalog
from indexer.knowledge.corrections import Correction
from indexer.records import Designation, DesignationUse
from indexer.store.models import LearnedRow

KNOWLEDGE = "learned"  # the labels' knowledge source
LABEL_TYPE = "learned"  # their kind, as a row's why names it
DESIGNATION, DENIAL = "designation", "denial"
APPROVED, REJECTED = "approved", "rejected"
_LENDER = re.compile(r"via (\S+) (\S+) ")  # the concept an alignment lent names from, in their origin


@dataclass(frozen=True)
class Learned:
    """One decided item: the latest decision on it."""

    kind: str
    system: str
    code: str
    text: str
    key: str
    lent_by: str | None
    decision: str
    count: int
    reviewer: str
    decided_at: datetime

    @property
    def origin(self) -> str:
        """Where a learned label came from, as its rows show it."""
        return f"learned from use: {self.count} choices, approved by {self.reviewer} on {self.decided_at:%Y-%m-%d}"

    @property
    def lender(self) -> tuple[str, str] | None:
        """(system, code) of the concept a denied alignment lent names from."""
        found = _LENDER.match(self.lent_by or "")
        return (found[1].lower(), found[2]) if found else None


def read(engine: Engine) -> list[Learned]:
    """The latest decision on each item (kind, system, code, key), oldest first."""
    latest: dict[tuple[str, str, str, str], Learned] = {}
    with engine.connect() as conn:
        for row in conn.execute(select(LearnedRow).order_by(LearnedRow.id)).mappings():
            item = Learned(**{name: row[name] for name in Learned.__dataclass_fields__})
            latest[(item.kind, item.system, item.code, item.key)] = item
    return list(latest.values())


def approved(learned: Sequence[Learned], kind: str) -> list[Learned]:
    return [item for item in learned if item.kind == kind and item.decision == APPROVED]


def digest(learned: Sequence[Learned]) -> str:
    """What the build depends on: the approved items (a new approval makes a new bundle)."""
    rows = [asdict(item) | {"decided_at": item.decided_at.isoformat()} for item in learned if item.decision == APPROVED]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def corrections(learned: Sequence[Learned]) -> list[Correction]:
    """The approved denials as corrections: an alignment's (by the concept it lent from) or a name's."""
    out = []
    for item in approved(learned, DENIAL):
        reason = f"flagged by users {item.count} times; denied by {item.reviewer} on {item.decided_at:%Y-%m-%d}"
        lender = item.lender
        if lender is not None:
            out.append(Correction("alignment", item.system, item.code, " ".join(lender), reason, 0))
        else:
            out.append(Correction("designation", item.system, item.code, item.text, reason, 0))
    return out


def add_designations(catalog: Catalog, learned: Sequence[Learned]) -> int:
    """Add each approved phrasing to its concept; how many were added (a concept may hold it already)."""
    added = 0
    for item in approved(learned, DESIGNATION):
        entry = catalog.get(item.system, item.code)
        if entry is not None:
            designation = Designation(item.text, DesignationUse.SYNONYM, "en", "EXACT", LABEL_TYPE, True, item.origin, KNOWLEDGE)
            added += entry.add(designation)
    return added
