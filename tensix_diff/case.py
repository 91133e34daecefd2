"""Case files (../shared/contract.md): per-thread programs plus explicit initial state.

A case is data only; every backend runs the same ``Case`` object. ``load_case`` reads a YAML file (the layout
``dump_case`` writes with a line reader, anything else through libyaml's nodes) and reports every malformed
input as one ``CaseError`` line ``FILE:LINE: what is wrong``. ``canonical`` and ``case_hash`` identify a case
by what it runs and observes, independent of formatting and comments.
"""
from __future__ import annotations

import hashlib
import json
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from golden import isa
from golden import riscv
from golden.registers import CONFIG_STATES, CONFIG_WORDS, thread_config_words
from golden.riscv import RiscvAction
from golden.state import COLS, DEST_ROWS, GPRS, L1_SIZE, THREADS

from . import raw_words

# Part of every case hash: bump it when the observed-state format changes, so old recordings go stale.
OBSERVATION_FORMAT = "tensix-diff-observation/1"
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CASE_SUFFIXES = (".yaml", ".yml")


class CaseError(ValueError):
    """A malformed case: one clear line naming file, line and what is wrong."""


@dataclass
class Init:
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


# --- value checks shared by the file loader (which adds file:line) and validate_shape ---------------

class _Bad(Exception):
    """A check failed; the loader prefixes the location."""


def _one_line(msg: str) -> str:
    return re.sub(r"\s*\n\s*", " ", msg)


