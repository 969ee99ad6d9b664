"""Query analysis: the texts a query is also searched as, each with why.

- a **spelling correction** of words the labels do not hold ("pnemonia" → "pneumonia");
- **bridges**: when the query is exactly a name of a concept of another loaded terminology than
  those searched ("heart attack", a layperson synonym of HPO's *Myocardial infarction*, searched
  in ICD-10-CM), that concept's preferred name, and the heading of a MeSH descriptor the query is
  an entry term of;
- the **grammar's reading** (:mod:`app.search.grammar`: shorthand, sides, history and status,
  spinal levels, pregnancy weeks) with **abbreviations** among other words written out ("old
  MI": "old myocardial infarction"), one text;
- a lay "cannot X" as the terminologies word it (:mod:`app.search.lay`).

:meth:`QueryRewriter.meanings` counts how many meanings a query names exactly, so that no row of
an ambiguous query is certain.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from app.feedback.overlay import Overlay
from app.search import grammar, lay
from app.search.scope import Scope
from app.settings import SearchSettings
from indexer.bundle import Bundle
from indexer.knowledge.term_tables import ABBREVIATIONS, Row, expansion
from indexer.lexical.normalise import STOP_WORDS, american, fold, label_key, name_key, tokens, typed_words
from indexer.lexical.vocabulary import Vocabulary

MAX_BRIDGES = 3  # concepts of other terminologies a query may bridge through
WORD_SPLIT = re.compile(r"(\W+)")
WORD = re.compile(r"[^\W_]+")
ABBREVIATING = frozenset({"abbreviation", "clinician phrasing"})  # label kinds that use abbreviations as words


class QueryRewriter:
    def __init__(self, bundle: Bundle, settings: SearchSettings) -> None:
        self.bundle = bundle
        self.settings = settings
        self.overlay = Overlay.empty(bundle)  # what curators approved (SearchService.overlay)
        self._abbreviation = lru_cache(maxsize=20_000)(self._abbreviation_of)
        self._is_abbreviation = lru_cache(maxsize=20_000)(self._abbreviation_like)
        rows = ABBREVIATIONS.read()
        # Each meaning of an abbreviation, with the words of a query that select it (the table's context).
        self.senses: dict[str, list[Row]] = defaultdict(list)
        for row in rows:
            self.senses[fold(row.text)].append(row)
        # Abbreviations that are ordinary words too: read only where written in capitals.
        self.ordinary = grammar.ORDINARY_WORDS | {fold(row.text) for row in rows if "ordinary word" in row.note}

    @property
    def vocabulary(self) -> Vocabulary:
        return self.bundle.vocabulary

    def rewrites(
        self, query: str, scope: Scope, reading: grammar.Reading, correction: str | None = None
    ) -> list[tuple[str, str]]:
        """(text, why) of what users taught ``query`` means, the bridges of ``query`` and of its
        spelling ``correction`` ("epilepsey" as "epilepsy" is) unless that is the name of a concept
        searched (the correction finds it: "Concomitant strabisnus"), the grammar's ``reading``
        (:meth:`read`) and lay wordings of ``query``, none saying what the query says or what an
        earlier one said."""
        said, in_order = {label_key(query)}, tokens(query)
        out = []
        for text, via in (
            *self.learned(query, scope),
            *self.bridges(query, scope),
            *(self.bridges(correction, scope) if correction and not self._is_display_in(correction, scope) else ()),
            *([(reading.text, f"read as '{reading.text}': {', '.join(reading.said)}")] if reading.said else []),
            *((text, f"lay wording read as '{text}'") for text in lay.rewrites(query)),
        ):
            # The grammar's reading is searched whenever its words are not the query's as written: a
            # semantic tag left out, or the same words in another order (a coder's index order,
            # "Cholecystitis, acute"), which the encoder reads in their order.
            reordered = text == reading.text and tokens(text) != in_order
            if (key := label_key(text)) not in said or reordered:
                said.add(key)
                out.append((text, via))
        return out

    def read(self, query: str, scope: Scope) -> grammar.Reading:
        """``query`` as the clinical grammar reads it (when on), its abbreviations written out."""
        if not self.settings.grammar:
            reading = grammar.Reading(query)
            self.expand(reading)
            return reading
        return grammar.read(query, frozenset(scope.systems or self.bundle.systems), self.expand)

    def learned(self, query: str, scope: Scope) -> list[tuple[str, str]]:
        """(name, why) of each concept curators approved ``query`` as a phrasing of (the overlay)."""
        if not scope.learned:
            return []
        out = []
        for taught in self.overlay.taught(query):
            concept = self.bundle.concepts[taught.row]
            out.append((concept.display, f"{taught.origin}: '{taught.text}' is {concept.system.upper()} {concept.code}"))
        return out

    def _is_display_in(self, text: str, scope: Scope) -> bool:
        """Whether ``text`` is, as written, the display name of an active concept of the systems
        ``scope`` searches (among those a release name of which says it)."""
        bundle = self.bundle
        searched = set(scope.systems or bundle.systems)
        written = " ".join(fold(text).split())
        for row in bundle.named_in_release(text).tolist():
            concept = bundle.concepts[row]
            if concept.system in searched and concept.active and " ".join(fold(concept.display).split()) == written:
                return True
        return False

    def bridges(self, query: str, scope: Scope) -> list[tuple[str, str]]:
        """(preferred name, why) of the concepts of terminologies outside ``scope`` that
        ``query`` names exactly, by one of its exact names (its own, or one a knowledge source
        gave it: "ED" names HPO's Erectile dysfunction by the abbreviation table); and the
        heading of a MeSH descriptor ``query`` is an entry term of ("cold sore")."""
        bundle = self.bundle
        searched = set(scope.systems or bundle.systems)
        found: dict[int, str] = {}
        key = name_key(query)
        denied = self.overlay.denied_labels
        labels = [label for label in bundle.labels_named(key) if label not in scope.exclude_labels and label not in denied]
        rows = bundle.label_concept[labels]
        elsewhere = ~np.isin(bundle.system_of(rows), list(searched)) & bundle.concepts.active[rows]
        for label, row in zip(np.asarray(labels)[elsewhere].tolist(), rows[elsewhere].tolist(), strict=True):
            if row not in found and len(found) < MAX_BRIDGES:
                concept = bundle.concepts[row]
                found[row] = f"via {concept.system.upper()} {concept.code} {concept.display}: '{bundle.label_text[label]}'"
        out = [(bundle.concepts[row].display, via) for row, via in found.items()]
        term = bundle.entry_terms.get(key)
        if term is not None and len(out) < MAX_BRIDGES:
            out.append((term.heading, f"via {term.source} {term.id} {term.heading}: '{term.term}'"))
        return out

    def expand(self, reading: grammar.Reading) -> None:
        """Write out each abbreviation among the reading's other words ("old MI" → "old myocardial
        infarction"), when it is written in capitals as the abbreviation table has it or no other
        label uses it as a word, and the other words select one of its meanings by the table's
        context ("AD on donepezil": Alzheimer's disease; "STEMI of the LAD": the artery, a meaning
        that names no concept) or it has one meaning (in every loaded system); an ordinary word too
        ("he", "all") only where it is written in capitals."""
        typed = WORD.findall(reading.text)
        if len([word for word in typed if fold(word) not in STOP_WORDS]) < 2:
            return
        for word in dict.fromkeys(typed):
            folded = fold(word)
            capitals = word.isupper() or (len(word) > 2 and word.endswith("s") and word[:-1].isupper())  # "PFs", "DTRs"
            if (folded in STOP_WORDS or folded in self.ordinary) and not capitals:
                continue
            if not (capitals and folded in self.senses or self._is_abbreviation(folded)):
                continue
            written = self._in_context(folded, reading.text) or self._abbreviation(folded)
            if written is not None:
                reading.text = replace_word(reading.text, folded, written)
                reading.said.append(f"'{word}' as '{written}'")

    def _abbreviation_like(self, word: str) -> bool:
        """Whether ``word`` (folded) is an abbreviation: a label is, and every other label holding
        it is one or a clinician's phrasing (which holds abbreviations: "severe MR")."""
        bundle = self.bundle
        named = bundle.labels_named(name_key(word))  # labels that are the word itself: few, found by key
        if not any(bundle.label_kind[label] == "abbreviation" for label in named):
            return False
        holding = self.vocabulary.labels_with(word).tolist()
        using = {bundle.label_kind[label] for label in holding if fold(bundle.label_text[label]).strip() != word}
        return using <= ABBREVIATING

    def _in_context(self, word: str, text: str) -> str | None:
        """The meaning of the ambiguous abbreviation ``word`` whose context words ``text`` holds
        most, if one does (its first expansion)."""
        senses = self.senses.get(word, [])
        if len(senses) < 2:
            return None
        folded = f" {' '.join(WORD.findall(fold(text)))} "
        held = [sum(f" {cue} " in folded for cue in row.context) for row in senses]
        best = max(held)
        return senses[held.index(best)].expansions[0] if best and held.count(best) == 1 else None

    def _abbreviation_of(self, word: str) -> str | None:
        """What the abbreviation ``word`` (folded) stands for, if it has one meaning."""
        bundle = self.bundle
        holding = self.vocabulary.labels_with(word).tolist()
        exact = [label for label in holding if fold(bundle.label_text[label]).strip() == word]
        if not exact:  # an abbreviation of words, not of a concept ("PFs": palpebral fissures), if the table has one meaning
            senses = self.senses.get(word, [])
            return senses[0].expansions[0] if len(senses) == 1 else None
        if any(count > 1 for count in self.meanings(word, bundle.systems).values()):
            return None
        for label in exact:  # a table's expansion, else the concept's name
            if (origin := bundle.label_origin[label]) and (written := expansion(origin)):
                return written
        return bundle.concepts[int(bundle.label_concept[exact[0]])].display

    def correct(self, query: str) -> str | None:
        """``query`` with each unknown word replaced by the closest known one, or by the known words
        it runs together, two words joined where they split a known one, and each British spelling
        by the American one ("oedema" by "edema", for the encoder), if any was."""
        vocabulary = self.vocabulary
        changed = False
        out = query
        typed = typed_words(query)
        # A word split where a known word is meant, one of its parts unknown ("neuro pathy": neuropathy).
        for first, second in zip(typed, typed[1:], strict=False):
            joined = american(first + second)
            if joined in vocabulary and (american(first) not in vocabulary or american(second) not in vocabulary):
                out, count = re.subn(rf"\b{re.escape(first)}[\s-]+{re.escape(second)}\b", joined, out, flags=re.IGNORECASE)
                changed = changed or bool(count)
        for word in dict.fromkeys(typed_words(out)):
            spelled = american(word)
            # The closest known word is meant, else the known words it runs together ("lowbackpain").
            better = vocabulary.correction(spelled) or vocabulary.segmentation(spelled) or (spelled if spelled != word else None)
            if better is not None:
                out = replace_word(out, word, better)
                changed = True
        return out if changed else None

    def meanings(self, query: str, systems: Iterable[str]) -> dict[str, int]:
        """Per system, how many distinct meanings ``query`` is exactly a name of (an ambiguous
        abbreviation such as "PE": pulmonary embolism and pleural effusion). Concepts one above
        the other by is-a are one meaning, and so are those one source named together (one row
        of the abbreviation table, one lent name)."""
        bundle = self.bundle
        labels = [label for label in bundle.labels_named(name_key(query)) if label not in self.overlay.denied_labels]
        origins = {int(bundle.label_concept[label]): bundle.label_origin[label] for label in labels}
        rows = np.fromiter(origins, dtype=np.int64, count=len(origins))
        system = bundle.system_of(rows)
        group = list(range(len(rows)))  # union-find over positions in rows

        def root(i: int) -> int:
            while group[i] != i:
                i = group[i]
            return i

        by_origin: dict[tuple[str, str], int] = {}
        named_together = [
            (i, by_origin.setdefault((system[i], origin), i)) for i, origin in enumerate(origins.values()) if origin
        ]
        for lower, upper in [*zip(*(part.tolist() for part in bundle.above_pairs(rows)), strict=True), *named_together]:
            group[root(lower)] = root(upper)
        counted = Counter(system[i] for i in {root(i) for i in range(len(rows))})
        return {key: counted[key] for key in systems}


def replace_word(text: str, word: str, replacement: str) -> str:
    """``text`` with each whole word whose folded form is ``word`` replaced."""
    return "".join(replacement if fold(part) == word else part for part in WORD_SPLIT.split(text))
