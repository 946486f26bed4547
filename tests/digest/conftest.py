"""Fixtures for the digest: a migrated DuckDB warehouse filled with SYNTHETIC rows, and a real SMTP server.

Every row inserted here is synthetic (crawl ids and offer ids start with "synthetic"): made up
to exercise one rule each, not real quotes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
import warehouse_template
from aiosmtpd.controller import Controller
from loopback import free_port
from synthetic_warehouse import SyntheticWarehouse

from config.settings import Settings, SmtpSettings


@pytest.fixture
def warehouse() -> SyntheticWarehouse:
    con = warehouse_template.scratch()
    yield SyntheticWarehouse(con)
    con.close()


@dataclass
class RecordingHandler:
    """aiosmtpd handler: keeps every message; refuses RCPT for addresses in `refuse`."""

    refuse: set[str] = field(default_factory=set)
    envelopes: list[Any] = field(default_factory=list)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # aiosmtpd's hook names
        if address in self.refuse:
            return "550 5.1.1 synthetic: no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        return "250 OK"

    @property
    def messages(self) -> list[EmailMessage]:
        parser = BytesParser(policy=policy.default)
        return [parser.parsebytes(envelope.original_content) for envelope in self.envelopes]


@dataclass
class SmtpServer:
    port: int
    handler: RecordingHandler
    controller: Controller | None = None

    def start(self, **smtp_options: Any) -> None:
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port, **smtp_options)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


@pytest.fixture
def smtp_server():
    server = SmtpServer(free_port(), RecordingHandler())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def settings(tmp_path: Path, smtp_server: SmtpServer) -> Settings:
    return Settings(
        warehouse=tmp_path / "warehouse.duckdb",
        crawl_dir=tmp_path / "crawls",
        smtp=SmtpSettings(
            host="127.0.0.1",
            port=smtp_server.port,
            security="none",
            sender="GPU 价格日报 <digest@gpuplan.test>",
            recipients=("ops@gpuplan.test", "lead@gpuplan.test"),
        ),
    )