def _in_range(value: Any, lo: int, hi: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Bad(f"{what} must be an integer, not {value!r}")
    if not lo <= value <= hi:
        as_hex = any(w in what for w in ("value", "addr", "size", "instruction"))
        raise _Bad(f"{what} {value:#x} is out of range {lo:#x}..{hi:#x}" if as_hex
                   else f"{what} {value} is not in {lo}..{hi}")
    return value


def _word(value: Any, what: str) -> int:
    _in_range(value, 0, 0xFFFFFFFF, what)
    try:
        isa.decode(value)
    except isa.IsaError as e:
        raise _Bad(f"{what}: {e}") from None
    return value


def _l1_region(addr: Any, size: Any, what: str) -> tuple[int, int]:
    _in_range(addr, 0, L1_SIZE - 1, f"{what} addr")
    _in_range(size, 1, L1_SIZE, f"{what} size")
    if addr + size > L1_SIZE:
        raise _Bad(f"{what} [{addr:#x}, {addr + size:#x}) runs past the end of L1 ({L1_SIZE:#x})")
    return addr, size


def _no_overlap(regions: list[tuple[int, int, Any]], what: str) -> None:
    """regions: (addr, size, tag). Raises on the first overlap, naming both tags."""
    regions = sorted(regions, key=lambda r: (r[0], r[1]))
    for (a0, n0, t0), (a1, n1, t1) in zip(regions, regions[1:]):
        if a1 < a0 + n0:
            raise _Bad(f"{what} [{a1:#x}, {a1 + n1:#x}){t1} overlaps [{a0:#x}, {a0 + n0:#x}){t0}")


def _dest_values(vals: Any, what: str) -> list[int]:
    if not isinstance(vals, list) or len(vals) != COLS:
        raise _Bad(f"{what} needs a list of {COLS} values")
    if all(type(v) is int and 0 <= v <= 0xFFFF for v in vals):     # the usual case, without naming each value
        return list(vals)
    return [_in_range(v, 0, 0xFFFF, f"{what}[{i}]") for i, v in enumerate(vals)]


def _check_case(case: Case) -> None:
    if not isinstance(case.name, str) or not NAME_RE.match(case.name):
        raise _Bad(f"name {case.name!r} must match [a-z0-9-] (lower case, digits, '-')")
    for t, words in case.threads.items():
        _in_range(t, 0, THREADS - 1, "thread")
        for i, w in enumerate(words):
            _word(w, f"thread {t} instruction {i}")
    for t, acts in case.actions.items():
        _in_range(t, 0, THREADS - 1, "thread")
        last = 0
        for k, (pos, a) in enumerate(acts):
            if not isinstance(a, RiscvAction) or not last <= pos <= len(case.threads.get(t, [])):
                raise _Bad(f"thread {t} action {k} is not a RISC-V action in program order")
            last = pos
            try:
                riscv.check(a, t)
            except ValueError as e:
                raise _Bad(f"thread {t} action {k}: {e}") from None
    _check_state(case.init, case.observe)


def _check_state(init: Init, observe: Observe) -> None:
    """The initial state and the observed regions of _check_case."""
    for t, regs in init.gpr.items():
        _in_range(t, 0, THREADS - 1, "init.gpr thread")
        for i, v in regs.items():
            _in_range(i, 0, GPRS - 1, f"init.gpr thread {t} index")
            _in_range(v, 0, 0xFFFFFFFF, f"init.gpr thread {t} index {i} value")
    for t, regs in init.thread_config.items():
        _in_range(t, 0, THREADS - 1, "init.thread_config thread")
        for i, v in regs.items():
            _in_range(i, 0, thread_config_words() - 1, f"init.thread_config thread {t} index")
            _in_range(v, 0, 0xFFFFFFFF, f"init.thread_config thread {t} index {i} value")
    for s, regs in init.config.items():
        _in_range(s, 0, CONFIG_STATES - 1, "init.config state")
        for i, v in regs.items():
            _in_range(i, 0, CONFIG_WORDS - 1, f"init.config state {s} index")
            _in_range(v, 0, 0xFFFFFFFF, f"init.config state {s} index {i} value")
    for addr, data in init.l1:
        if not isinstance(data, (bytes, bytearray)):
            raise _Bad(f"init.l1 at {addr!r}: data must be bytes")
        _l1_region(addr, len(data), "init.l1 region")
    _no_overlap([(a, len(d), "") for a, d in init.l1], "init.l1 region")
    rows = [r for r, _ in init.dest]
    for row, vals in init.dest:
        _in_range(row, 0, DEST_ROWS - 1, "init.dest row")
        _dest_values(vals, f"init.dest row {row} values")
    if len(set(rows)) != len(rows):
        raise _Bad("init.dest sets a row twice")
    for addr, size in observe.l1:
        _l1_region(addr, size, "observe.l1 region")
    _no_overlap([(a, n, "") for a, n in set(observe.l1)], "observe.l1 region")
    for s, idx in observe.config.items():
        _in_range(s, 0, CONFIG_STATES - 1, "observe.config state")
        for i in idx:
            _in_range(i, 0, CONFIG_WORDS - 1, f"observe.config state {s} index")


def validate_shape(case: Case) -> None:
    """Checks a Case built in memory (generators) the same way the loader checks files."""
    try:
        _check_case(case)
    except _Bad as e:
        raise CaseError(_one_line(f"{case.source}: {e}")) from None


MAX_CASE_BYTES = 8 << 20     # a 40,000-instruction case is about 2.5 MB
# --- fast path: the layout dump_case writes ---------------------------------------------------------------
# Generated corpora are dump_case output, which PyYAML composes at about 10 ms a file. _DumpReader reads that
# layout line by line (a plain name and no description also: big hand-written programs), and only where a
# line's YAML meaning is plain: quoted text of printable ASCII without
# escapes, decimal without leading zeros (YAML 1.1 reads 010 as octal), lower-case 0x hex, keys in the writer's
# order; no empty block (YAML null), comment, anchor, tag, tab, blank line, RISC-V action or other style.
# For anything else, a key given twice or a case that fails a check, _fast_case returns None and the walker
# reads the text, so the loader's results for other text and all its errors are the walker's.

_TEXT = r'"([ !#-\[\]-~]*)"'          # printable ASCII but '"' and '\': YAML reads the quoted text as is
_DEC = r"(?:0|[1-9][0-9]*)"
_HEX = r"0x[0-9a-f]+"
_DUMP_LINES = {key: re.compile(rx) for key, rx in {
    "name": r'name: (?:"([a-z0-9][a-z0-9-]*)"|([a-z0-9][a-z0-9-]*))',
    "description": rf"description: {_TEXT}",
    "tags": rf"tags: \[((?:{_TEXT}, )*{_TEXT})\]",
    "threads": r"threads:( \{\})?",
    "thread": rf"  ({_DEC}):",
    "instruction": rf"    - (\.word 0x[0-9a-f]{{8}}|[A-Z][A-Z0-9_]*(?: [a-z][a-z0-9_]*={_DEC})*)",
    "mop_cfg": rf"    - \{{mop_cfg: \{{index: ([0-8]), value: ({_HEX})\}}\}}",
    "regs": rf"    ({_DEC}): \{{((?:{_DEC}: {_HEX}, )*{_DEC}: {_HEX})\}}",
    "l1": rf'    - \{{addr: ({_HEX}), hex: "((?:[0-9a-f]{{2}})+)"\}}',
    "dest": rf"    - \{{row: ({_DEC}), values: \[((?:{_HEX}, )*{_HEX})\]\}}",
    "observe_l1": rf"    - \{{addr: ({_HEX}), size: ({_DEC})\}}",
    "observe_config": rf"    ({_DEC}): \[((?:{_DEC}, )*{_DEC})\]",
}.items()}
# Plain scalars starting with a letter that YAML 1.1's implicit resolvers read as bool or null (y/n too, to be
# safe); any other such scalar is text: the int, float, timestamp, merge and value forms start with a digit,
# sign, dot, < or = (PyYAML's resolvers are keyed by first character).
_LETTER_NOT_TEXT = frozenset("yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null"
                             " NULL y Y n N".split())


_LINE_WORDS: dict[str, int] = {}     # instruction line of the fast path -> its word (see _DumpReader.program)


def _unique(pairs: list[tuple[int, Any]]) -> dict[int, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Bad("a key given twice")
    return out


def _plain_text(text: str) -> str:
    """A plain scalar the walker reads as text (not a number, bool or null)."""
    if text[:1].isascii() and text[:1].isalpha() and text not in _LETTER_NOT_TEXT:
        return text
    from .case_yaml import reads_as_text
    if not reads_as_text(text):
        raise _Bad(f"{text!r} is not read as text")
    return text


def _plain_word(text: str) -> int:
    """The Tensix word of an instruction written as a plain scalar, as the walker reads it."""
    _plain_text(text)
    try:
        return isa.assemble_line(text)
    except isa.IsaError as e:
        raise _Bad(str(e)) from None


class _DumpReader:
    """dump_case's layout; raises _Bad at the first line outside it."""

    def __init__(self, text: str):
        if not text.endswith("\n"):
            raise _Bad("no final newline")
        self.lines = text.split("\n")     # the last, "", matches no pattern: it ends every run of lines
        self.i = 0

    def take(self, key: str) -> re.Match | None:
        m = _DUMP_LINES[key].fullmatch(self.lines[self.i])
        if m:
            self.i += 1
        return m

    def need(self, key: str) -> re.Match:
        m = self.take(key)
        if m is None:
            raise _Bad(f"line {self.i + 1} is not a {key} line")
        return m

    def run(self, key: str) -> list[re.Match]:
        """One or more lines of ``key``."""
        out = [self.need(key)]
        while m := self.take(key):
            out.append(m)
        return out

    def program(self, t: int) -> tuple[list[int], list[tuple[int, RiscvAction]]]:
        """One or more instruction lines (and MOP-configuration stores, the one RISC-V action this layout
        takes), as words and (index, action). An instruction line already read (in any file) is looked up,
        not read again: programs repeat their lines."""
        words, actions, seen, lines, i = [], [], _LINE_WORDS, self.lines, self.i
        pattern, store, append, get = _DUMP_LINES["instruction"], _DUMP_LINES["mop_cfg"], words.append, seen.get
        while True:
            line = lines[i]
            if line.startswith(raw_words.PREFIX) and (run := raw_words.take(lines, i))[0]:
                words += run[0]           # a run of raw words, read at once (tensix_diff.raw_words)
                i = run[1]
                continue
            if (w := get(line)) is None:
                if m := pattern.fullmatch(line):
                    w = _plain_word(m[1])
                    if len(seen) >= 1 << 16:
                        seen.clear()
                    seen[line] = w
                elif m := store.fullmatch(line):
                    a = RiscvAction("mop_cfg", (int(m[1]), int(m[2], 16)))
                    try:
                        _in_range(a.args[1], 0, 0xFFFFFFFF, "mop_cfg value")
                        riscv.check(a, t)
                    except ValueError as e:
                        raise _Bad(str(e)) from None
                    actions.append((len(words), a))
                    i += 1
                    continue
                else:
                    break
            append(w)
            i += 1
        self.i = i
        if not words and not actions:
            raise _Bad(f"line {self.i + 1} is not an instruction line")
        return words, actions

    def block(self, head: str, key: str) -> list[re.Match]:
        """The lines of ``key`` under the line ``head``; none when ``head`` is not next."""
        if self.lines[self.i] != head:
            return []
        self.i += 1
        return self.run(key)

    def case(self, source: str) -> Case:
        m = self.need("name")
        name = m[1] if m[1] is not None else _plain_text(m[2])
        description = d[1] if (d := self.take("description")) else ""
        tags = self.take("tags")
        tags = re.findall(_TEXT, tags[1]) if tags else []
        threads, actions = [], {}
        if self.need("threads")[1] is None:                       # "threads:" and its programs
            while head := self.take("thread"):
                t = int(head[1])
                if t >= THREADS:
                    raise _Bad(f"thread {t} is out of range")
                words, acts = self.program(t)
                threads.append((t, words))
                if acts:
                    actions[t] = acts
            if not threads:
                raise _Bad("threads: is empty")
        init, observe = Init(), Observe()
        if self.lines[self.i] == "init:":
            self.i += 1
            start = self.i
            for key in ("gpr", "thread_config", "config"):
                setattr(init, key, _unique([
                    (int(m[1]), _unique([(int(i), int(v, 16)) for i, v in (p.split(": ") for p in m[2].split(", "))]))
                    for m in self.block(f"  {key}:", "regs")]))
            init.l1 = [(int(m[1], 16), bytes.fromhex(m[2])) for m in self.block("  l1:", "l1")]
            init.dest = [(int(m[1]), [int(v, 16) for v in m[2].split(", ")]) for m in self.block("  dest:", "dest")]
            if self.i == start:
                raise _Bad("init: is empty")
        if self.lines[self.i] == "observe:":
            self.i += 1
            start = self.i
            observe.l1 = [(int(m[1], 16), int(m[2])) for m in self.block("  l1:", "observe_l1")]
            if len(set(observe.l1)) != len(observe.l1):
                raise _Bad("observe.l1 gives a region twice")       # which _check_case allows
            observe.config = _unique([(int(m[1]), [int(i) for i in m[2].split(", ")])
                                      for m in self.block("  config:", "observe_config")])
            if self.i == start:
                raise _Bad("observe: is empty")
        if self.i != len(self.lines) - 1:
            raise _Bad(f"line {self.i + 1} is not in dump_case's layout")
        return Case(name=name, description=description, threads=_unique(threads), init=init, observe=observe,
                    source=source, tags=tags, actions=actions)


def _fast_case(text: str, source: str) -> Case | None:
    """The case in dump_case's layout, exactly as the walker reads it; None for any other text or a bad case."""
    try:
        case = _DumpReader(text).case(source)     # its name, threads and words are valid as read
        _check_state(case.init, case.observe)
    except _Bad:
        return None
    return case


def parse_case(text: str, source: str = "<text>") -> Case:
    """Parse case YAML text; every problem is one CaseError line ``SOURCE:LINE: what``."""
    if len(text) <= MAX_CASE_BYTES and (case := _fast_case(text, source)) is not None:
        return case     # brackets at most 2 deep, lines at most 4 columns in: _check_bounds passes it
    return _walk_case(text, source)


def _walk_case(text: str, source: str) -> Case:
    """parse_case through libyaml's composed nodes (tensix_diff.case_yaml, imported only when needed)."""
    from .case_yaml import walk_case
    return walk_case(text, source)



def load_case(path: str | Path) -> Case:
    p = Path(path)
    try:
        st = p.stat()
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(st.st_mode):
            raise CaseError(f"{p}: not a regular file (a FIFO, device or socket is never read)")
        if st.st_size > MAX_CASE_BYTES:
            raise CaseError(f"{p}: {st.st_size} bytes: a case file holds at most {MAX_CASE_BYTES >> 20} MiB")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError(f"{p}: no such case file") from None
    except IsADirectoryError:
        raise CaseError(f"{p}: is a directory (use load_cases)") from None
    except UnicodeDecodeError as e:
        raise CaseError(f"{p}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise CaseError(f"{p}: cannot read: {e.strerror}") from None
    if len(text) <= MAX_CASE_BYTES and (case := _fast_case(text, str(p))) is not None:
        return case
    from .case_yaml import walked_file     # the walker, its parses of files cached
    return walked_file(text, str(p))


def case_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, directories expanded to their *.yaml / *.yml files (recursively, sorted)."""
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.suffix in CASE_SUFFIXES and f.is_file()))
        elif p.exists():
            out.append(p)
        else:
            raise CaseError(f"{p}: no such case file or directory")
    return out


def load_cases(paths: Iterable[str | Path]) -> list[Case]:
    """Load files and directories; case names must be unique across everything loaded."""
    cases: list[Case] = []
    first: dict[str, str] = {}
    for f in case_files(paths):
        c = load_case(f)
        if c.name in first:
            raise CaseError(f"{c.source}: case name '{c.name}' is already used by {first[c.name]}")
        first[c.name] = c.source
        cases.append(c)
    return cases


def without(case: Case, words: set[tuple[int, int]] = frozenset(), actions: set[tuple[int, int]] = frozenset()
            ) -> Case:
    """``case`` without the Tensix words at (thread, index) ``words`` and the RISC-V actions at (thread, k)
    ``actions``; the actions that stay keep their place between the words that stay."""
    import dataclasses
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
    blob = json.dumps({"format": OBSERVATION_FORMAT, **content(case)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


# --- writer ------------------------------------------------------------------------------------------

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
