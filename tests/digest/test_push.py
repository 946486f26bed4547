"""Push channels against a real HTTP server on loopback: each kind's exact payload as its service
documents it (digest/push/kinds.py names the sources), the signatures, rate limits, a channel that
is down, and the ledger that sends each event once and retries failures."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
from collections.abc import Iterator
from datetime import date
from urllib.parse import unquote_plus

import pytest
from busy_digest import BUSY
from push_server import PushServer

from config.notify_file import parse_channels
from config.user_files import UserFileError
from digest.push import kinds
from digest.push.delivery import push, send_test_messages
from digest.push.messages import Event, events

DAY = date(2026, 12, 1)
SECRETS = {"SIGN_SECRET": "SEC-abc123", "BOT_TOKEN": "123456:ABC-DEF"}


@pytest.fixture
def server() -> Iterator[PushServer]:
    served = PushServer()
    yield served
    served.close()


def channels(server_url: str, *kinds_wanted: str) -> tuple:
    env = {**SECRETS, "BASE": server_url}
    text = "\n".join(
        {
            "webhook": "- kind: webhook\n  url: ${BASE}/hook\n  send: [watches, plan_changes, failures, summary]",  # noqa: E501
            "slack": "- kind: slack\n  url: ${BASE}/slack",
            "discord": "- kind: discord\n  url: ${BASE}/discord",
            "feishu": "- kind: feishu\n  url: ${BASE}/feishu\n  secret: ${SIGN_SECRET}\n  lang: zh",
            "wecom": "- kind: wecom\n  url: ${BASE}/wecom?key=k1\n  lang: zh",
            "dingtalk": "- kind: dingtalk\n  url: ${BASE}/dingtalk?access_token=t1\n  secret: ${SIGN_SECRET}",
            "telegram": "- kind: telegram\n  url: ${BASE}\n  token: ${BOT_TOKEN}\n  chat_id: -1001",
        }[kind]
        for kind in kinds_wanted
    )
    return parse_channels(text, "notify.yaml", env)


def test_feishu_signature_matches_the_documented_algorithm() -> None:
    # Feishu: string_to_sign = timestamp + "\n" + secret, HMAC-SHA256 keyed by it over an empty message.
    assert kinds.feishu_sign(1599360473, "demo") == "l1N0gAcBjdwBvGm1xMjOF0XSyaLRpR7tuO5dHfhAYc8="
    expected = hmac.new(b"1599360473\ndemo", b"", hashlib.sha256).digest()
    assert kinds.feishu_sign(1599360473, "demo") == base64.b64encode(expected).decode()


def test_dingtalk_signature_matches_the_documented_algorithm() -> None:
    # DingTalk: HMAC-SHA256 keyed by the secret over timestamp + "\n" + secret, base64, URL-encoded.
    sign = kinds.dingtalk_sign(1577262236757, "SEC-demo")
    assert sign == "vQPOmkGcSwmQYGuEoO1o8OrEB4aNo6cthjFbuLIgrfk%3D"
    digest = hmac.new(b"SEC-demo", b"1577262236757\nSEC-demo", hashlib.sha256).digest()
    assert unquote_plus(sign) == base64.b64encode(digest).decode()


def test_each_kind_sends_its_documented_payload(server: PushServer) -> None:
    chosen = channels(server.url, "webhook", "slack", "discord", "feishu", "wecom", "dingtalk", "telegram")
    event = Event(
        "watches", f"watches:{DAY}", DAY, "gpuplan 2026-12-01: watches fired\nH100 < $2", ({"k": 1},)
    )
    results = push_in_memory(chosen, [event])
    assert [r.status for r in results] == ["sent"] * 7
    got = {r.path: r for r in server.requests}
    assert got["/hook"].body == {
        "schema": "gpuplan.push", "version": 1, "event": "watches", "key": f"watches:{DAY}",
        "date": "2026-12-01", "text": event.text, "entries": [{"k": 1}],
    }  # fmt: skip
    assert got["/slack"].body == {"text": event.text}
    assert got["/discord"].body == {"content": event.text, "allowed_mentions": {"parse": []}}
    feishu = got["/feishu"].body
    assert feishu["msg_type"] == "text" and feishu["content"] == {"text": event.text}
    assert feishu["sign"] == kinds.feishu_sign(int(feishu["timestamp"]), SECRETS["SIGN_SECRET"])
    assert got["/wecom"].body == {"msgtype": "text", "text": {"content": event.text}}
    assert got["/wecom"].query == {"key": ["k1"]}
    ding = got["/dingtalk"]
    assert ding.body == {"msgtype": "text", "text": {"content": event.text}}
    assert ding.query["access_token"] == ["t1"]
    timestamp = int(ding.query["timestamp"][0])
    assert ding.query["sign"] == [unquote_plus(kinds.dingtalk_sign(timestamp, SECRETS["SIGN_SECRET"]))]
    telegram = got[f"/bot{SECRETS['BOT_TOKEN']}/sendMessage"]
    assert telegram.body == {"chat_id": "-1001", "text": event.text, "disable_web_page_preview": True}
    for request in server.requests:
        assert request.headers["content-type"] == "application/json"


def push_in_memory(chosen, evented, sleep=None, con=None):  # type: ignore[no-untyped-def]
    import warehouse_template

    con = con or warehouse_template.scratch()
    return push(con, chosen, lambda lang: evented, sleep=sleep or (lambda s: None))


def test_a_rate_limited_channel_is_waited_for_as_it_says(server: PushServer) -> None:
    server.answers["/slack"] = [(429, {"Retry-After": "2"}, "rate_limited"), (200, {}, "ok")]
    server.answers["/discord"] = [(429, {}, '{"retry_after": 0.5, "global": false}'), (204, {}, "")]
    server.answers["/wecom"] = [
        (200, {}, '{"errcode": 45009, "errmsg": "api freq out of limit"}'),
        (200, {}, '{"errcode": 0}'),
    ]
    waits: list[float] = []
    event = Event("plan_changes", f"plan_changes:{DAY}", DAY, "x", ())
    results = push_in_memory(channels(server.url, "slack", "discord", "wecom"), [event], sleep=waits.append)
    assert [r.status for r in results] == ["sent", "sent", "sent"]
    assert waits == [2.0, 0.5, 1.0]  # Slack's header, Discord's body, WeCom says nothing: one second
    assert len(server.requests) == 6


def test_a_channel_that_is_down_is_recorded_retried_and_never_sent_twice(server: PushServer) -> None:
    import warehouse_template

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    con = warehouse_template.scratch()
    event = Event("watches", f"watches:{DAY}", DAY, "H100 under $2", ())
    (down,) = push_in_memory(channels(dead, "telegram"), [event], con=con)
    assert down.status == "failed" and "ConnectError" in (down.error or "")
    assert SECRETS["BOT_TOKEN"] not in (down.error or "")
    (row,) = con.execute("SELECT status, attempts, last_error, message FROM push_sends").fetchall()
    assert row[:2] == ("failed", 1) and SECRETS["BOT_TOKEN"] not in row[2]
    assert json.loads(row[3])["text"] == "H100 under $2"  # what to send again, no secret

    # The next run: the channel is back, the failed event goes (from the ledger, even if the day's
    # events no longer hold it), then never again.
    (retried,) = push_in_memory(channels(server.url, "telegram"), [], con=con)
    assert retried.status == "sent" and retried.event_key == f"watches:{DAY}"
    assert [r.body["text"] for r in server.requests] == ["H100 under $2"]
    (again,) = push_in_memory(channels(server.url, "telegram"), [event], con=con)
    assert again.status == "already" and len(server.requests) == 1
    assert con.execute("SELECT status, attempts FROM push_sends").fetchall() == [("sent", 2)]


def test_a_channel_that_never_answers_is_given_up_at_its_timeout_and_recorded(server: PushServer) -> None:
    """A chat service that takes the connection and never answers costs the channel's timeout_s, not
    the run: the push is a recorded failure, sent again by the next push."""
    import warehouse_template

    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        chosen = parse_channels(f"- kind: slack\n  url: {url}/slack\n  timeout_s: 0.5", "notify.yaml", {})
        con = warehouse_template.scratch()
        event = Event("watches", f"watches:{DAY}", DAY, "H100 under $2", ())
        (result,) = push_in_memory(chosen, [event], con=con)
    assert result.status == "failed" and result.error == "no answer from 127.0.0.1 within 0.5 s"
    assert con.execute("SELECT status, attempts FROM push_sends").fetchall() == [("failed", 1)]
    answering = parse_channels(f"- kind: slack\n  url: {server.url}/slack", "notify.yaml", {})
    (retried,) = push_in_memory(answering, [], con=con)  # the service answers again
    assert retried.status == "sent" and [r.body["text"] for r in server.requests] == ["H100 under $2"]


def test_a_refused_message_is_a_recorded_failure_naming_the_answer(server: PushServer) -> None:
    server.answers["/feishu"] = [
        (200, {}, '{"code": 19021, "msg": "sign match fail or timestamp is not within one hour"}')
    ]
    (result,) = push_in_memory(channels(server.url, "feishu"), [Event("watches", "w", DAY, "x", ())])
    assert result.status == "failed"
    assert result.error == "127.0.0.1: code 19021: sign match fail or timestamp is not within one hour"


def test_channels_send_only_the_kinds_they_ask_for(server: PushServer) -> None:
    evented = [
        Event(kind, f"{kind}:{DAY}", DAY, kind, ())
        for kind in ("summary", "watches", "plan_changes", "failures")
    ]
    results = push_in_memory(channels(server.url, "slack", "webhook"), evented)
    sent = {(r.channel, r.event_key.split(":")[0]) for r in results}
    assert sent == {("slack-1", "watches"), ("slack-1", "plan_changes"), ("slack-1", "failures")} | {
        ("webhook-2", kind) for kind in ("summary", "watches", "plan_changes", "failures")
    }


def test_the_test_message_reaches_every_channel(server: PushServer) -> None:
    results = send_test_messages(channels(server.url, "slack", "feishu"), DAY)
    assert [r.status for r in results] == ["sent", "sent"]
    assert "slack-1" in server.requests[0].body["text"]
    assert "feishu-2" in server.requests[1].body["content"]["text"]  # in Chinese, the channel's lang


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_events_are_short_in_both_languages_and_carry_the_digest_entries(lang: str) -> None:
    found = {event.kind: event for event in events(BUSY, lang)}
    assert set(found) == {"summary", "watches", "plan_changes", "failures"}
    for event in found.values():
        assert event.key == f"{event.kind}:{BUSY.digest_date}"
        assert "\x1b" not in event.text and "<script>" not in event.text.split("\n")[0]
        assert len(event.text.split("\n")) <= 12  # a title, at most ten items and "and N more"
    assert len(found["plan_changes"].entries) == len(BUSY.plan_changes)
    assert "提醒" in found["watches"].text if lang == "zh" else "watches fired" in found["watches"].text


def test_a_long_message_is_cut_at_a_line_within_the_kind_limit() -> None:
    text = "\n".join(f"line {n} " + "x" * 90 for n in range(100))
    for kind, limit in kinds.LIMITS.items():
        cut = kinds.fitted(text, kind)
        size = len(cut.encode()) if kind == "wecom" else len(cut)
        assert size <= limit and cut.endswith("…") and cut.split("\n")[-2].startswith("line")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("- kind: slak\n  url: https://h", "line 1: kind: must be one of webhook, slack"),
        (
            "- kind: slack\n  url: http://example.com/x",
            "line 2: url: must be https (plain http only to a loopback host)",
        ),
        ("- kind: slack\n  url: https://h\n  sendd: [watches]", "line 3: sendd: unknown key"),
        (
            "- kind: feishu\n  url: https://h\n  secret: plain-secret",
            "line 3: secret must come from the environment",
        ),
        ("- kind: slack\n  url: ${NOPE}", "line 2: ${NOPE} is not set in the environment"),
        ("- kind: telegram\n  chat_id: 1", "token: Field required"),
        (
            "- kind: slack\n  url: https://h\n- kind: slack\n  name: slack-1\n  url: https://h",
            "two channels are named 'slack-1'",
        ),
    ],
)
def test_a_bad_notify_file_is_one_line_naming_the_line(text: str, problem: str) -> None:
    with pytest.raises(UserFileError) as caught:
        parse_channels(text, "GPUPLAN_NOTIFY notify.yaml", {})
    message = str(caught.value)
    assert message.startswith("GPUPLAN_NOTIFY notify.yaml") and problem in message and "\n" not in message
    assert "plain-secret" not in message


def test_a_channel_never_shows_its_url_or_secret() -> None:
    ((_, channel),) = parse_channels(
        "- kind: dingtalk\n  url: https://oapi.dingtalk.com/robot/send?access_token=${T}\n  secret: ${S}",
        "f", {"T": "tok-123", "S": "sec-456"},
    )  # fmt: skip
    assert "tok-123" not in repr(channel) and "sec-456" not in repr(channel)
    assert channel.host() == "oapi.dingtalk.com"
