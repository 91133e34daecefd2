"""The RISC-V side of a Tensix thread: what a TRISC does between the Tensix words it pushes.

A kernel's TRISC stores to Config, to its MOP configuration and GPRs, to L1, posts and polls semaphores,
passes values through mailboxes and writes debug registers. A case lists these as actions in the thread's
program order; each runs once every earlier Tensix instruction of its thread has completed (the harness
drains the thread first) and before the next one is pushed. Facts: ttsim v1.10.0 tile.cpp (PC_BUF
semaphores, mailboxes, the Config window on state 0, DBG_FEATURE_DISABLE), tt-isa-documentation
WormholeB0 MOPExpander.md (MopCfg written by RISCV), SyncUnit.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from types import SimpleNamespace

from .config_words import FULL, GLOBAL_BASE, STATE_RESET, _check_index, word_mask
from .errors import Blocked, NotModelled, UndefinedBehaviour
from .registers import CONFIG_STATES
from .state import GPRS, L1_SIZE, MOP_CFG_WORDS, SEMAPHORES, THREADS

SEM_LIMIT = 15
SEM_OPS = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__, ">": int.__gt__,
           ">=": int.__ge__}

# kind -> its argument names, in the order RiscvAction.args holds them.
KINDS: dict[str, tuple[str, ...]] = {
    "cfg": ("index", "value", "mask"),
    "mop_cfg": ("index", "value"),
    "gpr": ("index", "value"),
    "l1": ("addr", "data"),
    "sem_post": ("sem",),
    "sem_get": ("sem",),
    "sem_wait": ("sem", "op", "value"),
    "mailbox_write": ("to", "value"),
    "mailbox_read": ("from", "gpr"),
    "feature_disable": ("value",),
}


@dataclass(frozen=True)
class RiscvAction:
    """One RISC-V action. It travels in a thread's stream beside decoded Tensix words: ``word`` and ``ins``
    are None, ``handler(m, t, fields)`` carries it out (it may raise errors.Blocked, as an instruction does)."""
    kind: str
    args: tuple

    word = None
    ins = None

    def __post_init__(self):
        if self.kind not in KINDS or len(self.args) != len(KINDS[self.kind]):
            raise ValueError(f"RISC-V action {self.kind}{self.args!r} does not fit {KINDS.get(self.kind)}")

    @cached_property
    def fields(self) -> SimpleNamespace:
        return SimpleNamespace(**dict(zip(KINDS[self.kind], self.args)))

    @property
    def handler(self):
        return _HANDLERS[self.kind]

    @property
    def text(self) -> str:
        parts = []
        for name, v in zip(KINDS[self.kind], self.args):
            if name == "data":
                parts.append(f"{name}={bytes(v).hex()}")
            elif isinstance(v, int) and name not in ("sem", "to", "from", "gpr", "index") and v is not None:
                parts.append(f"{name}={v:#x}")
            elif v is not None:
                parts.append(f"{name}={v}")
        return f"riscv {self.kind} " + " ".join(parts)


def interleave(items, actions):
    """(index, item) pairs in program order for a thread's items and its (index, action) pairs: each action
    before the item at its index, after the last item when its index equals their number (an iterator over a
    list made at once: nothing in it depends on what running the items does)."""
    items = items if isinstance(items, list) else list(items)
    out: list = []
    at = 0                  # items placed so far
    for action in actions:
        if action[0] > at:
            out += zip(range(at, action[0]), items[at:action[0]])
            at = action[0]
        out.append(action)
    if at < len(items):
        out += zip(range(at, len(items)), items[at:])
    return iter(out)


def check(a: RiscvAction, t: int) -> None:
    """Raise ValueError naming what is out of range (the case loader reports it with file and line)."""
    f = a.fields
    if a.kind == "cfg":
        if not 0 <= f.index < 1 << 10:
            raise ValueError(f"cfg index {f.index} is not a Config word")
    elif a.kind == "mop_cfg" and not 0 <= f.index < MOP_CFG_WORDS:
        raise ValueError(f"mop_cfg index {f.index} is not in 0..{MOP_CFG_WORDS - 1}")
    elif a.kind == "gpr" and not 0 <= f.index < GPRS:
        raise ValueError(f"gpr index {f.index} is not in 0..{GPRS - 1}")
    elif a.kind == "l1":
        if f.addr % 4 or len(f.data) % 4 or not f.data:
            raise ValueError("l1 stores are whole 4-byte words at a 4-byte aligned address")
        if f.addr + len(f.data) > L1_SIZE:
            raise ValueError(f"l1 store [{f.addr:#x}, {f.addr + len(f.data):#x}) runs past the end of L1")
    elif a.kind in ("sem_post", "sem_get", "sem_wait") and not 0 <= f.sem < SEMAPHORES:
        raise ValueError(f"semaphore {f.sem} is not in 0..{SEMAPHORES - 1}")
    elif a.kind == "sem_wait" and (f.op not in SEM_OPS or not 0 <= f.value <= SEM_LIMIT):
        raise ValueError(f"sem_wait needs 'OP N' with OP one of {' '.join(SEM_OPS)} and N in 0..{SEM_LIMIT}")
    elif a.kind in ("mailbox_write", "mailbox_read"):
        other = f.to if a.kind == "mailbox_write" else getattr(f, "from")
        if not 0 <= other < THREADS or other == t:
            raise ValueError(f"mailbox of thread {other}: another thread 0..{THREADS - 1} than {t}")
        if a.kind == "mailbox_read" and not 0 <= f.gpr < GPRS:
            raise ValueError(f"mailbox_read gpr {f.gpr} is not in 0..{GPRS - 1}")


# --- what each action does --------------------------------------------------------------------------------
def cfg(m, t, f) -> None:
    """RISC-V store to the Config window: state 0 (ttsim maps the window onto bank 0), named-field bits
    only, GLOBAL words in both states; with ``mask`` a read-modify-write of those bits."""
    _check_index("RISC-V cfg store", f.index)
    if f.index == STATE_RESET:
        raise NotModelled("a RISC-V store to STATE_RESET_EN: what it resets is not documented for RISC stores")
    words = m.s.config[0]
    if f.mask is None:
        value, bits = f.value, FULL
    else:       # the bits outside the mask are kept, never used
        old = words[f.index] if words.__class__ is list else words.bits(f.index, 0)
        value, bits = (old & ~f.mask) | (f.value & f.mask), f.mask
    value &= word_mask(f.index)
    for s in range(CONFIG_STATES) if f.index >= GLOBAL_BASE else (0,):
        words = m.s.config[s]
        if words.__class__ is list:
            words[f.index] = value
        else:
            words.set_bits(f.index, bits, value)


def mop_cfg(m, t, f) -> None:
    """MopCfg[index] of this thread (MOPExpander.md: written by RISCV, read when a MOP expands)."""
    m.s.frontend[t].mop_cfg[f.index] = f.value


def gpr(m, t, f) -> None:
    """RISC-V store into this thread's Tensix GPR (the register file window)."""
    m.s.gpr[t][f.index] = f.value


