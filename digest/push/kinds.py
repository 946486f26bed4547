"""Each channel kind as its service documents it: the request to send, what its answer means, its limits.

Sources (each checked against the service's documentation; the signing algorithms are pinned by
test vectors in tests/digest/test_push_kinds.py):
- Slack incoming webhooks: POST JSON `{"text": ...}`; 200 "ok"; 429 with `Retry-After` (seconds);
  text over 40,000 characters is truncated by Slack, 4,000 is its advice for a message
  (docs.slack.dev/messaging/sending-messages-using-incoming-webhooks, .../rate-limits).
- Discord webhooks: POST JSON `{"content": ...}`, content at most 2,000 characters; 204 No Content;
  429 with `Retry-After` and a JSON `retry_after` in seconds (discord.com/developers/docs/resources/webhook,
  /topics/rate-limits).
- Feishu/Lark custom bots: POST JSON `{"msg_type": "text", "content": {"text": ...}}`; with a
  signing secret also `timestamp` (seconds) and `sign` = base64(HMAC-SHA256(key = timestamp + "\\n" +
  secret, message = empty)); the answer `{"code": 0}` is success, 9499/11232 are rate limits (100 a
  minute, 5 a second); a body at most 20 KB (open.feishu.cn, "自定义机器人使用指南").
- WeCom (企业微信) group bots: POST JSON `{"msgtype": "text", "text": {"content": ...}}`, content at
  most 2,048 bytes (UTF-8); `{"errcode": 0}` is success, 45009 is the rate limit (20 a minute)
  (developer.work.weixin.qq.com, "群机器人配置说明").
- DingTalk (钉钉) custom robots: POST JSON `{"msgtype": "text", "text": {"content": ...}}`; with 加签
  the URL gets `timestamp` (milliseconds) and `sign` = urlencode(base64(HMAC-SHA256(key = secret,
  message = timestamp + "\\n" + secret))); `{"errcode": 0}` is success, 130101 is "send too fast"
  (20 a minute) (open.dingtalk.com, "自定义机器人安全设置", "自定义机器人发送群消息").
- Telegram bots: POST JSON to `<api>/bot<token>/sendMessage` with `chat_id` and `text` (at most
  4,096 characters); `{"ok": true}`; 429 with `parameters.retry_after` in seconds
  (core.telegram.org/bots/api#sendmessage, #responseparameters).
- The generic webhook: POST JSON, gpuplan's own schema (`PAYLOAD_SCHEMA`, README "Push channels"); any
  2xx is success, 429 honours `Retry-After`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus, urlencode, urlsplit, urlunsplit

PAYLOAD_SCHEMA = "gpuplan.push"
PAYLOAD_VERSION = 1
# Characters (bytes for WeCom) one message may hold, per kind (sources above); a longer text is cut
# at a line and says how much was left out.
LIMITS = {
    "slack": 4_000,
    "discord": 2_000,
    "feishu": 6_000,
    "wecom": 2_048,
    "dingtalk": 6_000,
    "telegram": 4_096,
}
_RATE_LIMIT_CODES = {"feishu": {9499, 11232}, "wecom": {45009}, "dingtalk": {130101}}


@dataclass(frozen=True)
class Request:
    url: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """What a service's answer means: `ok`; else `retry_after_s` (rate limited: when to try again,
    None when it did not say) or `error` (a failure to record, never holding a secret)."""

    ok: bool
    rate_limited: bool = False
    retry_after_s: float | None = None
    error: str | None = None


def feishu_sign(timestamp_s: int, secret: str) -> str:
    """Feishu's signature: base64(HMAC-SHA256 keyed by "timestamp\\nsecret", of an empty message)."""
    key = f"{timestamp_s}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(timestamp_ms: int, secret: str) -> str:
    """DingTalk's 加签: base64(HMAC-SHA256 keyed by the secret, of "timestamp\\nsecret"), URL-encoded."""
    digest = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256).digest()
    return quote_plus(base64.b64encode(digest).decode())


