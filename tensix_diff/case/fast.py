"""The fast reader of case files in the layout ``dump_case`` writes (docs/case-format.md), line by line; any
other text, and every error, is left to the YAML walker."""
from __future__ import annotations

import re
from functools import cache
from typing import Any

from golden import isa, riscv
from golden.riscv import RiscvAction
from golden.state import THREADS

from .checks import Bad, check_state, in_range
from . import raw_words
from .model import Case, Init, Observe

# Generated corpora are dump_case output, which PyYAML composes at about 10 ms a file. _DumpReader reads that
# layout line by line (a plain name and no description also: big hand-written programs), and only where a
# line's YAML meaning is plain: quoted text of printable ASCII without
# escapes, decimal without leading zeros (YAML 1.1 reads 010 as octal), lower-case 0x hex, keys in the writer's
# order; no empty block (YAML null), comment, anchor, tag, tab, blank line, RISC-V action or other style.
# For anything else, a key given twice or a case that fails a check, fast_case returns None and the walker
# reads the text, so the loader's results for other text and all its errors are the walker's.

_TEXT = r'"([ !#-\[\]-~]*)"'          # printable ASCII but '"' and '\': YAML reads the quoted text as is
_DEC = r"(?:0|[1-9][0-9]*)"
_HEX = r"0x[0-9a-f]+"
_DUMP_RX = {
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
}


@cache
def _line(key: str) -> re.Pattern:
    """The pattern of one kind of line, compiled when a file first needs it (a run of programs alone never
    compiles the init and observe patterns: start-up cost)."""
    return re.compile(_DUMP_RX[key])


# Plain scalars starting with a letter that YAML 1.1's implicit resolvers read as bool or null (y/n too, to be
# safe); any other such scalar is text: the int, float, timestamp, merge and value forms start with a digit,
# sign, dot, < or = (PyYAML's resolvers are keyed by first character).
_LETTER_NOT_TEXT = frozenset("yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null"
                             " NULL y Y n N".split())


_LINE_WORDS: dict[str, int] = {}     # instruction line of the fast path -> its word (see _DumpReader.program)


def _unique(pairs: list[tuple[int, Any]]) -> dict[int, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise Bad("a key given twice")
    return out


def _plain_text(text: str) -> str:
    """A plain scalar the walker reads as text (not a number, bool or null)."""
    if text[:1].isascii() and text[:1].isalpha() and text not in _LETTER_NOT_TEXT:
        return text
    from .yaml_walker import reads_as_text     # late for start-up cost: only this text needs yaml
    if not reads_as_text(text):
        raise Bad(f"{text!r} is not read as text")
    return text


def _plain_word(text: str) -> int:
    """The Tensix word of an instruction written as a plain scalar, as the walker reads it."""
    _plain_text(text)
    try:
        return isa.assemble_line(text)
    except isa.IsaError as e:
        raise Bad(str(e)) from None


class _DumpReader:
    """dump_case's layout; raises Bad at the first line outside it."""

    def __init__(self, text: str):
        if not text.endswith("\n"):
            raise Bad("no final newline")
        self.lines = text.split("\n")     # the last, "", matches no pattern: it ends every run of lines
        self.i = 0

    def take(self, key: str) -> re.Match | None:
        m = _line(key).fullmatch(self.lines[self.i])
        if m:
            self.i += 1
        return m

    def need(self, key: str) -> re.Match:
        m = self.take(key)
        if m is None:
            raise Bad(f"line {self.i + 1} is not a {key} line")
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
        pattern, store, append, get = _line("instruction"), _line("mop_cfg"), words.append, seen.get
        while True:
            line = lines[i]
            if line.startswith(raw_words.PREFIX) and (run := raw_words.take(lines, i))[0]:
                words += run[0]           # a run of raw words, read at once (raw_words)
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
                        in_range(a.args[1], 0, 0xFFFFFFFF, "mop_cfg value")
                        riscv.check(a, t)
                    except ValueError as e:
                        raise Bad(str(e)) from None
                    actions.append((len(words), a))
                    i += 1
                    continue
                else:
                    break
            append(w)
            i += 1
        self.i = i
        if not words and not actions:
            raise Bad(f"line {self.i + 1} is not an instruction line")
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
                    raise Bad(f"thread {t} is out of range")
                words, acts = self.program(t)
                threads.append((t, words))
                if acts:
                    actions[t] = acts
            if not threads:
                raise Bad("threads: is empty")
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
                raise Bad("init: is empty")
        if self.lines[self.i] == "observe:":
            self.i += 1
            start = self.i
            observe.l1 = [(int(m[1], 16), int(m[2])) for m in self.block("  l1:", "observe_l1")]
            if len(set(observe.l1)) != len(observe.l1):
                raise Bad("observe.l1 gives a region twice")       # which check_case allows
            observe.config = _unique([(int(m[1]), [int(i) for i in m[2].split(", ")])
                                      for m in self.block("  config:", "observe_config")])
            if self.i == start:
                raise Bad("observe: is empty")
        if self.i != len(self.lines) - 1:
            raise Bad(f"line {self.i + 1} is not in dump_case's layout")
        return Case(name=name, description=description, threads=_unique(threads), init=init, observe=observe,
                    source=source, tags=tags, actions=actions)


def fast_case(text: str, source: str) -> Case | None:
    """The case in dump_case's layout, exactly as the walker reads it; None for any other text or a bad case."""
    try:
        case = _DumpReader(text).case(source)     # its name, threads and words are valid as read
        check_state(case.init, case.observe)
    except Bad:
        return None
    return case
