"""A loopback HTTP server that answers like a platform from a snapshot, with scripted faults.

Crawls reach it through the `GPUPLAN_ORIGIN_OVERRIDE` setting; items keep the
platform's URLs, so a crawl through it must write exactly the snapshot's
expected items. `script` faults hit the first request in order, and its retries (the
requests to the path that arrived first, robots.txt excluded: a fan of requests sees one of
them fail), `always` hits every one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from scrapers.replay import Snapshot


@dataclass(frozen=True)
class Fault:
    status: int | None = None  # answer with this status (and `body`) instead of the snapshot's
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b'{"error": "injected fault"}'
    stall_s: float = 0.0  # wait this long before answering (longer than DOWNLOAD_TIMEOUT = a timeout)


@dataclass(frozen=True)
class Hit:
    arrived_s: float  # time.monotonic() when the request arrived
    method: str
    path: str
    status: int
    user_agent: str = ""


class _Handler(BaseHTTPRequestHandler):
    server: SnapshotServer

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet test output

    def _answer(self) -> None:
        arrived_s = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/robots.txt":
            self._send(404, {"Content-Type": "text/plain"}, b"")
            return
        exchange = self.server.snapshot.find(self.command, self.path, body, self.headers)
        fault = self.server.next_fault(self.path)
        if exchange is None:
            status, headers, payload = (
                404,
                {"Content-Type": "application/json"},
                b'{"error": "not in snapshot"}',
            )
        elif fault is not None and fault.status is not None:
            status, headers, payload = (
                fault.status,
                {"Content-Type": "application/json", **fault.headers},
                fault.body,
            )
        else:
            status, headers, payload = exchange.status, exchange.headers, exchange.body
        self.server.hits.append(
            Hit(arrived_s, self.command, self.path, status, self.headers.get("User-Agent") or "")
        )
        if fault is not None and fault.stall_s:
            time.sleep(fault.stall_s)
        self._send(status, headers, payload)

    def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
        try:
            self.send_response_only(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the crawler timed out and hung up, as the test intended


class SnapshotServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, snapshot: Snapshot, script: Sequence[Fault] = (), always: Fault | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.snapshot = snapshot
        self.script = list(script)
        self.always = always
        self.hits: list[Hit] = []
        self.fault_path: str | None = None  # the path `script` faults hit: the first to arrive
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def next_fault(self, path: str) -> Fault | None:
        with self._lock:
            self.fault_path = self.fault_path or path
            if self.script and path == self.fault_path:
                return self.script.pop(0)
        return self.always

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a hung-up client is expected in timeout tests


@contextmanager
def serving(
    snapshot: Snapshot, script: Sequence[Fault] = (), always: Fault | None = None
) -> Iterator[SnapshotServer]:
    server = SnapshotServer(snapshot, script, always)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
