"""Which version of a code system a value set uses: the request's ``force-system-version``
(whatever the value set says), else the version the compose states, else the request's
``system-version`` (the default where none is stated), else the one loaded. Each parameter is a
canonical ``system|version`` and may repeat, one per system; ``check-system-version`` refuses an
expansion or validation that would use another version than it names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.errors import InvalidParameter, VersionMismatch
from app.fhir.params import OperationParams

PARAMETERS = ("force-system-version", "system-version", "check-system-version")


@dataclass(frozen=True)
class SystemVersions:
    force: dict[str, str] = field(default_factory=dict)
    default: dict[str, str] = field(default_factory=dict)
    check: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_params(cls, params: OperationParams) -> SystemVersions:
        force, default, check = (canonicals(params, name) for name in PARAMETERS)
        return cls(force, default, check)

    def used(self, uri: str, stated: str | None) -> str | None:
        """The version the value set uses of ``uri`` (None: whichever is loaded)."""
        return self.force.get(uri) or stated or self.default.get(uri)

    def expected(self, uri: str, stated: str | None) -> str | None:
        """The version a coding of ``uri`` is expected to name: the one used, or the one checked."""
        return self.used(uri, stated) or self.check.get(uri)

    def checked(self, uri: str, used: str) -> None:
        """Refuse an expansion that would use another version than check-system-version names."""
        wanted = self.check.get(uri)
        if wanted is not None and wanted != used:
            raise VersionMismatch(
                f"check-system-version: the value set uses {uri} version {used!r}, not {wanted!r}", "check-system-version"
            )

    def echoed(self, uri: str, stated: str | None) -> list[dict[str, Any]]:
        """The parameters that applied to a value set of ``uri`` stating ``stated``, as an
        expansion lists them: force always, the default and the check where it states none."""
        applied = [("force-system-version", self.force)]
        if stated is None:
            applied += [("system-version", self.default), ("check-system-version", self.check)]
        return [{"name": name, "valueUri": f"{uri}|{given[uri]}"} for name, given in applied if uri in given]


def canonicals(params: OperationParams, name: str) -> dict[str, str]:
    """A repeatable ``url|version`` parameter, as url -> version."""
    found: dict[str, str] = {}
    for value in params.texts(name):
        uri, bar, version = value.partition("|")
        if not bar or not uri or not version:
            raise InvalidParameter(f"{name}: expected a canonical system|version (got {value!r})", name)
        if uri in found:
            raise InvalidParameter(f"{name}: {uri} is given more than once", name)
        found[uri] = version
    return found
