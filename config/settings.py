"""One settings object, built at the edge from the environment and passed down.

Every field here is documented in the README's settings table (a test checks it). Nothing reads
`os.environ` at import time; the edge (the CLI's callback, the Dagster definitions) calls
`Settings.from_env()` once per process and passes plain values down.

Not here, on purpose: platform tokens, declared by the spider that sends them (`Token(env=...)`
in `scrapers/spiders/`) and read by the crawl process from the environment it inherits; the broker
quotes file (`GPUPLAN_QUOTES_FILE`), read the same way by the `quotes` spider. Neither passes
through the settings object, so neither can reach Dagster's resource config or a log.

Every value is checked when it is read (issue 14): a malformed number, a number out of its range
(NaN included), an unknown word, or an address with a line break in it stops the process at once
with `SettingsError`, one line that names each bad variable and what it accepts, instead of every
command failing later with a traceback (or, for NaN, a check that silently never fires). The
checks are plain stdlib: `float`/`int` plus a stated range, `email.headerregistry.Address`
for mail addresses, `zoneinfo` for the schedule's time zone and `cron_problem` for its cron (issue
29: both were read unchecked, and failed later, each alone); a validation framework would add a
dependency and a model class for a dozen values whose messages we want in our own words.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from email.errors import HeaderParseError, MessageDefect
from email.headerregistry import Address
from email.utils import getaddresses
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


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
# Dagster reads the expression (its vendored croniter) only when the definitions load, so a typo
# used to surface as a failed Dagster load, not beside the other settings' problems (issue 29). This
# is the grammar Dagster accepts, in the stdlib (importing Dagster costs ~3 s, too much for every
# command's start): five fields, or one of the `@` names; each field a comma-separated list of `*`,
# a value or a range `a-b` (either order), each with an optional `/step` of at least 1; month and
# weekday names as three letters; `L` (the last day) alone or ending a range in the day of the
# month; `?` alone in either day; the weekday `d#n` (the n-th d of the month, alone in its field).
# A day 30 or 31 of February only never fires. `tests/config/test_settings.py` holds this to Dagster's
# own check case by case (and 6,000 random expressions agreed but for one quirk: Dagster takes a
# month range ending in 0, `7-0`, which is refused here).

_CRON_NAMED = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (field, lowest, highest, names numbered from `lowest`)
_FIELDS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of the month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of the week", 0, 7, _DAYS),  # 0 and 7 are both Sunday
)
_ITEM = re.compile(r"^(?P<first>\*|\w+)(?:-(?P<last>\w+))?(?:/(?P<step>\d+))?$")
_NTH = re.compile(r"^(?P<day>\w+)#(?P<nth>[1-5])$")
CRON_EXAMPLE = "five fields such as '0 6 * * *' (06:00 daily) or '30 7 * * mon-fri', or @daily"


def cron_problem(text: str) -> str | None:
    """Why `text` is not a cron expression Dagster runs (see above), or None."""
    fields = text.split()
    if len(fields) == 1 and fields[0].lower() in _CRON_NAMED:
        return None
    if len(fields) != 5:
        return f"{len(fields)} field(s), not 5"
    for written, (name, low, high, names) in zip(fields, _FIELDS, strict=True):
        wrong = _field_problem(written.lower(), name, low, high, names)
        if wrong is not None:
            return wrong
    day, month = fields[2], fields[3].lower()
    if month in ("2", "feb") and day in ("30", "31"):
        return f"day {day} of February never comes"
    return None


def _field_problem(field: str, name: str, low: int, high: int, names: tuple[str, ...]) -> str | None:
    items = field.split(",")
    if name == "day of the week" and (nth := _NTH.match(field)):
        return _value_problem(nth["day"], name, low, high, names)
    for item in items:
        if name.startswith("day of the") and item == "?" and len(items) == 1:
            continue
        match = _ITEM.match(item)
        if match is None:
            return f"{name} {item!r} is not a value, a range or a step"
        if match["step"] is not None and int(match["step"]) < 1:
            return f"{name} {item!r} steps by 0"
        for value in (match["first"], match["last"]):
            if value is None or (value == "*" and match["last"] is None):
                continue
            if value == "l" and name == "day of the month" and (value == match["last"] or item == "l"):
                continue  # the last day: alone, or ending a range (1-L), never starting one
            wrong = _value_problem(value, name, low, high, names)
            if wrong is not None:
                return wrong
    return None


def _value_problem(value: str, name: str, low: int, high: int, names: tuple[str, ...]) -> str | None:
    if value.isdigit():
        return None if low <= int(value) <= high else f"{name} {value} is not from {low} to {high}"
    if value in names:
        return None
    return f"{name} {value!r} is not a number from {low} to {high}" + (
        f" or one of {', '.join(names)}" if names else ""
    )


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


class _Reader:
    """Reads and checks variables of `env`; each bad one adds a problem, all raised at the end."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []

    def fail(self, name: str, value: str, accepted: str) -> None:
        self.problems.append(f"{name}={value!r} is not {accepted}")

    def number(self, name: str, default: float, low: float, high: float, *, above_low: bool = False) -> float:
        """A finite number in [low, high] (or (low, high] with `above_low`)."""
        text = self.env.get(name) or ""
        if not text.strip():
            return default
        bound = f"{'over' if above_low else 'from'} {low:g} {'up ' if above_low else ''}to {high:g}"
        try:
            value = ascii_decimal(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value > high or value < low or (above_low and value == low):
            self.fail(name, text, f"a number {bound}")
            return default
        return value

    def minutes(self, name: str, default: int) -> int:
        """A period in whole minutes, written `15`, `15m` or `2h`: from one minute to a day."""
        text = (self.env.get(name) or "").strip().lower()
        if not text:
            return default
        try:
            minutes = parse_minutes(text)
        except ValueError:
            minutes = 0
        if not 1 <= minutes <= MINUTES_PER_DAY:
            self.fail(name, text, "whole minutes from 1 to 1440, as 15, 15m or 2h")
            return default
        return minutes

    def whole(self, name: str, default: int, low: int, high: int) -> int:
        text = self.env.get(name) or ""
        if not text.strip():
            return default
        try:
            value = ascii_whole(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            self.fail(name, text, f"a whole number from {low} to {high}")
            return default
        return value

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
    sql_timeout_s: float = 300.0  # `gpuplan sql` stops a query after this long
    sql_memory_limit: str | None = (
        None  # DuckDB memory_limit of `gpuplan sql`; None: warehouse.sandbox's default
    )
    digest_lang: str = "en"  # en | zh: the digest's catalogue (checked where it is used)
    watches_file: Path | None = None  # GPUPLAN_WATCHES: YAML list of watches (config/watches_file.py)
    crawler_contact: str | None = None  # a URL or e-mail platforms can reach the operator at (User-Agent)
    jobs_file: Path | None = None  # GPUPLAN_JOBS: your own jobs, planned daily (config/jobs_file.py)
    default_tokens: float = 1e9  # GPUPLAN_DEFAULT_TOKENS: one run's tokens in the daily tables' totals
    # GPUPLAN_STALE_HOURS: a platform whose crawl failed keeps its last good crawl in the plans while
    # that crawl is at most this many hours older than the failed one (0: never carried)
    stale_hours: float = 48.0
    # GPUPLAN_OFFLINE: the code location's runs (the schedule's included) replay the bundled snapshots
    offline: bool = False
    notify_file: Path | None = None  # GPUPLAN_NOTIFY: push channels, YAML (config/notify_file.py)
    export_dir: Path | None = None  # GPUPLAN_EXPORT_DIR: the open daily dataset (warehouse/export.py)
    # GPUPLAN_MAX_NODES: the most whole nodes a job plan joins into one cluster, where the offer's
    # platform sells a training fabric (sizing/data/clusters.csv); 1: never across nodes
    max_nodes: int = 64
    # GPUPLAN_WATCH_EVERY: how often the intraday watches crawl and check (`gpuplan watch`, the
    # Dagster watch schedule), in minutes ("15", "15m", "1h")
    watch_every_minutes: int = 15

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
        smtp = SmtpSettings(
            host=read.text("GPUPLAN_SMTP_HOST"),
            port=read.whole("GPUPLAN_SMTP_PORT", 587, 1, 65535),
            # checked by digest.mailer.check_settings (SECURITY_MODES), the one home of the modes
            security=(env.get("GPUPLAN_SMTP_SECURITY") or "starttls").strip().lower(),
            user=read.text("GPUPLAN_SMTP_USER"),
            password=env.get("GPUPLAN_SMTP_PASSWORD") or None,
            sender=sender[0] if sender else None,
            recipients=read.addresses("GPUPLAN_SMTP_TO"),
        )
        settings = cls(
            warehouse=warehouse,
            crawl_dir=crawl_dir,
            models=_csv(env.get("GPUPLAN_MODELS") or "7B,13B,30B,70B"),
            methods=_csv(env.get("GPUPLAN_METHODS") or "full,lora,qlora"),
            schedule_cron=read.cron("GPUPLAN_SCHEDULE_CRON", "0 6 * * *"),
            schedule_timezone=read.zone("GPUPLAN_SCHEDULE_TZ", "Asia/Shanghai"),
            # A move of 0% would make every repricing a change; over 1000% no price moves.
            price_move_pct=read.number("GPUPLAN_PRICE_MOVE_PCT", 10.0, 0, 1000, above_low=True),
            smtp=smtp,
            digest_skip_empty=read.flag("GPUPLAN_DIGEST_SKIP_EMPTY", False),
            # A day is the longest a question to the warehouse may sensibly take.
            sql_timeout_s=read.number("GPUPLAN_SQL_TIMEOUT_S", 300.0, 0, 86_400, above_low=True),
            sql_memory_limit=read.size("GPUPLAN_SQL_MEMORY_LIMIT"),
            digest_lang=(env.get("GPUPLAN_DIGEST_LANG") or "en").strip().lower(),
            watches_file=Path(watches).expanduser() if (watches := env.get("GPUPLAN_WATCHES")) else None,
            crawler_contact=read.text("GPUPLAN_CRAWLER_CONTACT"),
            jobs_file=Path(jobs).expanduser() if (jobs := env.get("GPUPLAN_JOBS")) else None,
            # One run's tokens: over nothing; 1e15 is a thousand times the largest pretraining runs.
            default_tokens=read.number("GPUPLAN_DEFAULT_TOKENS", 1e9, 0, 1e15, above_low=True),
            # Two daily runs by default; a month at most: older prices are history, not an offer.
            stale_hours=read.number("GPUPLAN_STALE_HOURS", 48.0, 0, 720),
            offline=read.flag("GPUPLAN_OFFLINE", False),
            notify_file=Path(notify).expanduser() if (notify := env.get("GPUPLAN_NOTIFY")) else None,
            export_dir=Path(export).expanduser() if (export := env.get("GPUPLAN_EXPORT_DIR")) else None,
            # The node ladder tops at 256 nodes (2,048 GPUs of 8): past it is a typo.
            max_nodes=read.whole("GPUPLAN_MAX_NODES", 64, 1, 256),
            watch_every_minutes=read.minutes("GPUPLAN_WATCH_EVERY", 15),
        )
        if read.problems:
            raise SettingsError("; ".join(read.problems))
        return settings
