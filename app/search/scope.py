"""Where a ranking may look: systems, an is-a subtree, exclusions, kinds, billable, active."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from indexer.bundle import Bundle


@dataclass(frozen=True, eq=False)
class Scope:
    """What every surface passes to the ranking core. The defaults leave out inactive concepts
    and ICD-10-CM chapters and blocks (ranges of codes, never a code to record)."""

    systems: tuple[str, ...] = ()  # system keys; empty: every system of the bundle
    subtree: np.ndarray | None = None  # sorted catalog rows of an ancestor and all below it (Bundle.subtree)
    exclude: frozenset[int] = frozenset()  # catalog rows never returned (a source concept itself)
    kinds: frozenset[str] | None = None  # None: every kind but chapters and blocks
    billable: bool | None = None
    include_inactive: bool = False
    # Label ids never matched: leave-one-out evaluation (a query that is itself a label)
    exclude_labels: frozenset[int] = frozenset()
    # The catalog row whose is-a subtree ``subtree`` is (None: a composed set of rows): the
    # lexical index keeps to it while searching, by its labels' lineage.
    root: int | None = None
    # Whether what users taught (the approved phrasings of app.feedback's overlay) is read: off
    # where a query is itself a learned phrasing (leave-one-out evaluation).
    learned: bool = True

    def keys(self, bundle: Bundle) -> tuple[str, ...]:
        return self.systems or tuple(bundle.systems)

    def ranges(self, bundle: Bundle) -> list[tuple[int, int]]:
        """Label-id ranges to search: each system's, narrowed to the subtree's labels."""
        ranges = [bundle.systems[key].label_range(self.include_inactive) for key in self.keys(bundle)]
        if self.subtree is not None:
            span = self._subtree_span(bundle)
            ranges = [(max(a, span[0]), min(b, span[1])) for a, b in ranges]
        return [(a, b) for a, b in ranges if a < b]

    def _subtree_span(self, bundle: Bundle) -> tuple[int, int]:
        assert self.subtree is not None
        if not len(self.subtree):
            return (0, 0)
        owners = bundle.label_concept  # searched with its own dtype: another would copy it
        low, high = owners.dtype.type(self.subtree[0]), owners.dtype.type(self.subtree[-1] + 1)
        return int(np.searchsorted(owners, low)), int(np.searchsorted(owners, high))

    def mask(self, bundle: Bundle) -> np.ndarray:
        """Which catalog rows may be returned: the one admission test of every channel."""
        n = len(bundle.concepts)
        mask = np.zeros(n, dtype=bool)
        for key in self.keys(bundle):
            rows = bundle.rows(key, self.include_inactive)
            mask[rows.start : rows.stop] = True
        mask &= ~bundle.grouping if self.kinds is None else np.isin(bundle.kinds, list(self.kinds))
        if self.billable is not None:
            mask &= bundle.billable == self.billable
        if self.subtree is not None:
            inside = np.zeros(n, dtype=bool)
            inside[self.subtree] = True
            mask &= inside
        if self.exclude:
            mask[np.fromiter(self.exclude, dtype=np.int64, count=len(self.exclude))] = False
        return mask
