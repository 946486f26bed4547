"""One settings object, built at the edge from the environment and passed down.

Every field here is documented in the README's settings table (a test checks it). Nothing reads
`os.environ` at import time; the edge (the CLI's callback, the Dagster definitions) calls
`Settings.from_env()` once per process and passes plain values down.

Not here, on purpose: platform tokens, declared by the spider that sends them (`Token(env=...)`
in `scrapers/spiders/`) and read by the crawl process from the environment it inherits; the broker
quotes file (`GPUPLAN_QUOTES_FILE`), read the same way by the `quotes` spider. Neither passes
through the settings object, so neither can reach Dagster's resource config or a log.

Every value is checked when it is read: a malformed number, a number out of its range (NaN
included), an unknown word, or an address with a line break in it stops the process at once with
`SettingsError`, one line that names each bad variable and what it accepts, instead of every
command failing later with a traceback (or, for NaN, a check that silently never fires).
`Settings` and `SmtpSettings` are pydantic dataclasses: each bound is a `Field` constraint beside
its field, and what a variable accepts is said from it (`_accepted`). The reader (`_Reader`) turns
the text into values: numbers in ASCII digits only, flags, sizes, `email.headerregistry.Address`
for mail addresses, `zoneinfo` for the schedule's time zone, and Dagster's own schedule for its cron
(`cron_problem`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import field, replace
from email.errors import HeaderParseError, MessageDefect
from email.headerregistry import Address
from email.utils import getaddresses
from pathlib import Path
from typing import Annotated, Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, ValidationError
from pydantic.dataclasses import dataclass
from pydantic.fields import FieldInfo


class SettingsError(ValueError):
    """One or more environment variables hold values gpuplan cannot use; the message names them."""


def _default_data_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "gpuplan"


def _csv(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # CR/LF in a header value would start a new header
_SIZE = re.compile(r"^\s*\d+(\.\d+)?\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)\s*$", re.IGNORECASE)


# --- the schedule's cron (GPUPLAN_SCHEDULE_CRON) ---------------------------------------------
#
# Dagster reads the expression only when the definitions load, so a typo would surface as a failed
# Dagster load, not beside the other settings' problems. Whether Dagster runs it is Dagster's to
# say: `cron_problem` makes the daily schedule's `dg.ScheduleDefinition` with it (Dagster's public
# check, its vendored croniter plus its own rules: five fields, no day 30 or 31 of February).
# Importing Dagster costs about a second of CPU, so only a cron set in the environment pays it.
# The words for a refused one are ours, where they are plain (a field count, a value out of range).

CRON_EXAMPLE = "five fields such as '0 6 * * *' (06:00 daily) or '30 7 * * mon-fri', or @daily"
_CRON_RANGES = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of the month", 1, 31),
    ("month", 1, 12),
    ("day of the week", 0, 7),
)


def cron_problem(text: str) -> str | None:
    """Why Dagster's schedule refuses `text` (in words where they are plain), or None."""
    import dagster as dg  # here: every command reads the settings, few set a cron

    try:
        dg.ScheduleDefinition(name="check", cron_schedule=text, job_name="check")
        return None
    except dg.DagsterInvalidDefinitionError:
        pass
    fields = text.split()
    if len(fields) != 5:
        return f"{len(fields)} field(s), not 5"
    if fields[3].lower() in ("2", "feb") and fields[2] in ("30", "31"):
        return f"day {fields[2]} of February never comes"
    for written, (name, low, high) in zip(fields, _CRON_RANGES, strict=False):
        if written.isdigit() and not low <= int(written) <= high:
            return f"{name} {written} is not from {low} to {high}"
    return "Dagster's schedule refuses it"


# Numbers as people write them in settings and in their files (config.jobs_file, config.watches_file):
# ASCII digits only. float() and int() read far more than people mean: `4_8` (a digit group
# separator) and the fullwidth `４８` or Arabic-Indic `٤٨` digits all read as 48, so a slip of the
# keyboard or a pasted value passes as a figure. A number is ASCII digits with an optional sign,
# decimal point and exponent (`48`, `-2`, `0.5`, `1e9`), space around it allowed.
_DECIMAL = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*", re.ASCII)
_WHOLE = re.compile(r"\s*[+-]?\d+\s*", re.ASCII)


