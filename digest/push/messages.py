"""What a push says: the day's news as short messages, one per kind of news, in the channel's language.

An `Event` is one message: the day's fired watches, its plan changes, its failed crawls, or its
summary. Its `key` names it in the push ledger (`push_sends`), so the same event never goes twice to
one channel, however often the run repeats. Chat kinds get `text` (a title line, then one line per
item, short enough for a phone; the words from the digest's gettext catalogues); the generic
webhook gets `entries`, the digest JSON's own entries (`digest.export.digest_object`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import Any

from config.shown_text import one_line
from digest.content import Digest
from digest.export import digest_object, plain
from digest.wording import Wording

# Items listed in one message before "and N more": a phone screen or two.
MAX_ITEMS = 10


@dataclass(frozen=True)
class Event:
    kind: str  # watches | plan_changes | failures | summary (a channel's `send`)
    key: str  # the push ledger's name of this event
    day: date
    text: str  # what a chat channel shows
    entries: tuple[dict[str, Any], ...]  # what the webhook carries: the digest JSON's entries

    def payload(self) -> dict[str, Any]:
        """The generic webhook's body (kinds.request adds `schema` and `version`)."""
        return json.loads(
            json.dumps({"event": self.kind, "key": self.key, "date": self.day, "text": self.text,
                        "entries": list(self.entries)}, default=plain)
        )  # fmt: skip


def _message(wording: Wording, kind: str, day: date, lines: list[str]) -> str:
    shown_lines = [one_line(line) for line in lines[:MAX_ITEMS]]
    if len(lines) > MAX_ITEMS:
        shown_lines.append(wording.t("push.more", n=len(lines) - MAX_ITEMS))
    return "\n".join([wording.t(f"push.title.{kind}", day=day.isoformat()), *shown_lines])


def events(digest: Digest, lang: str) -> list[Event]:
    """The day's events in `lang`, those with news only (summary always)."""
    wording = Wording.of(lang)
    data = digest_object(digest, lang)
    day = digest.digest_date
    found = [
        Event(
            "summary",
            f"summary:{day}",
            day,
            _message(wording, "summary", day, [wording.headline(digest)]),
            (),
        )
    ]
    fired = [entry for entry in data["watches"] if entry["fired"]]
    if fired:
        lines = [entry["text"] for entry in fired]
        found.append(
            Event("watches", f"watches:{day}", day, _message(wording, "watches", day, lines), tuple(fired))
        )
    if digest.plan_changes:
        lines = [
            " ".join(
                filter(None, [wording.change_line(change), wording.measure(change), wording.why(change)])
            )
            for change in digest.plan_changes
        ]
        entries = tuple(data["plan_changes"])
        found.append(
            Event(
                "plan_changes",
                f"plan_changes:{day}",
                day,
                _message(wording, "plan_changes", day, lines),
                entries,
            )
        )
    if digest.failed_crawls:
        lines = [
            wording.t(
                "push.failure",
                platform=f.platform,
                status=wording.name("status", f.status),
                error=f.error or "",
            )
            for f in digest.failed_crawls
        ]
        found.append(
            Event(
                "failures",
                f"failures:{day}",
                day,
                _message(wording, "failures", day, lines),
                tuple(data["failed_crawls"]),
            )
        )
    return found


def probe_event(channel: str, lang: str, day: date) -> Event:
    """The one message `gpuplan notify --test` sends (its key is never recorded)."""
    wording = Wording.of(lang)
    text = "\n".join(
        [wording.t("push.title.test", day=day.isoformat()), wording.t("push.test", channel=channel)]
    )
    return Event("test", f"test:{day}", day, text, ())
