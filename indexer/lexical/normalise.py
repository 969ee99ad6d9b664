"""The one text normaliser used both to index labels and to parse queries, for every backend.

Case-folded, accent-folded, split on anything that is not a letter or digit, English stop
words dropped, British medical spellings written the American way, Snowball-stemmed (an
inflammation, "-itis", kept whole). Backends receive the resulting tokens and never re-analyse.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

ANALYSIS_VERSION = 3  # of what this module makes of a text: a bundle's indexes are rebuilt when it changes
STOP_WORDS = frozenset(
    "a an and are as at be by for from has in into is it its of on or that the to was were which with".split()
)
_SPLIT = re.compile(r"[^\w]+|_")
_stemmer = Stemmer.Stemmer("english")


def fold(text: str) -> str:
    """Case- and accent-folded text."""
    if text.isascii():  # nothing to decompose (most labels and queries)
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


# British spellings of medical words as American ones, so that "anaemia", "oedema", "ischaemic",
# "diarrhoea" and "tumour" index and match as the terminologies (ICD-10-CM) spell them.
_BRITISH = {
    "haem": "hem", "aemia": "emia", "aemic": "emic", "ischaem": "ischem", "leukaem": "leukem", "paed": "ped",
    "oedem": "edem", "oesoph": "esoph", "oestr": "estr", "rrhoe": "rrhe", "pnoe": "pne", "foet": "fet", "coeliac": "celiac",
    "aetiol": "etiol", "caesar": "cesar", "gynaec": "gynec", "anaesth": "anesth", "faec": "fec", "tumour": "tumor",
    "behaviour": "behavior", "colour": "color", "centre": "center", "sulph": "sulf",
}  # fmt: skip
_BRITISH_SPELLING = re.compile("|".join(sorted(_BRITISH, key=len, reverse=True)))


@lru_cache(maxsize=200_000)
def american(word: str) -> str:
    """A folded word with its British medical spelling written the American way ("oedema": "edema")."""
    return _BRITISH_SPELLING.sub(lambda match: _BRITISH[match.group(0)], word)


def typed_words(text: str) -> list[str]:
    """Folded words without stop words, as typed."""
    return [w for w in _SPLIT.split(fold(text)) if w and w not in STOP_WORDS]


def words(text: str) -> list[str]:
    """:func:`typed_words`, spelled the American way, unstemmed (for word-overlap measures)."""
    return [american(w) for w in typed_words(text)]


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball stem, but an inflammation ("-itis") is kept whole: Snowball makes "hepatitis"
    "hepatic", "sinusitis" "sinus" and "esophagitis" "esophageal" one word."""
    return word if word.endswith("itis") else _stemmer.stemWord(word)


def tokens(text: str) -> list[str]:
    """Index and query tokens."""
    return [stem(w) for w in words(text)]


_PARENTHESISED = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_UNSPECIFIED_CLAUSE = re.compile(r",\s*unspecified\b[^,]*$", re.IGNORECASE)  # ", unspecified organism"
UNSPECIFIED = frozenset({"unspecifi", "nos"})  # stems of "unspecified" and "NOS"
_TYPE_LETTER = re.compile(r"(?<=[a-z] )A(?=$|[\s,;)])")  # "Hepatitis A", "Vitamin A deficiency": a type, not the article


def label_key(text: str) -> str:
    """Two labels that say the same thing get the same key: tokens without bracketed
    modifiers, a closing "unspecified ..." clause or "NOS", in sorted order ("Heart failure,
    unspecified", "heart failure NOS", "Failure, heart" and "Pneumonia, unspecified organism"
    against "pneumonia" agree: the unspecified axis makes the code the default one). A type
    letter written "A" is kept, though the article is a stop word ("Hepatitis A NOS" is no
    "Hepatitis")."""
    text = _UNSPECIFIED_CLAUSE.sub(" ", _PARENTHESISED.sub(" ", text))
    typed = ["a"] if _TYPE_LETTER.search(text) else []
    return " ".join(sorted([t for t in tokens(text) if t not in UNSPECIFIED] + typed))


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
