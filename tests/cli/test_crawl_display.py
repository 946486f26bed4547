"""gpuplan.crawl_display: one plain line per platform in logs, the token to set when one is refused.

The summaries here are SYNTHETIC (made up for each case); the errors are worded as the spiders
and `scrapers.platform.describe_failure` word them.
"""

from __future__ import annotations

import datetime as dt
import io
import re

import pytest
from rich.console import Console

from gpuplan.crawl_display import CrawlBoard, offline_note, summary_line, token_hint
from scrapers.crawl.summary import CrawlSummary
from scrapers.platform import Token
from scrapers.registry import platform_tokens

START = dt.datetime(2026, 10, 1, 6, 0, tzinfo=dt.UTC)
AUTODL = platform_tokens()["autodl"]


def _summary(platform: str, status: str, offers: int, error: str | None = None) -> CrawlSummary:
    return CrawlSummary(
        platform=platform,
        status=status,
        error=error,
        started_at=START,
        finished_at=START + dt.timedelta(seconds=4.2),
        items_yielded=offers,
        offline=False,
    )


@pytest.mark.parametrize(
    ("summary", "token", "hint"),
    [
        (_summary("vastai", "ok", 3216), None, None),
        (  # the spider's own words for AutoDL's "login timed out" answer
            _summary("autodl", "failed", 0, "AutoDL refused AUTODL_TOKEN (AuthorizeFailed: 登录超时)"),
            AUTODL,
            f"set AUTODL_TOKEN to a valid token ({AUTODL.description})",
        ),
        (  # Scrapy's HTTP error, for a platform whose message does not name the token
            _summary("lambda", "failed", 0, "HTTP 401 from https://cloud.lambda.ai/api/v1/instance-types"),
            Token(env="LAMBDA_API_KEY", required=False),
            "set LAMBDA_API_KEY to a valid token",
        ),
        (  # a failure a token does not cause: no hint
            _summary("autodl", "failed", 0, "timed out (no answer in 30 s) from https://www.autodl.com/"),
            AUTODL,
            None,
        ),
        (  # the skip reason names the variable itself: no second copy
            _summary("autodl", "skipped", 0, "skipped: autodl needs a login token; set AUTODL_TOKEN"),
            AUTODL,
            None,
        ),
    ],
    ids=["ok", "refused", "http-401", "timeout", "skipped"],
)
def test_token_hint(summary: CrawlSummary, token: Token | None, hint: str | None) -> None:
    assert token_hint(summary.status, summary.error, token) == hint


def test_outcome_lines_name_the_platform_status_and_offers() -> None:
    assert summary_line(_summary("vastai", "ok", 3216)) == "vastai: ok, 3216 offers in 4.2 s"
    skipped = _summary("autodl", "skipped", 0, "skipped: autodl needs a login token; set AUTODL_TOKEN")
    assert summary_line(skipped, AUTODL) == (
        "autodl: skipped, 0 offers: skipped: autodl needs a login token; set AUTODL_TOKEN"
    )


def test_a_board_off_a_terminal_prints_one_line_per_platform_as_each_is_done() -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=80, force_terminal=False)
    long_error = "HTTP 403 from https://www.gpushare.com/api/v1/market/list?page=1 " + "x" * 100
    with CrawlBoard(out, ["gpushare", "vastai"], platform_tokens(), offline=False) as board:
        board.update("gpushare", "waiting")
        board.update("vastai", "waiting")
        board.update("vastai", "crawling")
        assert buffer.getvalue() == ""  # nothing until a platform is done
        board.update("vastai", "done", _summary("vastai", "ok", 3216))
        board.update("gpushare", "crawling")
        board.update("gpushare", "done", _summary("gpushare", "failed", 0, long_error))
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "vastai: ok, 3216 offers in 4.2 s"
    assert lines[1].startswith("gpushare: failed, 0 offers in 4.2 s: HTTP 403 from")
    assert lines[1].endswith(
        "; set GPUSHARE_TOKEN to a valid token (" + platform_tokens()["gpushare"].description + ")"
    )
    assert len(lines) == 2  # a long reason stays on its platform's line: logs grep by platform
    assert [summary.platform for summary in board.summaries] == ["vastai", "gpushare"]


