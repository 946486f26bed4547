"""What the tests' loopback servers share: a port free on 127.0.0.1."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now, for a server that cannot be given port 0 (aiosmtpd,
    aiosmtpd#276) or whose port must be known before it starts (PostgreSQL, Dagster's webserver)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
