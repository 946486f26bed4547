"""What a crawl is given, hostile or careless ("Clear errors and bounds"): a replayed
snapshot folder that points out of itself or is broken, an answer that inflates into a bomb, a
redirect to another host.

Each crawl is the real one (`scrapers.crawl.runner.run_crawl`): the spider in a crawl child with the
project's settings, replaying a copy of a recorded snapshot or answered by the fault server.
"""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from loopback import Answer, Hit, serving

from reliability.fake_secrets import secret_env
from reliability.fault_days import LOOPBACK_SETTINGS, http_date
from reliability.faults import snapshot
from scrapers.crawl.runner import run_crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.platform import ORIGIN_OVERRIDE_SETTING
from scrapers.registry import fixture_dir
from scrapers.replay import SNAPSHOT_FILE

pytestmark = pytest.mark.faults

PLATFORM = "datacrunch"  # one exchange, a JSON answer
SECRET = '{"data": "a file of the user\'s that no snapshot may read"}'


def _copied_snapshot(folder: Path) -> Path:
    snapshot = folder / "snapshot"
    shutil.copytree(fixture_dir(PLATFORM), snapshot, ignore=shutil.ignore_patterns("previous"))
    return snapshot


def _set_body_file(snapshot: Path, name: str) -> None:
    meta = json.loads((snapshot / SNAPSHOT_FILE).read_text("utf-8"))
    meta["exchanges"][0]["response"]["body_file"] = name
    (snapshot / SNAPSHOT_FILE).write_text(json.dumps(meta), "utf-8")


@pytest.mark.parametrize("kind", ["absolute", "dot_dot", "link_out"])
def test_a_replayed_body_file_outside_its_folder_is_refused(tmp_path: Path, kind: str) -> None:
    """Before: `--replay FOLDER` read whatever `body_file` named (`/etc/...`, `../..`, a link out)
    and served it as the platform's answer."""
    secret = tmp_path / "secret.json"
    secret.write_text(SECRET, "utf-8")
    snapshot = _copied_snapshot(tmp_path)
    name = {"absolute": str(secret), "dot_dot": "../secret.json", "link_out": "answer.json"}[kind]
    if kind == "link_out":
        (snapshot / name).symlink_to(secret)
    _set_body_file(snapshot, name)

    summary = run_crawl(PLATFORM, tmp_path / "out", replay_dir=snapshot)

    assert summary.status == "failed"
    assert summary.error is not None and "\n" not in summary.error
    assert f"{snapshot / SNAPSHOT_FILE}: exchange 1: body_file {name!r}" in summary.error
    assert "out of the snapshot folder" in summary.error or "outside the snapshot folder" in summary.error
    assert summary.items_yielded == 0


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"platform": "datacrunch", "exchanges": [', "is broken: not JSON"),
        ("[1, 2, 3]", 'is broken: not an object with an "exchanges" list'),
        ('{"exchanges": [{"request": {"method": "GET"}}]}', "is broken: exchange 1 is not a request"),
    ],
)
def test_a_broken_snapshot_is_named_as_broken(tmp_path: Path, text: str, said: str) -> None:
    """Before: a snapshot.json cut short or of the wrong shape failed the crawl as "not in the
    offline snapshot: GET <url>", as if the request had changed."""
    snapshot = _copied_snapshot(tmp_path)
    (snapshot / SNAPSHOT_FILE).write_text(text, "utf-8")

    summary = run_crawl(PLATFORM, tmp_path / "out", replay_dir=snapshot)

    assert summary.status == "failed"
    assert summary.error is not None and summary.error.startswith(f"snapshot {snapshot / SNAPSHOT_FILE} ")
    assert said in summary.error
    assert "not in the offline snapshot" not in summary.error


# 100 MiB of one byte: about 100 KB gzipped, over the 64 MiB cap (scrapers/settings.py DOWNLOAD_MAXSIZE).
BOMB_BYTES = 100 * 1024 * 1024


