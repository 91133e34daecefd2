"""A case (docs/case-format.md): per-thread Tensix programs and RISC-V actions, explicit initial state, the
regions it observes; ``canonical`` and ``case_hash`` identify it by what it runs and observes."""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field

from golden.riscv import RiscvAction

# Part of every case hash: bump it when the observed-state format changes, so old recordings go stale.
OBSERVATION_FORMAT = "tensix-diff-observation/1"
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CASE_SUFFIXES = (".yaml", ".yml")
MAX_CASE_BYTES = 8 << 20     # a 40,000-instruction case is about 2.5 MB


class CaseError(ValueError):
    """A malformed case: one clear line naming file, line and what is wrong."""


@dataclass
class Init:
    """What a case sets before it runs: GPRs, ThreadConfig and Config words, L1 bytes, Dest rows."""
    gpr: dict[int, dict[int, int]] = field(default_factory=dict)            # thread -> index -> value
    thread_config: dict[int, dict[int, int]] = field(default_factory=dict)  # thread -> index -> value
    config: dict[int, dict[int, int]] = field(default_factory=dict)         # state -> ADDR32 -> value
    l1: list[tuple[int, bytes]] = field(default_factory=list)               # (addr, data)
    dest: list[tuple[int, list[int]]] = field(default_factory=list)         # (row, 16 raw 16-bit values)


@dataclass
class Observe:
    """What the case observes beyond the always-observed Dest, RWCs, ADCs and GPRs."""
    l1: list[tuple[int, int]] = field(default_factory=list)        # (addr, size in bytes)
    config: dict[int, list[int]] = field(default_factory=dict)     # state -> ADDR32 indices


@dataclass
class Case:
    """One case (docs/case-format.md): each Tensix thread's words and RISC-V actions, its Init and Observe."""
    name: str
    description: str
    threads: dict[int, list[int]]      # Tensix thread -> raw 32-bit Tensix words (not stream form)
    init: Init = field(default_factory=Init)
    observe: Observe = field(default_factory=Observe)
    source: str = "<memory>"
    tags: list[str] = field(default_factory=list)
    # thread -> (index, action) in program order: each RISC-V action runs before Tensix word ``index`` of the
    # thread (after the last when index == len(words)); see golden.riscv
    actions: dict[int, list[tuple[int, RiscvAction]]] = field(default_factory=dict)

    def observed_l1(self) -> list[tuple[int, int]]:
        """L1 regions compared: the explicit ones, else those the case initialised."""
        regions = list(self.observe.l1) or [(a, len(d)) for a, d in self.init.l1]
        return sorted(set(regions))

    def observed_config(self) -> dict[int, list[int]]:
        out: dict[int, set[int]] = {}
        for s, idx in self.observe.config.items():
            out.setdefault(s, set()).update(idx)
        for s, regs in self.init.config.items():
            out.setdefault(s, set()).update(regs)
        return {s: sorted(v) for s, v in sorted(out.items()) if v}

    @property
    def instruction_count(self) -> int:
        return sum(len(ws) for ws in self.threads.values())


def without(case: Case, words: set[tuple[int, int]] = frozenset(), actions: set[tuple[int, int]] = frozenset()
            ) -> Case:
    """``case`` without the Tensix words at (thread, index) ``words`` and the RISC-V actions at (thread, k)
    ``actions``; the actions that stay keep their place between the words that stay."""
    threads = {t: [w for i, w in enumerate(ws) if (t, i) not in words] for t, ws in case.threads.items()}
    acts = {}
    for t, xs in case.actions.items():
        gone = sorted(i for u, i in words if u == t)
        kept = [(pos - sum(1 for i in gone if i < pos), a) for k, (pos, a) in enumerate(xs) if (t, k) not in actions]
        if kept:
            acts[t] = kept
    return dataclasses.replace(case, threads=threads, actions=acts)



# --- identity ---------------------------------------------------------------------------------------

def _regs(table: dict[int, dict[int, int]]) -> dict[str, dict[str, int]]:
    return {str(o): {str(i): v for i, v in sorted(regs.items())} for o, regs in sorted(table.items()) if regs}


def content(case: Case) -> dict:
    """What determines a run and its observation: programs, initial state, observed regions."""
    out = {
        "threads": {str(t): list(ws) for t, ws in sorted(case.threads.items()) if ws},
        "init": {
            "gpr": _regs(case.init.gpr),
            "thread_config": _regs(case.init.thread_config),
            "config": _regs(case.init.config),
            "l1": [[a, bytes(d).hex()] for a, d in sorted(case.init.l1)],
            "dest": [[r, list(v)] for r, v in sorted(case.init.dest)],
        },
        "observe": {
            "l1": [[a, n] for a, n in case.observed_l1()],
            "config": {str(s): idx for s, idx in case.observed_config().items()},
        },
    }
    acts = {str(t): [[pos, a.kind, *_json_args(a)] for pos, a in xs] for t, xs in sorted(case.actions.items()) if xs}
    if acts:    # absent when there are none, so cases without actions keep their hash
        out["actions"] = acts
    return out


def _json_args(a: RiscvAction) -> list:
    return [bytes(x).hex() if isinstance(x, (bytes, bytearray)) else x for x in a.args]


def actions_from_json(table: dict) -> dict[int, list[tuple[int, RiscvAction]]]:
    """The inverse of content()'s "actions" entry."""
    def one(kind: str, args: list) -> RiscvAction:
        if kind == "l1":
            args = [args[0], bytes.fromhex(args[1])]
        return RiscvAction(kind, tuple(args))
    try:
        return {int(t): [(int(x[0]), one(x[1], x[2:])) for x in xs] for t, xs in table.items()}
    except (ValueError, TypeError, IndexError, AttributeError) as e:
        raise CaseError(f"malformed RISC-V actions: {e}") from None


def canonical(case: Case) -> dict:
    """The canonical form: identity plus name, description and tags (which do not enter the hash)."""
    return {"name": case.name, "description": case.description, "tags": sorted(set(case.tags)), **content(case)}


def case_hash(case: Case) -> str:
    """sha256 over the observation-format version and the case's content (not name or comments)."""
    import hashlib      # late for start-up cost: it loads OpenSSL (about 3 CPU-ms), and a golden run hashes no case
    blob = json.dumps({"format": OBSERVATION_FORMAT, **content(case)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
