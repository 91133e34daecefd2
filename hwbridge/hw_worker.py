"""The device lives in a worker process; the backend survives whatever the device does.

The worker is a fresh interpreter (``python -m hwbridge.hw_worker``: never ``fork``, an initialised
simulator maps 32 GiB; not multiprocessing's spawn either, which re-imports the caller's main module)
that opens the device once and serves jobs over a socket pair. Its stdout/stderr go to a log file,
because ttsim reports a fatal error by printing a line and exiting the process. The parent turns a dead worker, a job that
never finishes, or a device exception into a message, restarts the worker and carries on.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from pathlib import Path

START_TIMEOUT = 120.0


@dataclass
class Reply:
    status: str            # "ok" | "timeout" | "error" | "died"
    blobs: list | None = None
    cycles: int = 0
    message: str = ""


def _serve(conn, simulator: str | None, core: tuple[int, int] | None) -> None:
    from hwbridge.hw_device import Device
    try:
        dev = Device(simulator, core)
    except Exception as e:  # noqa: BLE001 - reported to the parent as a device error
        conn.send(("error", f"cannot open the device: {type(e).__name__}: {e}"))
        return
    conn.send(("ready", dev.info()))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "close":
            return
        try:
            conn.send(dev.run(msg[1], msg[2]))
        except Exception as e:  # noqa: BLE001
            conn.send(("error", f"{type(e).__name__}: {e}"))


class Worker:
    """A restartable device worker. ``run`` never raises for device trouble; it returns a Reply."""

    def __init__(self, simulator: str | None, core: tuple[int, int] | None = None, timeout: float = 60.0):
        self.simulator, self.core, self.timeout = simulator, core, timeout
        self.proc = None
        self.conn = None
        self.info: dict = {}
        self.starts = 0
        fd, self.log_path = tempfile.mkstemp(prefix="tensix-diff-hw-", suffix=".log")
        os.close(fd)

    # --- lifecycle ---
    def start(self) -> None:
        ours, theirs = socket.socketpair()
        core = "" if self.core is None else "{},{}".format(*self.core)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(Path(__file__).resolve().parents[1])] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "hwbridge.hw_worker", str(theirs.fileno()), self.simulator or "", core],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        theirs.close()
        self.starts += 1
        parent = self.conn = Connection(ours.detach())
        if not parent.poll(START_TIMEOUT):
            self.stop()
            raise RuntimeError(f"the device worker did not start within {START_TIMEOUT:g} s")
        try:
            kind, payload = parent.recv()
        except EOFError:
            raise RuntimeError(f"the device worker exited while opening the device: {self._log_tail(0)}") from None
        if kind != "ready":
            self.stop()
            raise RuntimeError(payload)
        self.info = payload

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                try:
                    self.conn.send(("close",))
                except (OSError, BrokenPipeError):
                    pass
                try:
                    self.proc.wait(2.0)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(5.0)
        finally:
            self.conn.close()
            self.proc = self.conn = None

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)

    def close(self) -> None:
        self.stop()
        try:
            os.unlink(self.log_path)
        except OSError:
            pass

    # --- jobs ---
    def run(self, job, timeout: float | None = None) -> Reply:
        if self.proc is None:
            self.start()
        timeout = self.timeout if timeout is None else timeout
        offset = os.path.getsize(self.log_path)
        payload = asdict(job) if not isinstance(job, dict) else job
        try:
            self.conn.send(("run", payload, timeout))
            if not self.conn.poll(timeout + 10.0):
                self.stop()
                return Reply("timeout", message=f"timeout: no answer from the device within {timeout + 10:g} s")
            msg = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            code = self._reap()
            return Reply("died", message=f"device worker exited (code {code}): {self._log_tail(offset)}")
        if msg[0] == "ok":
            return Reply("ok", blobs=msg[1], cycles=msg[2])
        if msg[0] == "timeout":
            self.stop()           # the core is still busy: start from a fresh worker
            return Reply("timeout", message=msg[1])
        self.stop()
        return Reply("error", message=msg[1])

    def _reap(self) -> int | None:
        proc = self.proc
        if proc is not None:
            try:
                code = proc.wait(5.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait(5.0)
            self.conn.close()
            self.proc = self.conn = None
            return code
        return None

    def _log_tail(self, offset: int) -> str:
        """The simulator's own words: its ERROR line if it printed one, else the last log line."""
        time.sleep(0.01)
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                text = f.read().decode(errors="replace")
        except OSError:
            return "(no log)"
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        errors = [ln for ln in lines if "ERROR" in ln]
        return (errors or lines or ["(no output)"])[-1][:500]


def main(argv: list[str]) -> None:
    fd, simulator, core = int(argv[0]), argv[1] or None, argv[2]
    _serve(Connection(fd), simulator, tuple(int(v) for v in core.split(",")) if core else None)


if __name__ == "__main__":
    main(sys.argv[1:])
