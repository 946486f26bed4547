"""The writer slot around an in-process run: dead holders freed, waits bounded, Ctrl-C and SIGTERM heard.

Every DuckDB-writing step claims a slot of the Dagster pool `duckdb_writer` (limit 1). Dagster
frees a run's slots when its steps end, and its daemon (run monitoring, `dagster.yaml`) frees
those of runs that ended without doing so. Nothing frees the slot of a run whose process was
killed outright (SIGKILL, the OOM killer, a reboot): it stays STARTED, and every later run waits
for its slot. Dagster's in-process executor waits in a loop that never sleeps and never looks
for interrupts (dagster 1.13.27: `InstanceConcurrencyContext.interval_to_next_pending_claim_check`
is at most 0), so such a run spins at full CPU, deaf to SIGTERM.

Here: `fail_dead_runs` marks failed the in-progress runs this machine's `gpuplan refresh` started
from a process that is gone (each such run carries PROCESS_TAG: host, pid, process start time),
and frees the slots of every finished run; `wait_for_writer_slot` waits for a live holder, up to
a deadline; `SlotWatch`, during the run, stops it when one of its steps has waited for the slot
longer than the bound, or when Ctrl-C or SIGTERM arrives while it waits (the signal is learned
from `signal.set_wakeup_fd`, since Dagster's handler only sets a flag; the run is then stopped
by a KeyboardInterrupt raised in the main thread, which Dagster ends the run on).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import selectors
import signal
import socket
import threading
import time
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

import dagster as dg

from pipelines.resources import WRITER_POOL

PROCESS_TAG = "gpuplan/process"  # "<host>/<pid>/<process start time>" of the process running the run
POLL_S = 1.0
FREE_AFTER_END_S = 60.0
IN_PROGRESS = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
STOP_SIGNAL = signal.SIGUSR1  # raised in the main thread to stop a run (no Dagster handler uses it)
RESEND_S = 0.05
FORCE_STOP_AFTER_S = 5.0
# Where the in-process executor loops while a step waits for its slot (dagster 1.13.27: active.py,
# execute_plan.py, instance_concurrency_context.py); nothing there is mid-way through storage.
_WAITING_LOOP = "dagster/_core/execution/plan"


class RunBlocked(RuntimeError):
    """Another run keeps what this one needs (the writer slot, the day's crawl folder); says which."""


class RunStopped(KeyboardInterrupt):
    """Raised in the main thread to end a run that waits for the writer slot (Dagster ends it)."""


def process_identity(pid: int) -> str | None:
    """ "host/pid/start time" of a live process (start time from /proc: a reused pid differs)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":  # a zombie has exited
        return None
    return f"{socket.gethostname()}/{pid}/{fields[19]}"  # field 22 of stat: start time in ticks


def _is_gone(identity: str) -> bool:
    host, pid, _ = identity.split("/", 2)
    return host == socket.gethostname() and process_identity(int(pid)) != identity


def _storage_pools(instance: dg.DagsterInstance) -> bool:
    return instance.event_log_storage.supports_global_concurrency_limits


def fail_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark failed the in-progress runs whose `gpuplan refresh` process is gone from this machine,
    and free their slots and those of every finished run; the ids of the runs freed."""
    freed = []
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=IN_PROGRESS)):
        run = record.dagster_run
        identity = run.tags.get(PROCESS_TAG)
        if identity and identity.count("/") == 2 and _is_gone(identity):
            instance.report_run_failed(
                run, f"its process ({identity}) is gone: killed, or the machine restarted"
            )
            freed.append(run.run_id)
    if not _storage_pools(instance):
        return freed
    storage = instance.event_log_storage
    for run_id in storage.get_concurrency_run_ids():
        holder = instance.get_run_record_by_id(run_id)
        if holder is None or _ended_for_good(holder):
            storage.free_concurrency_slots_for_run(run_id)
            freed.append(run_id)
    return freed


def _ended_for_good(record: dg.RunRecord) -> bool:
    """A finished run none of whose steps can still be writing: one run in-process by `gpuplan
    refresh`, or any run ended FREE_AFTER_END_S ago (a crashed run worker may leave a step process
    running for a moment; Dagster's own run monitoring waits for the same reason)."""
    run = record.dagster_run
    if not run.is_finished:
        return False
    ended = record.end_time or 0.0
    return PROCESS_TAG in run.tags or time.time() - ended > FREE_AFTER_END_S


def _holders(instance: dg.DagsterInstance, exclude: str | None = None) -> list[str]:
    """The runs holding the writer slot, described for a one-line message."""
    info = instance.event_log_storage.get_concurrency_info(WRITER_POOL)
    described = []
    for run_id in sorted(info.active_run_ids - {exclude}):
        run = instance.get_run_by_id(run_id)
        status = run.status.value if run is not None else "deleted"
        job = run.job_name if run is not None else "?"
        described.append(f"run {run_id} ({job}, {status})")
    return described


def _busy_message(holders: list[str], waited_s: float) -> str:
    return (
        f"the warehouse writer slot (Dagster pool {WRITER_POOL}) is held by {', '.join(holders) or 'a run'}; "
        f"waited {waited_s:.0f} s. If that run is gone, free its slot in the Dagster UI "
        "(Deployment > Concurrency) or with `dagster run delete RUN_ID`"
    )


