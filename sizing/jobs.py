"""The user's own training jobs: `Job` values and the amounts people write for them (`500M`
tokens, a deadline of `36h`).

A `Job` is checked when it is made: the model resolves, the method and sizing settings are valid
(the sizing model accepts them), amounts are positive, GPU names are read as people write them
(`sizing.gpu_names.resolve`) and kept as canonical catalog names. Platforms are kept as written:
which platforms exist is the scrapers' knowledge, not ours; a job naming one without offers gets
no plan, with that reason. The jobs file (GPUPLAN_JOBS) is read into jobs by `config.jobs_file`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

from sizing import gpu_names, planner
from sizing.setup import MAX_COUNT, MAX_SEQ_LEN, TrainingSetup
from sizing.shapes import ModelSpec

TOKEN_UNITS = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
# ASCII digits only: `\d` alone takes the fullwidth ５ and other scripts' digits, which float() reads.
_AMOUNT = re.compile(
    r"^\s*(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE | re.ASCII
)
DURATION_HOURS = {"h": 1.0, "d": 24.0, "w": 168.0}
# Upper bounds of a job's amounts (`tokens: 1e30` reached DuckDB as an interval out of
# range and failed every job's plans). 1e15 tokens is a thousand times the largest pretraining
# runs (GPUPLAN_DEFAULT_TOKENS has the same bound, config/settings.py); 1,000 epochs and a
# deadline of ten years are past any fine-tuning job. Past them is a typo, said with the bound.
MAX_TOKENS = 1e15
MAX_EPOCHS = 1_000.0
MAX_WITHIN_DAYS = 3_650.0


def parse_tokens(text: str | float) -> float:
    """Tokens as people write them: 500M, 2B, 1.5e9, 750k, 2_000_000. Raises ValueError unless positive."""
    match = _AMOUNT.match(str(text).replace("_", "").replace(",", ""))
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in TOKEN_UNITS:
        raise ValueError(f"tokens must be a number such as 500M, 2B or 1.5e9, got {text!r}")
    tokens = float(match.group(1)) * TOKEN_UNITS[unit]
    if not 0 < tokens <= MAX_TOKENS:  # inf too (1e400)
        raise ValueError(f"tokens must be more than 0 and at most {MAX_TOKENS / 1e12:g}T, got {text!r}")
    return tokens


def parse_duration(text: str) -> timedelta:
    """A duration as people write a deadline: 36h, 3d, 2w (hours, days, weeks). Raises ValueError."""
    match = _AMOUNT.match(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in DURATION_HOURS:
        raise ValueError(f"a duration is hours, days or weeks such as 36h, 3d or 2w, got {text!r}")
    hours = float(match.group(1)) * DURATION_HOURS[unit]
    if not 0 < hours <= MAX_WITHIN_DAYS * 24:  # inf too; timedelta itself overflows past 10^9 days
        raise ValueError(f"a duration must be more than 0 and at most {MAX_WITHIN_DAYS:g} days, got {text!r}")
    return timedelta(hours=hours)


@dataclass(frozen=True)
class Job:
    """One training job to plan. `tokens` is one epoch; `within_days` None means no deadline.

    `framework` (hf, llamafactory, torchtune, unsloth, deepspeed, megatron), `seq_len` and `batch`
    (sequences per GPU per step) None mean the sizing model's defaults (its default framework);
    `max_gpus` None means the planner's largest job; `platforms` and `gpus` empty mean any.
    `model` is as written; when it names a config.json, `shape` is what the file says
    (`config.model_files` reads it: this package reads no file a user names).
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
    shape: ModelSpec | None = None  # of a `model` that is a config.json: read by its reader

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a job needs a name")
        amounts = (
            ("tokens", self.tokens, MAX_TOKENS),
            ("epochs", self.epochs, MAX_EPOCHS),
            ("within_days", self.within_days, MAX_WITHIN_DAYS),
        )
        for name, value, high in amounts:
            if value is not None and not 0 < value <= high:  # NaN and inf too
                raise ValueError(f"{name} must be more than 0 and at most {high:g}, got {value:g}")
        counts = (
            ("seq_len", self.seq_len, MAX_SEQ_LEN),
            ("batch", self.batch, MAX_COUNT),
            ("max_gpus", self.max_gpus, planner.MAX_GPUS),
        )
        for name, count, top in counts:
            if count is not None and not 1 <= count <= top:
                raise ValueError(f"{name} must be from 1 to {top:,}, got {count}")
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
    return planner.prepare(job.shape or job.model, job.method, _training_setup(job))


def job_requirements(
    job: Job, gpu_counts: Sequence[int], gpus: Sequence[str] | None, internode_gb_per_s: float | None = None
) -> list[planner.Requirement]:
    """The sizing model's rows for `job` on `gpus` (None: the catalog) at `gpu_counts`; across nodes
    at `internode_gb_per_s` per GPU (a cluster's fabric; None: the model's default)."""
    model = job.shape or job.model
    setup = _training_setup(job)
    if internode_gb_per_s is not None:
        setup = replace(setup, internode_gb_per_s=internode_gb_per_s)
    return planner.requirements(model, job.method, gpu_counts, gpus, setup=setup)
