"""The tests' loopback servers: one HTTP server that answers like a platform, and a free port.

`serving` answers like one platform, from its recorded snapshot, with a fault. Crawls reach it
through the `GPUPLAN_ORIGIN_OVERRIDE` crawl setting (scrapers.platform): a request keeps its path,
query and body, so it matches the snapshot's exchange (scrapers.replay.Snapshot), and items keep
the platform's own URLs, so a crawl through it writes exactly the snapshot's expected items. Two
kinds of fault, combinable:

- a `rewrite` of every recorded answer (content faults: a changed body or content type), and
- per-request `Answer`s (transport faults): the first requests get `first[0]`, `first[1]`, ... in
  order of arrival, every later one gets `then`. With `first_path_only`, `first` hits only the path
  asked first (a request and its retries), so a fan of requests sees one of them fail. An answer
  can replace the status, headers or body, stall before answering, reset the connection, or cut
  the body short; `failing` is an error answer with a JSON body of its own.

`robots.txt` is answered 404 and not counted. Given a `date_header`, every answer carries it: the
platform clock that becomes the items' `observed_at`, so one snapshot can stand for any day.
Without one, the recorded `Date` stands.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from scrapers.replay import Exchange, Snapshot


@dataclass(frozen=True)
class Reply:
    """A recorded answer as the server will give it (before any per-request fault)."""

    status: int
    headers: dict[str, str]
    body: bytes


Rewrite = Callable[[Exchange], Reply]


@dataclass(frozen=True)
class Answer:
    """How the server treats one request; the default answers as recorded."""

    status: int | None = None  # this status instead of the recorded one
    headers: Mapping[str, str] = field(default_factory=dict)  # replace or add these headers
    body: bytes | None = None  # this body instead of the recorded one
    stall_s: float = 0.0  # wait this long before answering (longer than DOWNLOAD_TIMEOUT: a timeout)
    reset: bool = False  # read the request, answer nothing, close with a TCP reset
    cut_share: float | None = None  # announce the whole body, send this share of it, close


AS_RECORDED = Answer()


def failing(status: int, headers: Mapping[str, str] | None = None, body: bytes | None = None) -> Answer:
    """An error answer in place of the recorded one: `status`, a JSON body of its own unless `body`."""
    return Answer(
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
        body=b'{"error": "injected fault"}' if body is None else body,
    )


@dataclass(frozen=True)
class Hit:
    """One request the server answered (robots.txt excluded)."""

    arrived_s: float  # time.monotonic() at arrival
    method: str
    path: str
    status: int | None  # None: reset, nothing sent
    user_agent: str = ""


class _Handler(BaseHTTPRequestHandler):
    server: FaultServer

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: object) -> None:
        pass  # the crawl's own log says what happened

    def _answer(self) -> None:
        arrived_s = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        request_body = self.rfile.read(length) if length else b""
        self.server.record_request(dict(self.headers.items()), request_body)
        if self.path == "/robots.txt":
            self._send(404, {"Content-Type": "text/plain"}, b"")
            return
        exchange = self.server.snapshot.find(self.command, self.path, request_body, self.headers)
        answer = self.server.next_answer(self.path)
        if exchange is None:
            reply = Reply(404, {"Content-Type": "application/json"}, b'{"error": "not in the snapshot"}')
        else:
            reply = self.server.rewrite(exchange)
        status = answer.status or reply.status
        headers = {**reply.headers, **answer.headers}
        if self.server.date_header is not None:
            headers["Date"] = self.server.date_header
        body = reply.body if answer.body is None else answer.body
        user_agent = self.headers.get("User-Agent") or ""
        self.server.hits.append(
            Hit(arrived_s, self.command, self.path, None if answer.reset else status, user_agent)
        )
        if answer.stall_s:
            time.sleep(answer.stall_s)
        if answer.reset:
            self._reset()
        elif answer.cut_share is not None:
            self._send(status, headers, body, sent=body[: int(len(body) * answer.cut_share)])
        else:
            self._send(status, headers, body)

    def _send(self, status: int, headers: Mapping[str, str], body: bytes, sent: bytes | None = None) -> None:
        try:
            self.send_response_only(status)
            for name, value in headers.items():
                if name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body if sent is None else sent)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the crawler gave up waiting (a timeout fault) and hung up
        if sent is not None:
            self._reset()

    def _reset(self) -> None:
        """Close at once with RST (SO_LINGER 0): the peer sees a reset, not an orderly close."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()
        self.wfile.close()
        self.connection.close()


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        snapshot: Snapshot,
        date_header: str | None = None,
        rewrite: Rewrite | None = None,
        first: Sequence[Answer] = (),
        then: Answer = AS_RECORDED,
        first_path_only: bool = False,
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.snapshot = snapshot
        self.date_header = date_header
        self._rewrite = rewrite
        self._first = list(first)
        self._then = then
        self._first_path_only = first_path_only
        self.first_path: str | None = None  # the path asked first
        self.hits: list[Hit] = []
        self.request_headers: list[dict[str, str]] = []
        self.request_bodies: list[bytes] = []  # a signed API's key travels in the form body
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def rewrite(self, exchange: Exchange) -> Reply:
        recorded = Reply(exchange.status, dict(exchange.headers), exchange.body)
        return recorded if self._rewrite is None else self._rewrite(exchange)

    def next_answer(self, path: str) -> Answer:
        with self._lock:
            self.first_path = self.first_path or path
            if self._first and (path == self.first_path or not self._first_path_only):
                return self._first.pop(0)
            return self._then

    def record_request(self, headers: dict[str, str], body: bytes) -> None:
        with self._lock:
            self.request_headers.append(headers)
            self.request_bodies.append(body)

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # resets and hung-up clients are what these tests inject


@contextmanager
def serving(
    snapshot: Snapshot,
    date_header: str | None = None,
    rewrite: Rewrite | None = None,
    first: Sequence[Answer] = (),
    then: Answer = AS_RECORDED,
    first_path_only: bool = False,
) -> Iterator[FaultServer]:
    server = FaultServer(snapshot, date_header, rewrite, first, then, first_path_only)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now, for a server that cannot be given port 0 (aiosmtpd,
    aiosmtpd#276) or whose port must be known before it starts (PostgreSQL, Dagster's webserver)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
