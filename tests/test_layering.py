"""Packages depend one way: golden <- tensix_diff (cases, results, comparison, store, verdicts) <- generators,
hwbridge (backends) <- tensix_cli (commands); subpackages sit below the rest of their package. golden's unit
packages (golden/sfpu/, golden/matrix/, ...) import golden's core (its top-level modules) and the units named in
their rule; the core imports no unit (golden.handlers.load_all reaches them by name). No two modules
import each other, directly or round a cycle, counting every import: a function-level (late) import is allowed
only where a comment beside it says it is there for start-up cost, and it counts in the graph like any other."""
from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("golden", "tensix_diff", "generators", "hwbridge", "tensix_cli")
ALLOWED = {
    "golden": set(),
    "tensix_diff": {"golden"},
    "generators": {"golden", "tensix_diff"},
    "hwbridge": {"golden", "tensix_diff"},
    "tensix_cli": {"golden", "tensix_diff", "generators", "hwbridge"},
}
GOLDEN_CORE = {f"golden.{p.stem}" for p in (ROOT / "golden").glob("*.py") if p.stem != "__init__"}
# What a subpackage may import from the rest of its own package (None: anything)
SUBPACKAGES = {
    "tensix_diff.case": {"tensix_diff.revision"},
    "tensix_diff.store": {"tensix_diff.case", "tensix_diff.result"},
    "hwbridge.hw": set(),
    # golden's units (golden.handlers.UNITS), one per ISA unit: the core and, named here, the units they build on
    "golden.config": GOLDEN_CORE,
    "golden.frontend": GOLDEN_CORE,
    "golden.matrix": GOLDEN_CORE,
    "golden.pack": GOLDEN_CORE,
    "golden.sfpu": GOLDEN_CORE,
    "golden.sync": GOLDEN_CORE,
    "golden.thcon": GOLDEN_CORE,
    "golden.unpack": GOLDEN_CORE | {"golden.matrix"},      # the unpackers hand Src banks to the matrix unit
    # analyses of a golden run: above the units
    "golden.analysis": GOLDEN_CORE | {"golden.frontend"},
}
LATE_REASON = "start-up"


@cache
def modules() -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its own name, for its __init__.py)."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _late_nodes(tree: ast.Module) -> set[int]:
    return {id(n) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}


@cache
def imports(name: str) -> list[tuple[str, int, bool]]:
    """(imported module of the packages, line, late) for each import in module ``name``; ``from P import x``
    names the module P.x where there is one, else P. A parent package run first by the import system is
    not an edge (else every package that re-exports its modules would be a cycle)."""
    path = modules()[name]
    tree = ast.parse(path.read_text(), str(path))
    late = _late_nodes(tree)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + [node.module or ""]).strip(".") if node.level \
                else node.module
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules() else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules():
                t = t.rpartition(".")[0]
            if t and t != name:
                out.append((t, node.lineno, id(node) in late))
    return out


def imports_of(package: str) -> dict[str, set[str]]:
    """Other top-level packages imported anywhere in ``package``, with the modules that import each."""
    out: dict[str, set[str]] = {}
    for name, path in modules().items():
        if name.split(".")[0] == package:
            for target, _, _ in imports(name):
                if target.split(".")[0] != package:
                    out.setdefault(target.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return out


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_packages_depend_one_way():
    wrong = []
    for package in PACKAGES:
        for target, where in imports_of(package).items():
            if target not in ALLOWED[package]:
                wrong.append(f"{package} imports {target} in {', '.join(sorted(where))}")
    assert not wrong, "\n".join(wrong)


def test_subpackages_sit_below_the_rest_of_their_package():
    wrong = []
    for sub, allowed in SUBPACKAGES.items():
        parent = sub.rpartition(".")[0]
        assert sub in modules(), f"{sub} is not a package any more: update SUBPACKAGES"
        for name in (m for m in modules() if within(m, sub)):
            for target, line, _ in imports(name):
                if within(target, parent) and not within(target, sub) and allowed is not None \
                        and not any(within(target, a) for a in allowed):
                    wrong.append(f"{modules()[name].relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_golden_core_imports_no_unit():
    """golden's top-level modules import only each other: the units are reached through the registry's list."""
    wrong = [f"{modules()[name].relative_to(ROOT)}:{line} imports {target}"
             for name in GOLDEN_CORE | {"golden"} for target, line, _ in imports(name)
             if within(target, "golden") and target not in GOLDEN_CORE]
    assert not wrong, "\n".join(wrong)


def test_golden_subpackages_form_no_cycle():
    units = [s for s in SUBPACKAGES if s.startswith("golden.")]
    graph = {u: {v for name in modules() if within(name, u) for target, _, _ in imports(name)
                 for v in units if v != u and within(target, v)} for u in units}
    assert any(graph.values()) and not cycles(graph), graph


def test_every_subpackage_has_its_rule():
    subpackages = {m for m, p in modules().items() if p.name == "__init__.py" and "." in m}
    assert subpackages == set(SUBPACKAGES), f"subpackages without a rule: {sorted(subpackages - set(SUBPACKAGES))}"


def test_the_allowed_graph_has_no_cycle():
    seen: dict[str, int] = {}

    def visit(p: str) -> None:
        assert seen.get(p) != 1, f"cycle through {p}"
        if seen.get(p) == 2:
            return
        seen[p] = 1
        for q in ALLOWED[p]:
            visit(q)
        seen[p] = 2
    for p in PACKAGES:
        visit(p)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))
    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def test_cycles_finds_a_cycle_through_a_late_edge():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_imports_see_late_and_relative_imports():
    edges = {(t, late) for t, _, late in imports("tensix_diff.case.load")}
    assert ("tensix_diff.case.model", False) in edges and ("tensix_diff.case.yaml_walker", True) in edges


def test_no_module_import_cycle():
    graph = {name: {t for t, _, _ in imports(name)} for name in modules()}
    found = cycles(graph)
    assert not found, "import cycles (late imports included):\n" + "\n".join(" <-> ".join(c) for c in found)


def test_late_imports_say_they_are_for_start_up_cost():
    """A function-level import carries a comment naming start-up cost: on its line, or on a comment line
    heading the run of imports it belongs to."""
    unexplained = []
    for name, path in modules().items():
        lines = path.read_text().splitlines()
        for _, line, late in imports(name):
            if not late:
                continue
            i = line - 1
            said = LATE_REASON in lines[i]
            while not said and i > 0 and lines[i - 1].strip().startswith(("import ", "from ", "#")):
                i -= 1
                said = LATE_REASON in lines[i] and lines[i].strip().startswith("#")
            if not said:
                unexplained.append(f"{path.relative_to(ROOT)}:{line}: {lines[line - 1].strip()}")
    assert not unexplained, "late imports without a start-up reason:\n" + "\n".join(sorted(set(unexplained)))
