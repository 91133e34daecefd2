"""The device lives in a worker process; the backend survives whatever the device does.

A worker opens the device once and serves jobs over a socket pair. Its stdout/stderr go to a log file,
because ttsim reports a fatal error by printing a line and exiting the process. The parent turns a
dead worker, a job that never finishes, or a device exception into a message; the next job gets a
fresh worker, unless the device must be kept (``replace=False``: a card, or ttsim under its constraints).

Workers are forked from a zygote: a fresh interpreter (``python -m hwbridge.hw.worker``; never a fork
of the caller, and not multiprocessing's spawn, which re-imports the caller's main module) that has
imported tt-umd and tt-exalens but opened nothing. Forking it costs milliseconds where a cold start
costs about 0.4 s of imports; the simulator itself (which maps 32 GiB and cannot be forked once
initialised) is only ever opened in the forked child. The zygote runs single-threaded
(OPENBLAS_NUM_THREADS=1) so forking it is safe. It runs in a session of its own, so a Ctrl-C at the terminal
reaches the host process alone: the case in flight finishes and the device stays as the harness left it.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle, send_handle
from pathlib import Path

from .cores import PlacementError

START_TIMEOUT = 120.0
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass
class Reply:
    status: str            # "ok" | "hang" | "timeout" | "error" | "died"
    blobs: list | None = None
    cycles: int = 0
    message: str = ""
    snapshot: dict | None = None     # a hang: what the core showed (Device.snapshot)


SERVICES = ("reset_units", "warm_reset")     # Device methods the parent may call besides running jobs


def _serve(conn: Connection, simulator: str | None, place: dict) -> None:
    from .device import Device     # late for start-up cost: the device stack loads in the worker process only
    try:
        dev = Device(simulator, **place)
    except PlacementError as e:     # the user's --device-id/--core/--jobs: a usage error, not a device fault
        conn.send(("usage", str(e)))
        return
    except Exception as e:  # noqa: BLE001 - reported to the parent as a device error
        conn.send(("error", f"cannot open the device: {type(e).__name__}: {e}"))
        return
    conn.send(("ready", {**dev.info(), "pid": os.getpid()}))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "close":
            return
        if msg[0] in SERVICES:          # (service, core slot, *args)
            try:
                dev.select(msg[1])
                conn.send(("ok", getattr(dev, msg[0])(*msg[2:])))
            except Exception as e:  # noqa: BLE001
                conn.send(("error", f"{type(e).__name__}: {e}"))
            continue
        try:                            # ("run_many", jobs, timeout, slots): ("one", i, reply) per job as it ends
            dev.run_many(msg[1], msg[2], lambda i, reply: conn.send(("one", i, reply)), msg[3])
        except Exception as e:  # noqa: BLE001
            conn.send(("failed", f"{type(e).__name__}: {e}"))
        conn.send(("end",))


def _zygote(ctl: Connection) -> None:
    """Preload the device stack, then fork one worker per request; the child's socket goes back by fd."""
    # late for start-up cost: only the zygote process preloads the device stack, once, for its children
    import tt_umd  # noqa: F401 - preloaded for the children
    import ttexalens.tt_exalens_init  # noqa: F401
    import hwbridge.hw.device  # noqa: F401
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)     # children are reaped by the kernel
    ctl.send(("zygote", os.getpid()))
    while True:
        try:
            _, log_path, simulator, place = ctl.recv()
        except EOFError:
            return
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            try:
                ctl.close()
                ours.close()
                fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                private = worker_tmp(os.getpid())      # tt-umd's simulation server directory goes here
                os.makedirs(private, exist_ok=True)
                os.environ["TMPDIR"] = private
                _serve(Connection(theirs.detach()), simulator, place)
            finally:
                os._exit(0)
        theirs.close()
        send_handle(ctl, ours.fileno(), os.getppid())
        ours.close()
        ctl.send(pid)


def worker_tmp(pid: int) -> str:
    """A worker's private temporary directory: tt-umd allocates its simulation server directory (one of a
    few thousand /tmp/tt-umd-sim-server-N) under TMPDIR and never frees it when the worker is killed, so each
    worker gets its own, removed when the worker is replaced."""
    return os.path.join(tempfile.gettempdir(), f"tensix-diff-worker-{pid}")