def _served_crawl(tmp_path: Path, platform: str, answer: Answer) -> tuple[CrawlSummary, list[Hit]]:
    with serving(snapshot(platform), http_date(datetime.now(UTC).date()), then=answer) as server:
        summary = run_crawl(
            platform,
            tmp_path / "out",
            env=secret_env(),
            settings={ORIGIN_OVERRIDE_SETTING: server.url, **LOOPBACK_SETTINGS},
        )
        return summary, list(server.hits)


def test_a_gzip_bomb_is_refused_at_the_cap_and_not_retried(tmp_path: Path) -> None:
    """Before: Scrapy's 1 GiB default let the answer inflate to 100 MiB in the shared crawl process,
    and the crawl failed as "invalid JSON: Extra data", the bomb unnamed."""
    bomb = gzip.compress(b"0" * BOMB_BYTES)
    summary, hits = _served_crawl(tmp_path, PLATFORM, Answer(headers={"Content-Encoding": "gzip"}, body=bomb))

    assert summary.status == "failed"
    assert summary.error == (
        "the answer from https://api.verda.com/v1/instance-types decompresses to more than "
        "67,108,864 bytes (DOWNLOAD_MAXSIZE): refused"
    )
    assert len(hits) == 1, "refused, not asked again"


def test_a_gzip_bomb_without_a_content_encoding_is_refused_at_the_cap(tmp_path: Path) -> None:
    """AWS's answers can be gzip without a Content-Encoding, which the spider gunzips itself. Before:
    `gzip.decompress` inflated each 100 MiB bomb whole, and the crawl failed as "invalid JSON"."""
    bomb = gzip.compress(b"0" * BOMB_BYTES)
    summary, hits = _served_crawl(
        tmp_path, "aws", Answer(headers={"Content-Type": "application/json"}, body=bomb)
    )

    assert summary.status == "failed"
    assert summary.error is not None
    assert "decompresses to more than 67,108,864 bytes (DOWNLOAD_MAXSIZE): refused" in summary.error
    assert "https://b0.p.awsstatic.com/pricing/" in summary.error
    assert len(hits) == len({hit.path for hit in hits}), "no document asked twice"


def test_a_redirect_to_another_host_is_not_followed(tmp_path: Path) -> None:
    """Before: Scrapy followed the platform's 302 to any host, and the crawl loaded that host's
    answer as the platform's offers (status ok)."""
    with serving(snapshot(PLATFORM), http_date(datetime.now(UTC).date())) as elsewhere:
        foreign = f"http://localhost:{elsewhere.server_address[1]}/v1/instance-types"
        summary, hits = _served_crawl(tmp_path, PLATFORM, Answer(status=302, headers={"Location": foreign}))
        foreign_hits = list(elsewhere.hits)

    assert summary.status == "failed"
    assert summary.error == (
        "HTTP 302 from https://api.verda.com/v1/instance-types redirects off datacrunch's site "
        "(verda.com, datacrunch.io), to localhost: not followed"
    )
    assert foreign_hits == [], "nothing asked of the other host"
    assert len(hits) == 1


def test_a_redirect_within_the_platform_is_followed_through_the_override(tmp_path: Path) -> None:
    """A redirect to the platform's own site, absolute or relative, is followed, and under
    GPUPLAN_ORIGIN_OVERRIDE it goes to the overriding origin like every request (never the platform)."""
    for location in ("https://api.verda.com/v1/instance-types", "/v1/instance-types"):
        moved = Answer(status=301, headers={"Location": location})
        with serving(snapshot(PLATFORM), http_date(datetime.now(UTC).date()), first=(moved,)) as server:
            summary = run_crawl(
                PLATFORM,
                tmp_path / location.replace("/", "_"),
                env=secret_env(),
                settings={ORIGIN_OVERRIDE_SETTING: server.url, **LOOPBACK_SETTINGS},
            )
            hits = list(server.hits)
        assert (summary.status, summary.error) == ("ok", None), location
        assert summary.items_yielded > 0
        assert [hit.status for hit in hits] == [301, 200], location
