"""sizing/jobs.py: the amounts people write, Job's checks, and the jobs file with its line numbers."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from sizing.jobs import (
    Job,
    JobsFileError,
    job_requirements,
    parse_duration,
    parse_jobs,
    parse_tokens,
    read_jobs,
)
from sizing.planner import requirements
from sizing.setup import TrainingSetup


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("500M", 5e8),
        ("2B", 2e9),
        ("1.5e9", 1.5e9),
        ("1.5B", 1.5e9),
        ("750k", 7.5e5),
        ("2_000_000", 2e6),
        ("3 b", 3e9),
        (1e6, 1e6),
    ],
)
def test_tokens_as_people_write_them(text, tokens):
    assert parse_tokens(text) == pytest.approx(tokens)


@pytest.mark.parametrize("text", ["0", "0M", "-5B", "lots", "5X", "", "inf", "nan"])
def test_tokens_must_be_a_positive_amount(text):
    with pytest.raises(ValueError, match="tokens"):
        parse_tokens(text)


@pytest.mark.parametrize(
    ("text", "hours"), [("36h", 36), ("3d", 72), ("2w", 336), ("1.5d", 36), ("12 H", 12)]
)
def test_durations(text, hours):
    assert parse_duration(text) == timedelta(hours=hours)


@pytest.mark.parametrize("text", ["3", "0d", "3 days", "tomorrow", "2026-12-01"])
def test_a_duration_needs_a_unit_and_a_length(text):
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_a_job_resolves_gpu_names_and_keeps_epochs_apart():
    job = Job("run", "qwen2.5-14b", "lora", tokens=5e8, epochs=3, gpus=("4090", "H100", "RTX 4090 24GB"))
    assert job.gpus == ("RTX 4090 24GB", "H100 SXM 80GB")  # as people write them, once each
    assert job.train_tokens == pytest.approx(1.5e9)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"model": "7Q"}, "unknown model '7Q'"),
        ({"method": "lorra"}, "method must be one of"),
        ({"tokens": 0.0}, "tokens must be more than 0"),
        ({"epochs": -1.0}, "epochs must be more than 0"),
        ({"within_days": 0.0}, "within_days must be more than 0"),
        ({"max_gpus": 0}, "max_gpus must be at least 1"),
        ({"seq_len": 0}, "seq_len must be at least 1"),
        ({"gpus": ("H1000",)}, "unknown GPU 'H1000'"),
        ({"framework": "keras"}, "framework must be one of"),
    ],
)
def test_a_job_is_checked_when_made(fields, message):
    values = {"name": "run", "model": "7B", "method": "lora", "tokens": 1e9, **fields}
    with pytest.raises(ValueError, match=message):
        Job(**values)


def test_job_requirements_are_the_sizing_model_with_the_jobs_settings():
    job = Job("run", "13B", "qlora", tokens=1e9, seq_len=4096, batch=2, framework="torchtune")
    ours = job_requirements(job, (1, 2), ["A100 SXM 80GB"])
    setup = TrainingSetup(framework="torchtune", seq_len=4096, micro_batch=2)
    assert ours == requirements("13B", "qlora", (1, 2), ["A100 SXM 80GB"], setup=setup)
    assert ours != requirements("13B", "qlora", (1, 2), ["A100 SXM 80GB"])  # the settings count
    default = job_requirements(Job("run", "13B", "qlora", tokens=1e9), (1,), ["A100 SXM 80GB"])
    assert default == requirements("13B", "qlora", (1,), ["A100 SXM 80GB"])


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
        ("name: run\nmodel: 7B\n", "jobs.yaml line 1: the file must be a list of jobs"),
        (JOB + "  seq_len: [1\n", "jobs.yaml line 6: not valid YAML"),
        ("- name: run\n\tmodel: 7B\n", "jobs.yaml line 2: not valid YAML"),
    ],
)
def test_a_bad_jobs_file_says_which_line(text, message):
    with pytest.raises(JobsFileError) as caught:
        parse_jobs(text, "jobs.yaml")
    assert str(caught.value).startswith(message), str(caught.value)
    assert "\n" not in str(caught.value)  # one line


def test_a_missing_jobs_file_is_named(tmp_path: Path):
    with pytest.raises(JobsFileError, match=r"jobs file .*nowhere\.yaml not found"):
        read_jobs(tmp_path / "nowhere.yaml")


def test_a_config_json_model_is_read_beside_the_jobs_file(tmp_path: Path):
    config = Path(__file__).with_name("fixtures") / "configs" / "llama-3-8b.json"
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
    with pytest.raises(JobsFileError, match=r"line 2: job 'mine': .*nowhere/config.json"):
        read_jobs(path)
