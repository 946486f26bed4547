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
people write are read by the job's own rules (`sizing.jobs.parse_tokens`, `parse_duration`). The
file's shape (its keys, one value or a list each) is the pydantic model `_JobEntry`; what makes a
job valid (its bounds, its model and GPUs) is `sizing.jobs.Job`'s. Errors are `UserFileError`s
naming the file and the line of the key they are about.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationInfo
from pydantic_core import ErrorDetails, PydanticCustomError

from config import model_files
from config.settings import ascii_decimal, ascii_whole
from config.user_files import Item, UserFileError, given, keys_of, read_text, said, validated, yaml_list
from sizing.jobs import Job, parse_duration, parse_tokens
from sizing.shapes import ModelSpec


@dataclass(frozen=True)
class JobsRead:
    """A jobs file's jobs, and each job refused with its line and why: one job that
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
            job = _job(source, item, base)
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


def _one(value: Any, info: ValidationInfo) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PydanticCustomError("job_shape", "{key} must be one value", {"key": info.field_name})
    return value.strip()


def _listed(value: Any, info: ValidationInfo) -> Any:
    """A list of names, or one value with commas: `platforms: [autodl, vastai]`, `gpus: 4090, H100`."""
    return value if isinstance(value, list) else _one(value, info).split(",")


def _within_days(text: str) -> float:
    """Days (4, 1.5) or a duration (36h, 3d, 2w)."""
    try:
        return ascii_decimal(text)
    except ValueError:
        return parse_duration(text) / timedelta(days=1)


def _read(reader: Callable[[str], object]) -> BeforeValidator:
    """One value as written, read by `reader` (the job's own rules for amounts, in its own words)."""
    return BeforeValidator(lambda value, info: reader(_one(value, info)))


def _as(reader: Callable[[str], object], kind: str) -> BeforeValidator:
    """One value as written, read by `reader` (ASCII digits only); else "<key> must be <kind>"."""

    def read(value: Any, info: ValidationInfo) -> object:
        text = _one(value, info)
        try:
            return reader(text)
        except ValueError:
            raise ValueError(f"{info.field_name} must be {kind}, got {text!r}") from None

    return BeforeValidator(read)


One = Annotated[str, BeforeValidator(_one)]
Names = Annotated[tuple[Annotated[str, BeforeValidator(_one)], ...], BeforeValidator(_listed)]


class _JobEntry(BaseModel):
    """A job as the file gives it: its keys, each value one text (or a list of names)."""

    model_config = ConfigDict(extra="forbid")

    name: One
    model: One
    method: One
    tokens: Annotated[float, _read(parse_tokens)]
    epochs: Annotated[float, _as(ascii_decimal, "a number")] = 1.0
    within_days: Annotated[float | None, _read(_within_days)] = None
    seq_len: Annotated[int | None, _as(ascii_whole, "a whole number")] = None
    batch: Annotated[int | None, _as(ascii_whole, "a whole number")] = None
    max_gpus: Annotated[int | None, _as(ascii_whole, "a whole number")] = None
    platforms: Names = ()
    gpus: Names = ()
    framework: One | None = None


FIELDS = tuple(_JobEntry.model_fields)
REQUIRED = tuple(name for name, field in _JobEntry.model_fields.items() if field.is_required())
_ENTRY = TypeAdapter(_JobEntry)

# Words of the Job's and the sizing model's messages that say which key was wrong (else: the job's
# line); a value that does not read as its kind is reported at its own line by the model.
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


def _job(source: str, item: Item, base: Path | None) -> Job:
    keys = keys_of(item, source, "a job is a mapping: name, model, method, tokens, ...", "{key} given twice")
    data = {key: given(value) for key, value in keys.items()}
    name = data["name"].strip() if isinstance(data.get("name"), str) else ""

    def words(error: ErrorDetails) -> str:
        if error["type"] == "extra_forbidden":
            return f"unknown key {error['loc'][0]!r}; a job has {', '.join(FIELDS)}"
        if error["type"] == "missing":
            return f"a job needs {', '.join(key for key in REQUIRED if key not in data)}"
        return said(error) if error["type"] == "job_shape" else f"job {name!r}: {said(error)}"

    entry = validated(_ENTRY, data, item.written, source, words)
    try:
        model, shape = _model(entry.model, base)
        return Job(**{**entry.model_dump(), "model": model, "shape": shape})
    except ValueError as exc:
        problem = " ".join(str(exc).split())
        wrong = _key_named(problem, list(keys))
        line = keys[wrong].line if wrong else item.line
        raise UserFileError(source, f"job {name!r}: {problem}", line) from None
