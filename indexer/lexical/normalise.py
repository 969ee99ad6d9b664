"""The one text normaliser used both to index labels and to parse queries, for every backend.

Case-folded, accent-folded, split on anything that is not a letter or digit, English stop
words dropped, Snowball-stemmed. Backends receive the resulting tokens and never re-analyse.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

STOP_WORDS = frozenset(
    "a an and are as at be by for from has in into is it its of on or that the to was were which with".split()
)
_SPLIT = re.compile(r"[^\w]+|_")
_stemmer = Stemmer.Stemmer("english")


def fold(text: str) -> str:
    """Case- and accent-folded text."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """Folded words without stop words, unstemmed (for word-overlap measures)."""
    return [w for w in _SPLIT.split(fold(text)) if w and w not in STOP_WORDS]


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return _stemmer.stemWord(word)


def tokens(text: str) -> list[str]:
    """Index and query tokens."""
    return [stem(w) for w in words(text)]


_PARENTHESISED = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_UNSPECIFIED_CLAUSE = re.compile(r",\s*unspecified\b[^,]*$", re.IGNORECASE)  # ", unspecified organism"
UNSPECIFIED = frozenset({"unspecifi", "nos"})  # stems of "unspecified" and "NOS"


def label_key(text: str) -> str:
    """Two labels that say the same thing get the same key: tokens without bracketed
    modifiers, a closing "unspecified ..." clause or "NOS", in sorted order ("Heart failure,
    unspecified", "heart failure NOS", "Failure, heart" and "Pneumonia, unspecified organism"
    against "pneumonia" agree: the unspecified axis makes the code the default one)."""
    text = _UNSPECIFIED_CLAUSE.sub(" ", _PARENTHESISED.sub(" ", text))
    return " ".join(sorted(t for t in tokens(text) if t not in UNSPECIFIED))


# Label kinds that name their concept exactly (not broader, narrower or related synonyms).
NAME_KINDS = frozenset(
    {
        "preferred", "fsn", "exact synonym", "layperson", "abbreviation", "uk_spelling", "plural_form", "inclusion", "includes",
        "learned",  # a phrasing users chose the concept for, approved by a curator
    }
)


@lru_cache(maxsize=200_000)  # looking a name up checks the key of every label of that name
def name_key(text: str) -> str:
    """:func:`label_key`, or for a text of stop words only ("AS", "IT") the text itself."""
    return label_key(text) or f"={fold(text).strip()}"


_ACRONYM = re.compile(r"[A-Z][A-Z0-9]{1,5}s?(?: NOS)?")


def is_abbreviation(kind: str, text: str) -> bool:
    """A label that is an abbreviation, by type or by shape ("CJD", "DVT NOS")."""
    return kind == "abbreviation" or _ACRONYM.fullmatch(text) is not None
