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
