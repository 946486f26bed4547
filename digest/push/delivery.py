"""Push the day's events to every channel once, record each result, retry failures at the next run.

Rules (state in the writer's `push_sends` table, one row per event and channel):
- an event 'sent' to a channel is never sent to it again, however often the run repeats;
- a failed push is recorded (what, where, why: the service's answer or the kind of network error,
  never a URL, token or secret) and retried at the next push, from the message stored with it;
- a channel that answers 429 (or its service's rate-limit code) is waited for as it says
  (`Retry-After`, `retry_after`), at most MAX_WAIT_S at a time and MAX_RATE_LIMITED_TRIES times; past
  that the push is recorded failed and retried later;
- every request has the channel's timeout (`timeout_s`, 10 s), and redirects are not followed.
Pushes are sent from the published snapshot's content and outside any writer session; each result
is recorded by a short writer session that does not republish the snapshot (like the digest's
sends), so a slow or hung chat service never holds the warehouse writer. One pusher runs at a time
(the `push` lock beside the warehouse).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import httpx

from config.shown_text import one_line
from digest.push import kinds
from digest.push.messages import Event
from warehouse import queries
from warehouse.engine import connect

log = logging.getLogger(__name__)

MAX_WAIT_S = 60.0  # the longest a rate limit is waited out within one push
MAX_RATE_LIMITED_TRIES = 3
DEFAULT_WAIT_S = 1.0  # a rate limit that does not say how long: Slack's one message a second
USER_AGENT = "gpuplan/0.1 (GPU rental price tracker; push)"


@dataclass(frozen=True)
class PushResult:
    channel: str
    kind: str
    host: str
    event_key: str
    status: str  # sent | failed | already (sent before: not again) | dry-run
    error: str | None = None
    text: str = ""


Channels = Iterable[tuple[str, Any]]


class _Ledger:
    def __init__(self, records: connect.RecordsOpener) -> None:
        self._records = records

    def state(self, channels: list[str]) -> list[dict[str, Any]]:
        with self._records() as con:
            return queries.records(con, "digest/push_state", channels=channels)

    def record(self, name: str, channel: Any, event: Event, status: str, error: str | None) -> None:
        now = datetime.now(UTC).replace(tzinfo=None)
        message = {"kind": event.kind, "text": event.text, "entries": event.payload()["entries"]}
        with self._records() as con:
            queries.execute(
                con,
                "digest/push_record",
                channel=name,
                kind=channel.kind,
                event_key=event.key,
                event_kind=event.kind,
                event_date=event.day,
                message=json.dumps(message, ensure_ascii=False),
                status=status,
                last_error=error,
                attempted_at=now,
                sent_at=now if status == "sent" else None,
            )


@contextmanager
def _ledger(warehouse: Path | duckdb.DuckDBPyConnection, lock_timeout_s: float) -> Iterator[_Ledger]:
    with connect.sender_records(warehouse, lock_timeout_s, purpose="push") as records:
        yield _Ledger(records)


def send(
    channel: Any, event: Event, client: httpx.Client, sleep: Callable[[float], None] = time.sleep
) -> str | None:
    """Send `event` on `channel`: None when the service accepted it, else why not (one line, no secret)."""
    host = channel.host()
    for _ in range(MAX_RATE_LIMITED_TRIES):
        request = kinds.request(channel.kind, channel, event.text, event.payload())
        try:
            response = client.post(request.url, json=request.body, timeout=channel.timeout_s)
        except httpx.TimeoutException:
            return f"no answer from {host} within {channel.timeout_s:g} s"
        except httpx.HTTPError as exc:  # its text can hold the URL, and so a token: the kind only
            return f"{type(exc).__name__} talking to {host}"
        said = kinds.answer(channel.kind, response.status_code, dict(response.headers), response.text)
        if said.ok:
            return None
        if not said.rate_limited:
            return one_line(f"{host}: {said.error}")
        wait = DEFAULT_WAIT_S if said.retry_after_s is None else said.retry_after_s
        if wait > MAX_WAIT_S:
            return f"{host}: rate limited, retry after {wait:g} s (at the next run)"
        sleep(wait)
    return f"{host}: still rate limited after {MAX_RATE_LIMITED_TRIES} tries (retried at the next run)"


def _retried(row: dict[str, Any]) -> Event:
    message = json.loads(row["message"]) if isinstance(row["message"], str) else row["message"]
    return Event(
        row["event_kind"], row["event_key"], row["event_date"], message["text"], tuple(message["entries"])
    )


def push(
    warehouse: Path | duckdb.DuckDBPyConnection,
    channels: Channels,
    events_in: Callable[[str], list[Event]],
    *,
    dry_run: bool = False,
    lock_timeout_s: float = 60.0,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[PushResult]:
    """Push each channel's events (`events_in(lang)`, those of kinds in its `send`) and its earlier
    failures, each at most once; returns what happened to each. `dry_run`: send and record nothing."""
    chosen = list(channels)
    by_lang: dict[str, list[Event]] = {}
    results: list[PushResult] = []
    with ExitStack() as stack:
        ledger = stack.enter_context(_ledger(warehouse, lock_timeout_s))
        http = client or stack.enter_context(
            httpx.Client(follow_redirects=False, headers={"User-Agent": USER_AGENT})
        )
        state = ledger.state([name for name, _ in chosen])
        for name, channel in chosen:
            sent = {row["event_key"] for row in state if row["channel"] == name and row["status"] == "sent"}
            retries = [_retried(row) for row in state if row["channel"] == name and row["status"] == "failed"]
            if channel.lang not in by_lang:
                by_lang[channel.lang] = events_in(channel.lang)
            todo = {e.key: e for e in retries}
            todo.update(
                {e.key: e for e in by_lang[channel.lang] if e.kind in channel.send and e.key not in todo}
            )
            for event in todo.values():
                base = PushResult(name, channel.kind, channel.host(), event.key, "", text=event.text)
                if event.key in sent:
                    results.append(_with(base, "already"))
                    continue
                if dry_run:
                    results.append(_with(base, "dry-run"))
                    continue
                error = send(channel, event, http, sleep)
                ledger.record(name, channel, event, "failed" if error else "sent", error)
                if error:
                    log.warning("push %s to %s failed, retried at the next run: %s", event.key, name, error)
                results.append(_with(base, "failed" if error else "sent", error))
    return results


def _with(result: PushResult, status: str, error: str | None = None) -> PushResult:
    return PushResult(result.channel, result.kind, result.host, result.event_key, status, error, result.text)


def send_test_messages(channels: Channels, day: date, client: httpx.Client | None = None) -> list[PushResult]:
    """`gpuplan notify --test`: one test message to every channel, nothing recorded."""
    from digest.push.messages import probe_event

    results = []
    with (
        httpx.Client(follow_redirects=False, headers={"User-Agent": USER_AGENT})
        if client is None
        else nullcontext(client) as http
    ):
        for name, channel in channels:
            event = probe_event(name, channel.lang, day)
            error = send(channel, event, http)
            results.append(
                PushResult(
                    name,
                    channel.kind,
                    channel.host(),
                    event.key,
                    "failed" if error else "sent",
                    error,
                    event.text,
                )
            )
    return results


def push_day(
    warehouse: Path,
    channels: Channels,
    day: date,
    *,
    price_move_pct: float,
    watches: Any,
    dry_run: bool = False,
    client: httpx.Client | None = None,
) -> list[PushResult]:
    """The day's events, built from the published snapshot, pushed to `channels` (what the Dagster
    `push` asset and `gpuplan notify` both call)."""
    from digest.content import build_digest
    from digest.push.messages import events

    with connect.reader(warehouse) as con:
        digest = build_digest(con, day, price_move_pct=price_move_pct, watches=watches)
    if not digest.plans:
        return []
    return push(warehouse, channels, lambda lang: events(digest, lang), dry_run=dry_run, client=client)