def ascii_decimal(text: str) -> float:
    """`text` as a number (ValueError unless ASCII digits, as above). `nan`/`inf` are not numbers."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"not a number written with ASCII digits: {text!r}")
    return float(text)


MINUTES_PER_DAY = 24 * 60


def parse_minutes(text: str) -> int:
    """`15`, `15m`, `2h` as whole minutes (a bare number is minutes); ValueError for anything else."""
    text = text.strip().lower()
    unit = 60 if text.endswith("h") else 1
    return ascii_whole(text.removesuffix("h").removesuffix("m").strip()) * unit


def ascii_whole(text: str) -> int:
    """`text` as a whole number (ValueError unless ASCII digits with an optional sign)."""
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"not a whole number written with ASCII digits: {text!r}")
    return int(text)


_UNSET: Any = object()  # a variable not set: its field's default
Built = TypeVar("Built")
# The fields whose bounds pydantic checks, and the variable each is read from
_VARIABLES = {
    "port": "GPUPLAN_SMTP_PORT",
    "price_move_pct": "GPUPLAN_PRICE_MOVE_PCT",
    "sql_timeout_s": "GPUPLAN_SQL_TIMEOUT_S",
    "default_tokens": "GPUPLAN_DEFAULT_TOKENS",
    "stale_hours": "GPUPLAN_STALE_HOURS",
    "max_nodes": "GPUPLAN_MAX_NODES",
    "watch_every_minutes": "GPUPLAN_WATCH_EVERY",
}


def _accepted(info: FieldInfo) -> str:
    """What a bounded field accepts, in words from its constraints ("a number over 0 up to 1000")."""
    if info.description:
        return info.description
    above = any(hasattr(part, "gt") for part in info.metadata)
    low = next(getattr(part, key) for part in info.metadata for key in ("gt", "ge") if hasattr(part, key))
    high = next(part.le for part in info.metadata if hasattr(part, "le"))
    if info.annotation is int:
        return f"a whole number from {low} to {high}"
    return f"a number {'over' if above else 'from'} {low:g} {'up ' if above else ''}to {high:g}"


class _Reader:
    """Reads and checks variables of `env`; each bad one adds a problem, all raised at the end."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []

    def built(self, kind: Callable[..., Built], **values: Any) -> Built | None:
        """`kind` of `values` (unset ones left to its defaults); each field it refuses a problem."""
        try:
            return kind(**{key: value for key, value in values.items() if value is not _UNSET})
        except ValidationError as error:
            fields = kind.__pydantic_fields__  # type: ignore[attr-defined]
            for found in error.errors():
                field = str(found["loc"][0])
                name = _VARIABLES[field]
                self.fail(name, self.env.get(name) or "", _accepted(fields[field]))
            return None

    def fail(self, name: str, value: str, accepted: str) -> None:
        self.problems.append(f"{name}={value!r} is not {accepted}")

    def parsed(self, name: str, parse: Callable[[str], Any]) -> Any:
        """`name` read by `parse`; its bounds are its field's. Unset: `_UNSET`; unreadable: the
        text, which its field refuses (a number in ASCII digits only, minutes as 15, 15m or 2h)."""
        text = self.env.get(name) or ""
        try:
            return parse(text) if text.strip() else _UNSET
        except ValueError:
            return text

    def number(self, name: str) -> Any:
        return self.parsed(name, ascii_decimal)

    def whole(self, name: str) -> Any:
        return self.parsed(name, ascii_whole)

    def minutes(self, name: str) -> Any:
        return self.parsed(name, parse_minutes)

    def flag(self, name: str, default: bool) -> bool:
        text = (self.env.get(name) or "").strip().lower()
        if not text:
            return default
        if text not in _TRUE | _FALSE:
            self.fail(name, self.env.get(name) or "", f"true or false ({', '.join(sorted(_TRUE | _FALSE))})")
            return default
        return text in _TRUE

    def size(self, name: str) -> str | None:
        """A DuckDB memory size ("4GB", "512MiB"), or None when unset."""
        text = (self.env.get(name) or "").strip()
        if not text:
            return None
        if not _SIZE.match(text):
            self.fail(name, text, "a size such as 4GB or 512MiB")
            return None
        return text.replace(" ", "")

    def cron(self, name: str, default: str) -> str:
        """A cron expression Dagster runs (`cron_problem`)."""
        text = (self.env.get(name) or "").strip()
        if not text:
            return default
        wrong = cron_problem(text)
        if wrong is not None:
            self.problems.append(f"{name}={text!r} is not a cron expression ({wrong}): {CRON_EXAMPLE}")
            return default
        return text

    def zone(self, name: str, default: str) -> str:
        """An IANA time zone name (Asia/Shanghai, UTC), as the stdlib's zoneinfo finds it."""
        text = (self.env.get(name) or "").strip()
        if not text:
            return default
        try:
            ZoneInfo(text)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # unknown, a path, a folder (Asia)
            self.fail(name, text, "an IANA time zone such as Asia/Shanghai, Europe/Berlin or UTC")
            return default
        return text

    def text(self, name: str) -> str | None:
        value = (self.env.get(name) or "").strip()
        if _CONTROL.search(value):
            self.problems.append(
                f"{name} holds a line break or control character: refused (a mail header injection?)"
            )
            return None
        return value or None

    def addresses(self, name: str, *, single: bool = False) -> tuple[str, ...]:
        """Mail addresses, comma-separated ("Ops <ops@example.com>, b@example.com"), each checked."""
        value = self.text(name)
        if value is None:
            return ()
        if ";" in value:
            self.problems.append(f"{name}={value!r}: separate addresses with commas, not ';'")
            return ()
        found = []
        for display_name, addr_spec in getaddresses([value]):
            if not display_name and not addr_spec:
                continue
            try:
                found.append(str(Address(display_name=display_name, addr_spec=addr_spec)))
            except (HeaderParseError, MessageDefect, ValueError, IndexError):
                self.problems.append(f"{name}={value!r}: {addr_spec or display_name!r} is not a mail address")
                return ()
        if single and len(found) > 1:
            self.problems.append(f"{name}={value!r} is {len(found)} addresses; the sender is one")
            return ()
        return tuple(found)


