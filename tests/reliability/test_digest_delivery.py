"""SMTP faults through `gpuplan digest --send` on a warehouse the daily run built: down, slow, refusing.

Each case: the send fails (or partly fails) visibly (exit status, the CLI's line, `digest_sends`),
the warehouse's offers and plans are untouched, the next run delivers what was missed, and the
SMTP password (a recognisable fake, with AUTH on) shows up in no record, output, log or mail.
"""

from __future__ import annotations

import logging
import shutil
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from loopback import free_port
from typer.testing import CliRunner, Result

from config.settings import Settings
from digest import mailer
from gpuplan.cli import app
from reliability.fake_secrets import FAKE_SECRETS
from reliability.fault_days import day_settings, run_day
from reliability.synthetic_crawls import write_crawl
from warehouse.engine import connect

pytestmark = pytest.mark.faults

FIRST_DAY = date(2026, 11, 29)
SECOND_DAY = FIRST_DAY + timedelta(days=1)
PASSWORD = FAKE_SECRETS["GPUPLAN_SMTP_PASSWORD"]
USER = "digest-bot"
RECIPIENTS = ("ops@gpuplan.test", "lead@gpuplan.test")
# Stands in for mailer.SMTP_TIMEOUT_S (30 s) so a silent server times out within the test.
SHORT_SMTP_TIMEOUT_S = 1.0


