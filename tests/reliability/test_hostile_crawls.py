"""What a crawl is given, hostile or careless (issue 29, "Clear errors and bounds"): a replayed
snapshot folder that points out of itself or is broken, an answer that inflates into a bomb, a
redirect to another host.

Each crawl is the real one (`scrapers.crawl.runner.run_crawl`): the spider in a crawl child with the
project's settings, replaying a copy of a recorded snapshot or answered by the fault server.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scrapers.crawl.runner import run_crawl
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
