"""The jobs file (GPUPLAN_JOBS): its YAML list read into `sizing.jobs.Job` values, each problem
named with its line (README, "Plan your own job"):

    - name: qwen-lora            # unique; how the job is named in job_plans and the digest
      model: qwen2.5-14b         # any preset, size or config.json `gpuplan size` accepts
      method: lora
      tokens: 500M               # one epoch; 500M, 2B, 1.5e9
      epochs: 3                  # optional, default 1
      within_days: 4             # optional deadline: days, or 36h / 3d / 2w
      seq_len: 4096              # optional sizing settings (gpuplan size --seq-len / --batch)
      batch: 2
      max_gpus: 16               # optional: the most GPUs a plan may use
      platforms: [autodl, vastai]  # optional: only these platforms' offers
      gpus: [4090, H100]         # optional: only these GPUs, as people write them
      framework: torchtune       # optional: whose defaults the sizing takes (gpuplan size --framework)

Every value is read as written (`config.user_files.Written.text`): `tokens: 1.5e9` stays the text
1.5e9 (YAML 1.1 would read it as a string anyway, and `2B` could never be a number), so the amounts
people write are read by the job's own rules (`sizing.jobs.parse_tokens`, `parse_duration`), and
what makes a job valid is `sizing.jobs.Job`'s. Errors are `UserFileError`s naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from config import model_files
from config.settings import ascii_decimal, ascii_whole
from config.user_files import UserFileError, Written, read_text, yaml_list
from sizing.jobs import Job, parse_duration, parse_tokens
from sizing.shapes import ModelSpec

FIELDS = (
    "name",
    "model",
    "method",
    "tokens",
    "epochs",
    "within_days",
    "seq_len",
    "batch",
    "max_gpus",
    "platforms",
    "gpus",
    "framework",
)
REQUIRED = ("name", "model", "method", "tokens")


@dataclass(frozen=True)
class JobsRead:
    """A jobs file's jobs, and each job refused with its line and why (issue 29): one job that
    cannot be read (`tokens: 1e30`, a typo) never costs the others their plans."""

    jobs: tuple[Job, ...]
    refused: tuple[UserFileError, ...] = ()


# The most jobs one file may hold: the daily run plans them in chunks (warehouse.job_plans.JOB_CHUNK),
# in time and memory bench/bench_many_jobs.py measures at this count (README, "Plan your own job").
# Past it the file is refused, in one line, before any job is read.
MAX_JOBS = 20_000


def read_jobs(path: Path) -> list[Job]:
    """The jobs of the jobs file at `path`; raises UserFileError (file, line, problem) for the
    first problem, a refused job's included."""
    return _all_or_first(read_each_job(path))


def read_each_job(path: Path) -> JobsRead:
    """The jobs of the jobs file at `path`, each job that cannot be read refused on its own.
    Raises UserFileError when the file itself cannot be read (missing, not YAML, not a list)."""
    source = f"GPUPLAN_JOBS {path}"
    return parse_each_job(read_text(path, source, "a jobs file"), source, path.parent)


def parse_jobs(text: str, source: str = "jobs file", base: Path | None = None) -> list[Job]:
    """The jobs of a jobs file's text; `source` names it in errors, `base` is its folder (a model
    given as a relative config.json path is read from there). An empty file holds no jobs.

    Raises UserFileError naming the line of the first problem.
    """
    return _all_or_first(parse_each_job(text, source, base))


def parse_each_job(text: str, source: str = "jobs file", base: Path | None = None) -> JobsRead:
    """`parse_jobs`, with each job's problem kept in `refused` and the other jobs read."""
    jobs: dict[str, Job] = {}
    refused: list[UserFileError] = []
    # the top-level list's items counted before YAML builds them (seconds for 20,000), then again
    listed = sum(1 for line in text.splitlines() if line.startswith("- ") or line.rstrip() == "-")
    if listed > MAX_JOBS:
        raise _too_many(source, listed)
    items = yaml_list(text, source, "jobs", "- name: ...")
    if len(items) > MAX_JOBS:
        raise _too_many(source, len(items))
    for item in items:
        try:
            if item.refused is not None:
                raise UserFileError(source, item.refused, item.line)
            job = _job(source, item.written, base)
            if job.name in jobs:
                raise UserFileError(source, f"a second job named {job.name!r}", item.line)
        except UserFileError as problem:
            refused.append(problem)
            continue
        jobs[job.name] = job
    return JobsRead(tuple(jobs.values()), tuple(refused))


