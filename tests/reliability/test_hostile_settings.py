"""Hostile settings (the schedule's too): each is refused when
read, in one line naming it.

The command runs through the console entry point (`gpuplan.cli.run`, what the `gpuplan` script
calls) with the variable set. Before the fix: a CR/LF in GPUPLAN_SMTP_TO or GPUPLAN_SMTP_FROM
failed only at send time, with a traceback, every day; "a@x; b@y" mailed only a@x; a malformed
number broke every command with a message naming no variable; GPUPLAN_PRICE_MOVE_PCT=nan turned
price moves off (every comparison with NaN is false) without a word.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from config.settings import Settings
from gpuplan.cli import run

pytestmark = pytest.mark.faults

CASES = [
    ("GPUPLAN_SMTP_TO", "ops@example.com\r\nBcc: all@example.com", "holds a line break or control character"),
    ("GPUPLAN_SMTP_FROM", "digest@example.com\nX-Injected: 1", "holds a line break or control character"),
    ("GPUPLAN_SMTP_TO", "a@example.com; b@example.com", "separate addresses with commas, not ';'"),
    ("GPUPLAN_SMTP_TO", "ops at example.com", "is not a mail address"),
    ("GPUPLAN_SMTP_FROM", "a@example.com, b@example.com", "is 2 addresses; the sender is one"),
    ("GPUPLAN_PRICE_MOVE_PCT", "nan", "is not a number over 0 up to 1000"),
    ("GPUPLAN_PRICE_MOVE_PCT", "10%", "is not a number over 0 up to 1000"),
    ("GPUPLAN_SMTP_PORT", "58 7", "is not a whole number from 1 to 65535"),
    ("GPUPLAN_SQL_TIMEOUT_S", "-1", "is not a number over 0 up to 86400"),
    ("GPUPLAN_SQL_MEMORY_LIMIT", "lots", "is not a size such as 4GB or 512MiB"),
    ("GPUPLAN_DIGEST_SKIP_EMPTY", "maybe", "is not true or false"),
    # read unchecked before; Dagster's load, `refresh` or `digest` then failed alone
    ("GPUPLAN_SCHEDULE_TZ", "Mars/Olympus", "is not an IANA time zone such as Asia/Shanghai"),
    ("GPUPLAN_SCHEDULE_TZ", "../../etc/passwd", "is not an IANA time zone"),
    ("GPUPLAN_SCHEDULE_TZ", "Asia", "is not an IANA time zone"),
    ("GPUPLAN_SCHEDULE_CRON", "0 6 * *", "is not a cron expression (4 field(s), not 5)"),
    ("GPUPLAN_SCHEDULE_CRON", "0 25 * * *", "is not a cron expression (hour 25 is not from 0 to 23)"),
    ("GPUPLAN_SCHEDULE_CRON", "daily at 6", "is not a cron expression"),
]


@pytest.mark.parametrize(("name", "value", "said"), CASES)
def test_a_bad_setting_stops_every_command_in_one_line_naming_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    value: str,
    said: str,
) -> None:
    monkeypatch.setenv("GPUPLAN_WAREHOUSE", str(tmp_path / "warehouse.duckdb"))
    monkeypatch.setenv(name, value)
    for command in (["sql", "SELECT 1"], ["plans"]):
        monkeypatch.setattr(sys, "argv", ["gpuplan", *command])
        with pytest.raises(SystemExit) as exit_:
            run()
        assert exit_.value.code == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: {name}") and err.count("\n") == 1, err
        assert said in err
        assert "\r" not in err and "Bcc:" not in err and "X-Injected" not in err  # not echoed
    assert not (tmp_path / "warehouse.duckdb").exists()  # refused before anything ran


def test_bad_schedule_settings_are_named_with_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_WAREHOUSE", str(tmp_path / "warehouse.duckdb"))
    monkeypatch.setenv("GPUPLAN_SCHEDULE_TZ", "Asia/Shangai")
    monkeypatch.setenv("GPUPLAN_SCHEDULE_CRON", "0 6 31 2 *")
    monkeypatch.setenv("GPUPLAN_SMTP_PORT", "smtp")
    monkeypatch.setattr(sys, "argv", ["gpuplan", "refresh", "--offline"])
    with pytest.raises(SystemExit) as exit_:
        run()
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for said in (
        "GPUPLAN_SMTP_PORT='smtp' is not a whole number",
        "GPUPLAN_SCHEDULE_CRON='0 6 31 2 *' is not a cron expression (day 31 of February never comes)",
        "GPUPLAN_SCHEDULE_TZ='Asia/Shangai' is not an IANA time zone",
    ):
        assert said in err
    assert not (tmp_path / "warehouse.duckdb").exists()


def test_good_settings_read_as_meant() -> None:
    settings = Settings.from_env(
        {
            "GPUPLAN_SMTP_TO": '"Ops, Team" <ops@example.com>, b@example.com,',
            "GPUPLAN_SMTP_FROM": "GPU 价格日报 <digest@example.com>",
            "GPUPLAN_PRICE_MOVE_PCT": "7.5",
            "GPUPLAN_SMTP_SECURITY": "SSL",
            "GPUPLAN_DIGEST_SKIP_EMPTY": "yes",
            "GPUPLAN_SCHEDULE_TZ": "Europe/Berlin",
            "GPUPLAN_SCHEDULE_CRON": "30 7 * * mon-fri",
        }
    )
    assert (settings.schedule_timezone, settings.schedule_cron) == ("Europe/Berlin", "30 7 * * mon-fri")
    assert settings.smtp.recipients == ('"Ops, Team" <ops@example.com>', "b@example.com")
    assert settings.smtp.sender == "GPU 价格日报 <digest@example.com>"
    assert (settings.price_move_pct, settings.smtp.security, settings.digest_skip_empty) == (7.5, "ssl", True)
