"""Writing a case file in the layout of docs/case-format.md (the one the fast reader reads)."""
from __future__ import annotations

import json

from golden import isa, riscv
from golden.riscv import RiscvAction

from .model import Case


def _instruction_text(word: int) -> str:
    try:
        return isa.disassemble(word)
    except isa.IsaError:
        return f".word {word:#010x}"


def action_text(a: RiscvAction) -> str:
    """A RISC-V action as the case file writes it (YAML flow mapping)."""
    f = a.fields
    if a.kind == "cfg":
        mask = "" if f.mask is None else f", mask: {f.mask:#x}"
        return f"{{cfg: {{index: {f.index}, value: {f.value:#x}{mask}}}}}"
    if a.kind in ("mop_cfg", "gpr"):
        return f"{{{a.kind}: {{index: {f.index}, value: {f.value:#x}}}}}"
    if a.kind == "l1":
        return f'{{l1: {{addr: {f.addr:#x}, hex: "{bytes(f.data).hex()}"}}}}'
    if a.kind in ("sem_post", "sem_get"):
        return f"{{{a.kind}: {f.sem}}}"
    if a.kind == "feature_disable":
        return f"{{feature_disable: {f.value:#x}}}"
    if a.kind == "sem_wait":
        return f'{{sem_wait: {{sem: {f.sem}, until: "{f.op} {f.value}"}}}}'
    if a.kind == "mailbox_write":
        return f"{{mailbox_write: {{to: {f.to}, value: {f.value:#x}}}}}"
    return f"{{mailbox_read: {{from: {getattr(f, 'from')}, gpr: {f.gpr}}}}}"


def dump_case(case: Case) -> str:
    """Case YAML in the contract's layout; ``parse_case(dump_case(c))`` has the same canonical form."""
    q = json.dumps  # a JSON string is a valid YAML double-quoted scalar
    out = [f"name: {q(case.name)}", f"description: {q(case.description)}"]
    if case.tags:
        out.append(f"tags: [{', '.join(q(t) for t in case.tags)}]")
    out.append("threads:" if any(case.threads.values()) or any(case.actions.values()) else "threads: {}")
    for t in sorted(set(case.threads) | set(case.actions)):
        words, acts = case.threads.get(t, []), case.actions.get(t, [])
        if words or acts:
            out.append(f"  {t}:")
            for _, item in riscv.interleave(words, acts):
                text = action_text(item) if isinstance(item, RiscvAction) else _instruction_text(item)
                out.append(f"    - {text}")
    init = case.init
    body: list[str] = []
    for key in ("gpr", "thread_config", "config"):
        table = {o: r for o, r in getattr(init, key).items() if r}
        if table:
            body.append(f"  {key}:")
            for o, regs in sorted(table.items()):
                body.append(f"    {o}: {{{', '.join(f'{i}: {v:#x}' for i, v in sorted(regs.items()))}}}")
    if init.l1:
        body.append("  l1:")
        body.extend(f'    - {{addr: {a:#x}, hex: "{bytes(d).hex()}"}}' for a, d in sorted(init.l1))
    if init.dest:
        body.append("  dest:")
        body.extend(f"    - {{row: {r}, values: [{', '.join(f'{v:#x}' for v in vals)}]}}"
                    for r, vals in sorted(init.dest))
    if body:
        out += ["init:"] + body
    obs: list[str] = []
    if case.observe.l1:
        obs.append("  l1:")
        obs.extend(f"    - {{addr: {a:#x}, size: {n}}}" for a, n in sorted(set(case.observe.l1)))
    cfg = {s: sorted(set(i)) for s, i in case.observe.config.items() if i}
    if cfg:
        obs.append("  config:")
        obs.extend(f"    {s}: [{', '.join(str(i) for i in idx)}]" for s, idx in sorted(cfg.items()))
    if obs:
        out += ["observe:"] + obs
    return "\n".join(out) + "\n"
