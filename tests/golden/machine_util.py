"""Small helpers for golden instruction tests: assemble text, run it on a fresh or given machine."""
from __future__ import annotations

from golden import isa
from golden.core import Tensix
from golden.registers import thread_config_field


def words(text: str) -> list[int]:
    return isa.assemble(text)


def run(text_by_thread: dict[int, str] | str, m: Tensix | None = None, thread: int = 0) -> Tensix:
    """Run assembly text (one thread, or {thread: text}) and return the machine."""
    m = m if m is not None else Tensix()
    if isinstance(text_by_thread, str):
        text_by_thread = {thread: text_by_thread}
    m.run({t: words(text) for t, text in text_by_thread.items()})
    return m


def set_tcfg(m: Tensix, t: int, name: str, value: int) -> None:
    f = thread_config_field(name)
    m.s.thread_config[t][f.index] = f.put(m.s.thread_config[t][f.index], value)


def rwc(m: Tensix, t: int = 0) -> tuple[int, ...]:
    r = m.s.rwc[t]
    return (r.srca, r.srca_cr, r.srcb, r.srcb_cr, r.dst, r.dst_cr, r.fidelity)


def adc(m: Tensix, unit: str, channel: int, t: int = 0) -> tuple[int, ...]:
    c = m.s.adc[t][unit][channel]
    return (c.x, c.x_cr, c.y, c.y_cr, c.z, c.z_cr, c.w, c.w_cr)
