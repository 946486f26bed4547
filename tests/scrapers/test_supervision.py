"""Crawls sharing one process: one platform's fault never costs another its offers or its summary.

Each test runs several real crawls in one crawl child (`scrapers.crawl.runner.crawl`) with one
platform broken: an exception as its crawl starts, a bad answer, a server that never answers, a
parser that blocks the shared reactor, a crash of the whole process. The others must end "ok"
with exactly their snapshot's items, and be reported as they end (`on_progress`), not when the
broken one gives up. Crawls rerun alone after a block run side by side, each in its own child, and
closing the steps mid-rerun ends every one of those children.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from crawl_harness import snapshot_of
from crawl_helpers import canonical, crawl_env, expected_items, loopback_settings, read_jsonl
from crawl_processes import crawl_children
from faulty_parts import CRASH_EXIT
from loopback import Answer, serving

from scrapers.crawl.runner import CrawlJob, crawl, iter_crawls
from scrapers.crawl.runner import Progress as Step
from scrapers.crawl.summary import CrawlSummary
from scrapers.registry import fixture_dir

pytestmark = pytest.mark.faults

HERE = Path(__file__).parent
GUILTY = "vastai"
INNOCENT_OFFLINE = ("datacrunch", "runpod")
INNOCENT_LIVE = ("lambda", "datacrunch")  # one request each: a rerun's time is its answer's stall
# Each answer of INNOCENT_LIVE's servers waits this long: longer than the start-up of a crawl child
# on a loaded machine, so two reruns side by side are both crawling before either has its answer.
RERUN_ANSWER_S = 6.0


@dataclass
class Progress:
    """What `on_progress` said, with when: (seconds since the run began, platform, state)."""

    began: float = field(default_factory=time.monotonic)
    events: list[tuple[float, str, str]] = field(default_factory=list)

    def __call__(self, platform: str, state: str, summary: CrawlSummary | None) -> None:
        assert (summary is not None) == (state == "done")
        self.events.append((time.monotonic() - self.began, platform, state))

    def at(self, platform: str, state: str) -> list[float]:
        return [when for when, name, seen in self.events if name == platform and seen == state]


def _env() -> dict[str, str]:
    """No tokens; this folder importable in the crawl child, for `faulty_parts`."""
    env = crawl_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    return env


def _broken_by(part: str) -> dict[str, str]:
    pipelines = {"scrapers.pipelines.OfferChecks": 100, f"faulty_parts.{part}": 50}
    return {"ITEM_PIPELINES": json.dumps(pipelines)}


def _live(server_url: str) -> dict[str, str]:
    """A crawl through a loopback server (no replay), its answers slow enough to be in flight."""
    return loopback_settings(server_url, DOWNLOAD_TIMEOUT="5", HTTPCACHE_ENABLED="False")


def _assert_untouched(summaries: dict[str, CrawlSummary], platforms: tuple[str, ...] | list[str]) -> None:
    for platform in platforms:
        summary = summaries[platform]
        assert (summary.status, summary.error) == ("ok", None), platform
        assert canonical(read_jsonl(Path(summary.feed))) == canonical(expected_items(platform)), platform


def _assert_guilty_failed(summaries: dict[str, CrawlSummary], error: str) -> None:
    assert (summaries[GUILTY].status, summaries[GUILTY].error) == ("failed", error)


def _by_platform(summaries: list[CrawlSummary]) -> dict[str, CrawlSummary]:
    return {summary.platform: summary for summary in summaries}


def test_an_exception_in_one_crawl_leaves_the_others(tmp_path: Path) -> None:
    progress = Progress()
    jobs = [CrawlJob(GUILTY, settings=_broken_by("RaiseAtOpen")), *map(CrawlJob, INNOCENT_OFFLINE)]
    summaries = _by_platform(crawl(jobs, tmp_path, offline=True, env=_env(), on_progress=progress))
    _assert_guilty_failed(
        summaries, f"crawl ended without a report: RuntimeError: injected: {GUILTY} cannot start"
    )
    _assert_untouched(summaries, INNOCENT_OFFLINE)
    for platform in INNOCENT_OFFLINE:
        assert len(progress.at(platform, "crawling")) == 1, "an isolated exception reran nothing"
    for platform in (GUILTY, *INNOCENT_OFFLINE):
        assert next(state for _, name, state in progress.events if name == platform) == "waiting"
        assert len(progress.at(platform, "done")) == 1


def test_a_bad_answer_fails_only_its_platform(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage-snapshot"
    shutil.copytree(fixture_dir(GUILTY), garbage)
    for exchange in json.loads((garbage / "snapshot.json").read_text("utf-8"))["exchanges"]:
        (garbage / exchange["response"]["body_file"]).write_bytes(b"<html>we changed our site</html>")
    jobs = [CrawlJob(GUILTY, replay_dir=garbage), *map(CrawlJob, INNOCENT_OFFLINE)]
    summaries = _by_platform(crawl(jobs, tmp_path / "out", offline=True, env=_env()))
    assert summaries[GUILTY].status == "failed"
    assert "expected JSON, got an HTML page" in summaries[GUILTY].error
    _assert_untouched(summaries, INNOCENT_OFFLINE)


def test_a_server_that_never_answers_times_out_alone(tmp_path: Path) -> None:
    progress = Progress()
    with serving(snapshot_of(GUILTY), then=Answer(stall_s=30)) as server:
        # live (no replay) against a server that stalls, with no graceful stop before the deadline
        stalled = loopback_settings(
            server.url, DOWNLOAD_TIMEOUT="30", CLOSESPIDER_TIMEOUT="0", HTTPCACHE_ENABLED="False"
        )
        jobs = [CrawlJob(GUILTY, settings=stalled), *map(CrawlJob, INNOCENT_OFFLINE)]
        summaries = _by_platform(
            crawl(jobs, tmp_path, offline=True, env=_env(), timeout_s=12, on_progress=progress)
        )
    _assert_guilty_failed(summaries, "crawl did not finish within 12 s and was killed")
    _assert_untouched(summaries, INNOCENT_OFFLINE)
    (guilty_done,) = progress.at(GUILTY, "done")
    for platform in INNOCENT_OFFLINE:
        assert len(progress.at(platform, "crawling")) == 1, "the reactor kept turning: nothing to rerun"
        (done,) = progress.at(platform, "done")
        assert done < guilty_done - 2, "reported as it ended, not when the run did"


def test_a_parser_blocking_the_shared_process_fails_alone(tmp_path: Path) -> None:
    """The block is caught by the ticks it stops (`blocked_after_s`: 3 s here), not at the deadline.
    Before: the shared process was killed only at the 12 s deadline, then the culprit alone again
    at 12 s, and its error said it "did not finish within 12 s"."""
    innocent = "lambda"
    with serving(snapshot_of(innocent), then=Answer(stall_s=0.5)) as server:
        jobs = [
            CrawlJob(GUILTY, settings=_broken_by("BlockOnItem")),
            CrawlJob(innocent, settings=_live(server.url)),
        ]
        progress = Progress()
        # long enough that the block starts well before the deadline, even when the crawl process is
        # slow to start on a loaded machine: only then does it read as blocked rather than slow
        summaries = _by_platform(
            crawl(jobs, tmp_path, offline=True, env=_env(), timeout_s=12, on_progress=progress)
        )
    _assert_guilty_failed(summaries, "crawl blocked its process (no sign of life for 3 s) and was killed")
    _assert_untouched(summaries, [innocent])
    _first, again = progress.at(innocent, "crawling")  # rerun alone after the shared reactor blocked
    assert again < 12, "the blocked process was killed at its missed ticks, before the 12 s deadline"


def test_a_crash_of_the_shared_process_fails_only_the_crashing_platform(tmp_path: Path) -> None:
    innocent = "lambda"
    with serving(snapshot_of(innocent), then=Answer(stall_s=1.0)) as server:
        jobs = [
            CrawlJob(GUILTY, settings=_broken_by("ExitOnItem")),
            CrawlJob(innocent, settings=_live(server.url)),
        ]
        summaries = _by_platform(crawl(jobs, tmp_path, offline=True, env=_env(), timeout_s=30))
    assert summaries[GUILTY].status == "failed"
    assert summaries[GUILTY].error.startswith(f"crawl process exited with code {CRASH_EXIT} without a report")
    _assert_untouched(summaries, [innocent])


def _blocked_beside_slow_answers(stack: ExitStack) -> list[CrawlJob]:
    """GUILTY blocking the shared reactor beside INNOCENT_LIVE, each through a server that takes
    RERUN_ANSWER_S to answer (so they are unfinished when the block starts, and again in their rerun)."""
    jobs = [CrawlJob(GUILTY, settings=_broken_by("BlockOnItem"))]
    for platform in INNOCENT_LIVE:
        server = stack.enter_context(serving(snapshot_of(platform), then=Answer(stall_s=RERUN_ANSWER_S)))
        settings = loopback_settings(server.url, DOWNLOAD_TIMEOUT="15", HTTPCACHE_ENABLED="False")
        jobs.append(CrawlJob(platform, settings=settings))
    return jobs


def test_crawls_rerun_after_a_block_run_side_by_side(tmp_path: Path) -> None:
    """Each unfinished crawl reruns alone, in a child of its own, all at once. Before: one after the
    other, so k unfinished crawls beside a blocking one cost up to k times a crawl's time."""
    progress = Progress()
    with ExitStack() as stack:
        jobs = _blocked_beside_slow_answers(stack)
        summaries = _by_platform(
            crawl(jobs, tmp_path, offline=True, env=_env(), timeout_s=20, on_progress=progress)
        )
    _assert_guilty_failed(summaries, "crawl blocked its process (no sign of life for 5 s) and was killed")
    _assert_untouched(summaries, INNOCENT_LIVE)
    assert len(progress.at(GUILTY, "crawling")) == 2, "the culprit was rerun alone too"
    reruns_started = [progress.at(platform, "crawling")[1] for platform in INNOCENT_LIVE]
    first_done = min(progress.at(platform, "done")[0] for platform in INNOCENT_LIVE)
    # an order of steps, not a speed: both reruns were crawling before either had ended
    assert max(reruns_started) < first_done, progress.events


def test_closing_the_steps_mid_rerun_ends_every_rerun_child(tmp_path: Path) -> None:
    """An interrupt while the reruns run (the consumer closes the steps) kills each of their children."""
    with ExitStack() as stack:
        jobs = _blocked_beside_slow_answers(stack)
        # 40 s: the culprit's rerun is caught blocking only after 10 s without a tick, so it is still alive
        steps = iter_crawls(jobs, tmp_path, offline=True, env=_env(), timeout_s=40)
        _until_both_rerun(steps)
        running = crawl_children(os.getpid())
        assert len(running) == 3, "each crawl reruns in a child of its own, all three at once"
        steps.close()
        assert crawl_children(os.getpid()) == []
        assert not any(Path(f"/proc/{pid}").exists() for pid in running), "every rerun child was reaped"


def _until_both_rerun(steps: Iterable[Step]) -> None:
    crawling: dict[str, int] = {}
    for step in steps:
        if step.state == "crawling":
            crawling[step.platform] = crawling.get(step.platform, 0) + 1
        if all(crawling.get(name) == 2 for name in INNOCENT_LIVE):
            return
    pytest.fail(f"the steps ended before both {INNOCENT_LIVE} were rerun side by side: {crawling}")