def wait_for_writer_slot(instance: dg.DagsterInstance, deadline: float) -> None:
    """Return when the writer pool has a free slot; RunBlocked naming the holder at `deadline`."""
    if not _storage_pools(instance):
        return
    started = time.monotonic()
    while True:
        info = instance.event_log_storage.get_concurrency_info(WRITER_POOL)
        if info.limit is None or len(info.claimed_slots) < info.limit:
            return
        if time.monotonic() >= deadline:
            raise RunBlocked(_busy_message(_holders(instance), time.monotonic() - started))
        time.sleep(POLL_S)


class SlotWatch:
    """While a run executes in the main thread: stop it when a step of it has waited for the writer
    slot longer than `wait_s`, or when SIGINT or SIGTERM arrives while it waits.

    `raise_if_stopped()` afterwards raises what ended it: RunBlocked naming the holder, or
    KeyboardInterrupt for a signal (SIGTERM is raised again, to its own handler).
    """

    def __init__(self, instance: dg.DagsterInstance, run_id: str, wait_s: float) -> None:
        self.instance = instance
        self.run_id = run_id
        self.wait_s = wait_s
        self.blocked: str | None = None
        self.signal: int | None = None
        self._done = threading.Event()
        self._stopped = threading.Event()
        self._stop_sent: float | None = None
        self._pools = _storage_pools(instance)
        self._active = threading.current_thread() is threading.main_thread()
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> SlotWatch:
        if not self._active:
            return self
        read, write = os.pipe()
        os.set_blocking(write, False)
        self._pipe = (read, write)
        self._saved = {
            "wakeup": signal.set_wakeup_fd(write, warn_on_full_buffer=False),
            "stop": signal.signal(STOP_SIGNAL, self._raise_stop),
        }
        self._thread = threading.Thread(target=self._watch, name="slot-watch", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._active:
            return
        self._done.set()
        self._thread.join()
        signal.set_wakeup_fd(self._saved["wakeup"])
        signal.signal(STOP_SIGNAL, self._saved["stop"])
        for fd in self._pipe:
            os.close(fd)

    def raise_if_stopped(self) -> None:
        if self.blocked is not None:
            raise RunBlocked(self.blocked)
        if self.signal == signal.SIGTERM:
            signal.raise_signal(signal.SIGTERM)  # to the caller's handler (the CLI's), or the default
        if self.signal is not None:
            raise KeyboardInterrupt

    def _raise_stop(self, signum: int, frame: FrameType | None) -> None:
        """Raise RunStopped, but only in Dagster's waiting loop (or after FORCE_STOP_AFTER_S of
        tries): raised in its storage code, a SQLAlchemy clean-up would swallow it, or it would
        break the recording of the run's end. The watch resends the signal until it lands."""
        if self._stop_sent is None:
            return
        waiting = frame is not None and Path(frame.f_code.co_filename).parent.match(_WAITING_LOOP)
        if waiting or time.monotonic() - self._stop_sent > FORCE_STOP_AFTER_S:
            self._stop_sent = None
            self._stopped.set()
            raise RunStopped

    def _waiting_since(self) -> dt.datetime | None:
        info = self.instance.event_log_storage.get_concurrency_info(WRITER_POOL)
        waits = [
            step.enqueued_timestamp
            for step in info.pending_steps
            if step.run_id == self.run_id and step.assigned_timestamp is None
        ]
        return min(waits) if waits else None

    def _stop(self, message: str) -> None:
        run = self.instance.get_run_by_id(self.run_id)
        if run is not None:
            self.instance.report_engine_event(message, run)
        self._stop_sent = time.monotonic()
        main = threading.main_thread().ident or 0
        while not self._stopped.is_set() and not self._done.is_set():
            signal.pthread_kill(main, STOP_SIGNAL)
            self._stopped.wait(RESEND_S)

    def _watch(self) -> None:
        read = self._pipe[0]
        with selectors.DefaultSelector() as selector:
            selector.register(read, selectors.EVENT_READ)
            while not self._done.is_set():
                if selector.select(POLL_S):
                    with contextlib.suppress(BlockingIOError):
                        for signum in os.read(read, 64):
                            if signum in (signal.SIGINT, signal.SIGTERM):
                                self.signal = signum
                if not self._pools:
                    continue  # no pool to wait for (a throwaway instance): Dagster hears signals itself
                since = self._waiting_since()
                if since is None:
                    continue  # not waiting: Dagster hears a signal at its next step
                if since.tzinfo is None:
                    since = since.replace(tzinfo=dt.UTC)
                waited_s = (dt.datetime.now(dt.UTC) - since).total_seconds()
                if self.signal is not None:
                    run = self.instance.get_run_by_id(self.run_id)
                    if run is not None:
                        self.instance.report_run_canceling(run, "stopped by a signal while it waited")
                    self._stop(f"stopped by signal {self.signal} while waiting for the writer slot")
                    return
                if waited_s > self.wait_s:
                    self.blocked = _busy_message(_holders(self.instance, self.run_id), waited_s)
                    self._stop(self.blocked)
                    return