def fitted(text: str, kind: str, more: str = "…") -> str:
    """`text` cut at a line so that it fits the kind's limit (WeCom counts UTF-8 bytes)."""
    limit = LIMITS.get(kind)
    if limit is None:
        return text

    def size(value: str) -> int:
        return len(value.encode()) if kind == "wecom" else len(value)

    if size(text) <= limit:
        return text
    lines = text.split("\n")
    while lines and size("\n".join([*lines, more])) > limit:
        lines.pop()
    return "\n".join([*lines, more]) if lines else text[: limit - 1] + more


def request(
    kind: str, channel: Any, text: str, payload: dict[str, Any], now_s: float | None = None
) -> Request:
    """The request that sends `text` (chat kinds) or `payload` (the webhook) on `channel`."""
    now_s = time.time() if now_s is None else now_s
    text = fitted(text, kind)
    if kind == "webhook":
        return Request(channel.url, {"schema": PAYLOAD_SCHEMA, "version": PAYLOAD_VERSION, **payload})
    if kind == "slack":
        return Request(channel.url, {"text": text})
    if kind == "discord":
        return Request(channel.url, {"content": text, "allowed_mentions": {"parse": []}})
    if kind == "feishu":
        body: dict[str, Any] = {"msg_type": "text", "content": {"text": text}}
        if channel.secret is not None:
            timestamp = int(now_s)
            body = {
                "timestamp": str(timestamp),
                "sign": feishu_sign(timestamp, channel.secret.get_secret_value()),
                **body,
            }
        return Request(channel.url, body)
    if kind == "wecom":
        return Request(channel.url, {"msgtype": "text", "text": {"content": text}})
    if kind == "dingtalk":
        url = channel.url
        if channel.secret is not None:
            timestamp = int(now_s * 1000)
            sign = dingtalk_sign(timestamp, channel.secret.get_secret_value())
            parts = urlsplit(url)
            query = "&".join(filter(None, [parts.query, urlencode({"timestamp": timestamp}), f"sign={sign}"]))
            url = urlunsplit(parts._replace(query=query))
        return Request(url, {"msgtype": "text", "text": {"content": text}})
    if kind == "telegram":
        url = f"{channel.url.rstrip('/')}/bot{channel.token.get_secret_value()}/sendMessage"
        return Request(url, {"chat_id": channel.chat_id, "text": text, "disable_web_page_preview": True})
    raise ValueError(f"no channel kind {kind!r}")


def _retry_after(headers: dict[str, str], body: Any) -> float | None:
    for value in (
        headers.get("retry-after"),
        _get(body, "retry_after"),
        _get(_get(body, "parameters"), "retry_after"),
    ):
        try:
            if value is not None:
                return max(0.0, float(value))
        except (TypeError, ValueError):
            continue
    return None


def _get(body: Any, key: str) -> Any:
    return body.get(key) if isinstance(body, dict) else None


def answer(kind: str, status: int, headers: dict[str, str], text: str) -> Answer:
    """What the service's answer (HTTP status, lower-cased headers, body) means."""
    try:
        body: Any = json.loads(text) if text.strip() else None
    except ValueError:
        body = None
    if status == 429:
        return Answer(False, rate_limited=True, retry_after_s=_retry_after(headers, body), error="HTTP 429")
    if not 200 <= status < 300:
        return Answer(False, error=f"HTTP {status}: {_said(body, text)}")
    code_key = {"feishu": "code", "wecom": "errcode", "dingtalk": "errcode"}.get(kind)
    if code_key is not None and isinstance(body, dict) and body.get(code_key) not in (0, None):
        code = body.get(code_key)
        message = body.get("msg") or body.get("errmsg") or ""
        if code in _RATE_LIMIT_CODES.get(kind, set()):
            return Answer(False, rate_limited=True, error=f"{code_key} {code}: {message}"[:200])
        return Answer(False, error=f"{code_key} {code}: {message}"[:200])
    if kind == "telegram" and isinstance(body, dict) and body.get("ok") is False:
        return Answer(False, error=f"Telegram: {body.get('description', '')}"[:200])
    return Answer(True)


def _said(body: Any, text: str) -> str:
    if isinstance(body, dict):
        for key in ("message", "description", "msg", "errmsg", "error"):
            if isinstance(body.get(key), str):
                return body[key][:200]
    return " ".join(text.split())[:200]
