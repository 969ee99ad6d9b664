"""ValueSet resources stored through the FHIR API, in the concept store's ``value_set`` table:
written whole by ``PUT``/``POST`` (after their compose resolves against the served bundle, so a
stored value set always names loaded codes; one ``url|version`` is one resource: another id with
it is 409), read by id, searched by ``url`` and ``version``, and
found by ``url`` when an operation names one."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, delete, select, update
from sqlalchemy.exc import IntegrityError

from app.errors import DuplicateResource, InvalidParameter, NotFound
from app.ops.limits import check_cancelled
from app.tables import ValueSetRow

FHIR_ID = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")


def check_id(value: str, param: str = "id") -> str:
    if not FHIR_ID.match(value):
        raise InvalidParameter(f"{param}: {value!r} is not a FHIR id (1 to 64 letters, digits, '-' and '.')", param)
    return value


class ValueSetStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def put(self, resource: dict[str, Any]) -> bool:
        """Store ``resource`` under its ``id``; True when it is new."""
        row = {
            "id": resource["id"],
            "url": resource["url"],
            "version": resource.get("version"),
            "resource": resource,
            "updated_at": datetime.now(UTC),
        }
        table = ValueSetRow.__table__
        with self.engine.begin() as conn:
            check_cancelled()  # a request already answered 503 stores nothing
            version = table.c.version.is_(None) if row["version"] is None else table.c.version == row["version"]
            other = conn.scalar(select(table.c.id).where(table.c.url == row["url"], version, table.c.id != row["id"]))
            if other is not None:
                named = f"{row['url']}|{row['version']}" if row["version"] is not None else row["url"]
                detail = f"url: ValueSet/{other} is already {named}; change that one, or give this one another version"
                raise DuplicateResource(detail, "url")
            try:  # an upsert: concurrent writers of one id each insert or update, never fail
                with conn.begin_nested():
                    conn.execute(table.insert().values(**row))
                return True
            except IntegrityError:
                conn.execute(update(table).where(table.c.id == row["id"]).values(**row))
                return False

    def get(self, value_set_id: str) -> dict[str, Any]:
        with self.engine.connect() as conn:
            resource = conn.scalar(select(ValueSetRow.resource).where(ValueSetRow.id == value_set_id))
        if resource is None:
            raise NotFound(f"ValueSet/{value_set_id} is unknown")
        return resource

    def delete(self, value_set_id: str) -> None:
        with self.engine.begin() as conn:
            if conn.execute(delete(ValueSetRow).where(ValueSetRow.id == value_set_id)).rowcount == 0:
                raise NotFound(f"ValueSet/{value_set_id} is unknown")

    def search(self, url: str | None, version: str | None) -> list[dict[str, Any]]:
        query = select(ValueSetRow.resource).order_by(ValueSetRow.url, ValueSetRow.version, ValueSetRow.id)
        if url is not None:
            query = query.where(ValueSetRow.url == url)
        if version is not None:
            query = query.where(ValueSetRow.version == version)
        with self.engine.connect() as conn:
            return list(conn.scalars(query))
