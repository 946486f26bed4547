"""The user's own training jobs: `Job` values, the jobs file (GPUPLAN_JOBS, YAML), and the amounts
people write for them (`500M` tokens, a deadline of `36h`).

A `Job` is checked when it is made: the model resolves, the method and sizing settings are valid
(the sizing model accepts them), amounts are positive, GPU names are read as people write them
(`sizing.gpu_names.resolve`) and kept as canonical catalog names. Platforms are kept as written:
which platforms exist is the scrapers' knowledge, not ours; a job naming one without offers gets
no plan, with that reason.

The jobs file is a YAML list of mappings (README, "Plan your own job"), read at the edge
(`gpuplan.jobs_file`: sizing imports nothing but the standard library) and checked here:

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

Errors name the file and the line (`JobsFileError`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from sizing import gpu_names, hf_config, planner
from sizing.setup import TrainingSetup

TOKEN_UNITS = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
DURATION_HOURS = {"h": 1.0, "d": 24.0, "w": 168.0}

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


class JobsFileError(ValueError):
    """A jobs file that cannot be read; the message names the file and the line."""


def parse_tokens(text: str | float) -> float:
    """Tokens as people write them: 500M, 2B, 1.5e9, 750k, 2_000_000. Raises ValueError unless positive."""
    match = _AMOUNT.match(str(text).replace("_", "").replace(",", ""))
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in TOKEN_UNITS:
        raise ValueError(f"tokens must be a number such as 500M, 2B or 1.5e9, got {text!r}")
    tokens = float(match.group(1)) * TOKEN_UNITS[unit]
    if not (tokens > 0 and math.isfinite(tokens)):
        raise ValueError(f"tokens must be more than 0, got {text!r}")
    return tokens


def parse_duration(text: str) -> timedelta:
    """A duration as people write a deadline: 36h, 3d, 2w (hours, days, weeks). Raises ValueError."""
    match = _AMOUNT.match(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in DURATION_HOURS:
        raise ValueError(f"a duration is hours, days or weeks such as 36h, 3d or 2w, got {text!r}")
    hours = float(match.group(1)) * DURATION_HOURS[unit]
    if not (hours > 0 and math.isfinite(hours)):
        raise ValueError(f"a duration must be more than 0, got {text!r}")
    return timedelta(hours=hours)


@dataclass(frozen=True)
class Job:
    """One training job to plan. `tokens` is one epoch; `within_days` None means no deadline.

    `framework` (hf, llamafactory, torchtune, unsloth, deepspeed, megatron), `seq_len` and `batch`
    (sequences per GPU per step) None mean the sizing model's defaults (its default framework);
    `max_gpus` None means the planner's largest job; `platforms` and `gpus` empty mean any.
    """

    name: str
    model: str
    method: str
    tokens: float
    epochs: float = 1.0
    within_days: float | None = None
    seq_len: int | None = None
    batch: int | None = None
    max_gpus: int | None = None
    platforms: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    framework: str | None = None

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a job needs a name")
        amounts = (("tokens", self.tokens), ("epochs", self.epochs), ("within_days", self.within_days))
        for name, value in amounts:
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be more than 0, got {value:g}")
        for name, count in (("seq_len", self.seq_len), ("batch", self.batch), ("max_gpus", self.max_gpus)):
            if count is not None and count < 1:
                raise ValueError(f"{name} must be at least 1, got {count}")
        platforms = dict.fromkeys(platform.strip().lower() for platform in self.platforms)
        object.__setattr__(self, "platforms", tuple(platforms))
        gpus = dict.fromkeys(gpu_names.resolve(gpu).gpu_model for gpu in self.gpus)
        object.__setattr__(self, "gpus", tuple(gpus))
        job_sizing(self)  # the sizing model's own checks: model, method, settings

    @property
    def train_tokens(self) -> float:
        """Tokens the whole job trains on: tokens of one epoch times epochs."""
        return self.tokens * self.epochs


def _training_setup(job: Job) -> TrainingSetup:
    """The one adapter between a job and the sizing model: the job's settings as the planner's
    training setup (the framework's defaults for what the job leaves unsaid). Job plans call the
    sizing model only through it."""
    given = {"framework": job.framework, "seq_len": job.seq_len, "micro_batch": job.batch}
    return TrainingSetup(**{name: value for name, value in given.items() if value is not None})  # type: ignore[arg-type]


def job_sizing(job: Job) -> planner.Sizing:
    """The sizing model's view of `job` (its assumptions: `sizing.assumptions.describe`)."""
    return planner.prepare(job.model, job.method, _training_setup(job))


def job_requirements(
    job: Job, gpu_counts: Sequence[int], gpus: Sequence[str] | None
) -> list[planner.Requirement]:
    """The sizing model's rows for `job` on `gpus` (None: the catalog) at `gpu_counts`."""
    return planner.requirements(job.model, job.method, gpu_counts, gpus, setup=_training_setup(job))


# --- the jobs file, as its reader found it ---------------------------------------------------------
# The file is YAML, read at the edge (gpuplan/jobs_file.py, which has a YAML library); what it
# says reaches here as `Written` values with their lines, and every rule of a job is checked here.


@dataclass(frozen=True)
class Written:
    """What a jobs file says at one place (1-based `line`): one value (`text`), a list of them
    (`items`), or neither (a mapping, or nothing): not a value."""

    line: int
    text: str | None = None
    items: tuple[Written, ...] | None = None


@dataclass(frozen=True)
class WrittenJob:
    """One item of the jobs file's list: its (key, value) pairs as written, duplicates included;
    `fields` None when the item is not a mapping."""

    line: int
    fields: tuple[tuple[Written, Written], ...] | None


def _at(source: str, line: int) -> str:
    return f"{source} line {line}"


def _one(source: str, value: Written, key: str) -> str:
    if value.text is None or not value.text.strip():
        raise JobsFileError(f"{_at(source, value.line)}: {key} must be one value")
    return value.text.strip()


def _names(source: str, value: Written, key: str) -> tuple[str, ...]:
    """A list of names, or one value with commas: `platforms: [autodl, vastai]`, `gpus: 4090, H100`."""
    if value.items is not None:
        return tuple(_one(source, item, key) for item in value.items)
    return tuple(part.strip() for part in _one(source, value, key).split(",") if part.strip())


def _whole(text: str, key: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{key} must be a whole number, got {text!r}") from None


def _epochs(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"epochs must be a number, got {text!r}") from None


def _within_days(text: str) -> float:
    """Days (4, 1.5) or a duration (36h, 3d, 2w)."""
    try:
        return float(text)
    except ValueError:
        return parse_duration(text) / timedelta(days=1)


# Words of the Job's and the sizing model's messages that say which key was wrong (else: the job's
# line); a value that does not read as its kind is reported at its own line.
_MESSAGE_KEYS = {"gpu": "gpus", "micro_batch": "batch"}


def _key_named(message: str, keys: Sequence[str]) -> str | None:
    words = re.findall(r"[a-z_]+", message.lower())
    for word in words:
        key = _MESSAGE_KEYS.get(word, word)
        if key in keys:
            return key
    return None


def _model(text: str, base: Path | None) -> str:
    """A model as written; a relative config.json path is read beside the jobs file."""
    beside = base / text if base is not None and not Path(text).is_absolute() else None
    if beside is not None and beside.exists() and hf_config.looks_like_path(str(beside)):
        return str(beside)
    return text


_READERS: dict[str, Callable[[str], object]] = {
    "tokens": parse_tokens,
    "epochs": _epochs,
    "within_days": _within_days,
    "seq_len": lambda value: _whole(value, "seq_len"),
    "batch": lambda value: _whole(value, "batch"),
    "max_gpus": lambda value: _whole(value, "max_gpus"),
}


def _job(source: str, written: WrittenJob, base: Path | None) -> Job:
    if written.fields is None:
        raise JobsFileError(
            f"{_at(source, written.line)}: a job is a mapping: name, model, method, tokens, ..."
        )
    values: dict[str, Written] = {}
    for key, value in written.fields:
        name = key.text or ""
        if name not in FIELDS:
            known = ", ".join(FIELDS)
            raise JobsFileError(f"{_at(source, key.line)}: unknown key {name!r}; a job has {known}")
        if name in values:
            raise JobsFileError(f"{_at(source, key.line)}: {name} given twice")
        values[name] = value
    missing = [key for key in REQUIRED if key not in values]
    if missing:
        raise JobsFileError(f"{_at(source, written.line)}: a job needs {', '.join(missing)}")
    lists: dict[str, tuple[str, ...]] = {
        key: _names(source, values[key], key) for key in ("platforms", "gpus") if key in values
    }
    text = {key: _one(source, value, key) for key, value in values.items() if key not in lists}
    fields: dict[str, object] = {**text, **lists, "model": _model(text["model"], base)}
    reading: str | None = None
    try:
        for reading, read in _READERS.items():
            if reading in text:
                fields[reading] = read(text[reading])
        reading = None
        return Job(**fields)  # type: ignore[arg-type]
    except ValueError as exc:
        problem = " ".join(str(exc).split())
        wrong = reading or _key_named(problem, list(values))
        line = values[wrong].line if wrong else written.line
        raise JobsFileError(f"{_at(source, line)}: job {text['name']!r}: {problem}") from None


def jobs_from(
    written: Sequence[WrittenJob], source: str = "jobs file", base: Path | None = None
) -> list[Job]:
    """The jobs a jobs file's list says (see the module docstring); `source` names the file in
    errors, `base` is its folder (a model given as a relative config.json path is read from there).

    Raises JobsFileError naming the line of the first problem.
    """
    jobs: dict[str, Job] = {}
    for item in written:
        job = _job(source, item, base)
        if job.name in jobs:
            raise JobsFileError(f"{_at(source, item.line)}: a second job named {job.name!r}")
        jobs[job.name] = job
    return list(jobs.values())
