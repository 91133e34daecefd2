"""Case files through libyaml's composed nodes: any YAML layout, every error with its line (the fast reader
reads dump_case's layout itself and comes here for anything else, so a run of such files never imports yaml)."""
from __future__ import annotations

import dataclasses
import hashlib
import re
from typing import Any, Iterable

import yaml

from golden import isa, riscv
from golden.registers import CONFIG_STATES, CONFIG_WORDS, config_field, fields, thread_config_words
from golden.riscv import RiscvAction
from golden.state import COLS, DEST_ROWS, GPRS, L1_SIZE, SEMAPHORES, THREADS
from golden.yaml_tables import pickled

from ..revision import sources_hash
from .checks import Bad, in_range, l1_region, no_overlap, one_line
from .model import MAX_CASE_BYTES, NAME_RE, Case, CaseError, Init, Observe

_RESOLVER = yaml.resolver.Resolver()     # how the loader tags a plain scalar


def reads_as_text(text: str) -> bool:
    """Whether the loader reads ``text`` written as a plain scalar as text (not a number, bool or null)."""
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG


# --- the YAML loader: walks composed nodes so every error carries its line ---------------------------

_scalars = yaml.constructor.SafeConstructor()
_STR_TAG = "tag:yaml.org,2002:str"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
TOP_KEYS = ("name", "description", "threads", "init", "observe", "tags")
INIT_KEYS = ("gpr", "thread_config", "config", "l1", "dest")
OBSERVE_KEYS = ("l1", "config")


