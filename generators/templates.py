"""The body's multi-word blocks: a REPLAY load and its replays (REPLAY.md), a balanced SFPU flag-stack block
(SFPPUSHC.md, SFPPOPC.md, SFPCOMPC.md) and a MOP expanded from MopCfg words (MOPExpander.md)."""
from __future__ import annotations

from golden import isa
from golden.riscv import RiscvAction
from golden.state import REPLAY_BUFFER

from .constraints import golden_accepts
from .plan import EDGE_P, ThreadPlan


class Templates:
    """generators.program.Builder's blocks (a base class: draw, profile, rules, instruction, one_word and
    current are the Builder's)."""

    def replay_ok(self, plan: ThreadPlan) -> bool:
        return plan.mix.templates.get("replay", 0) > 0 and golden_accepts("REPLAY", self.profile.golden)

    def replay_block(self, plan: ThreadPlan, room: int) -> list[int]:
        """REPLAY load of n instructions (optionally executed while loading), then 1..3 replays of them."""
        d = self.draw
        n = d.integer(1, max(1, min(8, room - 2)))
        run_while_loading = d.integer(0, 1)
        inner = [w for _ in range(n) for w in self.instruction(d.weighted(*zip(*self.current(plan).items())), plan)]
        n = len(inner)
        start = d.integer(0, REPLAY_BUFFER - n)
        load = isa.encode("REPLAY", {"start_idx": start, "len": n, "execute_while_loading": run_while_loading,
                                     "load_mode": 1})
        play = isa.encode("REPLAY", {"start_idx": start, "len": n, "load_mode": 0})
        plan.counts["REPLAY"] += 1
        return [load, *inner] + [play] * d.integer(1, 3)

    def ccstack_ok(self, plan: ThreadPlan) -> bool:
        return plan.mix.templates.get("ccstack", 0) > 0 and all(
            golden_accepts(n, self.profile.golden) for n in ("SFPPUSHC", "SFPPOPC", "SFPSETCC", "SFPCOMPC"))

    def ccstack_block(self, plan: ThreadPlan, room: int, depth: int = 1) -> list[int]:
        """A balanced flag-stack block (SFPPUSHC.md, SFPPOPC.md, SFPCOMPC.md): SFPPUSHC, SFPSETCC narrowing the
        lanes, 1..4 instructions (or, once, a nested block), optionally SFPCOMPC and more, then SFPPOPC. Every
        push has its pop, so the stack never holds more than ``depth`` + 1 entries."""
        d = self.draw
        setcc = isa.encode("SFPSETCC", {"lreg_c": d.integer(0, 7), "instr_mod1": d.choice([0, 2, 4, 6])})
        out = [isa.encode("SFPPUSHC", {}), setcc]
        for _ in range(d.integer(1, max(1, min(4, room - 4)))):
            if depth < 2 and d.boolean(0.2) and room - len(out) > 8:
                out += self.ccstack_block(plan, room - len(out) - 2, depth + 1)
            else:
                out += self.instruction(d.weighted(*zip(*self.current(plan).items())), plan)
        if d.boolean(0.5):
            out.append(isa.encode("SFPCOMPC", {}))
            out += self.instruction(d.weighted(*zip(*self.current(plan).items())), plan)
        out.append(isa.encode("SFPPOPC", {}))
        plan.counts["SFPPUSHC"] += 1
        plan.needs |= self.rules.needs("SFPSETCC")
        return out

    def mop_ok(self, plan: ThreadPlan) -> bool:
        return plan.mix.templates.get("mop", 0) > 0 and all(
            golden_accepts(n, self.profile.golden) for n in ("MOP", "MOP_CFG")) and bool(self.repeatable(plan))

    def repeatable(self, plan: ThreadPlan) -> dict[str, float]:
        """Candidates a MOP may issue up to 32 times: no follow-up words, no ADC Z/W increment (its budget
        counts one issue) and no Dest row addressing (repeated AddrMod steps could run it past row 1023)."""
        def ok(name: str) -> bool:
            spec = self.rules.field_spec(name, plan.mix)
            return (not self.rules.follow_lines(name) and not self.rules.precede(name)
                    and "dest" not in self.rules.needs(name)
                    and all(c.get("role") != "adc_zw_inc" for c in spec.values()))
        return {n: w for n, w in self.current(plan).items() if ok(n)}

    def mop_block(self, plan: ThreadPlan) -> list[int]:
        """MOPExpander.md template 0 (ttsim mop_expander): the RISC-V writes MopCfg words 1..8 (flags: bit 0 B
        instructions, bit 1 A1..A3; B, A0..A3, SkipA, SkipB), then MOP_CFG sets the zmask's top half and MOP runs
        1..32 iterations, each issuing the A instructions (and B) where the zmask bit is 0, the skips where 1."""
        d = self.draw
        names = self.repeatable(plan)
        nop = isa.encode("NOP", {})

        def pick() -> int:
            return self.one_word(d.weighted(list(names), list(names.values())), plan)
        flags = d.integer(0, 3)
        cfg = {i: nop for i in range(2, 9)}
        cfg[1], cfg[3] = flags, pick()
        if flags & 2:
            cfg.update({4: pick(), 5: pick(), 6: pick()})
        if flags & 1:
            cfg[2] = pick()
            cfg[8] = pick() if d.boolean(0.7) else nop
        cfg[7] = pick() if d.boolean(0.7) else nop
        # each zmask half is now and then 0, 1 or all ones (the field-value classes of MOP's and MOP_CFG's halves)
        lo, hi = ((d.choice((0, 1, 0xFFFF)) if d.boolean(EDGE_P) else d.bits(16)) for _ in range(2))
        mask = hi << 16 | lo
        at = len(plan.body)
        plan.actions += [(at, RiscvAction("mop_cfg", (i, v))) for i, v in sorted(cfg.items())]
        plan.counts["MOP"] += 1
        mop = {"mop_type": 0, "loop_count": d.integer(0, 31), "zmask_lo16_or_loop_count": mask & 0xFFFF}
        return [isa.encode("MOP_CFG", {"zmask_hi16": mask >> 16}), isa.encode("MOP", mop)]
