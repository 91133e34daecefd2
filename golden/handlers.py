"""Instruction semantics: one small function per instruction, registered against the ISA table.

Every module of the unit packages named in ``UNITS`` is imported by ``load_all``; a module registers its
functions with ``@semantics("MNEMONIC")``; decoding imports only the packages that may hold an instruction's
handler (``handler_of``: its ISA unit's packages in ``UNIT_PACKAGES``, and ``ALWAYS``). A function takes
``(m, t, f)``: the machine, the issuing thread, and the decoded fields as attributes (``f.bitmask``).
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from .isa import table

Handler = Callable[..., None]
# The packages holding the handlers, one per ISA unit (isa.yaml's unit; frontend: MOP and REPLAY; thcon: THCON,
# TDMA): the one place golden's core names its units; load_all imports them by name, the core has no import of one.
UNITS = ("config", "frontend", "matrix", "pack", "sfpu", "sync", "thcon", "unpack")
# The packages that may hold the handler of an instruction, by its ISA unit (isa.yaml); a unit not named here
# loads every package. ALWAYS: the packages registering the checks and stages every stream passes through
# (PRE_ISSUE, FRONTEND), loaded with any other (tests/golden/test_handler_table.py holds both to the handlers).
UNIT_PACKAGES = {"CFG": ("config",), "MATH": ("matrix",), "PACK": ("pack",), "SFPU": ("sfpu",), "SYNC": (),
                 "NONE": (), "TDMA": ("thcon", "matrix"), "THCON": ("thcon",), "UNPACK": ("unpack", "matrix")}
ALWAYS = ("sync", "frontend")
HANDLERS: dict[str, Handler] = {}
PRE_ISSUE: list[Handler] = []   # checks run before every instruction passes its thread's Wait Gate
FRONTEND: list[Handler] = []    # frontend expanders (MOP, replay), applied to each thread's stream in order
STAGE_ENGAGED: dict[Handler, Handler] = {}   # stage -> engaged(m, t, program, actions): could it change that stream
_loaded: set[str] = set()      # the packages of UNITS whose modules are imported


def semantics(name: str) -> Callable[[Handler], Handler]:
    if name not in table():
        raise KeyError(f"semantics for {name}, which is not in isa.yaml")

    def register(fn: Handler) -> Handler:
        if name in HANDLERS:
            raise KeyError(f"two semantics registered for {name}")
        HANDLERS[name] = fn
        return fn

    return register


def pre_issue(fn: Handler) -> Handler:
    """Register ``fn(m, t, decoded)``, run before each instruction's semantics; it may raise errors.Blocked."""
    PRE_ISSUE.append(fn)
    return fn


def frontend(fn: Handler) -> Handler:
    """Register a frontend stage ``fn(m, t, items)``: a generator over (program index, Decoded) pairs that
    rewrites thread t's instruction stream before the Wait Gate (MOPExpander.md, REPLAY.md)."""
    FRONTEND.append(fn)
    return fn


def engages(stage: Handler) -> Callable[[Handler], Handler]:
    """Register ``fn(m, t, program, actions) -> bool`` for one frontend stage (a thread's decoded program and its
    (index, RiscvAction) pairs): when False, that stage would pass the thread's stream through untouched and is
    left out (a speed path only; a stage without one always runs)."""
    def register(fn: Handler) -> Handler:
        STAGE_ENGAGED[stage] = fn
        return fn

    return register


def stage_engaged(m, t: int, stage: Handler, program, actions) -> bool:
    """Whether ``stage`` could change thread t's stream (its ``engages`` predicate; True without one)."""
    engaged = STAGE_ENGAGED.get(stage)
    return engaged is None or engaged(m, t, program, actions)


def _load(units) -> None:
    for unit in units:
        if unit not in _loaded:
            package = importlib.import_module(f"{__package__}.{unit}")
            for mod in pkgutil.iter_modules(package.__path__):
                importlib.import_module(f"{package.__name__}.{mod.name}")
            _loaded.add(unit)


def load_all() -> dict[str, Handler]:
    _load(UNITS)
    return HANDLERS


def handler_of(name: str, unit: str) -> Handler | None:
    """The handler of instruction ``name`` of ISA unit ``unit`` (None: not modelled), importing only the packages
    that may hold it (a command running a few units' instructions imports no other unit's modules)."""
    _load(ALWAYS)
    _load(UNIT_PACKAGES.get(unit, UNITS))
    return HANDLERS.get(name)


def handler_table() -> list[tuple[str, str, str]]:
    """(ISA unit, mnemonic, handler as ``golden/UNIT/FILE.py:function``, where it is defined) for every instruction of
    the ISA table, by unit then mnemonic; an instruction golden does not model names no handler ("-")."""
    handlers = load_all()
    rows = []
    for name, ins in table().items():
        fn = handlers.get(name)
        fn = getattr(fn, "__wrapped__", fn)     # a handler registered through a wrapper (golden.sfpu.lanes.sfpu_op)
        where = "-" if fn is None else f"{fn.__module__.replace('.', '/')}.py:{fn.__name__}"
        rows.append((ins.unit, name, where))
    return sorted(rows)

