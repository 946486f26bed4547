"""sizing/jobs.py: the amounts people write and Job's checks (the jobs file: tests/config/)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sizing.jobs import Job, job_requirements, parse_duration, parse_tokens
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
        ({"max_gpus": 0}, "max_gpus must be from 1 to 100,000, got 0"),
        ({"seq_len": 0}, "seq_len must be from 1 to 10,000,000, got 0"),
        ({"tokens": 1e30}, "tokens must be more than 0 and at most 1e\\+15, got 1e\\+30"),
        ({"epochs": float("nan")}, "epochs must be more than 0 and at most 1000, got nan"),
        ({"batch": 10**9}, "batch must be from 1 to 65,536"),
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
