"""config/model_files.py: a config.json the user names, read by the one reader of their files."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import model_files
from config.user_files import UserFileError

MIXTRAL = Path(__file__).parents[1] / "sizing" / "fixtures" / "configs" / "mixtral-8x7b.json"


def test_a_file_or_a_folder_holding_config_json(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_bytes(MIXTRAL.read_bytes())
    from_file, from_folder = model_files.read_model(str(MIXTRAL)), model_files.read_model(str(tmp_path))
    assert from_file.params == from_folder.params
    assert from_file.preset == str(MIXTRAL)  # named as the user wrote it


def test_presets_and_sizes_are_left_to_sizing() -> None:
    assert model_files.model("7B") == "7B" and model_files.model("qwen2.5-14b") == "qwen2.5-14b"


def test_missing_and_broken_files_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserFileError, match=r"^model config nowhere/config\.json: not found$"):
        model_files.read_model("nowhere/config.json")
    broken = tmp_path / "config.json"
    broken.write_text('{"num_hidden_layers": 2', "utf-8")
    with pytest.raises(UserFileError, match=r"model config .*config\.json: not JSON") as raised:
        model_files.read_model(str(broken))
    assert "\n" not in str(raised.value)
