"""configs/constraints.yaml: what each instruction's fields may hold, what set-up it needs, and which
instructions a profile may use right now (read from golden's ISA table and handlers at run time)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from golden import isa, yaml_tables
from golden.handlers import load_all

from .profiles import CONFIGS, Profile

CONSTRAINTS_PATH = CONFIGS / "constraints.yaml"
ROLES = ("gpr", "gpr_half", "config", "adc_mask", "addr_mode", "setc16_reg", "setc16_value", "adc_zw_inc")
THREAD_CONFIG_KINDS = {"addrmod", "config", "srcbanks"}   # set-ups that write ThreadConfig
FIELD_KEYS = {"values", "min", "max", "align", "nonzero", "one_hot", "role", "span", "ttsim"}


class ConstraintError(ValueError):
    """constraints.yaml does not fit the ISA table or itself (one line)."""


def matches(value: int, cond: dict) -> bool:
    """A fixup's or follow-up's field condition: {any: mask} (some bit set) or {in: [values]}."""
    if "any" in cond:
        return bool(value & cond["any"])
    return value in cond["in"]


@dataclass(frozen=True)
class Rules:
    raw: dict
    memo: dict = field(default_factory=dict, compare=False, repr=False)   # per-instruction derived facts

    @property
    def sets(self) -> dict[str, list[int]]:
        return self.raw["sets"]

    def observability(self, kind: str) -> dict:
        return self.raw["observability"][kind]

    @property
    def adc_mask_bits(self) -> dict[str, int]:
        return self.raw["adc_mask_bits"]

    @property
    def shared_state(self) -> tuple[str, ...]:
        return tuple(self.raw["shared_state"])

    @property
    def setups(self) -> dict[str, dict]:
        return self.raw["setups"]

    @property
    def addrmod(self) -> dict:
        return self.raw["addrmod"]

    def entry(self, name: str) -> dict | None:
        return self.raw["instructions"].get(name)

    def excluded(self, name: str) -> str | None:
        e = self.entry(name)
        return None if e is None else e.get("exclude")

    def needs(self, name: str) -> frozenset[str]:
        """Setup kinds an instruction depends on, with the setups' own needs, transitively."""
        key = ("needs", name)
        if key not in self.memo:
            self.memo[key] = frozenset(self._needs(name))
        return self.memo[key]

    def _needs(self, name: str) -> set[str]:
        todo, out = list((self.entry(name) or {}).get("needs", [])), set()
        while todo:
            kind = todo.pop()
            if kind not in out:
                out.add(kind)
                todo.extend(self.setups[kind].get("needs", []))
        return out

    def field_spec(self, name: str, profile: Profile | None = None) -> dict[str, dict]:
        """Field constraints for one instruction, with the profile's overrides merged over them."""
        spec = {k: dict(v) for k, v in ((self.entry(name) or {}).get("fields") or {}).items()}
        if profile is not None:
            for fname, c in profile.overrides.get(name, {}).items():
                spec.setdefault(fname, {}).update(c)
        return spec

    def config_words(self, name: str) -> list[int]:
        """Config words an instruction reads beyond its fields (they get initial values, like named ones)."""
        return list((self.entry(name) or {}).get("config_words") or [])

    def follow(self, name: str) -> list[str]:
        return list((self.entry(name) or {}).get("follow") or [])

    def follow_lines(self, name: str, values: dict[str, int] | None = None) -> list[str]:
        """The lines that follow an instruction: ``follow``, then each ``follow_if`` block ({if: {field: cond},
        lines: [...]}) whose condition the drawn field ``values`` meet (``values`` None: every block)."""
        return self.follow(name) + [line for fx in (self.entry(name) or {}).get("follow_if") or []
                                    if values is None or all(matches(values[k], c) for k, c in fx["if"].items())
                                    for line in fx["lines"]]

    def precede(self, name: str) -> list[str]:
        return list((self.entry(name) or {}).get("precede") or [])

    def fixups(self, name: str) -> list[dict]:
        return list((self.entry(name) or {}).get("fixups") or [])

    def setup_mnemonics(self, kind: str) -> set[str]:
        s = self.setups[kind]
        lines = list(s.get("prologue", [])) + list(s.get("epilogue", []))
        if "prologue_each" in s:
            lines.append(s["prologue_each"]["line"])
        lines += (s.get("fill_each") or {}).get("lines", [])
        return {line.split()[0] for line in lines}


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ConstraintError(f"{CONSTRAINTS_PATH.name}: {msg}")


