"""Recognisable fake secrets: every run of the suite has every gpuplan secret set to one of these.

Each is "fake" plus a tail no real output contains by chance, so a secret that leaks is found by a
plain search of everything the run wrote. The platform tokens are the ones the spiders declare
(every `Token(env=...)`, a companion key too): a platform that gains a login is covered without
touching this file.
"""

from __future__ import annotations

import hashlib
import os

from scrapers.registry import platforms, spider_tokens


def _fake(name: str) -> str:
    return f"fake-{name.lower().replace('_', '-')}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


FAKE_SECRETS = {token.env: _fake(token.env) for name in platforms() for token in spider_tokens(name)} | {
    "GPUPLAN_SMTP_PASSWORD": _fake("GPUPLAN_SMTP_PASSWORD")
}


def secret_env() -> dict[str, str]:
    """This process's environment with every gpuplan secret replaced by its fake (and no quotes file)."""
    env = {
        key: value for key, value in os.environ.items() if key not in ("GPUPLAN_QUOTES_FILE", *FAKE_SECRETS)
    }
    return {**env, **FAKE_SECRETS}
