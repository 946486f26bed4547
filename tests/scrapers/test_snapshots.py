"""Every spider ships a snapshot; replaying it offline through Scrapy writes exactly its expected items."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
from crawl_helpers import canonical, crawl_env, every_token_env, expected_items, read_jsonl
from scrapy.utils.misc import walk_modules_iter
from scrapy.utils.spider import iter_spider_classes

from scrapers.crawl.runner import CrawlJob, crawl, run_crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.parsing import http_date
from scrapers.platform import PlatformSpider
from scrapers.registry import FIXTURES, fixture_dir, platforms, spider_class
from scrapers.replay import SNAPSHOT_FILE, Snapshot

PREVIOUS = "previous"
SPIDER_MODULE = "scrapers.spiders"


def test_the_spider_loader_lists_the_platforms() -> None:
    names = platforms()
    assert {"vastai", "runpod", "lambda", "datacrunch"} <= set(names)
    for name in names:
        assert spider_class(name).name == name


def test_each_platform_is_one_spider_in_a_file_named_for_it_or_for_its_family() -> None:
    """File name = spider name = slug; or one family file (a base and a subclass per slug, as
    SkyPilot's catalogs of several clouds) whose spiders are all subclasses of one base."""
    found: dict[str, list[str]] = defaultdict(list)
    for module in walk_modules_iter(SPIDER_MODULE):
        for spider in iter_spider_classes(module):
            found[spider.name].append(module.__name__)
    assert {name: where for name, where in found.items() if len(where) > 1} == {}, "one spider per name"
    by_module: dict[str, list[type]] = defaultdict(list)
    for name in platforms():
        by_module[spider_class(name).__module__].append(spider_class(name))
    for module, spiders in by_module.items():
        if module == f"{SPIDER_MODULE}.{spiders[0].name}" and len(spiders) == 1:
            continue
        bases = set.intersection(*(set(spider.__mro__[1:]) for spider in spiders)) - set(
            PlatformSpider.__mro__
        )
        assert len(spiders) > 1 and bases, f"{module}: name the file after its spider, or its family's base"


@pytest.mark.parametrize("platform", platforms())
def test_every_spider_has_a_snapshot_with_expected_items(platform: str) -> None:
    folder = fixture_dir(platform)
    assert (folder / SNAPSHOT_FILE).is_file(), f"{platform}: add scrapers/fixtures/{platform}/snapshot.json"
    snapshot = Snapshot.load(folder)
    assert snapshot.exchanges, f"{platform}: the snapshot holds no exchanges"
    assert snapshot.meta.get("platform") == platform
    assert read_jsonl(folder / "expected.jsonl"), f"{platform}: expected.jsonl is missing or empty"
    if snapshot.synthetic:
        assert snapshot.meta.get("follows"), (
            f"{platform}: a synthetic snapshot names the documentation it follows"
        )
        readme = (folder / "README.md").read_text("utf-8")
        assert "SYNTHETIC" in readme, f"{platform}: README.md must say the snapshot is synthetic"
        if any(e.url.startswith("http") for e in snapshot.exchanges):
            # A platform's answer follows real structure: a recording, or public clients named
            # with repo, path and commit.
            assert "reconstructed" in readme.lower(), (
                f"{platform}: README.md says what the snapshot is reconstructed from (repo, path, commit)"
            )
            assert re.search(r"@ `?[0-9a-f]{40}", readme), f"{platform}: README.md names the commits"


def test_every_fixture_folder_belongs_to_a_spider() -> None:
    folders = {path.name for path in FIXTURES.iterdir() if path.is_dir() and not path.name.startswith("_")}
    assert folders <= set(platforms()), f"fixture folders without a spider: {folders - set(platforms())}"


# The bundled days: each fixture folder is the latest; `previous/` (same layout), where a fixture has
# one (it is optional), the day before, so that the offline demo shows a day-over-day change.
DAYS = [(platform, "") for platform in platforms()] + [
    (platform, PREVIOUS) for platform in platforms() if (fixture_dir(platform) / PREVIOUS).is_dir()
]


@pytest.mark.parametrize("platform", [p for p, day in DAYS if day])
def test_the_day_before_is_a_complete_snapshot_a_day_earlier(platform: str) -> None:
    latest, previous = Snapshot.load(fixture_dir(platform)), Snapshot.load(fixture_dir(platform) / PREVIOUS)
    assert previous.meta["platform"] == platform and previous.synthetic == latest.synthetic
    earlier = http_date(previous.exchanges[0].headers["Date"]), http_date(latest.exchanges[0].headers["Date"])
    assert earlier[0] is not None and earlier[1] is not None
    assert (earlier[1] - earlier[0]).days == 1
    assert canonical(expected_items(platform, day=PREVIOUS)) != canonical(expected_items(platform)), (
        f"{platform}: the day before must differ from the latest day"
    )


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[CrawlSummary, Path]]:
    """Every bundled day replayed as `gpuplan refresh --offline` crawls them: the latest days
    together in one crawl child, the days before together in another (`scrapers.crawl.runner.crawl`),
    with a dummy token for each spider that needs one. (platform, day) -> (summary, its folder)."""
    env = every_token_env()
    latest = tmp_path_factory.mktemp("latest")
    days_before = tmp_path_factory.mktemp("previous")
    before = [p for p, day in DAYS if day]
    summaries = crawl([CrawlJob(platform) for platform in platforms()], latest, offline=True, env=env)
    replays = {(summary.platform, ""): (summary, latest) for summary in summaries}
    jobs = [CrawlJob(platform, replay_dir=fixture_dir(platform) / PREVIOUS) for platform in before]
    for summary in crawl(jobs, days_before, env=env):
        replays[summary.platform, PREVIOUS] = (summary, days_before)
    return replays


@pytest.mark.slow
@pytest.mark.parametrize(("platform", "day"), DAYS, ids=[f"{p}{'-' + d if d else ''}" for p, d in DAYS])
def test_offline_replay_writes_the_expected_items(
    replayed: dict[tuple[str, str], tuple[CrawlSummary, Path]], platform: str, day: str
) -> None:
    summary, folder = replayed[platform, day]
    assert (summary.status, summary.error) == ("ok", None)
    assert summary.offline and summary.source == "crawl"
    written = read_jsonl(Path(summary.feed))
    assert canonical(written) == canonical(expected_items(platform, day=day))
    assert summary.items_yielded == len(written)
    on_disk = json.loads((folder / f"{platform}.summary.json").read_text("utf-8"))
    assert CrawlSummary.read(folder / f"{platform}.summary.json") == summary
    assert set(on_disk) == {
        "platform",
        "status",
        "error",
        "started_at",
        "finished_at",
        "items_yielded",
        "offline",
        "source",
        "feed",
        "feed_sha256",
        "stats",
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "platform", [p for p in platforms() if (fixture_dir(p) / "expected.token.jsonl").is_file()]
)
def test_offline_replay_with_a_token_takes_the_token_path(platform: str, tmp_path: Path) -> None:
    summary = run_crawl(platform, tmp_path, offline=True, env=crawl_env(platform, "offline-test-token"))
    assert (summary.status, summary.error) == ("ok", None)
    assert canonical(read_jsonl(Path(summary.feed))) == canonical(expected_items(platform, with_token=True))
