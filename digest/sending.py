"""The digest goes out once per day and is never lost: the one function the Dagster asset and the CLI call.

Rules (state in the writer's `digest_sends` table, one row per digest day):
- a day already 'sent' (or 'skipped' as quiet) is not sent again, however often the run repeats;
- a failed attempt is recorded ('failed', attempts + 1, the error without secrets) and retried on
  the next run, and so is a day left 'sending' by a crash mid-send;
- each run first retries every earlier day still failed, oldest first, then sends `today`. A day
  that never got an attempt (no run that day) is not invented later: only recorded days retry.
Delivery is at least once: a crash after the server accepted the mail but before 'sent' was
recorded sends that day again, with the same Message-ID so mail clients can drop the copy.

Given the warehouse's path (the CLI and the Dagster asset), the mail is built from the published
snapshot and sent outside the writer lock: a slow or hung SMTP server never holds up a load.
The send records are written by short writer sessions that do not republish the
snapshot (they go out with the next publish); one sender runs at a time (the digest lock).
"""

from __future__ import annotations

import logging
import secrets
import smtplib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import getaddresses
from pathlib import Path
from typing import Any

import duckdb

from config.watches_file import NO_WATCHES, WatchList
from digest import mailer
from digest.catalogue import DEFAULT_LANGUAGE
from digest.content import build_digest
from digest.render import render
from warehouse import queries
from warehouse.engine import connect

log = logging.getLogger(__name__)

# Enough for the server's reply and our context; the whole traceback goes to the log instead.
MAX_ERROR_CHARS = 1000
FINAL_STATUSES = ("sent", "skipped")


@dataclass(frozen=True)
class SendOptions:
    """How to send: the SMTP server, the price-move threshold the digest cuts at (percent),
    whether a quiet day (no change at all) is skipped instead of mailed, the mail's language
    (GPUPLAN_DIGEST_LANG) and the watches it reports (GPUPLAN_WATCHES, parsed at the edge)."""

    smtp: mailer.SmtpConfig
    price_move_pct: float
    skip_empty: bool = False
    lang: str = DEFAULT_LANGUAGE
    watches: WatchList = NO_WATCHES


@dataclass(frozen=True)
class SendResult:
    """What happened to one digest day in this run.

    status: 'sent' | 'failed' | 'skipped' (quiet day, GPUPLAN_DIGEST_SKIP_EMPTY) as recorded, or
    'no_plans' (the day has no cheapest plans: nothing recorded, nothing sent).
    attempted: False when the day was already final ('sent'/'skipped') and nothing was done now.
    """

    digest_date: date
    status: str
    attempted: bool
    attempts: int
    subject: str | None = None
    message_id: str | None = None
    recipients: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    error: str | None = None


def send_pending(
    warehouse: Path | duckdb.DuckDBPyConnection,
    today: date,
    options: SendOptions,
    *,
    lock_timeout_s: float = connect.DEFAULT_LOCK_TIMEOUT_S,
) -> list[SendResult]:
    """Retry earlier failed digest days, then send `today`'s, each at most once; one result per day.

    `warehouse`: the published warehouse's path (mail built from the snapshot, sent outside the
    writer lock, records written to the writer file without republishing), or one connection that
    holds both plans and records (tests, scratch). Delivery failures are recorded and returned,
    never raised; the caller decides how loud to be.
    """
    with _store(warehouse, lock_timeout_s) as store:
        retries = store.fetch("digest/send_retries", today=today)
        return [_send_day(store, day, options) for day in [*(row[0] for row in retries), today]]


class _Store:
    """Where a send's state is read and recorded, and where its digest is built from."""

    def __init__(self, records: connect.RecordsOpener, content: duckdb.DuckDBPyConnection) -> None:
        self._records = records
        self.content = content

    def fetch(self, name: str, **params: Any) -> list[Any]:
        with self._records() as con:
            return con.execute(queries.sql(name), params).fetchall()

    def record(self, **params: Any) -> None:
        with self._records() as con:
            queries.execute(con, "digest/send_record", **params)


@contextmanager
def _store(warehouse: Path | duckdb.DuckDBPyConnection, lock_timeout_s: float) -> Iterator[_Store]:
    with connect.sender_records(warehouse, lock_timeout_s, purpose="digest") as records:
        if isinstance(warehouse, duckdb.DuckDBPyConnection):
            yield _Store(records, warehouse)
            return
        with connect.reader(warehouse) as snapshot:
            yield _Store(records, snapshot)


