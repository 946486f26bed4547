"""Recognisable fake secrets: every run of the suite has every gpuplan secret set to one of these.

Each is "fake" plus a random tail no real output contains by chance, so a secret that leaks is
found by a plain search of everything the run wrote.
"""

from __future__ import annotations

import os

FAKE_SECRETS = {
    "AUTODL_TOKEN": "fake-autodl-token-9f2c41d7",
    "GPUSHARE_TOKEN": "fake-gpushare-token-5be7a0c2",
    "LAMBDA_API_KEY": "fake-lambda-key-c83d16e9",
    "GPUPLAN_SMTP_PASSWORD": "fake-smtp-password-71e4b9a5",
}


def secret_env() -> dict[str, str]:
    """This process's environment with every gpuplan secret replaced by its fake (and no quotes file)."""
    env = {
        key: value for key, value in os.environ.items() if key not in ("GPUPLAN_QUOTES_FILE", *FAKE_SECRETS)
    }
    return {**env, **FAKE_SECRETS}
