"""CURIEs for concept codes, and the prefix map that expands every CURIE written.

- Codes that are already OBO ids (``HP:0001649``, ``MONDO:0005148``) keep their prefix, expanded
  to the OBO PURL ``http://purl.obolibrary.org/obo/HP_``.
- ICD-10-CM, SNOMED CT and UMLS codes get the prefixes of their usual RDF renderings.
- Codes of any other system: the system key upper-cased, expanded to the system URI + ``/``.
- Listed sources: the request's ``source_prefix``, expanded to its ``source_uri``; the id is
  percent-encoded where it is not CURIE-safe.
"""

from __future__ import annotations

import re
from urllib.parse import quote

OBO = "http://purl.obolibrary.org/obo/"
STANDARD = {
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "semapv": "https://w3id.org/semapv/vocab/",
    "sssom": "https://w3id.org/sssom/",
    "wikidata": "http://www.wikidata.org/entity/",
}
PREFIXES = {
    "icd10cm": ("ICD10CM", "http://purl.bioontology.org/ontology/ICD10CM/"),
    "snomedct": ("SNOMEDCT", "http://snomed.info/id/"),
    "umls": ("UMLS", "http://linkedlifedata.com/resource/umls/id/"),
}
_OBO_ID = re.compile(r"^([A-Za-z][A-Za-z0-9_]*):([A-Za-z0-9_][A-Za-z0-9_.-]*)$")
_SAFE = "-._~:"  # kept as they are in a CURIE's local part


class CurieMap:
    """Collects the prefixes of the CURIEs it makes; :attr:`prefixes` is then the complete map."""

    def __init__(self) -> None:
        self.prefixes: dict[str, str] = dict(STANDARD)

    def concept(self, system: str, system_uri: str, code: str) -> str:
        obo = _OBO_ID.match(code)
        if system in PREFIXES:
            prefix, expansion = PREFIXES[system]
            return self._curie(prefix, expansion, code)
        if obo:
            return self._curie(obo[1], f"{OBO}{obo[1]}_", obo[2])
        return self._curie(system.upper(), system_uri.rstrip("/") + "/", code)

    def listed(self, prefix: str, expansion: str, identifier: str) -> str:
        return self._curie(prefix, expansion, identifier)

    def _curie(self, prefix: str, expansion: str, local: str) -> str:
        known = self.prefixes.setdefault(prefix, expansion)
        if known != expansion:
            raise ValueError(f"prefix {prefix} stands for both {known} and {expansion}")
        return f"{prefix}:{quote(local, safe=_SAFE)}"
