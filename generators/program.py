"""Whole-program case builder: one ``build_case(draw, profile)`` for Hypothesis and the bulk generator.

A case is built thread by thread: a body of instructions drawn by the profile's weights (fields from the
ISA table, narrowed by configs/constraints.yaml), then explicit set-up for everything the body depends on
(counters reset, AddrMod sections and CFG_STATE_ID written, GPRs / config words / Dest rows given initial
values), so the result never depends on power-on state. Shared state (config, Dest, Src banks) belongs to
one thread per case, so the outcome does not depend on how the device interleaves threads.
"""
from __future__ import annotations

import random

from golden import isa
from golden.riscv import RiscvAction
from golden.registers import config_field, fields as register_fields, thread_config_field
from golden.state import THREADS
from tensix_diff.case import Case, Init, Observe, case_hash, validate_shape

from .constraints import Rules, available, golden_accepts, matches, rules, setc16_setup
from .draw import Draw
from .plan import EDGE_P, ThreadPlan
from .profiles import Profile, load_profile
from .templates import Templates
from .values import dest_cell


GPR_SPECIAL = (0, 1, 2, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF)
SETUP_ORDER = ("rwc", "adc", "srcbanks", "lregs")   # prologue order after the ThreadConfig writes


class NoInstructions(RuntimeError):
    """The profile has nothing it can generate right now (nothing modelled, or all excluded)."""


def field_max(ins: isa.Instruction, f: isa.Field) -> int:
    """Largest value of a field that ttsim decodes (isa.yaml ttsim_bits narrows some fields)."""
    for name, hi, lo in ins.ttsim_bits:
        if name == f.name:
            if lo != f.lo:
                raise ValueError(f"{ins.name}.{f.name}: ttsim_bits do not start at the field's low bit")
            return (1 << (hi - lo + 1)) - 1
    return (1 << f.width) - 1


def defined_mask(space: str, index: int) -> int:
    """Bits of a Config / ThreadConfig word that registers.yaml defines."""
    m = 0
    for rf in register_fields(space).values():
        if rf.index == index:
            m |= rf.mask
    return m


def apply_fixups(values: dict[str, int], fixups: list[dict]) -> None:
    for fx in fixups:
        if all(matches(values[k], c) for k, c in fx["if"].items()):
            for k, v in (fx.get("or") or {}).items():
                values[k] |= v
            for k, v in (fx.get("and") or {}).items():
                values[k] &= v
            for k, v in (fx.get("set") or {}).items():
                values[k] = v


