"""Secrets out of everything a crawl records: failure messages, the log, the summary.

Platforms sometimes echo the token back ("invalid API key <token>"); such text goes
to the summary, `crawl_runs.error` and the digest, so it is redacted where it is
recorded, not trusted to every spider.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

MASK = "***"


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret value replaced by `***` (longest first, so none leaks in part)."""
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


class RedactingFilter(logging.Filter):
    """A log filter that redacts the formatted message (and drops args it already used)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            cleaned = redact(message, self.secrets)
            if cleaned != message:
                record.msg, record.args = cleaned, ()
        return True


def install_log_redaction(secrets: Iterable[str]) -> None:
    """Redact `secrets` from every record the root logger's handlers write."""
    values = tuple(filter(None, secrets))
    if not values:
        return
    log_filter = RedactingFilter(values)
    for handler in logging.getLogger().handlers:
        handler.addFilter(log_filter)
