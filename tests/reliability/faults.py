"""The crawl faults of the suite: what each does to a platform's answers, and what the run must make of it.

Each `CrawlFault` is applied to a platform's recorded snapshot by the loopback server
(tests/loopback.py): content faults rewrite the recorded answers (rewrites.py), transport faults
answer requests their own way. A fault read by each spider's own code runs on every platform
whose answers it changes; a fault handled by code every spider shares runs once, each on the next
platform in turn; `fan_out_request_fails` runs where a crawl reads more than one JSON answer, and
`token_echoed_in_error` where the spider sends a token (`platforms_for`).

`outcome` is the crawl status the warehouse must record for it ('ok', 'partial' or 'failed'); the
fault-day checks hold every platform of a day to its own fault's outcome, whatever the others got.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from loopback import AS_RECORDED, Answer, Reply, Rewrite

from reliability.rewrites import (
    ABSURD_FACTOR,
    UNKNOWN_WORD,
    absurd_prices,
    body_rewrite,
    duplicate_records,
    empty_records,
    error_envelope,
    html_absurd_prices,
    html_undecodable_names,
    html_unknown_gpu_names,
    html_without_rows,
    rename_fields,
    rename_prices,
    undecodable_names,
    unknown_gpu_names,
    wrong_content_type,
)
from scrapers.registry import fixture_dir, platforms, spider_class
from scrapers.replay import SNAPSHOT_FILE, Exchange, Snapshot

# Retry-After far above scrapers.settings.RETRY_AFTER_MAX_S (120 s): the crawl must give up now.
RETRY_AFTER_TOO_LONG_S = 86_400
# The download timeout the transport faults crawl with, and a stall well past it.
SHORT_TIMEOUT_S = 0.5
STALL_S = 1.5


@dataclass(frozen=True)
class CrawlFault:
    name: str
    summary: str  # one line for docs/reliability.md
    outcome: str  # crawl status the warehouse must record: ok | partial | failed
    json: Callable[[Any], Any] | None = None  # content faults: a recorded JSON answer -> the one given
    html: Callable[[str], str] | None = None  # content faults: a recorded HTML page -> the one given
    rewrite_reply: Rewrite | None = None  # content faults that change more than the body
    first: tuple[Answer, ...] = ()
    then: Answer = AS_RECORDED
    # answers that depend on the platform or its token: (platform, token) -> (first, then)
    script: Callable[[str, str | None], tuple[tuple[Answer, ...], Answer]] | None = None
    settings: Mapping[str, str] = field(default_factory=dict)  # extra Scrapy settings for the crawl
    once: bool = False  # handled by code every spider shares: runs on one platform, each on the next

    def answers(self, platform: str, token: str | None) -> tuple[tuple[Answer, ...], Answer]:
        return self.script(platform, token) if self.script is not None else (self.first, self.then)

    def rewrite(self) -> Rewrite | None:
        if self.rewrite_reply is not None:
            return self.rewrite_reply
        if self.json is None and self.html is None:
            return None
        return body_rewrite(self.json, self.html)


# --- the catalog ----------------------------------------------------------------------------------

SHORT_TIMEOUT = {"DOWNLOAD_TIMEOUT": str(SHORT_TIMEOUT_S)}


def _fan_out_script(platform: str, token: str | None) -> tuple[tuple[Answer, ...], Answer]:
    """Every answer as recorded but the last request's (and its retries'): HTTP 503."""
    return (AS_RECORDED,) * (json_answers(platform) - 1), Answer(status=503)


def _token_echo_script(platform: str, token: str | None) -> tuple[tuple[Answer, ...], Answer]:
    """HTTP 401 whose message repeats the key sent, as some APIs answer a key they refuse."""
    body = {"error": {"code": "unauthorized", "message": f"invalid API key {token}"}}
    return (), Answer(status=401, body=json.dumps(body).encode("utf-8"))


CLEAN = CrawlFault("clean", "no fault: the recorded answers (the history every fault day builds on)", "ok")

FAULTS: tuple[CrawlFault, ...] = (
    # Each spider reads its answers with its own code: every platform whose answers they change.
    CrawlFault(
        "error_envelope_200", "HTTP 200 whose JSON is an error envelope", "failed", json=error_envelope
    ),
    CrawlFault(
        "empty_list",
        "the list (or object) of records empty; on a page, the table rows gone",
        "failed",
        json=empty_records,
        html=html_without_rows,
    ),
    CrawlFault(
        "price_fields_renamed",
        "schema drift: the price fields renamed, so the ones the spider reads are missing",
        "failed",
        json=rename_prices,
    ),
    CrawlFault(
        "absurd_prices",
        f"every price multiplied by {ABSURD_FACTOR:,} (on a page: every amount after ¥ $ €)",
        "failed",
        json=absurd_prices,
        html=html_absurd_prices,
    ),
    CrawlFault(
        "unknown_gpu_names",
        f"every GPU name followed by {UNKNOWN_WORD!r}, a word no GPU has",
        "ok",
        json=unknown_gpu_names,
        html=html_unknown_gpu_names,
    ),
    # Handled by code every spider shares (scrapers.parsing.json_body, the loader's duplicate rule,
    # scrapers.middlewares and PlatformSpider.request): one platform each, in turn.
    CrawlFault(
        "wrong_content_type",
        "an HTML challenge page where JSON belongs (a JSON error where a page belongs)",
        "failed",
        rewrite_reply=wrong_content_type,
        once=True,
    ),
    CrawlFault(
        "fields_renamed",
        "schema drift: every field of every record renamed (`x` -> `x_v2`)",
        "failed",
        json=rename_fields,
        once=True,
    ),
    CrawlFault(
        "bytes_not_utf8",
        "GPU names carrying a 0xFF byte (not UTF-8)",
        "ok",
        json=undecodable_names,
        html=html_undecodable_names,
        once=True,
    ),
    CrawlFault(
        "duplicated_offers", "every record listed twice", "partial", json=duplicate_records, once=True
    ),
    CrawlFault(
        "server_error_then_recovery",
        "HTTP 503 twice, then the recorded answer",
        "ok",
        first=(Answer(status=503), Answer(status=503)),
        once=True,
    ),
    CrawlFault(
        "server_error_persisting", "HTTP 503 on every attempt", "failed", then=Answer(status=503), once=True
    ),
    CrawlFault(
        "rate_limited_retry_after",
        "HTTP 429 with Retry-After: 1, then the recorded answer",
        "ok",
        first=(Answer(status=429, headers={"Retry-After": "1"}),),
        once=True,
    ),
    CrawlFault(
        "rate_limited_too_long",
        f"HTTP 429 with Retry-After: {RETRY_AFTER_TOO_LONG_S}",
        "failed",
        then=Answer(status=429, headers={"Retry-After": str(RETRY_AFTER_TOO_LONG_S)}),
        once=True,
    ),
    CrawlFault(
        "connection_reset",
        "every connection reset (RST) before an answer",
        "failed",
        then=Answer(reset=True),
        once=True,
    ),
    CrawlFault(
        "slower_than_timeout",
        f"every answer stalls {STALL_S:g} s; DOWNLOAD_TIMEOUT {SHORT_TIMEOUT_S:g} s",
        "failed",
        then=Answer(stall_s=STALL_S),
        settings=SHORT_TIMEOUT,
        once=True,
    ),
    CrawlFault(
        "truncated_body",
        "the whole length announced, half the body sent, connection reset",
        "failed",
        then=Answer(cut_share=0.5),
        once=True,
    ),
    # Platforms where they mean something.
    CrawlFault(
        "fan_out_request_fails",
        "a crawl of several requests: the last one HTTP 503 on every attempt",
        "partial",
        script=_fan_out_script,
    ),
    CrawlFault(
        "token_echoed_in_error",
        "HTTP 401 whose error message repeats the token the request sent",
        "failed",
        script=_token_echo_script,
    ),
)

BY_NAME = {fault.name: fault for fault in (CLEAN, *FAULTS)}


@cache
def web_platforms() -> tuple[str, ...]:
    """The platforms crawled over HTTP with a recorded snapshot: the ones a fault server can stand for.

    Left out: a spider still without a snapshot, and sources read from a local file (`quotes`).
    """
    return tuple(
        name
        for name in platforms()
        if (fixture_dir(name) / SNAPSHOT_FILE).is_file()
        and all(urlsplit(e.url).scheme in ("http", "https") for e in snapshot(name).exchanges)
    )


class _FaultSnapshot(Snapshot):
    """A snapshot that also answers a request asked by a name `unknown_gpu_names` renamed: a spider
    that asks by the names it read (compshare prices each GpuType of its types answer) gets the
    recorded name's answer, as the platform would answer for the card it lists."""

    def find(self, method: str, url: str, body: bytes | str | None, headers: Any = None) -> Exchange | None:
        found = super().find(method, url, body, headers)
        if found is not None or not body:
            return found
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        for renamed in (f"+{UNKNOWN_WORD}", f"%20{UNKNOWN_WORD}", f" {UNKNOWN_WORD}"):
            text = text.replace(renamed, "")
        return super().find(method, url, text, headers)