@dataclass
class Mailbox:
    """aiosmtpd handler: accepts the fake password only, keeps every message, refuses `refuse`."""

    refuse: set[str] = field(default_factory=set)
    envelopes: list[Any] = field(default_factory=list)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # aiosmtpd's hook names
        if address in self.refuse:
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        return "250 OK"

    @staticmethod
    def authenticate(server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = isinstance(auth_data, LoginPassword) and auth_data.password.decode() == PASSWORD
        return AuthResult(success=ok)

    @property
    def subjects(self) -> list[str]:
        return [
            line.split(b":", 1)[1].strip().decode()
            for envelope in self.envelopes
            for line in envelope.original_content.splitlines()
            if line.startswith(b"Subject:")
        ]


@dataclass
class SmtpServer:
    port: int
    mailbox: Mailbox = field(default_factory=Mailbox)
    controller: Controller | None = None

    def start(self) -> None:
        self.controller = Controller(
            self.mailbox,
            hostname="127.0.0.1",
            port=self.port,
            auth_require_tls=False,
            authenticator=Mailbox.authenticate,
        )
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


class SilentServer:
    """Accepts SMTP connections and never says a word (a hung relay)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.listener.accept()[0])
            except OSError:
                return  # closed

    def close(self) -> None:
        self.listener.close()
        for connection in self.held:
            connection.close()


@pytest.fixture(scope="module")
def planned_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse with two days of SYNTHETIC crawls, loaded and planned by the daily run."""
    root = tmp_path_factory.mktemp("planned")
    settings = day_settings(root)
    for offers, day in ((40, FIRST_DAY), (30, SECOND_DAY)):  # fewer offers: the plans change
        write_crawl(settings.crawl_dir / day.isoformat(), day, offers)
        run_day(settings, day)
    return root


@dataclass
class Setup:
    settings: Settings
    env: dict[str, str]
    smtp: SmtpServer
    caplog: pytest.LogCaptureFixture
    outputs: list[str] = field(default_factory=list)

    def send(self, day: date) -> Result:
        result = CliRunner(env=self.env).invoke(app, ["digest", "--send", "--date", day.isoformat()])
        self.outputs.append(result.output + (result.stderr or ""))
        return result

    def sends(self) -> list[tuple[Any, ...]]:
        # the writer's records: a send is recorded without republishing the snapshot
        with connect.writer(self.settings.warehouse, publish=False) as con:
            return con.execute(
                "SELECT digest_date, status, attempts, last_error, refused_recipients "
                "FROM digest_sends ORDER BY digest_date"
            ).fetchall()

    def stored(self) -> tuple[Any, ...]:
        """Offers per crawl and the plans, without timestamps: what a send must never change."""
        with connect.reader(self.settings.warehouse) as con:
            return (
                con.execute("SELECT crawl_id, count(*) FROM offers GROUP BY ALL ORDER BY ALL").fetchall(),
                con.execute("SELECT * EXCLUDE (computed_at) FROM cheapest_plans ORDER BY ALL").fetchall(),
            )


@pytest.fixture
def setup(planned_warehouse: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Setup]:
    for name in ("warehouse.duckdb", "warehouse.writer.duckdb"):
        shutil.copyfile(planned_warehouse / name, tmp_path / name)
    port = free_port()
    env = {
        "GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
        "GPUPLAN_SMTP_HOST": "127.0.0.1",
        "GPUPLAN_SMTP_PORT": str(port),
        "GPUPLAN_SMTP_SECURITY": "none",
        "GPUPLAN_SMTP_USER": USER,
        "GPUPLAN_SMTP_PASSWORD": PASSWORD,
        "GPUPLAN_SMTP_FROM": "gpuplan <digest@gpuplan.test>",
        "GPUPLAN_SMTP_TO": ",".join(RECIPIENTS),
    }
    caplog.set_level(logging.DEBUG)
    smtp = SmtpServer(port)
    yield Setup(Settings.from_env(env), env, smtp, caplog)
    smtp.stop()


def _assert_password_nowhere(setup: Setup) -> None:
    with connect.writer(setup.settings.warehouse, publish=False) as con:
        records = repr(con.table("digest_sends").fetchall())
    mails = b"".join(envelope.original_content for envelope in setup.smtp.mailbox.envelopes)
    for where, text in {
        "digest_sends": records,
        "CLI output": "".join(setup.outputs),
        "log": setup.caplog.text,
        "mail": mails.decode("utf-8", "replace"),
    }.items():
        assert PASSWORD not in text, f"the SMTP password is in the {where}"


def test_smtp_server_down_then_back(setup: Setup) -> None:
    stored = setup.stored()
    down = setup.send(FIRST_DAY)
    assert down.exit_code == 1 and "failed: ConnectionRefusedError" in down.stderr
    assert setup.sends() == [(FIRST_DAY, "failed", 1, down.stderr.split("failed: ", 1)[1].strip(), [])]
    setup.smtp.start()
    back = setup.send(SECOND_DAY)
    assert back.exit_code == 0, back.output
    assert [row[:3] for row in setup.sends()] == [(FIRST_DAY, "sent", 2), (SECOND_DAY, "sent", 1)]
    assert [subject.split(":")[0] for subject in setup.smtp.mailbox.subjects] == [
        f"gpuplan {FIRST_DAY}",
        f"gpuplan {SECOND_DAY}",
    ]
    assert setup.stored() == stored
    _assert_password_nowhere(setup)


def test_smtp_server_silent_times_out(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mailer, "SMTP_TIMEOUT_S", SHORT_SMTP_TIMEOUT_S)
    stored = setup.stored()
    silent = SilentServer()
    try:
        with monkeypatch.context() as relay:
            relay.setitem(setup.env, "GPUPLAN_SMTP_PORT", str(silent.port))
            hung = setup.send(FIRST_DAY)
    finally:
        silent.close()
    assert hung.exit_code == 1 and "timed out" in hung.stderr
    [(_, status, attempts, error, _)] = setup.sends()
    assert (status, attempts) == ("failed", 1) and "timed out" in error
    setup.smtp.start()
    assert setup.send(FIRST_DAY).exit_code == 0  # the same day, sent by the next run
    assert [row[:3] for row in setup.sends()] == [(FIRST_DAY, "sent", 2)]
    assert len(setup.smtp.mailbox.envelopes) == 1
    assert setup.stored() == stored
    _assert_password_nowhere(setup)


def test_smtp_server_refuses_recipients(setup: Setup) -> None:
    stored = setup.stored()
    setup.smtp.start()
    setup.smtp.mailbox.refuse = {RECIPIENTS[1]}
    partly = setup.send(FIRST_DAY)
    assert partly.exit_code == 0 and f"refused: {RECIPIENTS[1]}: 550" in partly.output
    [envelope] = setup.smtp.mailbox.envelopes
    assert envelope.rcpt_tos == [RECIPIENTS[0]]
    setup.smtp.mailbox.refuse = set(RECIPIENTS)
    refused = setup.send(SECOND_DAY)
    assert refused.exit_code == 1 and "all recipients refused" in refused.stderr
    assert [row[:3] for row in setup.sends()] == [(FIRST_DAY, "sent", 1), (SECOND_DAY, "failed", 1)]
    assert setup.sends()[0][4] == [f"{RECIPIENTS[1]}: 550 5.1.1 no such user here"]
    setup.smtp.mailbox.refuse = set()
    assert setup.send(SECOND_DAY).exit_code == 0
    assert [row[:3] for row in setup.sends()] == [(FIRST_DAY, "sent", 1), (SECOND_DAY, "sent", 2)]
    assert setup.stored() == stored
    _assert_password_nowhere(setup)
