"""Every file a user names, hostile or careless: the jobs file, the
watches file and a model's config.json, each read by the one reader (`config.user_files`).

What main did before the reader (commit 2d9264f) and before this issue's fixes:
- a 480-byte jobs file of nine levels of nine YAML aliases made `job_plans` fail with MemoryError
  (at 7 levels on a larger warehouse, the whole run); a 470-byte watches file made `gpuplan
  digest --json` print a 580 MB error line, and `--send` fail, so the day's mail was lost;
- a FIFO as GPUPLAN_JOBS, GPUPLAN_WATCHES or `--model` hung until killed; /dev/zero read until
  memory ran out and ended in an empty `error: `; the jobs and watches files had the guard from
  2d9264f, `--model` went on reading with `Path.read_text` until this issue;
- a config.json with `intermediate_size: -11008` was planned: -1.94B parameters, -3.9 GB of
  weights, a total of $0.
Now each is refused in one bounded line naming the file (and the line or key), at once, and the
day's load, plans and mail go on. The warehouse is the quotes platform's recorded day (run_holders).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from config.user_files import MAX_MESSAGE_CHARS
from config.watches_file import JobWatch, PriceWatch, StockWatch, read_watches
from gpuplan.cli import run
from reliability.run_holders import CLI, DAY, SEED_DAY, finish, home_in, refresh, seed_warehouse
from warehouse import daily_plans
from warehouse.engine import connect

pytestmark = pytest.mark.faults

LLAMA_3_8B = Path(__file__).parents[1] / "sizing" / "fixtures" / "configs" / "llama-3-8b.json"
AT_ONCE_S = 30.0  # a refusal is immediate; a FIFO would hang, /dev/zero read for minutes
# Nine levels of nine aliases under one key: 387 million values if built (a "billion laughs").
LEVELS = "".join(f"    l{n}: &l{n} [{','.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, 10))
BOMB = "    l0: &l0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + LEVELS
JOBS_BOMB = "- name: bomb\n  model: 7B\n  method: qlora\n  tokens: 1B\n  platforms:\n" + BOMB
WATCHES_BOMB = "- gpu: H100\n  below_usd_per_gpu_hour: 2\n  platforms:\n" + BOMB
REFUSED = {
    "fifo": "is a FIFO, not a regular file: refused unread",
    "dev_zero": "is a device, not a regular file: refused unread",
    "oversized": "bytes, over the 4,194,304-byte limit of",
    "bomb": "YAML aliases expand this item past 1,000 values",
}


def _hostile(path: Path, kind: str, bomb: str = "") -> Path:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "oversized":
        with path.open("wb") as sparse:  # 5 MiB that take no disk
            sparse.truncate(5 * 1024 * 1024)
    else:
        assert len(bomb.encode()) < 1024
        path.write_text(bomb, "utf-8")
    return path


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seed_warehouse(tmp_path_factory.mktemp("seed"))


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "bomb"])
def test_a_bad_jobs_file_never_costs_the_days_load_or_plans(tmp_path: Path, seed: Path, kind: str) -> None:
    home = home_in(tmp_path / "home", seed)
    jobs = _hostile(tmp_path / "jobs.yaml", kind, JOBS_BOMB)
    home.env["GPUPLAN_JOBS"] = str(jobs)
    started = time.monotonic()

    returncode, out, err = finish(refresh(home, DAY))

    assert time.monotonic() - started < 120
    assert returncode == 1, out + err
    (failed,) = [line for line in (out + err).splitlines() if line.startswith("step failed")]
    assert failed.startswith(f"step failed: job_plans: GPUPLAN_JOBS {jobs}"), failed
    assert REFUSED[kind] in failed and len(failed) < MAX_MESSAGE_CHARS + 40, failed
    with connect.reader(home.settings.warehouse) as con:  # the day's load and plans went on
        assert set(daily_plans.day_crawls(con, DAY)["status"]) == {"ok"}
        assert len(daily_plans.plans_for_date(con, DAY)) > 0


@dataclass
class Mailbox:
    """aiosmtpd handler: keeps every message."""

    messages: list[bytes] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(envelope.original_content)
        return "250 OK"


@pytest.fixture
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    with socket.socket() as probe:  # aiosmtpd cannot be given port 0 (aiosmtpd#276)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box, port
    finally:
        controller.stop()


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "bomb"])
def test_a_bad_watches_file_never_costs_the_days_mail(
    tmp_path: Path, seed: Path, mailbox: tuple[Mailbox, int], kind: str
) -> None:
    home = home_in(tmp_path / "home", seed)
    watches = _hostile(tmp_path / "watches.yaml", kind, WATCHES_BOMB)
    box, port = mailbox
    home.env.update(
        {
            "GPUPLAN_WATCHES": str(watches),
            "GPUPLAN_SMTP_HOST": "127.0.0.1",
            "GPUPLAN_SMTP_PORT": str(port),
            "GPUPLAN_SMTP_SECURITY": "none",
            "GPUPLAN_SMTP_FROM": "digest@gpuplan.test",
            "GPUPLAN_SMTP_TO": "ops@gpuplan.test",
        }
    )
    digest = [sys.executable, "-c", CLI, "digest", "--date", SEED_DAY.isoformat()]
    started = time.monotonic()

    shown = subprocess.run([*digest, "--json"], env=home.env, capture_output=True, text=True, timeout=120)
    sent = subprocess.run([*digest, "--send"], env=home.env, capture_output=True, text=True, timeout=120)

    assert time.monotonic() - started < 2 * AT_ONCE_S
    assert shown.returncode == 1 and shown.stdout == ""
    assert shown.stderr.startswith(f"error: GPUPLAN_WATCHES {watches}") and shown.stderr.count("\n") == 1
    assert REFUSED[kind] in shown.stderr and len(shown.stderr) < MAX_MESSAGE_CHARS + 10
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert f"{SEED_DAY}: sent to ops@gpuplan.test" in sent.stdout
    (message,) = box.messages
    assert len(message) < 1_000_000 and b"GPUPLAN_WATCHES" in message  # the mail says why, bounded


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "oversized"])
def test_a_model_config_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    config = _hostile(tmp_path / "config.json", kind)
    commands = (
        ["size", str(config), "-m", "lora"],
        ["plans", "--tokens", "1B", "--model", str(config), "--method", "lora"],
    )
    env = {**os.environ, "GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse.duckdb")}
    env.pop("GPUPLAN_DEBUG", None)
    for command in commands:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", CLI, *command], env=env, capture_output=True, text=True, timeout=AT_ONCE_S
        )
        assert time.monotonic() - started < AT_ONCE_S
        assert done.returncode != 0 and done.stderr.count("\n") == 1, done.stderr
        assert f"model config {config}: " in done.stderr and REFUSED[kind] in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        ({"intermediate_size": -11008}, "intermediate_size must be a whole number from 1 to"),
        ({"num_hidden_layers": 0}, "num_hidden_layers must be a whole number from 1 to"),
        ({"hidden_size": 4096.5}, "hidden_size must be a whole number from 1 to"),
        ({"vocab_size": "128256"}, "vocab_size must be a whole number from 1 to"),
        ({"num_key_value_heads": 5}, "num_attention_heads 32 is not a multiple of num_key_value_heads 5"),
        ({"hidden_act": "banana"}, "hidden_act 'banana' is not an activation transformers knows"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings must be true or false"),
        ({"num_local_experts": 8, "num_experts_per_tok": 9}, "num_experts_per_tok 9 is more than the 8"),
        ({"head_dim": -128}, "head_dim must be a whole number from 0 to"),
        ({"num_attention_heads": 1e30}, "num_attention_heads must be a whole number from 1 to"),
    ],
)
def test_a_model_config_with_impossible_values_is_refused_naming_the_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    changed: dict[str, object],
    said: str,
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**json.loads(LLAMA_3_8B.read_text("utf-8")), **changed}), "utf-8")
    monkeypatch.setattr(sys, "argv", ["gpuplan", "size", str(config), "-m", "lora", "--json"])
    with pytest.raises(SystemExit) as exit_:
        run()  # the console entry point: one line per error
    assert exit_.value.code != 0
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and f"model config {config}: {said}" in err, err


def test_a_watch_of_1e3_is_a_number(tmp_path: Path) -> None:
    """Before: YAML 1.1 reads `1e3` as text (its floats need a dot), so the watch was refused,
    "below_usd_per_gpu_hour must be a positive number, not '1e3'", and the file gave no watch;
    and `gpu: 4090` (a number to YAML) was "gpu must be a name, not 4090"."""
    path = tmp_path / "watches.yaml"
    path.write_text(
        "- gpu: H100\n  below_usd_per_gpu_hour: 1e3\n"
        "- gpu: 4090\n  min_available_gpus: 1e1\n"
        "- job: mine\n  below_total_usd: 2.5E+4\n",
        "utf-8",
    )
    listed = read_watches(path, None)
    assert listed.error is None
    price, stock, job = listed.watches
    assert isinstance(price, PriceWatch) and price.below == 1000.0
    assert isinstance(stock, StockWatch) and stock.min_available_gpus == 10
    assert isinstance(job, JobWatch) and job.below_total_usd == 25_000.0
    for written, said in (("nan", "not 'nan'"), ("-1e3", "not -1000"), ("1e-1", "whole number")):
        key = "min_available_gpus" if written == "1e-1" else "below_usd_per_gpu_hour"
        path.write_text(f"- gpu: H100\n  {key}: {written}\n", "utf-8")
        error = read_watches(path, None).error
        assert error is not None and f"line 2: {key} must be a positive" in error and said in error, error