class Zygote:
    """The fork server; one per backend."""

    def __init__(self):
        self.proc = None
        self.ctl: Connection | None = None
        self.log_path = ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, log_path: str) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ, **SINGLE_THREADED, PYTHONPATH=os.pathsep.join(
            [str(Path(__file__).resolve().parents[2])] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "hwbridge.hw.worker", str(theirs.fileno())],
                                         pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=log, env=env, start_new_session=True)  # a Ctrl-C is the host's
        theirs.close()
        self.ctl = Connection(ours.detach())
        if not self.ctl.poll(START_TIMEOUT):
            self.stop()
            raise RuntimeError(f"the device zygote did not start within {START_TIMEOUT:g} s")
        try:
            self.ctl.recv()
        except EOFError:
            raise RuntimeError("the device zygote exited while importing tt-umd/tt-exalens (see its log)") from None

    def fork(self, log_path: str, simulator: str | None, place: dict) -> tuple[Connection, int]:
        """A fresh worker opening ``simulator`` (None: a card) with Device's placement options ``place``."""
        self.ctl.send(("fork", log_path, simulator, place))
        fd = recv_handle(self.ctl)
        return Connection(fd), self.ctl.recv()

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            self.ctl.close()
            try:
                self.proc.wait(2.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5.0)
        finally:
            self.proc = self.ctl = None


