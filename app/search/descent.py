"""Codeable answers: a category-level match carries its codes.

A query often matches a category (E11 by "T2DM", S72.001 by a femoral neck fracture) while a
coder records one of its billable codes: the one the query's details select, else the one that
adds nothing the query does not say (E11.9 *without complications*; for an injury the initial
encounter, as a coder codes an injury seen for the first time). :meth:`Descent.code` picks it:
the code the release names as the category itself ("Parkinson's disease NOS" is G20.A1's) when
nothing the query states selects another; else, among the billable codes below, the one whose
name agrees with the details stated
(:mod:`app.search.details`), adds the words the query says (in its name or its inclusion terms) and the fewest it does not
(a qualifier it only negates, "not intractable", is the default and weighs little).

With ``billable=true`` every non-billable row becomes its code; otherwise the code is listed right
before its category (a category's code answers whatever the category answers, and is the one to record).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from app.search.details import DETAIL_FEATURES, Details, agreement
from app.search.values import Ranked
from indexer.bundle import Bundle
from indexer.lexical.normalise import UNSPECIFIED, fold, label_key, tokens

MAX_BELOW = 600  # codes below a category searched for its billable ones, in code order
NEUTRAL = frozenset(tokens("unspecified without not no non complications complication NOS initial encounter closed"))
# The words of an axis a name leaves unspecified ("Gastric ulcer, unspecified as acute or chronic, ...",
# "..., unspecified as to partial versus complete obstruction"): the default, no kind it adds.
_UNSPECIFIED_AXIS = re.compile(r"\bunspecified as (?:to )?(.+?)(?=,|\s+without\b|\s+with\b|$)")
OTHER = frozenset(tokens("other specified"))  # "Other [specified] ...": specified, but not as a code of its own
SHOWN = 3  # top rows whose codes are listed before them when billable codes are not required
# A part of the body said where a category's codes name only the region or organ it belongs to, or
# name it by another word: those words said ("gout in the right big toe" is M10.071 *Idiopathic gout,
# right ankle and foot*, not the first right site, the shoulder; "renal transplant" Z94.0 *Kidney
# transplant status*; "hx colon ca" Z85.038 *... of large intestine*), unless a code names the part
# itself (M79.674 *Pain in right toe(s)*).
_REGION_OF = {
    **dict.fromkeys(tokens("toe hallux mtp heel sole instep feet"), tokens("foot")),
    **dict.fromkeys(tokens("finger thumb knuckle palm mcp"), tokens("hand")),
    **dict.fromkeys(tokens("calf shin"), tokens("leg")),
    **dict.fromkeys(tokens("renal nephric"), tokens("kidney")),
    **dict.fromkeys(tokens("hepatic"), tokens("liver")),
    **dict.fromkeys(tokens("pulmonary"), tokens("lung")),
    **dict.fromkeys(tokens("cardiac"), tokens("heart")),
    **dict.fromkeys(tokens("gastric"), tokens("stomach digestive")),
    **dict.fromkeys(tokens("colon colonic cecum caecum sigmoid bowel colorectal"), tokens("large intestine digestive")),
    **dict.fromkeys(tokens("esophagus esophageal pancreas pancreatic rectum rectal"), tokens("digestive")),
}


class Descent:
    def __init__(
        self,
        bundle: Bundle,
        detail_weights: tuple[float, ...],
        details: Callable[[int], Details],
        ascent_margin: float = 0.0,
        own_scale: Callable[[float], float] = lambda confidence: confidence,
    ) -> None:
        self.bundle = bundle
        self.ascent_margin = ascent_margin  # on the ranker's own scale (``own_scale`` of a row's confidence)
        self.own_scale = own_scale
        self.weights = np.asarray(detail_weights, dtype=np.float32)
        self.details = details  # a concept's name's details, cached by the features stage
        self._below = lru_cache(maxsize=4096)(self._billable_below)
        self._tokens = lru_cache(maxsize=50_000)(lambda row: frozenset(tokens(bundle.concepts[row].display)))
        self._named = lru_cache(maxsize=50_000)(self._release_tokens)
        self._codes = lru_cache(maxsize=16_384)(self._codes_below)
        self._detail_score = lru_cache(maxsize=65_536)(self._weighed_agreement)
        # Systems that say which codes are billable (ICD-10-CM): the others have no codes to descend to.
        self.coded = frozenset(key for key in bundle.systems if _any_billable(bundle, bundle.rows(key, True)))

    def _weighed_agreement(self, stated: Details, named: Details) -> float:
        return float(np.dot(self.weights, agreement(stated, named, True)))

    def _billable_below(self, row: int) -> np.ndarray:
        bundle = self.bundle
        below = bundle.subtree(row)[:MAX_BELOW]
        return below[bundle.billable[below] & bundle.concepts.active[below] & (below != row)]

    def _release_names(self, row: int) -> list[str]:
        """A concept's names in its release: the preferred name and the inclusion terms (I50.9
        *Heart failure, unspecified* is also "Congestive heart failure NOS")."""
        bundle = self.bundle
        return [bundle.label_text[i] or "" for i in bundle.concept_labels(row) if bundle.label_knowledge[i] is None]

    def _release_tokens(self, row: int) -> frozenset[str]:
        """The words of a concept's names in its release (:meth:`_release_names`)."""
        return frozenset(tokens(" ".join(self._release_names(row))))

    def _inherited(self, child: int, top: int) -> frozenset[str]:
        """The words of the release's names of ``child``'s ancestors below ``top``: an inclusion term
        of a subcategory applies to every code under it (S72.00's "Fracture of hip NOS" to S72.001A)."""
        words: set[str] = set()
        node = child
        while (parents := self.bundle.concepts.parents[node].tolist()) and parents[0] != top:
            node = parents[0]
            words |= self._named(node)
        return frozenset(words)

    def named_by(self, row: int, stated: Details, query_tokens: frozenset[str], mask: np.ndarray) -> int:
        """The concept whose name's details stand for ``row``'s: a category's billable code that the
        query's details select ("R hip fx, init": S72.00's S72.001A agrees on the side and the
        encounter as S72.00 cannot), else the row itself."""
        if self.bundle.billable[row] or self.bundle.concepts[row].system not in self.coded:
            return row
        found = self.code(row, stated, query_tokens, mask)
        return row if found is None else found

    def code(
        self, row: int, stated: Details, query_tokens: frozenset[str], mask: np.ndarray, label: int | None = None
    ) -> int | None:
        """The billable code below ``row`` (admitted by ``mask``) the query's details select; with
        ``label`` (the one ``row`` was found by), a code that carries its text counts it as a word the
        query says ("DVT" found I82.40 and names I82.409, unless a side the query states selects another)."""
        codes = self._codes(row)
        admitted = mask[codes.rows]
        if not admitted.any():
            return None
        # One agreement per kind of name (the codes of a category share their details by the dozen).
        detail = np.asarray([self._detail_score(stated, named) for named in codes.kinds])
        regions = {region for t in query_tokens if t in _REGION_OF and t not in codes.word_ids for region in _REGION_OF[t]}
        said = np.fromiter((codes.word_ids.get(t, -1) for t in query_tokens | regions), dtype=np.int64)
        # Words the code adds that the query says select it (in its name or inclusion terms); those
        # it does not say count against it, and so does a "with ..." the query does not say (a stop
        # word, so not among the words); what it only negates is the default a coder records when
        # nothing is said, and weighs little, as does "other [specified]" (the code for a kind its
        # siblings do not name: DVT's history is Z86.718 *other venous thrombosis*, not Z86.711
        # *pulmonary embolism*), and a word of an axis it leaves unspecified (K25.9 "Gastric ulcer,
        # unspecified as acute or chronic, ...", not K25.3 *Acute gastric ulcer* for "stomach ulcer").
        # Among equals, the code named "unspecified" (or NOS).
        n = len(codes.rows)
        selecting = _count(codes.selecting, said, n)
        unsaid = ~np.isin(codes.adds.words, said)
        defaults = np.bincount(codes.adds.owner[unsaid & codes.adds_default], minlength=n)
        others = np.bincount(codes.adds.owner[unsaid & ~codes.adds_default], minlength=n)
        if label is not None and (carriers := codes.carried.get(fold(self.bundle.label_text[label] or "").strip())) is not None:
            selecting[carriers] += 1  # the text that found the category names these codes: a word said
        # The code the release names as the category itself ("Parkinson's disease NOS" is G20.A1's) is
        # what the category codes to when nothing the query says selects another (not G20.C
        # *Parkinsonism, unspecified*, which adds no word).
        named_default = codes.named_default & admitted
        if named_default.any() and not ((selecting > 0) | (detail[codes.kind] > 0))[admitted].any():
            return int(codes.rows[np.flatnonzero(named_default)[0]])
        # A word said weighs as two it adds unsaid ("saddle" selects I26.92 *Saddle embolus of pulmonary
        # artery* though the query says neither "embolus" nor "artery"; chosen on the development sets).
        score = detail[codes.kind] + selecting - 0.5 * others - 0.1 * defaults - 0.3 * (codes.with_ & (not stated.with_))
        score[~admitted] = -np.inf
        best = np.flatnonzero(score >= score.max() - 1e-9)  # in code order
        unspecified = best[codes.unspecified[best]]
        return int(codes.rows[unspecified[0] if len(unspecified) else best[0]])

    def _codes_below(self, row: int) -> _Codes:
        below = self._below(row)
        parent = self._tokens(row)
        ids: dict[str, int] = {}
        kinds: dict[Details, int] = {}
        kind: list[int] = []
        selecting: list[list[int]] = []
        adds: list[list[int]] = []
        defaults: list[bool] = []
        with_: list[bool] = []
        unspecified: list[bool] = []
        carried: dict[str, list[int]] = {}
        category = label_key(self.bundle.concepts[row].display)
        named_default: list[bool] = []
        for index, child in enumerate(below.tolist()):
            for text in {fold(self.bundle.label_text[i] or "").strip() for i in self.bundle.concept_labels(child)}:
                carried.setdefault(text, []).append(index)
            named_default.append(any(label_key(text) == category for text in self._release_names(child)))
            named, words = self.details(child), self._tokens(child)
            kind.append(kinds.setdefault(replace(named, said=frozenset()), len(kinds)))  # what agreement() reads
            named_words = self._named(child) | self._inherited(child, row)
            # what it only negates ("not intractable, without status migrainosus") selects nothing
            selecting.append([ids.setdefault(t, len(ids)) for t in named_words - parent - named.negated - NEUTRAL])
            added = sorted(words - parent - NEUTRAL)
            adds.append([ids.setdefault(t, len(ids)) for t in added])
            axis = frozenset(tokens(" ".join(_UNSPECIFIED_AXIS.findall(fold(self.bundle.concepts[child].display)))))
            defaults.extend(t in named.negated or t in OTHER or t in axis for t in added)
            with_.append(named.with_)
            unspecified.append(bool(words & UNSPECIFIED))
        return _Codes(
            rows=below,
            kinds=list(kinds),
            kind=np.asarray(kind, dtype=np.int64),
            word_ids=ids,
            selecting=_Words.of(selecting),
            adds=_Words.of(adds),
            adds_default=np.asarray(defaults, dtype=bool),
            with_=np.asarray(with_, dtype=bool),
            unspecified=np.asarray(unspecified, dtype=bool),
            carried={text: np.asarray(indexes) for text, indexes in carried.items()},
            named_default=np.asarray(named_default, dtype=bool),
        )

    def apply(
        self, rows: list[Ranked], stated: Details, query: str, mask: np.ndarray, required: bool, k: int, ascend: bool = False
    ) -> list[Ranked]:
        """``rows`` with their codes: each non-billable row replaced by its code when codes are
        ``required``, else the codes of the top rows listed before them; one row per concept.
        ``ascend``: a first row more specific than the query says gives way to its parent (:meth:`_ascend`)."""
        query_tokens = frozenset(tokens(query))
        if ascend and self.ascent_margin and rows:
            rows = self._ascend(rows, query_tokens)
        out: list[Ranked] = []
        seen: set[int] = set()
        for rank, ranked in enumerate(rows):
            found = None
            coded = self.bundle.concepts[ranked.row].system in self.coded
            if coded and not self.bundle.billable[ranked.row] and (required or rank < SHOWN):
                # What the query negates it does not say: "non-intractable" says no "intractable".
                found = self.code(ranked.row, stated, query_tokens - stated.negated, mask, ranked.label)
            if found is not None and found not in seen:
                parent = self.bundle.concepts[ranked.row]
                via = f"via {parent.code} {parent.display}: its code for what the query states"
                via = f"{ranked.via}; {via}" if ranked.via else via  # how the category was found, then the descent
                out.append(replace(ranked, row=found, via=via, category=ranked.row))
                seen.add(found)
            keep = not required or (found is None and self.bundle.billable[ranked.row])
            if keep and ranked.row not in seen:
                out.append(ranked)
                seen.add(ranked.row)
        if ascend and self.ascent_margin and out:
            out = self._unspecified_first(out, query_tokens)
        return out[:k]

    def _ascend(self, rows: list[Ranked], query_tokens: frozenset[str]) -> list[Ranked]:
        """``rows`` with the first one's parent first, when the first is named as its parent with
        words added that the query does not say ("Mild microcephaly" for "her head is small") and
        the parent ranks within the margin of it: the two trade places and scores (the order stays
        the confidence's). Systems with billable codes descend instead."""
        top = rows[0]
        concept = self.bundle.concepts[top.row]
        if concept.system in self.coded:
            return rows
        within = self.own_scale(top.confidence) - self.ascent_margin
        for i, other in enumerate(rows[1:], start=1):
            if other.row in concept.parents and self.own_scale(other.confidence) >= within:
                named, parent = self._tokens(top.row), self._tokens(other.row)
                if not parent < named or not named - parent - query_tokens - NEUTRAL:
                    return rows  # not its parent's name refined, or refined only by what the query says
                return _trade(rows, i)
        return rows

    def _unspecified_first(self, rows: list[Ranked], query_tokens: frozenset[str]) -> list[Ranked]:
        """``rows`` with the first one's "unspecified" twin first, when the first is named "Other
        [specified] ..." (specified, but by nothing the query says) and a row within the margin is
        named the same with "unspecified": as a coder codes a sprain of the ankle's ligament that the
        note does not name (S93.401A, not S93.491A). They trade places and scores. The query must
        say nothing the twin's name does not (a ligament it names is what "other" is for)."""
        top = rows[0]
        named = self._tokens(top.row)
        if self.bundle.concepts[top.row].system not in self.coded or "other" not in named or query_tokens & OTHER:
            return rows
        within = self.own_scale(top.confidence) - self.ascent_margin
        for i, other in enumerate(rows[1:], start=1):
            if self.own_scale(other.confidence) < within:
                break
            twin = self._tokens(other.row)
            if twin & UNSPECIFIED and twin - UNSPECIFIED == named - OTHER and not query_tokens - twin - NEUTRAL:
                return _trade(rows, i)
        return rows