def l1(m, t, f) -> None:
    m.s.l1.write(f.addr, bytes(f.data))


def sem_post(m, t, f) -> None:
    """PC_BUF semaphore write of 0: Value += 1 (ttsim refuses it at 15: non-contractual)."""
    sem = m.s.semaphores[f.sem]
    if sem.value >= SEM_LIMIT:
        raise UndefinedBehaviour(f"RISC-V post of semaphore {f.sem} at {SEM_LIMIT} (overflow)")
    sem.value += 1


def sem_get(m, t, f) -> None:
    """PC_BUF semaphore write of 1: Value -= 1 (ttsim refuses it at 0: non-contractual)."""
    sem = m.s.semaphores[f.sem]
    if sem.value == 0:
        raise UndefinedBehaviour(f"RISC-V get of semaphore {f.sem} at 0 (underflow)")
    sem.value -= 1


# Actions whose one effect is +1 or -1 on one semaphore's Value, refused at a bound (as golden.sync.sync.COUNTING).
COUNTING = frozenset({sem_post, sem_get})


def sem_wait(m, t, f) -> None:
    """The RISC-V polls a PC_BUF semaphore read until the condition holds."""
    v = m.s.semaphores[f.sem].value
    if not SEM_OPS[f.op](v, f.value):
        raise Blocked(f"RISC-V polls semaphore {f.sem} (now {v}) until {f.op} {f.value}")


def mailbox_write(m, t, f) -> None:
    """This thread's mailbox towards thread ``to``. ttsim holds one value per mailbox (silicon four, shared),
    so a second write before the reader took the first is not modelled."""
    key = (t, f.to)
    if key in m.s.mailboxes:
        raise NotModelled(f"a second mailbox write from thread {t} to thread {f.to} before it was read "
                          "(queue depth: ttsim one, silicon up to four)")
    m.s.mailboxes[key] = f.value


def mailbox_read(m, t, f) -> None:
    """Take the value thread ``from`` wrote to this thread (the load stalls while there is none) and store
    it into this thread's GPR."""
    key = (getattr(f, "from"), t)
    if key not in m.s.mailboxes:
        raise Blocked(f"RISC-V reads the mailbox from thread {key[0]}, which is empty")
    m.s.gpr[t][f.gpr] = m.s.mailboxes.pop(key)


def feature_disable(m, t, f) -> None:
    """RISCV_DEBUG_REG_DBG_FEATURE_DISABLE: 0 is its reset value; what the other bits disable is not modelled."""
    if f.value:
        raise NotModelled(f"DBG_FEATURE_DISABLE = {f.value:#x}: the features it disables are not modelled")


_HANDLERS = {k: globals()[k] for k in KINDS}