@dataclass(frozen=True)
class SmtpSettings:
    host: str | None = None
    port: Annotated[int, Field(strict=True, ge=1, le=65535)] = 587
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
    # A move of 0% would make every repricing a change; over 1000% no price moves.
    price_move_pct: Annotated[float, Field(strict=True, gt=0, le=1000)] = 10.0
    smtp: SmtpSettings = field(default_factory=SmtpSettings)
    digest_skip_empty: bool = False
    # `gpuplan sql` stops a query after this long; a day is the longest a question may sensibly take
    sql_timeout_s: Annotated[float, Field(strict=True, gt=0, le=86_400)] = 300.0
    sql_memory_limit: str | None = (
        None  # DuckDB memory_limit of `gpuplan sql`; None: warehouse.engine.sandbox's default
    )
    digest_lang: str = "en"  # en | zh: the digest's catalogue (checked where it is used)
    watches_file: Path | None = None  # GPUPLAN_WATCHES: YAML list of watches (config/watches_file.py)
    crawler_contact: str | None = None  # a URL or e-mail platforms can reach the operator at (User-Agent)
    jobs_file: Path | None = None  # GPUPLAN_JOBS: your own jobs, planned daily (config/jobs_file.py)
    # GPUPLAN_DEFAULT_TOKENS: one run's tokens in the daily tables' totals; over nothing, and 1e15
    # is a thousand times the largest pretraining runs (sizing.jobs.MAX_TOKENS)
    default_tokens: Annotated[float, Field(strict=True, gt=0, le=1e15)] = 1e9
    # GPUPLAN_STALE_HOURS: a platform whose crawl failed keeps its last good crawl in the plans while
    # that crawl is at most this many hours older than the failed one (0: never carried). Two daily
    # runs by default; a month at most: older prices are history, not an offer.
    stale_hours: Annotated[float, Field(strict=True, ge=0, le=720)] = 48.0
    # GPUPLAN_OFFLINE: the code location's runs (the schedule's included) replay the bundled snapshots
    offline: bool = False
    notify_file: Path | None = None  # GPUPLAN_NOTIFY: push channels, YAML (config/notify_file.py)
    export_dir: Path | None = None  # GPUPLAN_EXPORT_DIR: the open daily dataset (warehouse/export.py)
    # GPUPLAN_MAX_NODES: the most whole nodes a job plan joins into one cluster, where the offer's
    # platform sells a training fabric (sizing/data/clusters.csv); 1: never across nodes. The node
    # ladder tops at 256 nodes (2,048 GPUs of 8): past it is a typo.
    max_nodes: Annotated[int, Field(strict=True, ge=1, le=256)] = 64
    # GPUPLAN_WATCH_EVERY: how often the intraday watches crawl and check (`gpuplan watch`, the
    # Dagster watch schedule), in minutes ("15", "15m", "1h"), from one minute to a day
    watch_every_minutes: Annotated[
        int,
        Field(
            strict=True,
            ge=1,
            le=MINUTES_PER_DAY,
            description="whole minutes from 1 to 1440, as 15, 15m or 2h",
        ),
    ] = 15

    def with_warehouse(self, path: Path) -> Settings:
        return replace(self, warehouse=path)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings of `env` (default: this process's environment); SettingsError names each bad one."""
        env = os.environ if env is None else env
        read = _Reader(env)
        data_dir = _default_data_dir(env)
        warehouse = Path(env.get("GPUPLAN_WAREHOUSE") or data_dir / "warehouse.duckdb").expanduser()
        crawl_dir = Path(env.get("GPUPLAN_CRAWL_DIR") or warehouse.parent / "crawls").expanduser()
        sender = read.addresses("GPUPLAN_SMTP_FROM", single=True)
        smtp = read.built(
            SmtpSettings,
            host=read.text("GPUPLAN_SMTP_HOST"),
            port=read.whole("GPUPLAN_SMTP_PORT"),
            # checked by digest.mailer.check_settings (SECURITY_MODES), the one home of the modes
            security=(env.get("GPUPLAN_SMTP_SECURITY") or "starttls").strip().lower(),
            user=read.text("GPUPLAN_SMTP_USER"),
            password=env.get("GPUPLAN_SMTP_PASSWORD") or None,
            sender=sender[0] if sender else None,
            recipients=read.addresses("GPUPLAN_SMTP_TO"),
        )
        settings = read.built(
            cls,
            warehouse=warehouse,
            crawl_dir=crawl_dir,
            models=_csv(env.get("GPUPLAN_MODELS") or "7B,13B,30B,70B"),
            methods=_csv(env.get("GPUPLAN_METHODS") or "full,lora,qlora"),
            schedule_cron=read.cron("GPUPLAN_SCHEDULE_CRON", "0 6 * * *"),
            schedule_timezone=read.zone("GPUPLAN_SCHEDULE_TZ", "Asia/Shanghai"),
            price_move_pct=read.number("GPUPLAN_PRICE_MOVE_PCT"),
            smtp=smtp or SmtpSettings(),
            digest_skip_empty=read.flag("GPUPLAN_DIGEST_SKIP_EMPTY", False),
            sql_timeout_s=read.number("GPUPLAN_SQL_TIMEOUT_S"),
            sql_memory_limit=read.size("GPUPLAN_SQL_MEMORY_LIMIT"),
            digest_lang=(env.get("GPUPLAN_DIGEST_LANG") or "en").strip().lower(),
            watches_file=Path(watches).expanduser() if (watches := env.get("GPUPLAN_WATCHES")) else None,
            crawler_contact=read.text("GPUPLAN_CRAWLER_CONTACT"),
            jobs_file=Path(jobs).expanduser() if (jobs := env.get("GPUPLAN_JOBS")) else None,
            default_tokens=read.number("GPUPLAN_DEFAULT_TOKENS"),
            stale_hours=read.number("GPUPLAN_STALE_HOURS"),
            offline=read.flag("GPUPLAN_OFFLINE", False),
            notify_file=Path(notify).expanduser() if (notify := env.get("GPUPLAN_NOTIFY")) else None,
            export_dir=Path(export).expanduser() if (export := env.get("GPUPLAN_EXPORT_DIR")) else None,
            max_nodes=read.whole("GPUPLAN_MAX_NODES"),
            watch_every_minutes=read.minutes("GPUPLAN_WATCH_EVERY"),
        )
        if read.problems or settings is None:
            raise SettingsError("; ".join(read.problems))
        return settings
