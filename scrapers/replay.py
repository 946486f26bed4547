"""Recorded snapshots: the responses a crawl got, replayed offline through Scrapy's real download stack.

A snapshot is a folder (`scrapers/fixtures/<platform>/`) holding `snapshot.json`
and one file per response body:

    {"platform": "vastai", "recorded_at": "2026-11-30T06:00:00Z",
     "synthetic": false,            # true: built by hand from documented fields
     "follows": "...",              # for synthetic ones: which documentation
     "exchanges": [
       {"request":  {"method": "POST", "url": "https://...", "json": {...}},   # or "form": {...}
        "response": {"status": 200, "headers": {"Content-Type": "...", "Date": "..."},
                     "body_file": "bundles.json"}}]}

Requests match on method, URL path (however percent-escaped) with query, and body; the host is
not compared, so a snapshot recorded through an overridden origin replays against the platform's
URLs. Nothing
depends on order: query parameters and form fields are compared sorted, JSON bodies after
parsing, and headers not at all, so a recording made by another client version (or attached
to a bug report) replays. The one exception: an API that names the call in a header (Tencent's
TC3 `X-TC-Action` and `X-TC-Region`, Alibaba's ACS3 `x-acs-action`: the same body and path for
every call) declares those headers on its spider (`PlatformSpider.replay_headers`); a recording
keeps them in the request entry (`"headers": {"X-TC-Action": "DescribeRegions", "X-TC-Region": ""}`,
"" for one not sent), and an exchange that has them answers only a request that sends the same
values (a header not sent reads as ""). No credential or per-call header is ever one of them
(`UNRECORDED_HEADERS`).
A spider with a keyless and a token path (Lambda, RunPod, compshare) keeps both paths' exchanges
in one snapshot; a request entry only one path asks may say which (`"crawl_path": "token"` or
`"keyless"`): replay ignores it, fault tests serve one path's answers.
Signed requests carry the caller's key and a signature that changes with it (and with a nonce and
a timestamp): those fields (`CREDENTIAL_FIELDS`), in a form body (UCloud's, compshare) or in the
query (Alibaba Cloud's RPC signature), are neither recorded nor compared.

`SnapshotStorage` is a Scrapy HTTP-cache storage. Offline crawls run with
`HTTPCACHE_IGNORE_MISSING`: a request the snapshot lacks is dropped (and the
spider's errback records it), never downloaded. With `GPUPLAN_RECORD` set it
writes a new snapshot instead; only response headers in `KEPT_HEADERS` are
stored, and of the request's headers only the spider's `replay_headers`, so cookies and tokens
never reach a snapshot.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from scrapy import Spider
from scrapy.http import Headers, Request, Response
from scrapy.responsetypes import responsetypes
from scrapy.settings import BaseSettings

from scrapers.parsing import http_date, utc_iso

SNAPSHOT_FILE = "snapshot.json"
# The package: a snapshot bundled in it (scrapers/fixtures/) may answer with the package's own files
# (the quotes source's snapshot is its bundled example, scrapers/data/); any other snapshot folder
# (`--replay`, a bug report's) answers only with files inside it.
PACKAGE = Path(__file__).resolve().parent
RECORD_SETTING = "GPUPLAN_RECORD"
KEPT_HEADERS = ("Content-Type", "Content-Encoding", "Date")
# A signed request's credentials and what changes on every call, as form fields or query parameters:
# UCloud's PublicKey + Signature (UCloudDoc-Team/api summary/signature.md); Alibaba Cloud's RPC
# signature, AccessKeyId + Signature + SignatureNonce + Timestamp (aliyun/aliyun-openapi-python-sdk
# aliyun-python-sdk-core/aliyunsdkcore/auth/composer/rpc_signature_composer.py @ 7545b2a).
# Header signatures (Tencent's TC3, Alibaba's ACS3) need nothing here: only the headers a spider
# declares are recorded, and never one of `UNRECORDED_HEADERS`.
CREDENTIAL_FIELDS = frozenset({"PublicKey", "Signature", "AccessKeyId", "SignatureNonce", "Timestamp"})
# Request headers that carry a credential or change with every call: a spider may not declare them
# as `replay_headers` (the SDKs' own names: tencentcloud-sdk-python common/abstract_client.py
# X-TC-Token, X-TC-Timestamp; darabonba-openapi client.py x-acs-date, x-acs-signature-nonce,
# x-acs-security-token; and the generic ones).
UNRECORDED_HEADERS = frozenset(
    {
        "authorization",
        "cookie",
        "x-tc-token",
        "x-tc-timestamp",
        "x-acs-date",
        "x-acs-signature-nonce",
        "x-acs-security-token",
    }
)
_FORM = "form:"  # marks a canonical form body apart from a JSON one


@dataclass(frozen=True)
class Exchange:
    method: str
    url: str
    body_key: str  # canonical request body, "" for none
    status: int
    headers: dict[str, str]
    body: bytes
    crawl_path: str | None = None  # "token" / "keyless": asked on that path only; None: on every path
    # The request headers this answer was recorded for (names lower-cased): it answers only a request
    # that sends the same values. Empty: any request with that key.
    request_headers: dict[str, str] = field(default_factory=dict)

    def answers(self, sent: dict[str, str]) -> bool:
        """Whether a request sending these headers (`header_values`) is the one recorded here."""
        return all(sent.get(name, "") == value for name, value in self.request_headers.items())


def request_key(method: str, url: str, body: bytes | str | None) -> tuple[str, str, str]:
    """How requests are matched: method, path?query (parameters sorted), canonical body."""
    parts = urlsplit(url)
    query = urlencode(sorted(_uncredentialed(parse_qsl(parts.query, keep_blank_values=True))))
    # The path as its characters, however escaped: AWS's `/US%20East%20(Ohio)/` is written
    # `%28Ohio%29` by Python's quote() and `(Ohio)` by the pricing pages' encodeURIComponent.
    path = quote(unquote(parts.path)) + (f"?{query}" if query else "")
    return method.upper(), path, _canonical_body(body)


def header_values(headers: Any) -> dict[str, str]:
    """Request headers as {lower-cased name: value}, from Scrapy's `Headers` (a list of bytes per
    name), an HTTP server's message or a plain mapping."""
    values: dict[str, str] = {}
    for name, value in headers.items():
        if isinstance(value, list):
            value = value[0] if value else b""
        text = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        values[text.lower()] = value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return values