class Builder(Templates):
    """Draws one case: thread plans, bodies (instructions and Templates' blocks), then each thread's set-up."""

    def __init__(self, draw: Draw, profile: Profile):
        self.draw = draw
        self.profile = profile
        self.rules: Rules = rules()
        self.obs = self.rules.observability(profile.observability)
        self.owners: dict[str, int] = {}
        self.mixes = {name: (profile if name == "self" else load_profile(name)) for name in profile.thread_mix}
        self.available = {name: available(mix) for name, mix in self.mixes.items()}
        self.setc16 = setc16_setup(profile)
        self.built: list[ThreadPlan] = []

    # --- small draws ------------------------------------------------------------------------------
    def ranged(self, lo: int, hi: int, align: int = 1) -> int:
        k0, k1 = -(-lo // align), hi // align
        if k1 <= k0:
            return max(k0, 0) * align
        if self.draw.boolean(EDGE_P):      # 1 too where the range starts at 0: the "one" class of coverage
            return self.draw.choice((k0, k1, 1) if align == 1 and k0 == 0 and k1 > 1 else (k0, k1)) * align
        return self.draw.integer(k0, k1) * align

    def gpr_value(self, mix: Profile) -> int:
        if self.draw.boolean(mix.gpr_special):
            return self.draw.choice(GPR_SPECIAL)
        return self.draw.bits(32)

    # --- eligibility --------------------------------------------------------------------------------
    def adc_allowed(self, t: int) -> int:
        bits = self.rules.adc_mask_bits
        return sum(bits[u] for u in self.obs["adc_units"][t])

    def eligible(self, name: str, t: int, claim_check: bool = True) -> bool:
        if self.uses_adc(name) and not self.adc_allowed(t):
            return False
        if claim_check:
            if any(self.owners.get(s, t) != t for s in self.shared_needs(name)):
                return False
        return True

    def uses_adc(self, name: str) -> bool:
        key = ("uses_adc", name)
        if key not in self.rules.memo:
            self.rules.memo[key] = any(c.get("role") == "adc_mask" for c in self.rules.field_spec(name).values())
        return self.rules.memo[key]

    def shared_needs(self, name: str) -> frozenset[str]:
        key = ("shared", name)
        if key not in self.rules.memo:
            self.rules.memo[key] = self.rules.needs(name) & frozenset(self.rules.shared_state)
        return self.rules.memo[key]

    def candidates(self, mix_name: str, t: int, claim_check: bool = True) -> dict[str, float]:
        return {n: w for n, w in self.available[mix_name].items() if self.eligible(n, t, claim_check)}

    # --- one instruction ------------------------------------------------------------------------------
    def plain_value(self, ins: isa.Instruction, f: isa.Field, c: dict) -> int:
        fmax = field_max(ins, f)
        if "values" in c:
            return self.draw.choice([v for v in c["values"] if v <= fmax])
        if "one_hot" in c:
            return 1 << self.draw.integer(0, min(c["one_hot"], fmax.bit_length()) - 1)
        lo = c.get("min", 1 if c.get("nonzero") else 0)
        return self.ranged(lo, min(c.get("max", fmax), fmax), c.get("align", 1))

    def span_width(self, c: dict, values: dict[str, int]) -> int:
        span = c.get("span")
        return span["width"] if span and values.get(span["field"]) else 1

    def role_value(self, ins: isa.Instruction, f: isa.Field, c: dict, values: dict[str, int], plan: ThreadPlan) -> int:
        role, fmax, d = c["role"], field_max(ins, f), self.draw
        if role == "gpr":
            width = self.span_width(c, values)
            v = self.ranged(0, min(63, c.get("max", fmax), fmax) - (width - 1), width)
            plan.gprs.update(range(v, v + width))
            return v
        if role == "gpr_half":
            v = self.ranged(0, min(127, fmax))
            plan.gprs.add(v >> 1)
            return v
        if role == "config":
            width = self.span_width(c, values)
            regs = set(self.rules.sets["config_rw"])
            bases = [i for i in sorted(regs) if i % width == 0 and i <= fmax and all(i + k in regs for k in range(width))]
            v = d.choice(bases)
            plan.config.update(range(v, v + width))
            plan.role_config.update(range(v, v + width))
            return v
        if role == "adc_mask":
            allowed = self.adc_allowed(plan.thread)
            return d.choice([m for m in range(1, 8) if not m & ~allowed])
        if role == "addr_mode":
            v = d.choice([s for s in plan.mix.sections if s <= fmax])
            plan.sections.add(v)
            return v
        if role == "setc16_reg":
            return d.choice(self.rules.sets["setc16_addrmod"])
        if role == "setc16_value":
            return self.addrmod_word(values["setc16_reg"], plan.mix)
        if role == "adc_zw_inc":
            room = (1 << self.obs["adc_zw_bits"]) - 1 - self.rules.raw["adc_zw_set_max"] - plan.zw_used
            return self.ranged(0, max(0, min(fmax, room)))
        raise ValueError(f"unknown role {role}")

    def instruction(self, name: str, plan: ThreadPlan) -> list[int]:
        """The instruction's word between any words constraints.yaml says must precede and follow it (e.g. NOPs)."""
        word, values = self.one_word(name, plan, with_values=True)
        return ([self.assemble(line) for line in self.rules.precede(name)] + [word]
                + [self.assemble(line) for line in self.rules.follow_lines(name, values)])

    def one_word(self, name: str, plan: ThreadPlan, with_values: bool = False):
        ins = isa.lookup(name)
        spec = self.rules.field_spec(name, plan.mix)
        values: dict[str, int] = {}
        for f in ins.fields:
            if spec.get(f.name, {}).get("role") is None:
                values[f.name] = self.plain_value(ins, f, spec.get(f.name, {}))
        apply_fixups(values, self.rules.fixups(name))
        for f in ins.fields:
            if spec.get(f.name, {}).get("role") is not None:
                values[f.name] = self.role_value(ins, f, spec[f.name], values, plan)
        plan.zw_used += max((values[k] for k, c in spec.items() if c.get("role") == "adc_zw_inc"), default=0)
        plan.config.update(self.rules.config_words(name))
        needs = self.rules.needs(name)
        plan.needs |= needs
        for s in self.shared_needs(name):
            self.owners.setdefault(s, plan.thread)
        plan.counts[name] += 1
        word = isa.encode(name, values)
        return (word, values) if with_values else word

    # --- AddrMod sections ------------------------------------------------------------------------------
    def addrmod_word(self, index: int, mix: Profile) -> int:
        """A value for one AddrMod AB or DST ThreadConfig word, inside what ttsim and golden accept."""
        regs = sorted((rf for rf in register_fields("thread_config").values() if rf.index == index),
                      key=lambda rf: rf.shift)
        kind = "ab" if regs[0].name.startswith("ADDR_MOD_AB_") else "dst"
        probs = self.rules.addrmod[kind]
        values: dict[str, int] = {}
        for rf in regs:
            suffix = rf.name.rsplit("_", 1)[1]
            if suffix in mix.addrmod_fixed:
                values[suffix] = mix.addrmod_fixed[suffix]
            elif suffix in probs:
                values[suffix] = int(self.draw.boolean(probs[suffix]))
            else:
                values[suffix] = self.ranged(0, min((1 << rf.size) - 1, mix.addrmod_max.get(suffix, 1 << rf.size)),
                                             mix.addrmod_align.get(suffix, 1))
        apply_fixups(values, [fx for fx in self.rules.addrmod.get("fixups", [])
                              if all(k in values for k in fx["if"])])
        word = 0
        for rf in regs:
            word = rf.put(word, values[rf.name.rsplit("_", 1)[1]])
        return word

    def section_words(self, section: int, mix: Profile, noop: bool = False) -> dict[int, int]:
        """AB, DST and BIAS words of one AddrMod section: drawn, or all zero (changes nothing)."""
        ab = thread_config_field(f"ADDR_MOD_AB_SEC{section}_SrcAIncr").index
        dst = thread_config_field(f"ADDR_MOD_DST_SEC{section}_DestIncr").index
        return {ab: 0 if noop else self.addrmod_word(ab, mix), dst: 0 if noop else self.addrmod_word(dst, mix),
                thread_config_field(f"ADDR_MOD_BIAS_SEC{section}_BiasIncr").index: 0}

    # --- bodies ----------------------------------------------------------------------------------------
    def current(self, plan: ThreadPlan) -> dict[str, float]:
        names = {n: w for n, w in plan.candidates.items() if self.eligible(n, plan.thread)}
        if not names:  # every candidate needs state another thread owns: fall back to a no-op
            names = {"NOP": 1.0} if golden_accepts("NOP", self.profile.golden) else plan.candidates
        return names

    def body(self, plan: ThreadPlan) -> None:
        d = self.draw
        length = plan.mix.length[1]
        for _ in d.repeat(*plan.mix.length):
            if len(plan.body) >= length:   # replay blocks and follow-up NOPs count as several words
                break
            names = self.current(plan)
            items, weights = list(names), list(names.values())
            room = length - len(plan.body)
            if self.replay_ok(plan) and room >= 3:
                items.append("@replay")
                weights.append(plan.mix.templates["replay"])
            if self.ccstack_ok(plan) and room >= 6:
                items.append("@ccstack")
                weights.append(plan.mix.templates["ccstack"])
            if self.mop_ok(plan) and room >= 2:
                items.append("@mop")
                weights.append(plan.mix.templates["mop"])
            pick = d.weighted(items, weights)
            if pick == "@mop":
                plan.body.extend(self.mop_block(plan))
            elif pick == "@replay":
                plan.body.extend(self.replay_block(plan, room))
            elif pick == "@ccstack":
                plan.body.extend(self.ccstack_block(plan, room))
            else:
                plan.body.extend(self.instruction(pick, plan))

    # --- set-up ----------------------------------------------------------------------------------------
    def assemble(self, line: str, **subst) -> int:
        return isa.assemble_line(line.format(**subst))

    @staticmethod
    def format_fields(a: int, b: int, wide: bool) -> dict[str, int]:
        """Config fields for SrcA format a, SrcB format b (implied through the unpackers' output formats,
        blackhole-deltas #17, and in ALU_FORMAT_SPEC) and a 32-bit (FP32) or 16-bit Dst."""
        return {"THCON_SEC0_REG2_Out_data_format": a, "THCON_SEC1_REG2_Out_data_format": b,
                "ALU_FORMAT_SPEC_REG0_SrcA": a, "ALU_FORMAT_SPEC_REG1_SrcB": b,
                "ALU_FORMAT_SPEC_REG2_Dstacc": 0 if wide else a, "ALU_ACC_CTRL_Fp32_enabled": int(wide)}

    def thread_setup(self, plan: ThreadPlan, init: Init) -> tuple[list[int], list[int]]:
        """Prologue and epilogue words for one thread; fills init with what the body depends on."""
        d, t, r = self.draw, plan.thread, self.rules
        tc: dict[int, int] = {}
        if "config" in plan.needs:
            state = d.weighted(*zip(*sorted(self.profile.config_state.items())))
            tc[thread_config_field("CFG_STATE_ID_StateID").index] = state
            plan.config_state = state
            words = init.config.setdefault(state, {})
            for idx in sorted(plan.config):
                mask = defined_mask("config", idx)
                words[idx] = d.choice((0, mask)) if d.boolean(0.1) else d.bits(32) & mask
            if "srcbanks" in plan.needs:
                fields = dict(r.setups["srcbanks"].get("config_fields", {}))
                fmt = self.profile.formats
                if fmt is not None:      # this case's operand formats, Dst width and fidelity phase
                    a, b, bits = d.weighted(*zip(*sorted(fmt.pairs.items())))
                    wide = d.boolean(fmt.fp32_dest) if not bits else bits == 32
                    fields.update(self.format_fields(a, b, wide))
                    base = d.choice(fmt.fidelity)
                    if base:      # (ttsim v1.10.0 refuses a SETC16 of FIDELITY_BASE_Phase)
                        phase = thread_config_field("FIDELITY_BASE_Phase")
                        tc[phase.index] = phase.put(tc.get(phase.index, 0), base)
                for name, v in fields.items():
                    rf = config_field(name)
                    words[rf.index] = rf.put(words.get(rf.index, 0), v)
        if "srcbanks" in plan.needs:
            for name, v in r.setups["srcbanks"].get("thread_config_fields", {}).items():
                rf = thread_config_field(name)
                tc[rf.index] = rf.put(tc.get(rf.index, 0), v)
            if "fill_section" in r.setups["srcbanks"]:
                tc.update(self.section_words(r.setups["srcbanks"]["fill_section"], plan.mix, noop=True))
        if "addrmod" in plan.needs:
            # a body may name the srcbanks fill section too: it stays the no-op section the fill needs
            fill = r.setups["srcbanks"].get("fill_section") if "srcbanks" in plan.needs else None
            for s in sorted(plan.sections):
                if s != fill:
                    tc.update(self.section_words(s, plan.mix))
        if "gpr" in plan.needs and plan.gprs:
            init.gpr[t] = {i: self.gpr_value(plan.mix) for i in sorted(plan.gprs)}
        if "dest" in plan.needs:
            lo, hi = plan.mix.dest_rows
            rng = random.Random(d.bits(32))  # bulk data from one draw keeps Hypothesis examples small
            init.dest = [(row, [dest_cell(rng, plan.mix.dest_edges) for _ in range(16)]) for row in range(lo, hi)]
        prologue: list[int] = []
        if tc:
            if self.setc16:
                prologue += [isa.encode("SETC16", {"setc16_reg": i, "setc16_value": v}) for i, v in sorted(tc.items())]
            else:
                init.thread_config[t] = dict(sorted(tc.items()))
        for kind in SETUP_ORDER:
            if kind not in plan.needs:
                continue
            s = r.setups[kind]
            prologue += [self.assemble(line, adc_mask=self.adc_allowed(t)) for line in s.get("prologue", [])]
            each = s.get("prologue_each")
            if each:
                prologue += [self.assemble(each["line"], i=i, imm16=d.bits(16)) for i in range(each["count"])]
            fill = s.get("fill_each")
            if fill:
                base = plan.mix.dest_rows[0]
                prologue += [self.assemble(line.replace("{4i}", str(4 * i)), section=s["fill_section"],
                                           a=base + 4 * i, b=base + 64 + 4 * i)
                             for i in range(fill["count"]) for line in fill["lines"]]
        epilogue = [self.assemble(line) for kind in SETUP_ORDER if kind in plan.needs
                    for line in r.setups[kind].get("epilogue", [])]
        return prologue, epilogue

    # --- the case --------------------------------------------------------------------------------------
    def plans(self) -> list[ThreadPlan]:
        d, p = self.draw, self.profile
        usable = [t for t in range(THREADS) if any(self.candidates(m, t, False) for m in self.mixes)]
        if not usable:
            raise NoInstructions(f"profile '{p.name}': no instruction can be generated now "
                                 f"(see `tensix-diff fuzz --profile {p.name} --list`)")
        count = min(d.weighted(*zip(*sorted(p.threads.items()))), len(usable))
        chosen = sorted(usable.pop(d.integer(0, len(usable) - 1)) for _ in range(count))
        plans = []
        for t in chosen:
            mixes = {m: w for m, w in p.thread_mix.items() if self.candidates(m, t, False)}
            mix = d.weighted(list(mixes), list(mixes.values()))
            plans.append(ThreadPlan(t, self.mixes[mix], self.candidates(mix, t, False)))
        return plans

    def build(self, name: str | None = None) -> Case:
        init = Init()
        programs: dict[int, list[int]] = {}
        actions: dict[int, list[tuple[int, RiscvAction]]] = {}
        plans = self.plans()
        self.built = plans            # kept for inspection (tests, coverage of the mix)
        for plan in plans:
            self.body(plan)
        for plan in plans:
            prologue, epilogue = self.thread_setup(plan, init)
            programs[plan.thread] = prologue + plan.body + epilogue
            if plan.actions:
                actions[plan.thread] = [(len(prologue) + i, a) for i, a in plan.actions]
        observe = Observe(config={p.config_state: sorted(p.role_config) for p in plans
                                  if p.role_config and p.config_state is not None})
        case = Case(name=name or "generated", description=self.describe(plans), threads=programs, init=init,
                    observe=observe, tags=["generated", f"profile:{self.profile.name}"], actions=actions)
        if name is None:
            case.name = f"gen-{self.profile.name}-{case_hash(case)[:12]}"
        validate_shape(case)
        return case

    def describe(self, plans: list[ThreadPlan]) -> str:
        parts = []
        for plan in plans:
            mix = ", ".join(f"{n} x{k}" for n, k in plan.counts.most_common(6))
            parts.append(f"T{plan.thread} ({plan.mix.name}, {len(plan.body)} body words: {mix})")
        return (f"Generated by profile '{self.profile.name}' ({self.profile.description}); probes "
                + "; ".join(parts) + ". Explicit set-up precedes each body.")


def build_case(draw: Draw, profile: Profile | str = "default", name: str | None = None) -> Case:
    """One whole-program case drawn from ``draw`` by the profile's distribution."""
    if isinstance(profile, str):
        profile = load_profile(profile)
    return Builder(draw, profile).build(name)
