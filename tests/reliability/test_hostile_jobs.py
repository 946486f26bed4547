"""One bad number never fails a whole day's job plans, nor reaches a user as an engine's error
("absurd values to plans and size").

Before the fix: a job of `tokens: 1e30` beside a good job made the `job_plans` step fail for every
job with DuckDB's "Out of Range Error: Interval value ... out of range" (refresh exit 1, no job
planned); `gpuplan plans --tokens 1e30` printed that same DuckDB text; `--within 99999999999d`
said "Python int too large to convert to C int"; `--tokens 1e15` died in the table with
"str.replace() takes no keyword arguments" (a finish past year 9999); `gpuplan size --seq-len
1e20` and `size 100000000B` printed tables of nonsense. Now every number is bounded where it is
parsed, with the bound in one line naming the option; a job refused when the file is read costs
the other jobs nothing; a job that no offer trains within a century gets a `no_plan` row saying so.
The warehouse is the quotes platform's recorded day (run_holders).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuplan.cli import run
from reliability.run_holders import DAY, finish, home_in, refresh, seed_warehouse, values
from warehouse import job_plans
from warehouse.engine import connect

pytestmark = pytest.mark.faults

JOBS = """\
- name: good
  model: 7B
  method: qlora
  tokens: 1B
- name: absurd
  model: 7B
  method: qlora
  tokens: 1e30
- name: endless
  model: 7B
  method: qlora
  tokens: 1000T
  epochs: 1000
"""
# What no message to a user may hold: an engine's or the interpreter's own words.
ENGINE_TEXT = ("Out of Range", "Interval", "Python int", "Traceback", "duckdb", "takes no keyword")


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seed_warehouse(tmp_path_factory.mktemp("seed"))


def test_a_job_that_cannot_be_planned_costs_the_other_jobs_nothing(tmp_path: Path, seed: Path) -> None:
    home = home_in(tmp_path / "home", seed)
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(JOBS, "utf-8")
    home.env["GPUPLAN_JOBS"] = str(jobs)

    returncode, out, err = finish(refresh(home, DAY))

    assert returncode == 1, out + err  # the refused job is said, and the run says it failed
    (failed,) = [line for line in (out + err).splitlines() if line.startswith("step failed")]
    assert failed == (
        f"step failed: job_plans: GPUPLAN_JOBS {jobs} line 8: job 'absurd': tokens must be more than 0 "
        "and at most 1000T, got '1e30'"
    )
    assert not any(text in out + err for text in ENGINE_TEXT)
    with connect.reader(home.settings.warehouse) as con:
        stored = job_plans.job_plans_for_date(con, DAY)
    best = stored[stored["rank"] == 1].set_index("job")
    assert set(best.index) == {"good", "endless"}
    assert best.loc["good", "status"] == "ok" and best.loc["good", "total_usd"] > 0
    assert best.loc["endless", "status"] == "no_plan"
    assert str(best.loc["endless", "reason"]).startswith("no plan finishes within 100 years: the fastest, ")


ABSURD = [
    (["plans", "--tokens", "1e30"], "error: --tokens must be more than 0 and at most 1000T, got '1e30'"),
    (["plans", "--tokens", "1e400"], "error: --tokens must be more than 0 and at most 1000T"),
    (
        ["plans", "--tokens", "1B", "--epochs", "1e30"],
        "'--epochs': Input should be less than or equal to 1000",
    ),
    (["plans", "--tokens", "1B", "--within", "99999999999d"], "error: --within: a duration must be more"),
    (["plans", "--tokens", "1B", "--within", "9999-12-31"], "error: --within must be at most 3650 days"),
    (["plans", "--tokens", "1B", "--seq-len", "10" * 10], "'--seq-len': Input should be less than or equal"),
    (["plans", "--tokens", "1B", "--batch", "10" * 10], "'--batch': Input should be less than or equal"),
    (["plans", "--tokens", "1B", "--max-gpus", "10" * 10], "'--max-gpus': Input should be less than or"),
    (["plans", "--tokens", "1000T"], "error: no plan finishes within 100 years: the fastest, quotes "),
    (["size", "7B", "-m", "lora", "--seq-len", "1" + "0" * 20], "'--seq-len': Input should be less than"),
    (["size", "7B", "-m", "lora", "--batch", "1" + "0" * 15], "'--batch': Input should be less than"),
    (["size", "7B", "-m", "lora", "--grad-accum", "1" + "0" * 20], "'--grad-accum': Input should be less"),
    (["size", "7B", "-m", "lora", "--lora-rank", "1" + "0" * 12], "'--lora-rank': Input should be less"),
    (["size", "7B", "-m", "lora", "--gpus", "1" + "0" * 12], "'--gpus': Input should be less than or"),
    (["size", "7B", "-m", "full", "-f", "megatron", "--tp", "1" + "0" * 11], "'--tp': Input should be"),
    (["size", "7B", "-m", "lora", "--mfu", "5"], "'--mfu': Input should be less than or equal to 1"),
    (["size", "100000000B", "-m", "lora"], "model size must be more than 0 and at most 100T, got"),
]


@pytest.mark.parametrize(("args", "said"), ABSURD, ids=[" ".join(args)[:48] for args, _ in ABSURD])
def test_absurd_numbers_to_plans_and_size_are_one_line_each(
    seed: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    said: str,
) -> None:
    for name, value in values(seed).items():
        monkeypatch.setenv(name, value)
    job = ["--model", "7B", "--method", "qlora"] if args[0] == "plans" else []
    monkeypatch.setattr(sys, "argv", ["gpuplan", *args, *job])
    with pytest.raises(SystemExit) as exit_:
        run()
    assert exit_.value.code not in (0, None)
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("error: ") and said in err, out + err
    assert not any(text in err for text in ENGINE_TEXT), err
