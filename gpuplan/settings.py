"""One settings object, built at the edge from the environment and passed down.

Every field here is documented in the README's settings table (a test checks it). Nothing reads
`os.environ` at import time; the edge (the CLI's callback, the Dagster definitions) calls
`Settings.from_env()` once per process and passes plain values down.

Not here, on purpose: platform tokens, declared by the spider that sends them (`Token(env=...)`
in `scrapers/spiders/`) and read by the crawl process from the environment it inherits; the broker
quotes file (`GPUPLAN_QUOTES_FILE`), read the same way by the `quotes` spider. Neither passes
through the settings object, so neither can reach Dagster's resource config or a log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path


def _default_data_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "gpuplan"


def _csv(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _bool(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class SmtpSettings:
    host: str | None = None
    port: int = 587
    security: str = "starttls"  # starttls | ssl | none
    user: str | None = None
    password: str | None = field(default=None, repr=False)  # secret: never logged
    sender: str | None = None
    recipients: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settings:
    warehouse: Path  # the published, read-only DuckDB file people query
    crawl_dir: Path  # JSONL feeds and crawl summaries, one folder per day
    models: tuple[str, ...] = ("7B", "13B", "30B", "70B")
    methods: tuple[str, ...] = ("full", "lora", "qlora")
    schedule_cron: str = "0 6 * * *"
    schedule_timezone: str = "Asia/Shanghai"
    price_move_pct: float = 10.0
    smtp: SmtpSettings = field(default_factory=SmtpSettings)
    digest_skip_empty: bool = False
    digest_lang: str = "en"  # en | zh: the digest's catalogue (checked where it is used)
    watches_file: Path | None = None  # GPUPLAN_WATCHES: YAML list of watches (digest/watches.py)

    def with_warehouse(self, path: Path) -> Settings:
        return replace(self, warehouse=path)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        data_dir = _default_data_dir(env)
        warehouse = Path(env.get("GPUPLAN_WAREHOUSE") or data_dir / "warehouse.duckdb").expanduser()
        crawl_dir = Path(env.get("GPUPLAN_CRAWL_DIR") or warehouse.parent / "crawls").expanduser()
        smtp = SmtpSettings(
            host=env.get("GPUPLAN_SMTP_HOST") or None,
            port=int(env.get("GPUPLAN_SMTP_PORT") or 587),
            security=(env.get("GPUPLAN_SMTP_SECURITY") or "starttls").lower(),
            user=env.get("GPUPLAN_SMTP_USER") or None,
            password=env.get("GPUPLAN_SMTP_PASSWORD") or None,
            sender=env.get("GPUPLAN_SMTP_FROM") or None,
            recipients=_csv(env.get("GPUPLAN_SMTP_TO") or ""),
        )
        return cls(
            warehouse=warehouse,
            crawl_dir=crawl_dir,
            models=_csv(env.get("GPUPLAN_MODELS") or "7B,13B,30B,70B"),
            methods=_csv(env.get("GPUPLAN_METHODS") or "full,lora,qlora"),
            schedule_cron=env.get("GPUPLAN_SCHEDULE_CRON") or "0 6 * * *",
            schedule_timezone=env.get("GPUPLAN_SCHEDULE_TZ") or "Asia/Shanghai",
            price_move_pct=float(env.get("GPUPLAN_PRICE_MOVE_PCT") or 10.0),
            smtp=smtp,
            digest_skip_empty=_bool(env.get("GPUPLAN_DIGEST_SKIP_EMPTY") or "false"),
            digest_lang=(env.get("GPUPLAN_DIGEST_LANG") or "en").strip().lower(),
            watches_file=Path(watches).expanduser() if (watches := env.get("GPUPLAN_WATCHES")) else None,
        )