class _Walker:
    def __init__(self, source: str):
        self.source = source

    def fail(self, node: yaml.Node | None, msg: str) -> CaseError:
        line = f":{node.start_mark.line + 1}" if node is not None else ""
        return CaseError(one_line(f"{self.source}{line}: {msg}"))

    def scalar(self, node: yaml.Node, what: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            kind = "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
            raise self.fail(node, f"{what} must be a single value, not {kind}")
        try:
            return _scalars.construct_object(node)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as e:
            why = getattr(e, "problem", None) or str(e)
            raise self.fail(node, f"{what}: cannot read value {node.value!r}: {why}") from None

    def integer(self, node: yaml.Node, what: str, lo: int = 0, hi: int = 0xFFFFFFFF) -> int:
        v = self.scalar(node, what)
        if isinstance(v, str):
            try:
                v = isa.parse_int(v.strip(), what)
            except isa.IsaError:
                raise self.fail(node, f"{what} must be an integer (decimal, 0x.., 0b..), not {v!r}") from None
        try:
            return in_range(v, lo, hi, what)
        except Bad as e:
            raise self.fail(node, str(e)) from None

    def text(self, node: yaml.Node, what: str) -> str:
        v = self.scalar(node, what)
        if not isinstance(v, str):
            raise self.fail(node, f"{what} must be text, not {v!r} (quote it)")
        return v

    def mapping(self, node: yaml.Node, what: str, keys: Iterable[str] | None = None) -> list[tuple[yaml.Node, yaml.Node]]:
        """The (key node, value node) pairs; rejects duplicates and, if keys is given, unknown names."""
        if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null"):
            return []
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        seen: dict[Any, int] = {}
        for k, _ in node.value:
            key = self.scalar(k, f"a key in {what}")
            if keys is not None and key not in keys:
                raise self.fail(k, f"unknown key {key!r} in {what} (expected one of: {', '.join(keys)})")
            if key in seen:
                raise self.fail(k, f"key {key!r} in {what} given twice (first on line {seen[key]})")
            seen[key] = k.start_mark.line + 1
        return list(node.value)

    def sequence(self, node: yaml.Node, what: str) -> list[yaml.Node]:
        if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null"):
            return []
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{what} must be a list")
        return list(node.value)

    def int_map(self, node: yaml.Node, what: str, key_label: str, key_hi: int) -> list[tuple[int, yaml.Node, yaml.Node]]:
        out = []
        seen: dict[int, int] = {}
        for k, v in self.mapping(node, what):
            key = self.integer(k, key_label, 0, key_hi)
            if key in seen:
                raise self.fail(k, f"{key_label} {key} given twice (first on line {seen[key]})")
            seen[key] = k.start_mark.line + 1
            out.append((key, k, v))
        return out

    def reg_table(self, node: yaml.Node, what: str, outer: str, outer_hi: int, index_hi: int) -> dict[int, dict[int, int]]:
        """{outer: {index: 32-bit value}} as in init.gpr / init.thread_config / init.config."""
        out: dict[int, dict[int, int]] = {}
        for o, _, regs in self.int_map(node, what, f"{what} {outer}", outer_hi):
            out[o] = {i: self.integer(v, f"{what} {outer} {o} index {i} value")
                      for i, _, v in self.int_map(regs, f"{what} {outer} {o}", f"{what} {outer} {o} index", index_hi)}
        return out

    def region_list(self, node: yaml.Node, what: str, data_key: str) -> list[tuple[int, Any, yaml.Node]]:
        items = []
        for item in self.sequence(node, what):
            pairs = dict((self.scalar(k, "key"), v) for k, v in self.mapping(item, f"{what} entry", ("addr", data_key)))
            for key in ("addr", data_key):
                if key not in pairs:
                    raise self.fail(item, f"{what} entry needs '{key}'")
            addr = self.integer(pairs["addr"], f"{what} addr", 0, L1_SIZE - 1)
            items.append((addr, pairs[data_key], item))
        return items

    def check_overlaps(self, regions: list[tuple[int, int, yaml.Node]], what: str) -> None:
        try:
            no_overlap([(a, n, f" (line {nd.start_mark.line + 1})") for a, n, nd in regions], what)
        except Bad as e:
            later = max(regions, key=lambda r: r[2].start_mark.line)  # report at a line in the file
            raise self.fail(later[2], str(e)) from None

    def l1_init(self, node: yaml.Node) -> list[tuple[int, bytes]]:
        out, spans = [], []
        for addr, hnode, item in self.region_list(node, "init.l1", "hex"):
            h = self.text(hnode, "init.l1 hex")
            digits = re.sub(r"[\s_]", "", h)
            if not digits or len(digits) % 2 or not re.fullmatch(r"[0-9a-fA-F]*", digits):
                raise self.fail(hnode, f"init.l1 hex must be a non-empty even number of hex digits, not {h!r}")
            data = bytes.fromhex(digits)
            try:
                l1_region(addr, len(data), "init.l1 region")
            except Bad as e:
                raise self.fail(item, str(e)) from None
            out.append((addr, data))
            spans.append((addr, len(data), item))
        self.check_overlaps(spans, "init.l1 region")
        return out

    def l1_observe(self, node: yaml.Node) -> list[tuple[int, int]]:
        out, spans = [], []
        for addr, snode, item in self.region_list(node, "observe.l1", "size"):
            size = self.integer(snode, "observe.l1 size", 1, L1_SIZE)
            try:
                l1_region(addr, size, "observe.l1 region")
            except Bad as e:
                raise self.fail(item, str(e)) from None
            out.append((addr, size))
            spans.append((addr, size, item))
        self.check_overlaps(spans, "observe.l1 region")
        return out

    def dest_init(self, node: yaml.Node) -> list[tuple[int, list[int]]]:
        out, seen = [], {}
        for item in self.sequence(node, "init.dest"):
            pairs = dict((self.scalar(k, "key"), v) for k, v in self.mapping(item, "init.dest entry", ("row", "values")))
            for key in ("row", "values"):
                if key not in pairs:
                    raise self.fail(item, f"init.dest entry needs '{key}'")
            row = self.integer(pairs["row"], "init.dest row", 0, DEST_ROWS - 1)
            if row in seen:
                raise self.fail(pairs["row"], f"init.dest row {row} given twice (first on line {seen[row]})")
            seen[row] = item.start_mark.line + 1
            vnodes = self.sequence(pairs["values"], f"init.dest row {row} values")
            if len(vnodes) != COLS:
                raise self.fail(pairs["values"], f"init.dest row {row} needs {COLS} values, not {len(vnodes)}")
            out.append((row, [self.integer(v, f"init.dest row {row} value", 0, 0xFFFF) for v in vnodes]))
        return out

    def threads(self, node: yaml.Node) -> tuple[dict[int, list[int]], dict[int, list[tuple[int, RiscvAction]]]]:
        out: dict[int, list[int]] = {}
        actions: dict[int, list[tuple[int, RiscvAction]]] = {}
        for t, _, prog in self.int_map(node, "threads", "thread", THREADS - 1):
            words: list[int] = []
            for inode in self.sequence(prog, f"thread {t} program"):
                if isinstance(inode, yaml.MappingNode):
                    for a in self.actions(inode, t):
                        actions.setdefault(t, []).append((len(words), a))
                    continue
                if isinstance(inode, yaml.ScalarNode) and inode.tag == _STR_TAG:
                    text = inode.value          # what the constructor would return, without its overhead
                else:
                    text = self.text(inode, f"thread {t} instruction")
                try:
                    words.append(isa.assemble_line(text))
                except isa.IsaError as e:
                    raise self.fail(inode, f"thread {t}: {e}") from None
            out[t] = words
        return out, actions

    def actions(self, node: yaml.Node, t: int) -> list[RiscvAction]:
        """A RISC-V action item ``{kind: arguments}`` (contract.md); mop_cfg with a list gives several."""
        pairs = self.mapping(node, f"thread {t} RISC-V action", riscv.KINDS)
        if len(pairs) != 1:
            raise self.fail(node, f"thread {t}: a RISC-V action is one key (one of: {', '.join(riscv.KINDS)})")
        knode, v = pairs[0]
        kind = self.scalar(knode, "action")
        what = f"thread {t} {kind}"

        def args(keys: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, yaml.Node]:
            got = {self.scalar(k, "key"): n for k, n in self.mapping(v, what, keys + optional)}
            for key in keys:
                if key not in got:
                    raise self.fail(v, f"{what} needs '{key}'")
            return got

        try:
            if kind == "cfg":
                a = args(("index", "value"), ("mask",))
                index = self.config_index(a["index"], what)
                mask = self.integer(a["mask"], f"{what} mask") if "mask" in a else None
                out = [RiscvAction("cfg", (index, self.integer(a["value"], f"{what} value"), mask))]
            elif kind == "mop_cfg":
                if isinstance(v, yaml.SequenceNode):
                    vals = [self.integer(n, f"{what} word {i}") for i, n in enumerate(self.sequence(v, what))]
                    if not 1 <= len(vals) <= 9:
                        raise self.fail(v, f"{what} takes 1..9 words (MOP config words 0..8), not {len(vals)}")
                    out = [RiscvAction("mop_cfg", (i, x)) for i, x in enumerate(vals)]
                else:
                    a = args(("index", "value"))
                    out = [RiscvAction("mop_cfg", (self.integer(a["index"], f"{what} index", 0, 8),
                                                   self.integer(a["value"], f"{what} value")))]
            elif kind == "gpr":
                a = args(("index", "value"))
                out = [RiscvAction("gpr", (self.integer(a["index"], f"{what} index", 0, GPRS - 1),
                                           self.integer(a["value"], f"{what} value")))]
            elif kind == "l1":
                a = args(("addr", "hex"))
                addr = self.integer(a["addr"], f"{what} addr", 0, L1_SIZE - 1)
                h = re.sub(r"[\s_]", "", self.text(a["hex"], f"{what} hex"))
                if not h or len(h) % 8 or not re.fullmatch(r"[0-9a-fA-F]*", h):
                    raise self.fail(a["hex"], f"{what} hex must be whole 32-bit words (a multiple of 8 hex digits)")
                out = [RiscvAction("l1", (addr, bytes.fromhex(h)))]
            elif kind in ("sem_post", "sem_get", "feature_disable"):
                hi = SEMAPHORES - 1 if kind != "feature_disable" else 0xFFFFFFFF
                out = [RiscvAction(kind, (self.integer(v, what, 0, hi),))]
            elif kind == "sem_wait":
                a = args(("sem", "until"))
                cond = self.text(a["until"], f"{what} until").split()
                if len(cond) != 2 or cond[0] not in riscv.SEM_OPS:
                    raise self.fail(a["until"], f"{what} until must be 'OP N', OP one of {' '.join(riscv.SEM_OPS)}")
                try:
                    n = isa.parse_int(cond[1], f"{what} until")
                except isa.IsaError as e:
                    raise self.fail(a["until"], str(e)) from None
                out = [RiscvAction("sem_wait", (self.integer(a["sem"], f"{what} sem", 0, SEMAPHORES - 1), cond[0],
                                                in_range(n, 0, riscv.SEM_LIMIT, f"{what} until value")))]
            elif kind == "mailbox_write":
                a = args(("to", "value"))
                out = [RiscvAction(kind, (self.integer(a["to"], f"{what} to", 0, THREADS - 1),
                                          self.integer(a["value"], f"{what} value")))]
            else:  # mailbox_read
                a = args(("from", "gpr"))
                out = [RiscvAction(kind, (self.integer(a["from"], f"{what} from", 0, THREADS - 1),
                                          self.integer(a["gpr"], f"{what} gpr", 0, GPRS - 1)))]
            for x in out:
                riscv.check(x, t)
        except CaseError:
            raise                      # already one line with its location
        except (Bad, ValueError) as e:
            raise self.fail(v, f"{what}: {e}") from None
        return out

    def config_index(self, node: yaml.Node, what: str) -> int:
        """A Config ADDR32 index, or the name of a Config field (its word)."""
        v = self.scalar(node, f"{what} index")
        if isinstance(v, str) and v.strip() in fields("config"):
            return config_field(v.strip()).index
        if isinstance(v, str) and not re.fullmatch(r"\s*(0[xXbB])?[0-9a-fA-F_]+\s*", v):
            raise self.fail(node, f"{what} index {v!r} is neither a Config word index nor a Config field name "
                                  "(golden/registers.yaml)")
        return self.integer(node, f"{what} index", 0, CONFIG_WORDS - 1)

    def case(self, root: yaml.Node | None) -> Case:
        if root is None:
            raise self.fail(None, "empty case file (expected a mapping with name and threads)")
        top = {self.scalar(k, "key"): v for k, v in self.mapping(root, "the case", TOP_KEYS)}
        for key in ("name", "threads"):
            if key not in top:
                raise self.fail(root, f"the case needs '{key}'")
        name = self.text(top["name"], "name")
        if not NAME_RE.match(name):
            raise self.fail(top["name"], f"name {name!r} must use only a-z, 0-9 and '-' (and not start with '-')")
        description = self.text(top["description"], "description") if "description" in top else ""
        tags = [self.text(n, "tag") for n in self.sequence(top["tags"], "tags")] if "tags" in top else []
        threads, actions = self.threads(top["threads"])
        init, observe = Init(), Observe()
        if "init" in top:
            sec = {self.scalar(k, "key"): v for k, v in self.mapping(top["init"], "init", INIT_KEYS)}
            if "gpr" in sec:
                init.gpr = self.reg_table(sec["gpr"], "init.gpr", "thread", THREADS - 1, GPRS - 1)
            if "thread_config" in sec:
                init.thread_config = self.reg_table(sec["thread_config"], "init.thread_config", "thread",
                                                    THREADS - 1, thread_config_words() - 1)
            if "config" in sec:
                init.config = self.reg_table(sec["config"], "init.config", "state", CONFIG_STATES - 1, CONFIG_WORDS - 1)
            if "l1" in sec:
                init.l1 = self.l1_init(sec["l1"])
            if "dest" in sec:
                init.dest = self.dest_init(sec["dest"])
        if "observe" in top:
            sec = {self.scalar(k, "key"): v for k, v in self.mapping(top["observe"], "observe", OBSERVE_KEYS)}
            if "l1" in sec:
                observe.l1 = self.l1_observe(sec["l1"])
            if "config" in sec:
                observe.config = {
                    s: [self.integer(i, f"observe.config state {s} index", 0, CONFIG_WORDS - 1)
                        for i in self.sequence(idx, f"observe.config state {s}")]
                    for s, _, idx in self.int_map(sec["config"], "observe.config", "observe.config state", CONFIG_STATES - 1)}
        return Case(name=name, description=description, threads=threads, init=init, observe=observe,
                    source=self.source, tags=tags, actions=actions)


MAX_NESTING = 64             # a case nests a few levels; libyaml's composer recurses (a deep nest crashes it)
MAX_INDENT = 512


def _check_bounds(text: str, source: str) -> None:
    """Refuse what no case needs before the YAML parser sees it: huge text, deep flow or block nesting."""
    if len(text) > MAX_CASE_BYTES:
        raise CaseError(f"{source}: {len(text)} bytes: a case file holds at most {MAX_CASE_BYTES >> 20} MiB")
    deepest = 0
    if text.count("[") + text.count("{") > MAX_NESTING:     # only then can it nest too deep: walk it
        depth = 0
        for m in _BRACKETS.finditer(text):
            depth += 1 if m.group() in "[{" else -1
            deepest = max(deepest, depth)
    if deepest > MAX_NESTING:
        raise CaseError(f"{source}: invalid case: structure nested {deepest} deep (at most {MAX_NESTING})")
    indent = max(map(len, _INDENT.findall(text)), default=0)
    if indent > MAX_INDENT:
        raise CaseError(f"{source}: invalid case: a line indented {indent} columns (at most {MAX_INDENT})")


_BRACKETS = re.compile(r"[\[\]{}]")
_INDENT = re.compile(r"^ +", re.M)


def walk_case(text: str, source: str) -> Case:
    """parse_case through libyaml's composed nodes and _Walker: reads any YAML, reports every problem."""
    w = _Walker(source)
    _check_bounds(text, source)
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(x) for x in (e.context, e.problem) if x)
        raise CaseError(one_line(f"{source}{line}: invalid YAML: {problem}")) from None
    except (yaml.YAMLError, RecursionError, ValueError) as e:  # reader errors (bad characters), deep nesting
        raise CaseError(one_line(f"{source}: invalid YAML: {str(e) or type(e).__name__}")) from None
    try:
        return w.case(root)
    except RecursionError:
        raise CaseError(f"{source}: invalid case: structure nested too deeply") from None


def walked_file(text: str, source: str) -> Case:
    """A case file's parse: the YAML walker's result is kept under $XDG_CACHE_HOME/tensix-diff/cases by the
    text's hash and the parser's revision (tensix_diff.revision), so hand-written corpus files are walked once
    per revision; a damaged cache entry is only ever a miss."""
    key = hashlib.sha256(f"{sources_hash(('case',))}\0{text}".encode()).hexdigest()[:32]
    case = pickled("cases", key, lambda: walk_case(text, source))
    return dataclasses.replace(case, source=source) if isinstance(case, Case) else walk_case(text, source)