def recordable_headers(names: Iterable[str]) -> tuple[str, ...]:
    """The headers a spider declares for matching, refused (ValueError) when one carries a
    credential or changes with every call (`UNRECORDED_HEADERS`)."""
    names = tuple(names)
    refused = sorted(name for name in names if name.lower() in UNRECORDED_HEADERS)
    if refused:
        raise ValueError(
            f"never recorded in a snapshot (a credential or a per-call value): {', '.join(refused)}"
        )
    return names


def _uncredentialed(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(key, value) for key, value in pairs if key not in CREDENTIAL_FIELDS]


def recorded_url(url: str) -> str:
    """`url` as a snapshot keeps it: without the credentials of a signed query."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = _uncredentialed(pairs)
    if len(kept) == len(pairs):
        return url
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(kept), parts.fragment))


def _canonical_body(body: bytes | str | None) -> str:
    """JSON re-serialised with sorted keys; a form body's fields sorted, credentials left out."""
    if not body:
        return ""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    if text.startswith(_FORM):
        return text
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except json.JSONDecodeError:
        pass
    fields = form_fields(text)
    return text if fields is None else _FORM + urlencode(sorted(fields.items()))


def form_fields(text: str) -> dict[str, str] | None:
    """A form-encoded body's fields without `CREDENTIAL_FIELDS`, or None when it is no form."""
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return None
    return dict(_uncredentialed(pairs)) or None


