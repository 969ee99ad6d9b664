"""A stand-in Elasticsearch on 127.0.0.1: the real client sends real HTTP requests, which are
recorded (method, path, parsed body; a bulk body as its NDJSON lines) and answered from a little
state: which indexes exist, their aliases, and the hits a search returns. It scores nothing:
ranking is checked against a real cluster by the contract tests (ELASTICSEARCH_URL).
"""

from __future__ import annotations

import fnmatch
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

VERSION = "9.5.6"


@dataclass
class Request:
    method: str
    path: str
    body: Any  # parsed JSON; for _bulk, the list of parsed lines


@dataclass
class FakeElasticsearch:
    version: str = VERSION
    requests: list[Request] = field(default_factory=list)
    aliases: dict[str, set[str]] = field(default_factory=dict)  # index -> its aliases
    hits: list[dict[str, Any]] = field(default_factory=list)  # what every _search answers
    documents: dict[str, int] = field(default_factory=dict)  # index -> documents bulk-indexed into it

    def start(self) -> FakeElasticsearch:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Close the port: from now on connections are refused, as from a cluster that is down."""
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def sent(self, method: str, suffix: str = "") -> list[Request]:
        return [r for r in self.requests if r.method == method and r.path.endswith(suffix)]

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.strip("/").split("/") if p]
        target, action = (parts + ["", ""])[:2]
        if not parts:
            return 200, {"name": "fake", "version": {"number": self.version}, "tagline": "You Know, for Search"}
        if method == "POST" and target == "_aliases":
            for entry in body["actions"]:
                ((verb, spec),) = entry.items()
                getattr(self.aliases[spec["index"]], {"add": "add", "remove": "discard"}[verb])(spec["alias"])
            return 200, {"acknowledged": True}
        if action == "_alias":
            patterns = target.split(",")
            names = [n for n in self.aliases if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
            return 200, {n: {"aliases": {a: {} for a in sorted(self.aliases[n])}} for n in names}
        if method == "PUT" and not action:
            self.aliases[target] = set()
            return 200, {"acknowledged": True, "shards_acknowledged": True, "index": target}
        if method == "DELETE":
            for name in target.split(","):
                del self.aliases[name]
            return 200, {"acknowledged": True}
        if target not in self.aliases:
            return 404, {"error": {"type": "index_not_found_exception", "index": target}, "status": 404}
        if method == "HEAD":
            return 200, None
        if action == "_bulk":
            items = [{"index": {"_index": target, "_id": line["index"]["_id"], "status": 201}} for line in body[::2]]
            self.documents[target] = self.documents.get(target, 0) + len(items)
            return 200, {"took": 1, "errors": False, "items": items}
        if action == "_count":
            shards = {"total": 1, "successful": 1, "skipped": 0, "failed": 0}
            return 200, {"count": self.documents.get(target, 0), "_shards": shards}
        if action == "_search":
            return 200, {"took": 1, "timed_out": False, "hits": {"hits": self.hits}}
        return 200, {"acknowledged": True}  # _settings, _refresh


def _handler(fake: FakeElasticsearch) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = urlsplit(self.path).path
            if path.endswith("/_bulk"):
                body: Any = [json.loads(line) for line in raw.splitlines() if line.strip()]
            else:
                body = json.loads(raw) if raw else None
            fake.requests.append(Request(self.command, unquote(path), body))
            status, answer = fake.answer(self.command, path, body)
            payload = b"" if answer is None else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("X-Elastic-Product", "Elasticsearch")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _serve

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

    return Handler