def _send_day(store: _Store, day: date, options: SendOptions) -> SendResult:
    state = store.fetch("digest/send_state", digest_date=day)
    status, attempts, message_id = state[0] if state else (None, 0, None)
    if status in FINAL_STATUSES:
        return SendResult(day, status, attempted=False, attempts=attempts, message_id=message_id)
    digest = build_digest(store.content, day, price_move_pct=options.price_move_pct, watches=options.watches)
    if not digest.plans:
        return SendResult(
            day, "no_plans", attempted=False, attempts=attempts, error=f"no cheapest plans for {day}"
        )
    if digest.is_quiet and options.skip_empty:
        _record(
            store,
            day,
            "skipped",
            attempts,
            message_id or _new_message_id(options.smtp.sender, day),
            tuple(options.smtp.recipients),
        )
        log.info("digest %s: no changes, not sent (GPUPLAN_DIGEST_SKIP_EMPTY)", day)
        return SendResult(day, "skipped", attempted=True, attempts=attempts)

    attempts += 1
    message_id = message_id or _new_message_id(options.smtp.sender, day)
    addressed = tuple(options.smtp.recipients)
    # Written before the SMTP conversation: a crash from here on leaves a row the next run retries.
    _record(store, day, "sending", attempts, message_id, addressed)
    subject = None
    try:
        rendered = render(digest, options.lang)
        subject = rendered.subject
        delivery = mailer.deliver(mailer.build_message(rendered, options.smtp, message_id), options.smtp)
    except Exception as exc:  # any failure (render, network, server) is recorded and retried, never lost
        error = mailer.describe(exc, options.smtp)[:MAX_ERROR_CHARS]
        _record(store, day, "failed", attempts, message_id, addressed, subject=subject, error=error)
        log.warning(
            "digest %s: send failed (attempt %d), will retry on the next run: %s",
            day,
            attempts,
            error,
            # A traceback for our own bugs; not for SMTP/network errors, whose unscrubbed text
            # could echo what the server was sent.
            exc_info=not isinstance(exc, smtplib.SMTPException | OSError),
        )
        return SendResult(day, "failed", True, attempts, subject, message_id, addressed, error=error)
    _record(
        store,
        day,
        "sent",
        attempts,
        message_id,
        delivery.accepted,
        subject=subject,
        refused=delivery.refused,
        sent_at=_now_utc(),
    )
    if delivery.refused:
        log.warning("digest %s: sent, but the server refused %s", day, "; ".join(delivery.refused))
    log.info("digest %s: sent to %d recipients as %s", day, len(delivery.accepted), message_id)
    return SendResult(day, "sent", True, attempts, subject, message_id, delivery.accepted, delivery.refused)


def _record(
    store: _Store,
    day: date,
    status: str,
    attempts: int,
    message_id: str,
    recipients: tuple[str, ...],
    *,
    subject: str | None = None,
    refused: tuple[str, ...] = (),
    error: str | None = None,
    sent_at: datetime | None = None,
) -> None:
    store.record(
        digest_date=day,
        status=status,
        attempts=attempts,
        last_error=error,
        attempted_at=_now_utc(),
        sent_at=sent_at,
        message_id=message_id,
        subject=subject,
        recipients=list(recipients),
        refused_recipients=list(refused),
    )


def _new_message_id(sender: str | None, day: date) -> str:
    """'<2026-12-01.<16 hex>.gpuplan-digest@sender.domain>': unique, and short enough that the
    header is not folded (make_msgid's are; some clients then mis-thread)."""
    addresses = getaddresses([sender or ""])
    domain = addresses[0][1].rpartition("@")[2] if addresses else ""
    return f"<{day.isoformat()}.{secrets.token_hex(8)}.gpuplan-digest@{domain or 'gpuplan.invalid'}>"


def _now_utc() -> datetime:
    """UTC wall time without zone, as the warehouse stores timestamps."""
    return datetime.now(UTC).replace(tzinfo=None)


def run_outcome(con: duckdb.DuckDBPyConnection, day: date, since: datetime) -> str | None:
    """What a run begun at `since` (naive UTC, as the records are) did with `day`'s digest, in words,
    from the day's send record: what it sent, or that the day had gone before it. None: no record.

    A run sends a day once (FINAL_STATUSES): a later run of the same day attempts nothing, and
    saying the record's "sent (attempt 1)" there would claim a mail this run never sent.
    """
    rows = queries.records(con, "digest/send_outcome", digest_date=day)
    if not rows:
        return None
    [row] = rows
    status, attempts = row["status"], row["attempts"]
    last = row["last_attempt_at"]
    if last >= since:  # this run's doing
        return {
            "sent": f"sent (attempt {attempts})",
            "skipped": "not sent: no changes (GPUPLAN_DIGEST_SKIP_EMPTY)",
            "failed": f"send failed (attempt {attempts}), retried on the next run: {row['last_error']}",
        }.get(status, f"{status} (attempt {attempts}): interrupted, retried on the next run")
    if status == "sent":
        return f"not sent again: sent earlier, at {row['sent_at']:%Y-%m-%d %H:%M} UTC"
    if status == "skipped":
        return f"not sent: skipped earlier (no changes), at {last:%Y-%m-%d %H:%M} UTC"
    return f"not attempted by this run; the last attempt ({attempts}, {last:%Y-%m-%d %H:%M} UTC) {status}"
