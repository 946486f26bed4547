"""send_pending() against a real SMTP server on 127.0.0.1 (aiosmtpd), records in a migrated DuckDB."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest
from aiosmtpd.smtp import AuthResult

from config.settings import Settings
from config.watches_file import PriceWatch, WatchList
from digest import mailer
from digest.sending import SendOptions, run_outcome, send_pending

DAY = date(2026, 12, 1)
HOSTILE = "<script>alert(1)</script>"


def _options(settings: Settings) -> SendOptions:
    return SendOptions(settings.smtp, settings.price_move_pct, settings.digest_skip_empty)


def _news(warehouse, *days: date, with_offers: bool = False) -> None:
    """Plans for each day and the day before it, and one plan change on each day (all synthetic)."""
    for d in sorted({d - timedelta(days=n) for d in days for n in (0, 1)}):
        warehouse.plans(
            d,
            [
                warehouse.plan("7B", "lora", "矩池云", "A100 80GB", 1, 800.0),
                warehouse.plan("7B", "lora", HOSTILE, "RTX 4090 24GB", 2, 500.0, ranking="lowest_run_total"),
            ],
        )
    for day in days:
        warehouse.changes(
            day,
            [
                {
                    "model": "7B",
                    "method": "lora",
                    "change_type": "new_platform",
                    "old_value": "vastai",
                    "new_value": "矩池云",
                }
            ],
        )
    if with_offers:
        for n in range(5):
            warehouse.crawl(
                days[0] - timedelta(days=n), "矩池云", [{"gpu_model": "A100 80GB", "usd": 1.0 + n / 10}]
            )


def _sends(warehouse) -> list[tuple]:
    return warehouse.con.execute(
        "SELECT digest_date, status, attempts, last_error, recipients, refused_recipients "
        "FROM digest_sends ORDER BY digest_date"
    ).fetchall()


def test_the_digest_arrives_as_html_and_text_with_the_chart_inline(warehouse, settings, smtp_server):
    _news(warehouse, DAY, with_offers=True)
    [result] = send_pending(warehouse.con, DAY, _options(settings))
    assert (result.status, result.attempted, result.attempts) == ("sent", True, 1)

    [envelope] = smtp_server.handler.envelopes
    assert envelope.mail_from == "digest@gpuplan.test"
    assert envelope.rcpt_tos == ["ops@gpuplan.test", "lead@gpuplan.test"]
    [message] = smtp_server.handler.messages
    assert message["From"].addresses[0].display_name == "GPU 价格日报"
    assert message["Subject"] == "gpuplan 2026-12-01: 1 plan change"
    assert message["Message-ID"] == result.message_id
    assert message.get_content_type() == "multipart/alternative"
    text_part, related = message.iter_parts()
    assert text_part.get_content_type() == "text/plain"
    assert related.get_content_type() == "multipart/related"
    html_part, image = related.iter_parts()
    assert html_part.get_content_type() == "text/html"
    assert image.get_content_type() == "image/png"
    assert image.get_content().startswith(b"\x89PNG")
    cid = image["Content-ID"].strip("<>")
    html, text = html_part.get_content(), text_part.get_content()
    assert f'src="cid:{cid}"' in html
    assert "矩池云" in html and "矩池云" in text
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert HOSTILE in text

    assert _sends(warehouse) == [(DAY, "sent", 1, None, ["ops@gpuplan.test", "lead@gpuplan.test"], [])]


def test_a_chinese_digest_with_a_watch_arrives_in_chinese(warehouse, settings, smtp_server):
    """GPUPLAN_DIGEST_LANG=zh: subject, both bodies and the Content-Language header are Chinese, CNY
    first; a watch that fires is at the top (SYNTHETIC plans and offers)."""
    _news(warehouse, DAY, with_offers=True)
    watches = WatchList((PriceWatch(1, "A100", "A100 80GB", 1.05, "USD"),))  # 1.10 yesterday, 1.00 today
    options = replace(_options(settings), lang="zh", watches=watches)
    [result] = send_pending(warehouse.con, DAY, options)
    assert result.status == "sent"
    [message] = smtp_server.handler.messages
    assert message["Subject"] == "gpuplan 2026-12-01：1 个提醒触发，1 项方案变化"
    assert message["Content-Language"] == "zh"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert text.splitlines()[:4] == [
        "2026-12-01 GPU 训练方案",
        "今日推荐：7B lora 租 矩池云 的 A100 80GB x 1，每月 ¥5,760。",
        "自 2026-11-30 以来：1 个提醒触发，1 项方案变化。",
        "",
    ]
    assert text.splitlines()[4:6] == [
        "提醒",
        "- A100 80GB 低于 $1.05/卡时：现价 $1.00/卡时（矩池云）（此前 $1.10/卡时）",
    ]
    assert "每月 ¥5,760" in text and "每月 ¥5,760" in html


def test_sending_the_same_day_twice_delivers_once(warehouse, settings, smtp_server):
    _news(warehouse, DAY)
    first = send_pending(warehouse.con, DAY, _options(settings))
    second = send_pending(warehouse.con, DAY, _options(settings))
    assert [(r.status, r.attempted) for r in first + second] == [("sent", True), ("sent", False)]
    assert len(smtp_server.handler.envelopes) == 1
    assert second[0].message_id == first[0].message_id


def test_a_send_failing_with_the_server_down_is_recorded_and_sent_by_the_next_run(
    warehouse, settings, smtp_server
):
    next_day = DAY + timedelta(days=1)
    _news(warehouse, DAY, next_day)
    smtp_server.stop()

    [failed] = send_pending(warehouse.con, DAY, _options(settings))
    assert (failed.status, failed.attempts) == ("failed", 1)
    assert failed.error.startswith("ConnectionRefusedError")
    [(day, status, attempts, error, _, _)] = _sends(warehouse)
    assert (day, status, attempts, error) == (DAY, "failed", 1, failed.error)

    smtp_server.start()
    results = send_pending(warehouse.con, next_day, _options(settings))
    assert [(r.digest_date, r.status, r.attempts) for r in results] == [
        (DAY, "sent", 2),
        (next_day, "sent", 1),
    ]
    subjects = [m["Subject"] for m in smtp_server.handler.messages]
    assert subjects == ["gpuplan 2026-12-01: 1 plan change", "gpuplan 2026-12-02: 1 plan change"]
    assert [(row[0], row[1], row[3]) for row in _sends(warehouse)] == [
        (DAY, "sent", None),
        (next_day, "sent", None),
    ]
    # The retry reuses the first attempt's Message-ID, so a client can drop a duplicate.
    assert smtp_server.handler.messages[0]["Message-ID"] == failed.message_id


def test_a_day_left_sending_by_a_crash_is_retried_with_its_message_id(
    warehouse, settings, smtp_server, monkeypatch
):
    yesterday = DAY - timedelta(days=1)
    _news(warehouse, yesterday, DAY)

    def killed(message, smtp):
        raise KeyboardInterrupt  # the process dies mid-conversation: nothing after this runs

    with monkeypatch.context() as patch:
        patch.setattr(mailer, "deliver", killed)
        with pytest.raises(KeyboardInterrupt):
            send_pending(warehouse.con, yesterday, _options(settings))
    [(_, status, attempts, _, _, _)] = _sends(warehouse)
    assert (status, attempts) == ("sending", 1)
    [crashed_id] = warehouse.con.execute("SELECT message_id FROM digest_sends").fetchall()[0]

    results = send_pending(warehouse.con, DAY, _options(settings))
    assert [(r.digest_date, r.status, r.attempts) for r in results] == [
        (yesterday, "sent", 2),
        (DAY, "sent", 1),
    ]
    assert smtp_server.handler.messages[0]["Message-ID"] == crashed_id


def test_a_failure_before_the_server_is_recorded_too(warehouse, settings, smtp_server, monkeypatch, caplog):
    _news(warehouse, DAY)

    def broken(message, smtp):
        raise ValueError("synthetic bug while sending")

    with monkeypatch.context() as patch:
        patch.setattr(mailer, "deliver", broken)
        [failed] = send_pending(warehouse.con, DAY, _options(settings))
    assert (failed.status, failed.error) == ("failed", "ValueError: synthetic bug while sending")
    assert "Traceback" in caplog.text  # our own bugs keep their traceback in the log
    [retried] = send_pending(warehouse.con, DAY, _options(settings))
    assert (retried.status, retried.attempts) == ("sent", 2)


def test_a_refused_recipient_is_recorded(warehouse, settings, smtp_server):
    _news(warehouse, DAY)
    smtp_server.handler.refuse = {"lead@gpuplan.test"}
    [result] = send_pending(warehouse.con, DAY, _options(settings))
    assert result.status == "sent"
    assert result.refused == ("lead@gpuplan.test: 550 5.1.1 synthetic: no such user",)
    assert _sends(warehouse) == [(DAY, "sent", 1, None, ["ops@gpuplan.test"], list(result.refused))]
    assert smtp_server.handler.envelopes[0].rcpt_tos == ["ops@gpuplan.test"]


def test_all_recipients_refused_is_a_failure_retried_later(warehouse, settings, smtp_server):
    _news(warehouse, DAY)
    smtp_server.handler.refuse = set(settings.smtp.recipients)
    [result] = send_pending(warehouse.con, DAY, _options(settings))
    assert result.status == "failed"
    assert result.error == (
        "SMTPRecipientsRefused: all recipients refused: "
        "ops@gpuplan.test: 550 5.1.1 synthetic: no such user; "
        "lead@gpuplan.test: 550 5.1.1 synthetic: no such user"
    )
    assert smtp_server.handler.envelopes == []
    smtp_server.handler.refuse = set()
    [retried] = send_pending(warehouse.con, DAY, _options(settings))
    assert (retried.status, retried.attempts) == ("sent", 2)


def test_the_password_never_reaches_the_record_or_the_log(warehouse, settings, smtp_server, caplog):
    _news(warehouse, DAY)
    smtp_server.stop()
    smtp_server.start(
        auth_require_tls=False,
        authenticator=lambda *args: AuthResult(success=False, handled=False),
    )
    password = "hunter2-s3cret"
    locked = replace(settings, smtp=replace(settings.smtp, user="digest", password=password))
    with caplog.at_level(logging.DEBUG):
        [result] = send_pending(warehouse.con, DAY, _options(locked))
    assert result.status == "failed" and result.error.startswith("SMTPAuthenticationError: 535")
    stored = warehouse.con.execute("SELECT * FROM digest_sends").fetchall()
    assert password not in repr(stored) and password not in caplog.text
    assert password not in repr(locked)


def test_a_quiet_day_sends_a_short_mail_or_nothing_when_told_to_skip(warehouse, settings, smtp_server):
    quiet_day = DAY + timedelta(days=1)
    _news(warehouse, DAY)
    warehouse.plans(quiet_day, [warehouse.plan("7B", "lora", "矩池云", "A100 80GB", 1, 800.0)])

    [skipped] = send_pending(warehouse.con, quiet_day, _options(replace(settings, digest_skip_empty=True)))
    assert (skipped.status, skipped.attempted) == ("skipped", True)
    assert smtp_server.handler.envelopes == []
    [again] = send_pending(warehouse.con, quiet_day, _options(settings))
    assert (again.status, again.attempted) == ("skipped", False)  # decided once, not re-sent later

    other_quiet_day = quiet_day + timedelta(days=1)
    warehouse.plans(other_quiet_day, [warehouse.plan("7B", "lora", "矩池云", "A100 80GB", 1, 800.0)])
    [sent] = send_pending(warehouse.con, other_quiet_day, _options(settings))
    assert sent.status == "sent"
    [message] = smtp_server.handler.messages
    assert message["Subject"] == "gpuplan 2026-12-03: no changes"
    assert "No changes since 2026-12-02" in message.get_body(("plain",)).get_content()


def test_a_day_without_plans_is_reported_not_recorded(warehouse, settings, smtp_server):
    [result] = send_pending(warehouse.con, DAY, _options(settings))
    assert (result.status, result.attempted, result.error) == (
        "no_plans",
        False,
        "no cheapest plans for 2026-12-01",
    )
    assert _sends(warehouse) == [] and smtp_server.handler.envelopes == []


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def test_a_run_says_what_it_did_with_the_digest_not_what_an_earlier_run_did(warehouse, settings, smtp_server):
    """`gpuplan refresh`'s digest line (run_outcome): the run that sent says so; a later run of the
    same day sends nothing and says the day went earlier, not "sent (attempt 1)"; a failure says
    it is retried; a day without a record is None (refresh then says "not sent")."""
    _news(warehouse, DAY)
    assert run_outcome(warehouse.con, DAY, _now()) is None

    smtp_server.stop()
    first = _now()
    send_pending(warehouse.con, DAY, _options(settings))
    failed = run_outcome(warehouse.con, DAY, first)
    assert failed is not None
    assert failed.startswith("send failed (attempt 1), retried on the next run: ConnectionRefusedError")

    smtp_server.start()
    second = _now()
    send_pending(warehouse.con, DAY, _options(settings))
    assert run_outcome(warehouse.con, DAY, second) == "sent (attempt 2)"

    third = _now()
    [again] = send_pending(warehouse.con, DAY, _options(settings))
    assert not again.attempted and len(smtp_server.handler.messages) == 1
    [(sent_at,)] = warehouse.con.execute("SELECT sent_at FROM digest_sends").fetchall()
    assert run_outcome(warehouse.con, DAY, third) == (
        f"not sent again: sent earlier, at {sent_at:%Y-%m-%d %H:%M} UTC"
    )


def test_a_quiet_day_skipped_says_so_then_and_later(warehouse, settings, smtp_server):
    warehouse.plans(DAY - timedelta(days=1), [warehouse.plan("7B", "lora", "vastai", "A100 80GB", 1, 800.0)])
    warehouse.plans(DAY, [warehouse.plan("7B", "lora", "vastai", "A100 80GB", 1, 800.0)])
    quiet = _options(replace(settings, digest_skip_empty=True))
    first = _now()
    [skipped] = send_pending(warehouse.con, DAY, quiet)
    assert skipped.status == "skipped"
    assert run_outcome(warehouse.con, DAY, first) == "not sent: no changes (GPUPLAN_DIGEST_SKIP_EMPTY)"
    later = _now()
    send_pending(warehouse.con, DAY, quiet)
    said = run_outcome(warehouse.con, DAY, later)
    assert said is not None and said.startswith("not sent: skipped earlier (no changes), at ")
    assert not smtp_server.handler.messages