def _trade(rows: list[Ranked], i: int) -> list[Ranked]:
    """``rows`` with the first and the ``i``-th trading places and scores (the order stays the confidence's)."""
    top, other = rows[0], rows[i]
    first = replace(other, score=top.score, confidence=top.confidence)
    moved = replace(top, score=other.score, confidence=other.confidence)
    return [first, *rows[1:i], moved, *rows[i + 1 :]]


@dataclass(frozen=True)
class _Words:
    """Word ids of several codes, flat: ``words[i]`` belongs to code ``owner[i]``."""

    words: np.ndarray
    owner: np.ndarray

    @classmethod
    def of(cls, per_code: list[list[int]]) -> _Words:
        owner = np.repeat(np.arange(len(per_code)), [len(words) for words in per_code])
        return cls(np.asarray([w for words in per_code for w in words], dtype=np.int64), owner)


@dataclass(frozen=True)
class _Codes:
    """The billable codes below a category, described once for every query that descends to them."""

    rows: np.ndarray
    kinds: list[Details]  # their names' distinct details
    kind: np.ndarray  # per code, its details' index in ``kinds``
    word_ids: dict[str, int]
    selecting: _Words  # words of its names (release labels) beyond the category's, less those it only negates
    adds: _Words  # words its name adds to the category's, less the neutral ones
    adds_default: np.ndarray  # per word of ``adds``: one the name only negates, or "other", "specified"
    with_: np.ndarray  # its name says "with ..."
    unspecified: np.ndarray  # its name says "unspecified"
    carried: dict[str, np.ndarray]  # a label's folded text -> the codes (their indexes) that carry it
    named_default: np.ndarray  # a release name of it is the category's name (with NOS or "unspecified")


def _count(words: _Words, said: np.ndarray, n: int) -> np.ndarray:
    """Per code, how many of its ``words`` are ``said``."""
    return np.bincount(words.owner[np.isin(words.words, said)], minlength=n)


def _any_billable(bundle: Bundle, rows: range) -> bool:
    return bool(bundle.billable[rows.start : rows.stop].any())


def detail_weights(weights: tuple[float, ...]) -> tuple[float, ...]:
    """The calibrated weights of the detail features (the last of the features)."""
    return tuple(weights[-len(DETAIL_FEATURES) :])
