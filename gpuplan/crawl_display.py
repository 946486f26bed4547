"""What `refresh` and `crawl` show while platforms crawl: one line per platform.

On a terminal a live board (`gpuplan.display.is_live`) redraws each platform's state in place:
waiting, crawling (a spinner), then its outcome. In a log, each platform prints one plain line
when it is done. Either way the outcome line is `outcome_line`: the platform, its status, its
offers, and for a failure the reason and, when a token is the likely cause, the variable to set
(from the spider's `Token`, the one place it is named).

`CrawlBoard.update` has the signature of the crawl runners' progress hook:
`(platform, state "waiting" | "crawling" | "done", summary | None)`.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Mapping, Sequence
from types import TracebackType

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from config.shown_text import one_line
from gpuplan import display
from scrapers.crawl.summary import CrawlSummary
from scrapers.platform import Token

STATUS_STYLE = {"ok": "green", "partial": "yellow", "failed": "red", "skipped": "dim"}
# A refused credential, as the spiders and Scrapy word it: an HTTP 401/403, or the spider naming
# its token as refused or expired.
_REFUSED = re.compile(r"\bHTTP 40[13]\b|\brefused\b|\bexpired\b|\bunauthori[sz]ed\b", re.IGNORECASE)


def token_hint(status: str, error: str | None, token: Token | None) -> str | None:
    """What to set when a crawl failed for want of a valid token; None when a token is not the cause."""
    if token is None or status not in ("failed", "partial", "skipped"):
        return None
    error = error or ""
    if status == "skipped":
        return None if token.env in error else f"set {token.env}"
    if not (_REFUSED.search(error) or token.env in error):
        return None
    where = f" ({token.description})" if token.description else ""
    return f"set {token.env} to a valid token{where}"


def outcome_line(
    platform: str,
    status: str,
    offers: int,
    error: str | None = None,
    *,
    duration_s: float | None = None,
    token: Token | None = None,
) -> str:
    """One line for a done crawl: `vastai: ok, 3216 offers in 4.1 s` or
    `autodl: failed, 0 offers: <reason>; set AUTODL_TOKEN to a valid token (...)`."""
    # a replay can take no measurable time: "in 0.0 s" would say nothing
    timed = duration_s is not None and duration_s >= 0.05 and status != "skipped"
    took = f" in {duration_s:.1f} s" if timed else ""
    # the reason is the platform's own text: made safe, so an error reading `ESC[2J ... ok, 18
    # offers` cannot clear the screen and print a status of its own
    line = f"{one_line(platform)}: {one_line(status)}, {offers} offers{took}"
    if error:
        line += f": {one_line(error)}"
    hint = token_hint(status, error, token)
    return f"{line}; {hint}" if hint else line


def offline_note(tokens: Mapping[str, Token], env: Mapping[str, str] | None = None) -> str | None:
    """After an offline run: which platforms a live run would skip, their key unset in `env`
    (default: this process's environment). The demo shows them too, from their snapshots, so a
    new user would not otherwise learn that they need a key."""
    keyless = sorted(name for name, token in tokens.items() if token.required and token.value(env) is None)
    if not keyless:
        return None
    return (
        f"offline: the bundled snapshots replayed; a live run skips {', '.join(keyless)} "
        "without their keys (README, Settings)"
    )


def summary_line(summary: CrawlSummary, token: Token | None = None) -> str:
    """`outcome_line` of a crawl summary (its duration as the runner measured it, in `stats`)."""
    measured = summary.stats.get("duration_s")
    return outcome_line(
        summary.platform,
        summary.status,
        summary.items_yielded,
        summary.error,
        duration_s=float(measured) if measured is not None else summary.duration_s,
        token=token,
    )


class CrawlBoard:
    """The per-platform display of a batch of crawls (module doc); a context manager."""

    def __init__(
        self,
        out: Console,
        platforms: Sequence[str],
        tokens: Mapping[str, Token],
        *,
        offline: bool,
    ) -> None:
        self._out = out
        self._tokens = tokens
        self._offline = offline
        self._platforms = list(platforms)
        self._states: dict[str, str] = dict.fromkeys(platforms, "waiting")
        self._started: dict[str, float] = {}
        self._done: dict[str, CrawlSummary] = {}
        self._live: Live | None = None
        self._day: dt.date | None = None
        self._replay = False

    def __enter__(self) -> CrawlBoard:
        if display.is_live(self._out):
            # get_renderable: each refresh redraws, so the crawling seconds tick between updates
            self._live = Live(
                console=self._out, get_renderable=self._render, refresh_per_second=8, transient=True
            )
            self._live.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._live is None:
            return
        self._live.__exit__(kind, error, trace)
        self._live = None
        # The board goes; its final state stays as plain lines, the record of what happened: by
        # name, so a platform is found among 28, the ones that did not crawl last, above the load line.
        for summary in sorted(self._done.values(), key=lambda s: (s.status != "ok", s.platform)):
            self._print_outcome(summary)

    def day(self, day: dt.date, platforms: Sequence[str] | None, replay: bool) -> None:
        """The day hook of `pipelines.runs.execute_day`: `day`'s run begins, crawling `platforms`
        (None: the board's). A replayed day before (`replay`) is shown as such, platform by platform,
        and leaves no outcome lines: those are the day's own."""
        if self._replay and self._live is None and self._day is not None:
            self._print_replayed()
        self._day, self._replay = day, replay
        self._states = dict.fromkeys(platforms if platforms is not None else self._platforms, "waiting")
        self._started, self._done = {}, {}
        if replay and self._live is None:
            self._out.print(
                f"replaying {day}, the recorded day before: {len(self._states)} platforms", highlight=False
            )
        if self._live is not None:
            self._live.refresh()

    def update(self, platform: str, state: str, summary: CrawlSummary | None = None) -> None:
        """The runners' progress hook."""
        self._states[platform] = state
        if state == "crawling":
            self._started[platform] = time.monotonic()
        if state == "done" and summary is not None:
            self._done[platform] = summary
            if self._live is None and not self._replay:
                self._print_outcome(summary)
        if self._live is not None:
            self._live.refresh()

    @property
    def summaries(self) -> list[CrawlSummary]:
        return list(self._done.values())

    def _print_replayed(self) -> None:
        ok = sum(summary.status == "ok" for summary in self._done.values())
        self._out.print(f"replayed {self._day}: {ok} of {len(self._states)} platforms ok", highlight=False)

    def _print_outcome(self, summary: CrawlSummary) -> None:
        line = Text(summary_line(summary, self._tokens.get(summary.platform)))
        line.stylize(STATUS_STYLE.get(summary.status, ""), len(summary.platform) + 2)
        self._out.print(line, soft_wrap=True)

    def _render(self) -> RenderableType:
        done, total = len(self._done), len(self._states)
        # once every crawl is in, the run goes on to load, plan and digest: say so, or it looks stuck
        then = "; loading, planning..." if done == total else ""
        if self._replay:
            # within 80 columns with what follows it; the plain line says what the day is
            what = f"replaying {self._day} (day before): platform {done}/{total}"
        else:
            day = f" {self._day}" if self._day else ""
            what = f"crawling{day}: {done}/{total} platforms done"
        head = Text(what + then, style="bold")
        # A board taller than the terminal is cut at its foot (28 platforms on 24 lines): then the
        # platforms in one state share a wrapped line, and only those that did not crawl well keep a
        # row, with their reason.
        if total + 1 > self._out.height - 1:
            return Group(head, *self._folded())
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, overflow="ellipsis")
        for platform, state in self._states.items():
            table.add_row(platform, self._cell(platform, state))
        return Group(head, table)

    def _cell(self, platform: str, state: str) -> RenderableType:
        summary = self._done.get(platform)
        if summary is not None:
            return Text(
                summary_line(summary, self._tokens.get(platform)).split(": ", 1)[1],
                style=STATUS_STYLE.get(summary.status, ""),
            )
        if state == "crawling":
            since = time.monotonic() - self._started.get(platform, time.monotonic())
            replay = " (offline)" if self._offline else ""
            return Spinner("dots", text=Text(f"crawling{replay} {since:.0f} s"))
        return Text(state, style="dim")

    def _folded(self) -> list[RenderableType]:
        """The board in a few lines: ok (with offers), crawling, waiting; a row for each other outcome."""
        ok = [f"{p} {s.items_yielded}" for p, s in sorted(self._done.items()) if s.status == "ok"]
        others = sorted(p for p, s in self._done.items() if s.status != "ok")
        crawling = sorted(p for p, state in self._states.items() if state == "crawling")
        waiting = sorted(p for p, state in self._states.items() if state == "waiting")
        lines: list[RenderableType] = []
        if ok:
            lines.append(Text(f"ok (offers): {', '.join(ok)}", style=STATUS_STYLE["ok"]))
        if crawling:
            replay = " (offline)" if self._offline else ""
            lines.append(Spinner("dots", text=Text(f"crawling{replay}: {', '.join(crawling)}")))
        if waiting:
            lines.append(Text(f"waiting: {', '.join(waiting)}", style="dim"))
        if others:
            table = Table.grid(padding=(0, 2))
            table.add_column(no_wrap=True)
            table.add_column(no_wrap=True, overflow="ellipsis")
            for platform in others:
                table.add_row(platform, self._cell(platform, "done"))
            lines.append(table)
        return lines
