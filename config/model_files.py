"""A model's Hugging Face config.json, named by the user (`gpuplan size --model`, `gpuplan plans
--model`, a job's `model`): read with the one reader of a user's files, parsed by sizing.

`sizing` reads no file a user names (it imports nothing of ours), so the edge reads the file
here: `config.user_files.read_text` refuses a FIFO (which hung `gpuplan size` until killed), a
device such as /dev/zero (an empty `error: ` after reading until memory ran out), a folder and
anything over its size limit, unread, in one line naming the file. What the text
means, and every check of its values, is `sizing.hf_config.parse`'s.
"""

from __future__ import annotations

from pathlib import Path

from config.user_files import UserFileError, read_text
from sizing import hf_config
from sizing.shapes import ModelSpec


def is_config(name: str) -> bool:
    """Whether `name` names a config.json (a `.json` file, or a folder holding config.json)
    rather than a preset or a size."""
    return hf_config.looks_like_path(name)


def read_model(name: str) -> ModelSpec:
    """The shape in the config.json `name` names (a file, or a folder holding config.json).

    Raises UserFileError in one line naming the file: not found, not a regular file, too large,
    not UTF-8, not a config.json, or a value the model cannot use (the key named).
    """
    path = Path(name).expanduser()
    if path.is_dir():
        path = path / "config.json"
    source = f"model config {name}"
    text = read_text(path, source, "a model config.json")
    try:
        return hf_config.parse(text, name)
    except ValueError as error:
        problem = str(error).removeprefix(f"{name}: ")
        raise UserFileError(source, problem) from None


def model(name: str) -> str | ModelSpec:
    """What the sizing model is given for the model a user wrote: the shape of a config.json
    (read here), else the name itself (a preset or a size, which sizing resolves)."""
    return read_model(name) if is_config(name) else name
