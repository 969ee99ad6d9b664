"""One client per cluster configuration, and "cannot answer" errors made :class:`BackendUnavailable`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from elasticsearch import ApiError, Elasticsearch, TransportError
from elasticsearch import __versionstr__ as CLIENT_VERSION

from indexer.remote import BackendUnavailable
from indexer.settings import ElasticsearchSettings

# Largest ``size`` of one search (index.max_result_window) and of kNN ``num_candidates``.
MAX_WINDOW = 10_000
# Statuses meaning "the cluster cannot serve this now" rather than "the request is wrong".
_UNAVAILABLE = frozenset({401, 403, 404, 408, 429})


@lru_cache(maxsize=4)
def make_client(settings: ElasticsearchSettings) -> Elasticsearch:
    """A client for searches: short timeout and one retry, so that a fallback answers quickly."""
    options: dict[str, object] = {}
    if settings.api_key.get_secret_value():
        options["api_key"] = settings.api_key.get_secret_value()
    elif settings.username:
        options["basic_auth"] = (settings.username, settings.password.get_secret_value())
    if settings.ca_certs:
        options["ca_certs"] = settings.ca_certs
    return Elasticsearch(
        [url.strip() for url in settings.url.split(",") if url.strip()],
        verify_certs=settings.verify_certs,
        request_timeout=settings.request_timeout,
        max_retries=1,
        retry_on_timeout=False,
        **options,
    )


@contextmanager
def reachable(what: str) -> Iterator[None]:
    """Turn "the cluster cannot answer" into :class:`BackendUnavailable`; a bad request still raises."""
    try:
        yield
    except TransportError as exc:  # connection refused, timeout, TLS failure
        raise BackendUnavailable(f"{what}: Elasticsearch is unreachable ({type(exc).__name__})") from exc
    except ApiError as exc:
        if exc.meta.status < 500 and exc.meta.status not in _UNAVAILABLE:
            raise
        raise BackendUnavailable(f"{what}: Elasticsearch answered {exc.meta.status} ({exc.error})") from exc


class ServerMismatch(RuntimeError):
    """The server's major version differs from the client's."""


def check_version(client: Elasticsearch) -> None:
    """Refuse a server whose major version differs from the client's."""
    with reachable("cannot build the Elasticsearch indexes"):
        server = client.info()["version"]["number"]
    if server.split(".")[0] != CLIENT_VERSION.split(".")[0]:
        raise ServerMismatch(
            f"Elasticsearch server {server} and Python client {CLIENT_VERSION} differ in major version; "
            "install the client of the server's major version (see pyproject.toml, extra 'elasticsearch')"
        )


class ElasticIndex:
    """One index of a bundle, as the app queries it: by its recorded name, not the alias."""

    backend = "elasticsearch"

    def __init__(self, client: Elasticsearch, index: str) -> None:
        self.client = client
        self.index = index

    def ping(self) -> None:
        with reachable(f"index {self.index}"):
            exists = self.client.indices.exists(index=self.index)
        if not exists:
            raise BackendUnavailable(f"index {self.index}: not in Elasticsearch (rebuild with `indexer build --force`)")

    def __len__(self) -> int:
        """Documents in the index, counted by Elasticsearch now."""
        with reachable(f"index {self.index}"):
            return int(self.client.count(index=self.index)["count"])

    def _search(self, body: dict[str, object]) -> list[dict]:
        with reachable(f"index {self.index}"):
            return self.client.search(index=self.index, body=body)["hits"]["hits"]
