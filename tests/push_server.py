"""A loopback HTTP server that records what channels are sent and answers as a script says.

`PushServer()` listens on 127.0.0.1 (a free port). `answers[path]` is a list of (status, headers,
body) given out in turn, the last one repeated (default: 200, `{"ok": true, "code": 0, "errcode": 0}`).
`requests` holds each request received: method, path, query (a dict of lists), headers and JSON body.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

OK = (200, {}, '{"ok": true, "code": 0, "errcode": 0}')


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class PushServer:
    answers: dict[str, list[tuple[int, dict[str, str], str]]] = field(default_factory=dict)
    requests: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        recorded = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                parts = urlsplit(self.path)
                recorded.requests.append(
                    Received(
                        "POST", parts.path, parse_qs(parts.query),
                        {k.lower(): v for k, v in self.headers.items()}, json.loads(raw or b"null"),
                    )
                )  # fmt: skip
                script = recorded.answers.get(parts.path) or [OK]
                status, headers, body = script.pop(0) if len(script) > 1 else script[0]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                data = body.encode()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