def _too_many(source: str, count: int) -> UserFileError:
    return UserFileError(source, f"{count:,} jobs: at most {MAX_JOBS:,} are planned in a day; split the file")


def _all_or_first(read: JobsRead) -> list[Job]:
    if read.refused:
        raise read.refused[0]
    return list(read.jobs)


def _one(source: str, value: Written, key: str) -> str:
    if value.text is None or not value.text.strip():
        raise UserFileError(source, f"{key} must be one value", value.line)
    return value.text.strip()


def _names(source: str, value: Written, key: str) -> tuple[str, ...]:
    """A list of names, or one value with commas: `platforms: [autodl, vastai]`, `gpus: 4090, H100`."""
    if value.items is not None:
        return tuple(_one(source, item, key) for item in value.items)
    return tuple(part.strip() for part in _one(source, value, key).split(",") if part.strip())


def _whole(text: str, key: str) -> int:
    try:
        return ascii_whole(text)
    except ValueError:
        raise ValueError(f"{key} must be a whole number, got {text!r}") from None


def _epochs(text: str) -> float:
    try:
        return ascii_decimal(text)
    except ValueError:
        raise ValueError(f"epochs must be a number, got {text!r}") from None


def _within_days(text: str) -> float:
    """Days (4, 1.5) or a duration (36h, 3d, 2w)."""
    try:
        return ascii_decimal(text)
    except ValueError:
        return parse_duration(text) / timedelta(days=1)


# Words of the Job's and the sizing model's messages that say which key was wrong (else: the job's
# line); a value that does not read as its kind is reported at its own line.
_MESSAGE_KEYS = {"gpu": "gpus", "micro_batch": "batch"}


def _key_named(message: str, keys: Sequence[str]) -> str | None:
    for word in re.findall(r"[a-z_]+", message.lower()):
        key = _MESSAGE_KEYS.get(word, word)
        if key in keys:
            return key
    return None


def _model(text: str, base: Path | None) -> tuple[str, ModelSpec | None]:
    """A model as written, and the shape of a config.json it names (read by `config.model_files`);
    a relative config.json path is read beside the jobs file."""
    beside = base / text if base is not None and not Path(text).is_absolute() else None
    if beside is not None and beside.exists() and model_files.is_config(str(beside)):
        text = str(beside)
    return text, model_files.read_model(text) if model_files.is_config(text) else None


_READERS: dict[str, Callable[[str], object]] = {
    "tokens": parse_tokens,
    "epochs": _epochs,
    "within_days": _within_days,
    "seq_len": lambda value: _whole(value, "seq_len"),
    "batch": lambda value: _whole(value, "batch"),
    "max_gpus": lambda value: _whole(value, "max_gpus"),
}


def _job(source: str, written: Written, base: Path | None) -> Job:
    if written.pairs is None:
        raise UserFileError(source, "a job is a mapping: name, model, method, tokens, ...", written.line)
    values: dict[str, Written] = {}
    for key, value in written.pairs:
        name = key.text or ""
        if name not in FIELDS:
            raise UserFileError(source, f"unknown key {name!r}; a job has {', '.join(FIELDS)}", key.line)
        if name in values:
            raise UserFileError(source, f"{name} given twice", key.line)
        values[name] = value
    missing = [key for key in REQUIRED if key not in values]
    if missing:
        raise UserFileError(source, f"a job needs {', '.join(missing)}", written.line)
    lists: dict[str, tuple[str, ...]] = {
        key: _names(source, values[key], key) for key in ("platforms", "gpus") if key in values
    }
    text = {key: _one(source, value, key) for key, value in values.items() if key not in lists}
    fields: dict[str, object] = {**text, **lists}
    reading: str | None = None
    try:
        fields["model"], fields["shape"] = _model(text["model"], base)
        for reading, read in _READERS.items():
            if reading in text:
                fields[reading] = read(text[reading])
        reading = None
        return Job(**fields)  # type: ignore[arg-type]
    except ValueError as exc:
        problem = " ".join(str(exc).split())
        wrong = reading or _key_named(problem, list(values))
        line = values[wrong].line if wrong else written.line
        raise UserFileError(source, f"job {text['name']!r}: {problem}", line) from None
