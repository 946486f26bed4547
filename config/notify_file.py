"""GPUPLAN_NOTIFY: where the digest's news and fired watches are pushed (chat bots, webhooks).

The file is one YAML list of channels, read through the one guarded reader of the user's files
(`config.user_files`) and declared as pydantic models: unknown keys, a wrong kind, a bad URL are
refused in one line naming the file and the line.

    - kind: feishu                      # webhook, slack, discord, feishu, wecom, dingtalk, telegram
      name: gpu-team                    # optional: how results and the push ledger name it (default kind-N)
      url: ${FEISHU_HOOK_URL}
      secret: ${FEISHU_SECRET}          # Feishu's or DingTalk's signing secret (optional)
      lang: zh                          # en (default) or zh
      send: [watches, plan_changes]     # any of watches, plan_changes, failures, summary
    - kind: telegram
      token: ${TELEGRAM_BOT_TOKEN}
      chat_id: "-1001234567890"

`${VAR}` in any value is replaced by that environment variable (a missing one is an error naming it,
never its value). Secrets come only from the environment: `secret` and `token` must be written as
`${VAR}`, and no URL, token or secret is ever printed, logged or stored (a channel shows as its name
and its URL's host). Plain http is accepted only for a loopback host (a local relay or a test server).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, TypeAdapter, field_validator
from pydantic_core import ErrorDetails

from config.user_files import Item, UserFileError, given, keys_of, read_text, said, validated, yaml_list

KINDS = ("webhook", "slack", "discord", "feishu", "wecom", "dingtalk", "telegram")
Send = Literal["watches", "plan_changes", "failures", "summary"]
DEFAULT_SEND: tuple[Send, ...] = ("watches", "plan_changes", "failures")
TELEGRAM_API = "https://api.telegram.org"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_KEYS = ("secret", "token")


def _checked_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError("must be an http(s) URL with a host")
    if parts.scheme == "http":
        try:
            loopback = ipaddress.ip_address(parts.hostname).is_loopback
        except ValueError:
            loopback = parts.hostname == "localhost"
        if not loopback:
            raise ValueError("must be https (plain http only to a loopback host)")
    return url


class _Channel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, min_length=1, max_length=60, pattern=r"^[A-Za-z0-9_.-]+$")
    lang: Literal["en", "zh"] = "en"
    send: tuple[Send, ...] = Field(default=DEFAULT_SEND, min_length=1)
    timeout_s: float = Field(default=10.0, gt=0, le=120)

    def host(self) -> str:
        url = getattr(self, "url", None)
        return urlsplit(url).hostname or "?" if isinstance(url, str) else "?"


class _UrlChannel(_Channel):
    url: str = Field(repr=False)  # a webhook's URL holds its token: never shown

    _url = field_validator("url")(_checked_url)


class WebhookChannel(_UrlChannel):
    kind: Literal["webhook"]


class SlackChannel(_UrlChannel):
    kind: Literal["slack"]


class DiscordChannel(_UrlChannel):
    kind: Literal["discord"]


class WecomChannel(_UrlChannel):
    kind: Literal["wecom"]


class FeishuChannel(_UrlChannel):
    kind: Literal["feishu"]
    secret: SecretStr | None = None


class DingtalkChannel(_UrlChannel):
    kind: Literal["dingtalk"]
    secret: SecretStr | None = None


class TelegramChannel(_Channel):
    kind: Literal["telegram"]
    token: SecretStr
    chat_id: str = Field(min_length=1, max_length=64)
    url: str = Field(default=TELEGRAM_API, repr=False)  # the Bot API's base (a local Bot API server, a test)

    _url = field_validator("url")(_checked_url)


Channel = Annotated[
    WebhookChannel
    | SlackChannel
    | DiscordChannel
    | FeishuChannel
    | WecomChannel
    | DingtalkChannel
    | TelegramChannel,
    Field(discriminator="kind"),
]


_CHANNEL: TypeAdapter[Any] = TypeAdapter(Channel)


def channel_name(channel: _Channel, index: int) -> str:
    return channel.name or f"{getattr(channel, 'kind', 'channel')}-{index + 1}"


def read_channels(path: Path, env: Mapping[str, str] | None = None) -> tuple[tuple[str, Any], ...]:
    """(name, channel) of each channel in `path`; raises UserFileError (one line, file and line)."""
    source = f"GPUPLAN_NOTIFY {path}"
    return parse_channels(
        read_text(path, source, "a notify file"), source, os.environ if env is None else env
    )


def parse_channels(text: str, source: str, env: Mapping[str, str]) -> tuple[tuple[str, Any], ...]:
    channels: list[tuple[str, Any]] = []
    for index, item in enumerate(yaml_list(text, source, "channels", "- kind: slack")):
        channel = _channel(item, source, env)
        name = channel_name(channel, index)
        if any(name == other for other, _ in channels):
            raise UserFileError(
                source, f"two channels are named {name!r}: give each a unique name", item.line
            )
        channels.append((name, channel))
    return tuple(channels)


def _channel(item: Item, source: str, env: Mapping[str, str]) -> Any:
    mapping = "a channel is a mapping (kind: ..., url: ...)"
    keys = keys_of(item, source, mapping, "key {key!r} is not a name or is given twice")
    for key in _SECRET_KEYS:
        written = keys.get(key)
        if written is not None and not (written.text and _VARIABLE.fullmatch(written.text.strip())):
            problem = f"{key} must come from the environment, written as ${{VARIABLE}}"
            raise UserFileError(source, problem, written.line)
    data = {key: _expanded(given(value), env, source, value.line) for key, value in keys.items()}
    return validated(_CHANNEL, data, item.written, source, _words)


def _words(error: ErrorDetails) -> str:
    """'<key>: <problem>'; the union's branch (the kind) is not a key."""
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return f"kind: must be one of {', '.join(KINDS)}"
    location = [str(part) for part in error["loc"] if part not in KINDS]
    problem = "unknown key" if error["type"] == "extra_forbidden" else said(error)
    return f"{'.'.join(location) or 'kind'}: {problem}"


def _expanded(value: Any, env: Mapping[str, str], source: str, line: int) -> Any:
    if isinstance(value, list):
        return [_expanded(part, env, source, line) for part in value]
    if not isinstance(value, str):
        return value

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if not env.get(name):
            raise UserFileError(source, f"${{{name}}} is not set in the environment", line)
        return env[name]

    return _VARIABLE.sub(variable, value)
