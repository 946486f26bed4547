"""config/jobs_file.py: the jobs file's YAML read into jobs, every problem named with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.jobs_file import MAX_JOBS, parse_each_job, parse_jobs, read_jobs
from config.user_files import UserFileError
from sizing.jobs import Job

GOOD = """\
# two jobs
- name: qwen-lora
  model: qwen2.5-14b
  method: lora
  tokens: 500M
  epochs: 3
  within_days: 36h
  seq_len: 4096
  batch: 2
  max_gpus: 16
  platforms: [AutoDL, vastai]
  gpus: [4090, 910B]
  framework: unsloth
- name: small
  model: 7B
  method: qlora
  tokens: 1.5e9
  gpus: H100, A100-80GB
"""


def test_a_jobs_file_reads_into_jobs(tmp_path: Path):
    path = tmp_path / "jobs.yaml"
    path.write_text(GOOD, encoding="utf-8")
    first, second = read_jobs(path)
    assert first == Job(
        name="qwen-lora",
        model="qwen2.5-14b",
        method="lora",
        tokens=5e8,
        epochs=3,
        within_days=1.5,
        seq_len=4096,
        batch=2,
        max_gpus=16,
        platforms=("autodl", "vastai"),
        gpus=("RTX 4090 24GB", "Ascend 910B 64GB"),
        framework="unsloth",
    )
    assert (second.tokens, second.epochs, second.within_days) == (1.5e9, 1.0, None)
    assert second.gpus == ("H100 SXM 80GB", "A100 SXM 80GB")
    assert parse_jobs("") == [] and parse_jobs("# nothing yet\n") == []


JOB = "- name: run\n  model: 7B\n  method: lora\n  tokens: 1B\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "- name: run\n  model: 7B\n  method: lora\n  tokens: 0\n",
            "jobs.yaml line 4: job 'run': tokens must",
        ),
        (
            "- name: run\n  model: 7Q\n  method: lora\n  tokens: 1B\n",
            "jobs.yaml line 2: job 'run': unknown model",
        ),
        (
            "- name: run\n  model: 7B\n  method: lore\n  tokens: 1B\n",
            "jobs.yaml line 3: job 'run': method must",
        ),
        (JOB + "  gpus: [4090, H1000]\n", "jobs.yaml line 5: job 'run': unknown GPU 'H1000'"),
        (JOB + "  epochs: three\n", "jobs.yaml line 5: job 'run': epochs must be a number"),
        (JOB + "  max_gpus: 2.5\n", "jobs.yaml line 5: job 'run': max_gpus must be a whole number"),
        (JOB + "  within_days: soon\n", "jobs.yaml line 5: job 'run': a duration is"),
        (JOB + "  tokenz: 1B\n", "jobs.yaml line 5: unknown key 'tokenz'"),
        (JOB + "  tokens: 2B\n", "jobs.yaml line 5: tokens given twice"),
        (JOB + "  platforms: {a: 1}\n", "jobs.yaml line 5: platforms must be one value"),
        ("- name: run\n  model: 7B\n  method: lora\n", "jobs.yaml line 1: a job needs tokens"),
        (JOB + JOB, "jobs.yaml line 5: a second job named 'run'"),
        (JOB + "- just a name\n", "jobs.yaml line 5: a job is a mapping"),
        ("name: run\nmodel: 7B\n", "jobs.yaml line 1: expected a list of jobs (- name: ...)"),
        (JOB + "  seq_len: [1\n", "jobs.yaml line 6: not valid YAML"),
        ("- name: run\n\tmodel: 7B\n", "jobs.yaml line 2: not valid YAML"),
    ],
)
def test_a_bad_jobs_file_says_which_line(text, message):
    with pytest.raises(UserFileError) as caught:
        parse_jobs(text, "jobs.yaml")
    assert str(caught.value).startswith(message), str(caught.value)
    assert "\n" not in str(caught.value)  # one line


def test_a_missing_jobs_file_is_named(tmp_path: Path):
    with pytest.raises(UserFileError, match=r"^GPUPLAN_JOBS .*nowhere\.yaml: not found$"):
        read_jobs(tmp_path / "nowhere.yaml")


def test_a_config_json_model_is_read_beside_the_jobs_file(tmp_path: Path):
    config = Path(__file__).parents[1] / "sizing" / "fixtures" / "configs" / "llama-3-8b.json"
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "config.json").write_bytes(config.read_bytes())
    path = tmp_path / "jobs.yaml"
    path.write_text(
        "- name: mine\n  model: models/config.json\n  method: lora\n  tokens: 1B\n", encoding="utf-8"
    )
    (job,) = read_jobs(path)
    assert job.model == str(tmp_path / "models" / "config.json")
    path.write_text(
        "- name: mine\n  model: nowhere/config.json\n  method: lora\n  tokens: 1B\n", encoding="utf-8"
    )
    with pytest.raises(UserFileError, match=r"line 2: job 'mine': .*nowhere/config.json"):
        read_jobs(path)


def test_a_jobs_file_over_the_bound_is_refused_in_one_line() -> None:
    """50,000 jobs (3.9 MB, within the file cap) took 128 s and 8.2 GB for one refresh: a file over
    MAX_JOBS is refused before any job is read, naming the bound."""
    text = "".join(
        f"- {{name: j{index}, model: 7B, method: lora, tokens: 1B}}\n" for index in range(MAX_JOBS + 1)
    )
    with pytest.raises(UserFileError) as refused:
        parse_each_job(text, "GPUPLAN_JOBS jobs.yaml")
    message = str(refused.value)
    assert "\n" not in message and f"{MAX_JOBS + 1:,} jobs" in message and f"{MAX_JOBS:,}" in message
