"""The curator's review queue, worked out from the feedback events, and the decisions on it.

- **proposals**: a phrasing users chose one concept for at least ``min_choices`` times where the
  ranking did not put it first: approve it (as typed, or edited: another text or code) and it
  becomes a learned designation;
- **flags**: a name users said does not belong to its concept (a lent name, a table's row), or
  an alignment that lent wrong names: approve the flag and the name (or every name the
  alignment lent) is denied;
- **unanswered**: queries users left without choosing, how often nothing was found at all.

A decided item (approved, rejected or edited) is never proposed again. Decisions are rows of
the store's ``learned`` table, with who and when (:mod:`indexer.knowledge.learned`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import Engine, and_, case, func, insert, or_, select

from app.errors import InvalidParameter
from app.feedback.events import Action, Wrong
from app.feedback.overlay import given_labels
from app.settings import FeedbackSettings
from app.tables import FeedbackEventRow
from indexer.bundle import Bundle
from indexer.knowledge import learned
from indexer.lexical.normalise import name_key
from indexer.store.models import LearnedRow

EDITED = "edited"  # a proposal approved in another form: the form approved is its own row
EXAMPLES = 5


@dataclass(frozen=True)
class Decision:
    kind: str  # learned.DESIGNATION (a proposal) or learned.DENIAL (a flag)
    system: str
    code: str
    text: str  # the proposal's phrasing, or the flagged name
    approve: bool
    wrong: Wrong = Wrong.NAME  # a flag's: the name, or the alignment that lent it
    edit_text: str | None = None  # a proposal approved as another phrasing
    edit_code: str | None = None  # ... or for another concept of the same system
    note: str | None = None


class Review:
    def __init__(self, engine: Engine, settings: FeedbackSettings) -> None:
        self.engine = engine
        self.settings = settings

    def queue(self, bundle: Bundle) -> dict[str, list[dict[str, Any]]]:
        decided = {(item.kind, item.system, item.code, item.key) for item in learned.read(self.engine)}
        return {
            "proposals": self._proposals(bundle, decided),
            "flags": self._flags(bundle, decided),
            "unanswered": self._unanswered({key for kind, _, _, key in decided if kind == learned.DESIGNATION}),
        }

    def _proposals(self, bundle: Bundle, decided: set[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
        e = FeedbackEventRow
        count = func.count()
        query = (
            select(e.system, e.code, e.query_key, count, func.max(e.query), func.min(e.rank), func.max(e.rank))
            .where(e.action == Action.CHOSE, e.system.is_not(None), e.code.is_not(None), or_(e.rank.is_(None), e.rank > 1))
            .group_by(e.system, e.code, e.query_key)
            .having(count >= self.settings.min_choices)
            .order_by(count.desc())
        )
        out = []
        with self.engine.connect() as conn:
            for system, code, key, times, text, best, worst in conn.execute(query):
                row = bundle.concept_index(str(system), str(code))
                if row is None or (learned.DESIGNATION, system, code, key) in decided:
                    continue
                display = bundle.concepts[row].display
                out.append(
                    {
                        "system": system,
                        "code": code,
                        "display": display,
                        "text": text,
                        "key": key,
                        "count": times,
                        "ranks": [best, worst],
                    }
                )
                if len(out) == self.settings.max_queue:
                    break
        return out

    def _flags(self, bundle: Bundle, decided: set[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
        e = FeedbackEventRow
        count = func.count()
        query = (
            select(e.system, e.code, e.label, e.wrong, count, func.max(e.reason))
            .where(e.action == Action.FLAGGED, e.system.is_not(None), e.code.is_not(None), e.label.is_not(None))
            .group_by(e.system, e.code, e.label, e.wrong)
            .order_by(count.desc())
        )
        merged: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for system, flagged, label, wrong, times, reason in conn.execute(query):
                system, label = str(system), str(label)  # not null (the where clause)
                row = bundle.concept_index(system, str(flagged))
                held = _holder(bundle, row, label) if row is not None else None
                holder, origin = held if held is not None else (row, None)
                key = name_key(label)
                if holder is None or (learned.DENIAL, system, code := bundle.concepts[holder].code, key) in decided:
                    continue
                item = merged.setdefault(
                    (system, code, key, str(wrong)),
                    {"system": system, "code": code, "display": bundle.concepts[holder].display, "label": label, "key": key,
                     "wrong": wrong, "count": 0, "reasons": [], "origin": origin},
                )  # fmt: skip
                item["count"] += times
                if reason and len(item["reasons"]) < EXAMPLES:
                    item["reasons"].append(reason)
        return sorted(merged.values(), key=lambda item: -item["count"])[: self.settings.max_queue]

    def _unanswered(self, taught: set[str]) -> list[dict[str, Any]]:
        """Queries left without a choice, but those a curator has since decided a phrasing for."""
        e = FeedbackEventRow
        count = func.count()
        nothing = func.sum(case((e.shown == 0, 1), else_=0))
        left = [e.action == Action.ABANDONED, *([e.query_key.not_in(taught)] if taught else [])]
        query = (
            select(e.query_key, func.max(e.query), count, nothing)
            .where(*left)
            .group_by(e.query_key)
            .order_by(count.desc())
            .limit(self.settings.max_queue)
        )
        with self.engine.connect() as conn:
            return [
                {"text": text, "key": key, "count": times, "nothing_found": int(none or 0)}
                for key, text, times, none in conn.execute(query)
            ]

    def decide(self, bundle: Bundle, decision: Decision, reviewer: str) -> list[learned.Learned]:
        """Record ``decision`` by ``reviewer``; the rows written (an edited proposal: two)."""
        row = _concept(bundle, decision.system, decision.code, "code")
        now = datetime.now(UTC)
        key = name_key(decision.text)
        if decision.kind == learned.DENIAL and not decision.approve:  # the flag dismissed: the name stays
            rows = [self._row(decision, key, decision.text, decision.code, None, 0, reviewer, now)]
        elif decision.kind == learned.DENIAL:
            held = _holder(bundle, row, decision.text)
            if held is None:
                raise InvalidParameter(
                    f"text: {decision.text!r} is not a name a knowledge source gave {decision.system} {decision.code}"
                    " (the terminology's own names cannot be denied)",
                    "text",
                )
            holder, origin = held
            lent_by = origin if decision.wrong is Wrong.ALIGNMENT else None
            if decision.wrong is Wrong.ALIGNMENT and not origin.startswith("via "):
                raise InvalidParameter(f"wrong: {decision.text!r} was not lent by an alignment ({origin})", "wrong")
            code = bundle.concepts[holder].code
            below = {bundle.concepts[r].code for r in bundle.subtree(holder).tolist()}  # flags on codes it descended to
            rows = [
                self._row(decision, key, decision.text, code, lent_by, self._flagged(decision.system, below, key), reviewer, now)
            ]
        else:
            times = self._chosen(decision, key)
            edited = decision.approve and (decision.edit_text or decision.edit_code)
            rows = [
                self._row(decision, key, decision.text, decision.code, None, times, reviewer, now, EDITED if edited else None)
            ]
            if edited:
                text, code = decision.edit_text or decision.text, decision.edit_code or decision.code
                _concept(bundle, decision.system, code, "edit_code")
                rows.append(self._row(decision, name_key(text), text, code, None, times, reviewer, now))
        with self.engine.begin() as conn:
            conn.execute(insert(LearnedRow), rows)
        return [learned.Learned(**{name: r[name] for name in learned.Learned.__dataclass_fields__}) for r in rows]

    @staticmethod
    def _row(  # noqa: PLR0913
        decision: Decision,
        key: str,
        text: str,
        code: str,
        lent_by: str | None,
        count: int,
        reviewer: str,
        now: datetime,
        state: str | None = None,
    ) -> dict[str, Any]:
        verdict = state or (learned.APPROVED if decision.approve else learned.REJECTED)
        return {
            "kind": decision.kind, "system": decision.system, "code": code, "text": text, "key": key[:512], "lent_by": lent_by,
            "decision": verdict, "count": count, "reviewer": reviewer, "decided_at": now, "note": decision.note,
        }  # fmt: skip

    def _chosen(self, decision: Decision, key: str) -> int:
        e = FeedbackEventRow
        where = and_(e.action == Action.CHOSE, e.system == decision.system, e.code == decision.code, e.query_key == key)
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).where(where)).scalar() or 0)

    def _flagged(self, system: str, codes: set[str], key: str) -> int:
        e = FeedbackEventRow
        where = and_(e.action == Action.FLAGGED, e.system == system, e.code.in_(codes))
        with self.engine.connect() as conn:
            labels = conn.execute(select(e.label).where(where)).scalars()
            return sum(1 for label in labels if label is not None and name_key(label) == key)


def _concept(bundle: Bundle, system: str, code: str, param: str) -> int:
    if system not in bundle.systems:
        raise InvalidParameter(f"system: unknown code system {system!r}; loaded: {', '.join(bundle.systems)}", "system")
    row = bundle.concept_index(system, code)
    if row is None:
        raise InvalidParameter(f"{param}: {code!r} is not a code of {system}", param)
    return row


def _holder(bundle: Bundle, row: int, name: str) -> tuple[int, str] | None:
    """The concept that holds the label ``name`` a knowledge source gave, and the label's origin:
    ``row`` itself, else the nearest concept above it (a code the ranking descended to from its
    category shows the category's label); None: no such label, or the terminology states it."""
    lineage = bundle.concepts.parents.closure(np.asarray([row], dtype=np.int64)).rows.tolist()
    for holder in dict.fromkeys([row, *lineage]):
        if labels := given_labels(bundle, holder, name):
            return holder, bundle.label_origin[labels[0]] or ""
    return None