def test_a_board_taller_than_the_terminal_folds_and_its_record_is_by_name() -> None:
    """28 platforms on a 24-line terminal: the live board would lose its foot, so platforms in one
    state share a line; what stays after it is one line per platform, by name, failures last."""
    buffer = io.StringIO()
    out = Console(file=buffer, width=80, height=24, force_terminal=True)
    names = [f"platform{index:02d}" for index in range(28)]
    with CrawlBoard(out, names, platform_tokens(), offline=True) as board:
        for name in reversed(names[1:]):
            board.update(name, "crawling")
            board.update(name, "done", _summary(name, "ok", 3))
        board.update("platform00", "crawling")
        board.update("platform00", "done", _summary("platform00", "failed", 0, "HTTP 500 from x"))
        folded = Console(file=io.StringIO(), width=80, height=24)
        folded.print(board._render())
        drawn = folded.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert len(drawn) < 24, drawn
    assert drawn[1].startswith("ok (offers): platform01 3, platform02 3")
    assert any(line.startswith("platform00") and "HTTP 500" in line for line in drawn)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())  # the live display's redraws
    record = [line.split(":", 1)[0] for line in plain.splitlines() if ": " in line]
    assert record[-28:] == [*names[1:], "platform00"]


def test_an_offline_run_names_the_platforms_a_live_run_would_skip_for_want_of_a_key() -> None:
    tokens = platform_tokens()
    note = offline_note(tokens, env={"PPIO_API_KEY": "set"})
    assert note is not None
    skipped = note.split("a live run skips ", 1)[1].split(" without", 1)[0].split(", ")
    assert {"alicloud", "autodl", "chenyu", "gpushare", "tencentcloud"} <= set(skipped)
    assert "ppio" not in skipped and "lambda" not in skipped  # its key is set; Lambda has a keyless path
    every_key = {token.env: "set" for token in tokens.values()}
    assert offline_note(tokens, env=every_key) is None


def _drawn(board: CrawlBoard) -> list[str]:
    screen = Console(file=io.StringIO(), width=80, height=40)
    screen.print(board._render())
    return screen.file.getvalue().splitlines()  # type: ignore[attr-defined]


def test_the_replayed_day_before_ticks_per_platform_then_the_day_starts_afresh() -> None:
    """A first offline refresh replays the recorded day before: the board says so and counts each
    platform replayed, rather than '0/3 platforms done' until the day itself crawls."""
    buffer = io.StringIO()
    out = Console(file=buffer, width=80, height=40, force_terminal=True)
    names = ["aws", "runpod", "vastai"]
    with CrawlBoard(out, names, platform_tokens(), offline=True) as board:
        board.day(dt.date(2026, 12, 6), names[:2], True)
        assert _drawn(board)[0] == "replaying 2026-12-06 (day before): platform 0/2"
        board.update("aws", "crawling")
        board.update("aws", "done", _summary("aws", "ok", 3))
        assert _drawn(board)[0] == "replaying 2026-12-06 (day before): platform 1/2"
        board.update("runpod", "done", _summary("runpod", "ok", 5))
        board.day(dt.date(2026, 12, 7), None, False)
        drawn = _drawn(board)
        assert drawn[0] == "crawling 2026-12-07: 0/3 platforms done"
        assert all(line.split()[-1] == "waiting" for line in drawn[1:4])
        for name in names:
            board.update(name, "done", _summary(name, "ok", 1))
        assert _drawn(board)[0] == "crawling 2026-12-07: 3/3 platforms done; loading, planning..."
    assert [summary.platform for summary in board.summaries] == names  # the day's own, not the replay's
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())
    record = [line for line in plain.splitlines() if ": ok, " in line]
    assert [line.split(":")[0] for line in record[-3:]] == names and len(record) == 3


def test_off_a_terminal_the_replayed_day_is_two_lines_not_a_line_per_platform() -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=80, force_terminal=False)
    with CrawlBoard(out, ["aws", "vastai"], platform_tokens(), offline=True) as board:
        board.day(dt.date(2026, 12, 6), ["aws", "vastai"], True)
        board.update("aws", "done", _summary("aws", "ok", 3))
        board.update("vastai", "done", _summary("vastai", "failed", 0, "HTTP 500 from x"))
        board.day(dt.date(2026, 12, 7), None, False)
        board.update("aws", "done", _summary("aws", "ok", 3))
    lines = buffer.getvalue().splitlines()
    assert lines == [
        "replaying 2026-12-06, the recorded day before: 2 platforms",
        "replayed 2026-12-06: 1 of 2 platforms ok",
        "aws: ok, 3 offers in 4.2 s",
    ]