@cache
def snapshot(platform: str) -> Snapshot:
    """The platform's recorded answers on the path the fault runs take: every token is set (a fake,
    fake_secrets.py), so a spider with a keyless path too asks its token path; the exchanges only
    the keyless path asks (`crawl_path`, scrapers.replay) are left out."""
    recorded = Snapshot.load(fixture_dir(platform))
    exchanges = [e for e in recorded.exchanges if e.crawl_path != "keyless"]
    return _FaultSnapshot(recorded.folder, recorded.meta, exchanges)


def json_answers(platform: str) -> int:
    """How many recorded answers of the platform are JSON (more than one: the crawl fans out)."""
    return sum("json" in e.headers.get("Content-Type", "") for e in snapshot(platform).exchanges)


def empty_list_error(platform: str) -> str:
    """What the crawl's error says to an empty answer: an API answered with no records; a page
    without rows is read as nothing to read (scrapers.crawl.runner's words)."""
    return "answered with no" if json_answers(platform) else "returned nothing the spider could read"


def token_env(platform: str) -> str | None:
    """The environment variable of the platform's token, if its spider reads one."""
    token = spider_class(platform).token
    return token.env if token is not None else None


def _changes_answers(fault: CrawlFault, platform: str) -> bool:
    rewrite = fault.rewrite()
    if rewrite is None:
        return True  # per-request faults change whatever is asked
    if fault.rewrite_reply is None and spider_class(platform).rows_format == "csv":
        # The body rewrites read JSON and HTML; a catalog's rows are CSV (a JSON answer beside them,
        # the catalog's date, is not where its offers are). The contract test runs these cases on
        # the CSV itself (tests/scrapers/row_mutations.py).
        return False
    return any(rewrite(e) != Reply(e.status, dict(e.headers), e.body) for e in snapshot(platform).exchanges)


def platforms_for(fault: CrawlFault) -> list[str]:
    """The platforms `fault` runs on (see the module doc)."""
    names = web_platforms()
    if fault.once:
        shared = [f.name for f in FAULTS if f.once]
        candidates = [names[(shared.index(fault.name) + shift) % len(names)] for shift in range(len(names))]
        if fault.name == "duplicated_offers":
            # Every record twice doubles the offers only where one answer's records are the offers;
            # a fan-out spider asks again for each doubled zone or type (alicloud, tencentcloud).
            candidates = [name for name in candidates if json_answers(name) == 1]
        return [next(name for name in candidates if _changes_answers(fault, name))]
    if fault.name == "fan_out_request_fails":
        return [name for name in names if json_answers(name) > 1]
    if fault.name == "token_echoed_in_error":
        return [name for name in names if token_env(name) is not None]
    return [name for name in names if _changes_answers(fault, name)]
