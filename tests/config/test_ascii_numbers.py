"""config.settings.ascii_decimal and ascii_whole: settings and file values are numbers only when
written in ASCII digits.

Before: float() and int() read `4_8` (a digit group separator), the fullwidth `４８` and the
Arabic-Indic `٤٨` as 48: `GPUPLAN_STALE_HOURS=4_8` carried crawls for 48 hours.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from config import jobs_file, settings, watches_file
from config.settings import Settings, SettingsError, ascii_decimal, ascii_whole
from config.user_files import UserFileError

NOT_ASCII = {"underscore": "4_8", "fullwidth": "４８", "arabic_indic": "٤٨", "superscript": "4⁸"}
# every numeric setting, as Settings.from_env reads it
NUMERIC_SETTINGS = re.findall(
    r'read\.(?:number|whole)\("(GPUPLAN_[A-Z_]+)"', Path(settings.__file__).read_text("utf-8")
)


@pytest.mark.parametrize("written", NOT_ASCII.values(), ids=NOT_ASCII.keys())
def test_only_ascii_digits_are_numbers(written: str) -> None:
    with pytest.raises(ValueError, match="ASCII digits"):
        ascii_decimal(written)
    with pytest.raises(ValueError, match="ASCII digits"):
        ascii_whole(written)


@pytest.mark.parametrize(
    ("written", "value"), [("48", 48), (" 48 ", 48), ("-2", -2), ("0.5", 0.5), ("1e9", 1e9)]
)
def test_numbers_as_people_write_them(written: str, value: float) -> None:
    assert ascii_decimal(written) == value


@pytest.mark.parametrize("name", NUMERIC_SETTINGS)
@pytest.mark.parametrize("written", NOT_ASCII.values(), ids=NOT_ASCII.keys())
def test_every_numeric_setting_takes_ascii_digits_only(name: str, written: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({"GPUPLAN_WAREHOUSE": "/tmp/w.duckdb", name: written})


def test_the_numeric_settings_are_found() -> None:
    assert {"GPUPLAN_STALE_HOURS", "GPUPLAN_SMTP_PORT", "GPUPLAN_DEFAULT_TOKENS"} <= set(NUMERIC_SETTINGS)
    read = Settings.from_env({"GPUPLAN_WAREHOUSE": "/tmp/w.duckdb", "GPUPLAN_STALE_HOURS": " 48 "})
    assert read.stale_hours == 48


@pytest.mark.parametrize("written", NOT_ASCII.values(), ids=NOT_ASCII.keys())
def test_file_numbers_take_ascii_digits_only(written: str) -> None:
    with pytest.raises(UserFileError, match="min_available_gpus"):
        watches_file.parse_watches(f"- gpu: H100\n  min_available_gpus: {written}\n", "watches.yaml")
    with pytest.raises(UserFileError, match="epochs"):
        jobs_file.parse_jobs(
            f"- name: mine\n  model: 7B\n  method: lora\n  tokens: 1B\n  epochs: {written}\n"
        )