class Snapshot:
    """The exchanges of one snapshot folder, looked up by request."""

    def __init__(self, folder: Path, meta: dict[str, Any], exchanges: list[Exchange]) -> None:
        self.folder = folder
        self.meta = meta
        self.exchanges = exchanges
        self._by_key: dict[tuple[str, str, str], list[Exchange]] = {}
        for exchange in exchanges:
            self._by_key.setdefault(request_key(exchange.method, exchange.url, exchange.body_key), []).append(
                exchange
            )

    @classmethod
    def load(cls, folder: Path) -> Snapshot:
        """The snapshot in `folder`. Raises SnapshotError, naming the file, for a `snapshot.json` that
        is not JSON or not a snapshot's shape, and for a `body_file` outside the folder (absolute,
        `..`, a link out) or not there: a replayed bug report reads no other file."""
        path = folder / SNAPSHOT_FILE
        try:
            meta = json.loads(path.read_text("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise SnapshotError(f"snapshot {path} is broken: not JSON ({error})") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("exchanges"), list):
            raise SnapshotError(f'snapshot {path} is broken: not an object with an "exchanges" list')
        exchanges = []
        for number, entry in enumerate(meta["exchanges"], start=1):
            try:
                exchanges.append(_exchange(folder, entry))
            except SnapshotError as error:
                raise SnapshotError(f"snapshot {path}: exchange {number}: {error}") from None
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                raise SnapshotError(
                    f"snapshot {path} is broken: exchange {number} is not a request and a response "
                    f"({type(error).__name__}: {error})"
                ) from None
        return cls(folder, meta, exchanges)

    @property
    def synthetic(self) -> bool:
        return bool(self.meta.get("synthetic"))

    def find(self, method: str, url: str, body: bytes | str | None, headers: Any = None) -> Exchange | None:
        """The answer recorded for this request. With the request's `headers`, an exchange that
        recorded some (`replay_headers`) answers only when they match; without, the first
        recorded for method, path, query and body."""
        candidates = self._by_key.get(request_key(method, url, body), [])
        if headers is None:
            return candidates[0] if candidates else None
        sent = header_values(headers)
        return next((exchange for exchange in candidates if exchange.answers(sent)), None)


class SnapshotStorage:
    """Scrapy HTTP-cache storage over a snapshot folder (`HTTPCACHE_DIR`): replays, or records."""

    def __init__(self, settings: BaseSettings) -> None:
        self.folder = Path(settings["HTTPCACHE_DIR"])
        self.recording = settings.getbool(RECORD_SETTING)
        self.snapshot: Snapshot | None = None
        self.recorded: dict[tuple[Any, ...], dict[str, Any]] = {}

    def open_spider(self, spider: Spider) -> None:
        if self.recording:
            recordable_headers(getattr(spider, "replay_headers", ()))
        else:
            self.snapshot = Snapshot.load(self.folder)

    def close_spider(self, spider: Spider) -> None:
        if self.recording:
            self._write_snapshot(spider.name)

    def retrieve_response(self, spider: Spider, request: Request) -> Response | None:
        if self.snapshot is None:
            return None
        exchange = self.snapshot.find(request.method, _source_url(request), request.body, request.headers)
        if exchange is None:
            return None
        headers = Headers(exchange.headers)
        response_class = responsetypes.from_args(headers=headers, url=request.url, body=exchange.body)
        return response_class(
            url=request.url, status=exchange.status, headers=headers, body=exchange.body, request=request
        )

    def store_response(self, spider: Spider, request: Request, response: Response) -> None:
        if not self.recording:
            return
        url = recorded_url(_source_url(request))
        sent = header_values(request.headers)
        # Every declared header, "" when not sent: a replay then tells "sent" from "not sent" too.
        kept_headers = {
            name: sent.get(name.lower(), "")
            for name in recordable_headers(getattr(spider, "replay_headers", ()))
        }
        key = (*request_key(request.method, url, request.body), *sorted(kept_headers.items()))
        number = self.recorded.get(key, {}).get("number", len(self.recorded) + 1)
        body_file = f"{number:02d}-{_file_stem(url)}.{_extension(response)}"
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / body_file).write_bytes(response.body)
        request_entry: dict[str, Any] = {"method": request.method, "url": url}
        if kept_headers:
            request_entry["headers"] = kept_headers
        if request.body:
            text = request.body.decode("utf-8", errors="replace")
            try:
                request_entry["json"] = json.loads(text)
            except json.JSONDecodeError:
                fields = form_fields(text)
                request_entry.update({"form": fields} if fields is not None else {"body": text})
        headers = {
            name: (response.headers.get(name) or b"").decode("latin-1")
            for name in KEPT_HEADERS
            if name in response.headers
        }
        self.recorded[key] = {
            "number": number,
            "entry": {
                "request": request_entry,
                "response": {"status": response.status, "headers": headers, "body_file": body_file},
            },
        }

    def _write_snapshot(self, platform: str) -> None:
        entries = [r["entry"] for r in sorted(self.recorded.values(), key=lambda r: r["number"])]
        dates = [http_date(e["response"]["headers"].get("Date")) for e in entries]
        recorded_at = min((d for d in dates if d is not None), default=None)
        meta = {
            "platform": platform,
            "recorded_at": utc_iso(recorded_at) if recorded_at else None,
            "synthetic": False,
            "exchanges": entries,
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / SNAPSHOT_FILE).write_text(
            json.dumps(meta, indent=1, ensure_ascii=False) + "\n", "utf-8"
        )


class SnapshotError(ValueError):
    """A snapshot folder that cannot be replayed: a broken `snapshot.json`, a body file outside it."""


def _exchange(folder: Path, entry: dict[str, Any]) -> Exchange:
    request, response = entry["request"], entry["response"]
    body = request.get("json")
    if body is not None:
        body_key = _canonical_body(json.dumps(body))
    elif request.get("form") is not None:
        body_key = _canonical_body(urlencode(sorted(request["form"].items())))
    else:
        body_key = _canonical_body(request.get("body"))
    return Exchange(
        method=request.get("method", "GET").upper(),
        url=request["url"],
        body_key=body_key,
        status=int(response.get("status", 200)),
        headers=dict(response.get("headers", {})),
        body=_body_file(folder, response["body_file"]).read_bytes(),
        crawl_path=request.get("crawl_path"),
        request_headers=header_values(request.get("headers") or {}),
    )


def _body_file(folder: Path, name: Any) -> Path:
    """`folder / name`, refused (SnapshotError) unless it is a regular file inside `folder`."""
    if not isinstance(name, str) or not name:
        raise SnapshotError(f"body_file {name!r} is not a file name")
    relative = Path(name)
    path = folder / relative
    bound = folder.resolve()
    if bound.is_relative_to(PACKAGE):
        bound = PACKAGE
    elif relative.is_absolute() or ".." in relative.parts:
        raise SnapshotError(f"body_file {name!r} is outside the snapshot folder")
    if not path.resolve().is_relative_to(bound):
        raise SnapshotError(f"body_file {name!r} leads out of the snapshot folder, to {path.resolve()}")
    if not path.is_file():
        raise SnapshotError(f"body_file {name!r} is not a file in the snapshot folder")
    return path


def _source_url(request: Request) -> str:
    return request.meta.get("source_url", request.url)


def _file_stem(url: str) -> str:
    path = urlsplit(url).path.strip("/") or "index"
    return re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")[:60]


def _extension(response: Response) -> str:
    content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1").lower()
    if "json" in content_type:
        return "json"
    if "html" in content_type:
        return "html"
    if "csv" in content_type:
        return "csv"
    return "txt" if content_type.startswith("text/") else "bin"