def _validate(raw: dict) -> None:
    for key in ("sets", "observability", "adc_mask_bits", "shared_state", "addrmod", "setups", "instructions"):
        _check(key in raw, f"missing '{key}'")
    table = isa.table()
    for name, e in raw["instructions"].items():
        _check(name in table, f"instructions: '{name}' is not in golden/isa.yaml")
        e = e or {}
        raw["instructions"][name] = e
        _check(set(e) <= {"needs", "fields", "fixups", "exclude", "precede", "follow", "follow_if",
                                 "config_words"},
               f"{name}: unknown keys {sorted(set(e))}")
        for kind in e.get("needs", []):
            _check(kind in raw["setups"], f"{name}: needs unknown setup '{kind}'")
        names = {f.name for f in table[name].fields}
        for fname, c in (e.get("fields") or {}).items():
            _check(fname in names, f"{name}: no field '{fname}' (fields: {', '.join(sorted(names))})")
            _check(set(c) <= FIELD_KEYS, f"{name}.{fname}: unknown keys {sorted(set(c) - FIELD_KEYS)}")
            _check(c.get("role") in (None, *ROLES), f"{name}.{fname}: unknown role {c.get('role')!r}")
        for fx in e.get("fixups") or []:
            for part in ("if", "or", "and", "set"):
                for fname in (fx.get(part) or {}):
                    _check(fname in names, f"{name} fixup: no field '{fname}'")
        for fx in e.get("follow_if") or []:
            _check(set(fx) == {"if", "lines"}, f"{name} follow_if: needs exactly 'if' and 'lines'")
            for fname in fx["if"]:
                _check(fname in names, f"{name} follow_if: no field '{fname}'")
    for kind, s in raw["setups"].items():
        for line in list(s.get("prologue", [])) + list(s.get("epilogue", [])):
            _check(line.split()[0] in table, f"setups.{kind}: unknown instruction in '{line}'")
    for name, e in raw["instructions"].items():
        for key in ("precede", "follow", "follow_if"):
            lines = [ln for fx in e.get(key) or [] for ln in fx["lines"]] if key == "follow_if" else e.get(key) or []
            for line in lines:
                _check(line.split()[0] in table, f"{name}: unknown instruction in {key} '{line}'")


@cache
def rules() -> Rules:
    raw = yaml_tables.load(CONSTRAINTS_PATH)
    _validate(raw)
    return Rules(raw)


def golden_accepts(name: str, statuses: tuple[str, ...]) -> bool:
    """Whether golden's status for an instruction, as of now, is one the profile accepts: isa.yaml's
    `golden:` (modelled / effects / absent, a handler required for the first two), or the pseudo-status
    `handler`: golden has semantics registered for it whatever isa.yaml says yet."""
    ins = isa.table()[name]
    if "handler" in statuses and name in load_all():
        return True
    if ins.golden not in statuses:
        return False
    return ins.golden == "absent" or name in load_all()


def unavailable_reason(name: str, profile: Profile) -> str | None:
    """Why an instruction of the profile's mix cannot be generated now, or None if it can."""
    r = rules()
    ins = isa.table()[name]
    if ins.ttsim_unsupported:
        return "ttsim refuses it (isa.yaml ttsim: unsupported)"
    if r.entry(name) is None:
        return "no entry in configs/constraints.yaml"
    if r.excluded(name):
        return f"excluded: {r.excluded(name)}"
    if not golden_accepts(name, profile.golden):
        return f"golden status '{ins.golden}' (profile accepts {', '.join(profile.golden)})"
    for key, lines in (("preceded", r.precede(name)), ("followed", r.follow_lines(name))):
        for line in lines:
            if not golden_accepts(line.split()[0], profile.golden):
                return f"must be {key} by {line.split()[0]}, which golden does not model yet"
    for kind in sorted(r.needs(name)):
        for m in sorted(r.setup_mnemonics(kind)):
            if not golden_accepts(m, profile.golden) or isa.table()[m].ttsim_unsupported:
                return f"needs setup '{kind}', whose {m} golden does not model yet"
    if (r.needs(name) & THREAD_CONFIG_KINDS and profile.thread_config_setup == "setc16"
            and not golden_accepts("SETC16", profile.golden)):
        return "needs ThreadConfig set with SETC16, which golden does not model yet"
    return None


def setc16_setup(profile: Profile) -> bool:
    """Whether ThreadConfig set-up is written as a SETC16 prologue (else init.thread_config)."""
    if profile.thread_config_setup == "auto":
        return golden_accepts("SETC16", profile.golden)
    return profile.thread_config_setup == "setc16"


_available: dict[tuple, dict[str, float]] = {}


def available(profile: Profile) -> dict[str, float]:
    """The profile's weights restricted to instructions that can be generated now (stable order).
    Golden's statuses are read once per process (isa.table() is cached too)."""
    key = (profile.name, profile.golden, profile.thread_config_setup, tuple(profile.weights.items()))
    if key not in _available:
        _available[key] = {n: w for n, w in profile.weights.items()
                           if w > 0 and unavailable_reason(n, profile) is None}
    return dict(_available[key])


def availability_report(profile: Profile) -> dict[str, str]:
    """Every instruction of the profile's mix: 'ok' or why it is skipped."""
    return {n: unavailable_reason(n, profile) or "ok" for n in profile.weights}