class Worker:
    """A restartable device worker. ``run`` never raises for device trouble; it returns a Reply.

    With ``replace`` (a simulator only) a job that fails or times out ends the worker and the next job gets a
    fresh one, and one spare worker (its own simulator, ~50 MB resident) is kept opening in the background,
    so a replacement costs no device start-up on the critical path. Without it (a card, or ttsim under card
    constraints) the worker and its device stay after a failed job; only a worker process that died is
    started again (on a card that reopens the same device, whose state the death did not reset)."""

    def __init__(self, simulator: str | None, core=None, timeout: float = 60.0,
                 replace: bool | None = None, device_id: int | None = None, jobs: int | None = None,
                 share: tuple[int, int] | None = None):
        self.simulator, self.timeout = simulator, timeout
        self.replace = bool(simulator) if replace is None else replace
        self.place = {"core": core, "device_id": device_id, "jobs": jobs, "share": share}   # Device's options
        self.zygote = Zygote()
        self.conn: Connection | None = None
        self.pid: int | None = None
        self.info: dict = {}
        self.starts = 0
        self._pending = False
        self._offset = 0
        self._spare: tuple[Connection, int] | None = None
        self._forked: list[int] = []
        fd, self.log_path = tempfile.mkstemp(prefix="tensix-diff-hw-", suffix=".log")
        os.close(fd)

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)

    # --- lifecycle ---
    def start(self, wait: bool = True) -> None:
        """Make a fresh worker current: the spare if there is one, else a new fork. With ``wait=False`` its
        device may still be opening while the caller goes on (the next ``run`` collects its readiness)."""
        if not self.zygote.alive():
            self.zygote.start(self.log_path)
        self._offset = os.path.getsize(self.log_path)
        if self._spare is not None:
            (self.conn, self.pid), self._spare = self._spare, None
        else:
            self.conn, self.pid = self.zygote.fork(self.log_path, self.simulator, self.place)
            self._forked.append(self.pid)
        self.starts += 1
        self._pending = True
        if self.replace:
            self._spare = self.zygote.fork(self.log_path, self.simulator, self.place)
            self._forked.append(self._spare[1])
        if wait:
            self._ready()

    def _ready(self) -> None:
        if not self._pending:
            return
        self._pending = False
        if not self.conn.poll(START_TIMEOUT):
            self.stop()
            raise RuntimeError(f"the device worker did not open the device within {START_TIMEOUT:g} s")
        try:
            kind, payload = self.conn.recv()
        except EOFError:
            self._drop()
            raise RuntimeError(f"the device worker exited while opening the device: {self._log_tail(self._offset)}") from None
        if kind != "ready":
            self.stop()
            raise (PlacementError if kind == "usage" else RuntimeError)(payload)
        self.info = payload

    def stop(self) -> None:
        """End the current worker (ask, then kill it by its pid); the zygote stays for the next one."""
        if self.conn is None:
            return
        try:
            self.conn.send(("close",))
        except OSError:
            pass
        deadline = time.monotonic() + 2.0
        while self._alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        if self._alive():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._drop()

    def _alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def _drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
        if self.pid is not None:
            shutil.rmtree(worker_tmp(self.pid), ignore_errors=True)
        self.conn = self.pid = None
        self._pending = False

    def close(self) -> None:
        self.stop()
        if self._spare is not None:
            (self.conn, self.pid), self._spare = self._spare, None
            self.stop()
        self.zygote.stop()
        for pid in self._forked:         # a worker killed while it opened the device may have made its directory late
            shutil.rmtree(worker_tmp(pid), ignore_errors=True)
        try:
            os.unlink(self.log_path)
        except OSError:
            pass

    # --- jobs ---
    def run(self, job, timeout: float | None = None, slot: int = 0) -> Reply:
        """One job on core ``slot`` of the worker's cores."""
        self.send_many([job], timeout, [slot])
        return self.collect_many()[0]

    def run_many(self, jobs: list, timeout: float | None = None) -> list[Reply]:
        """Job i on core i, all at once (hwbridge.hw.device.Device.run_many); one Reply per job, in job order. A
        worker that dies part-way keeps the replies already sent; the rest say ``died``."""
        self.send_many(jobs, timeout)
        return self.collect_many()

    def send_many(self, jobs: list, timeout: float | None = None, slots: list[int] | None = None) -> None:
        """Start job i on core ``slots[i]`` (default: core i) and return at once (the caller works while the cores
        run): collect_many answers."""
        if self.conn is None:
            self.start()
        self._ready()
        timeout = self.timeout if timeout is None else timeout
        self._batch = (len(jobs), os.path.getsize(self.log_path), timeout)
        payloads = [j if isinstance(j, dict) else j.payload() for j in jobs]
        try:
            self.conn.send(("run_many", payloads, timeout, list(range(len(jobs))) if slots is None else slots))
        except OSError:
            pass          # a dead worker: collect_many finds out and says so

    def collect_many(self) -> list[Reply]:
        """The replies to the jobs send_many started, in job order. Under ``replace``, anything but ``ok`` ends the
        worker (a core may still be busy): the next batch gets a fresh one."""
        count, offset, timeout = self._batch
        replies: list[Reply | None] = [None] * count
        failure = ""
        try:
            while True:
                if not self.conn.poll(timeout + 10.0):
                    self.stop()       # the worker itself is stuck: only its process can go
                    failure = f"timeout: no answer from the device within {timeout + 10:g} s"
                    break
                msg = self.conn.recv()
                if msg[0] == "end":
                    break
                if msg[0] == "failed":
                    failure = msg[1]
                    continue
                replies[msg[1]] = _reply(msg[2])
        except (EOFError, OSError):
            self._drop()
            tail = self._log_tail(offset)
            replies = [r or Reply("died", message=f"device worker exited: {tail}") for r in replies]
            self._respawn()
            return replies
        replies = [r or Reply("timeout" if failure.startswith("timeout") else "error", message=failure)
                   for r in replies]
        if self.replace and any(r.status != "ok" for r in replies) and self.conn is not None:
            self.stop()
            self._respawn()
        return replies

    def call(self, service: str, *args, timeout: float = 60.0, slot: int = 0):
        """One Device service (SERVICES) on core ``slot`` in the current worker: its return value, or RuntimeError."""
        if self.conn is None:
            self.start()
        self._ready()
        try:
            self.conn.send((service, slot, *args))
            if not self.conn.poll(timeout):
                self.stop()
                raise RuntimeError(f"no answer from the device worker to {service} within {timeout:g} s")
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            self._drop()
            self._respawn()
            raise RuntimeError(f"the device worker exited during {service}") from None
        if kind != "ok":
            raise RuntimeError(value)
        return value

    def _respawn(self) -> None:
        """Start the replacement now, so its device opens while the caller prepares the next job."""
        try:
            self.start(wait=False)
        except (RuntimeError, OSError):
            self._drop()      # the next run tries again and reports

    def _log_tail(self, offset: int) -> str:
        """The simulator's own words: its ERROR line if it printed one, else the last log line."""
        text = ""
        for _ in range(20):          # the dying process may still be flushing
            try:
                with open(self.log_path, "rb") as f:
                    f.seek(offset)
                    text = f.read().decode(errors="replace")
            except OSError:
                return "(no log)"
            if "ERROR" in text:
                break
            time.sleep(0.005)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        errors = [ln for ln in lines if "ERROR" in ln]
        return (errors or lines or ["(no output)"])[-1][:500]


def _reply(r: tuple) -> Reply:
    """A Device reply tuple as a Reply."""
    if r[0] == "ok":
        return Reply("ok", blobs=r[1], cycles=r[2])
    if r[0] == "hang":
        return Reply("hang", message=r[1], snapshot=r[2])
    return Reply("timeout" if r[0] == "timeout" else "error", message=r[1])


class CoreWorker:
    """One core of a Worker, as hang recovery (hwbridge.hw.recovery) drives it: ``run`` and ``call`` reach that
    core; ``stop``/``start`` act on the whole worker (a warm reset reopens the device)."""

    def __init__(self, worker: Worker, slot: int):
        self.worker, self.slot = worker, slot

    def run(self, job, timeout: float | None = None) -> Reply:
        return self.worker.run(job, timeout, self.slot)

    def call(self, service: str, *args, timeout: float = 60.0):
        return self.worker.call(service, *args, timeout=timeout, slot=self.slot)

    def stop(self) -> None:
        self.worker.stop()

    def start(self, wait: bool = True) -> None:
        self.worker.start(wait)


if __name__ == "__main__":
    _zygote(Connection(int(sys.argv[1])))
