"""``GET /concepts/{system}/{code}``: one concept from the store."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from app.api.deps import ReaderDep
from app.api.errors import PROBLEM_RESPONSES, NotFound

router = APIRouter(tags=["concepts"])


class Label(BaseModel):
    text: str
    use: str
    language: str
    scope: str | None = None
    type: str | None = None


class DefinitionOut(BaseModel):
    text: str
    source: str | None = None


class Ref(BaseModel):
    code: str
    display: str


class ConceptOut(BaseModel):
    system: str
    version: str
    code: str
    display: str
    status: str  # "active" or "inactive"
    synonyms: list[Label]
    definitions: list[DefinitionOut]
    parents: list[Ref]
    children: list[Ref]
    associations: dict[str, list[str]]  # e.g. replaced_by, consider for inactive concepts
    xrefs: list[str]
    properties: dict[str, Any]


@router.get("/concepts/{system}/{code}", response_model=ConceptOut, responses=PROBLEM_RESPONSES)
def get_concept(system: str, code: str, reader: ReaderDep) -> ConceptOut:
    version = reader.system(system)
    if version is None:
        known = ", ".join(s.key for s in reader.systems())
        raise NotFound(f"system: unknown code system {system!r}; loaded: {known}", "system")
    detail = reader.concept(version, code)
    if detail is None:
        raise NotFound(f"code: {code!r} is not a code of {system} {version.version}", "code")
    concept = detail.concept
    return ConceptOut(
        system=system,
        version=version.version,
        code=concept.code,
        display=concept.display,
        status="active" if concept.active else "inactive",
        synonyms=[
            Label(text=d.text, use=d.use, language=d.language, scope=d.scope, type=d.type)
            for d in concept.designations
            if d.active
        ],
        definitions=[DefinitionOut(text=d.text, source=d.source) for d in concept.definitions],
        parents=[Ref(code=p.code, display=p.display) for p in detail.parents],
        children=[Ref(code=c.code, display=c.display) for c in detail.children],
        associations=concept.associations,
        xrefs=concept.xrefs,
        properties=concept.properties,
    )
