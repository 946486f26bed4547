"""Option values several commands take, checked one way everywhere: the same typo gets the same
message (with the nearest names) and the same exit status (2, a usage error) in every command."""

from __future__ import annotations

import typer

from config.settings import Settings
from sizing.gpu_names import did_you_mean, nearest_names
from sizing.models import model_key, resolve
from sizing.setup import METHODS, check_method

METHOD_HELP = f"Training method: {' | '.join(METHODS)}."


def training_method(value: str | None) -> str | None:
    """The --method callback: a known method, or a usage error naming the nearest ones."""
    if value is None:
        return None
    try:
        return check_method(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def daily_model(settings: Settings, name: str) -> str:
    """The daily tables' name for `name` (`7b` is `7B`, case, dashes and dots aside), or a usage
    error: a model sizing knows but the daily tables do not plan points to --tokens (a job of your
    own plans any model); anything else names the nearest daily sizes."""
    daily = {model_key(model): model for model in settings.models}
    if model_key(name) in daily:
        return daily[model_key(name)]
    sizes = ", ".join(settings.models)
    try:
        resolve(name)
    except ValueError:
        hint = did_you_mean(nearest_names(name, settings.models))
        raise typer.BadParameter(
            f"unknown model {name!r}{hint} (the daily tables plan {sizes}; a preset, a size such as "
            "8B or a config.json needs --tokens)",
            param_hint="--model",
        ) from None
    raise typer.BadParameter(
        f"{name!r} is not one of the daily sizes ({sizes}, GPUPLAN_MODELS): give --tokens to plan it "
        "as your own job, e.g. --tokens 1B",
        param_hint="--model",
    )
