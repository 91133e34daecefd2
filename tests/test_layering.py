"""Packages depend one way: golden <- tensix_diff (cases, results, comparison, store, verdicts) <- generators,
hwbridge (backends) <- tensix_cli (commands). Every import counts, function-level ones too: a cycle is never
worked around by importing late."""
from __future__ import annotations

import ast
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


def imports_of(package: str) -> dict[str, set[str]]:
    """Other top-level packages imported anywhere in ``package``, with the modules that import each."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in PACKAGES and top != package:
                    out.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return out


def test_packages_depend_one_way():
    wrong = []
    for package in PACKAGES:
        for target, where in imports_of(package).items():
            if target not in ALLOWED[package]:
                wrong.append(f"{package} imports {target} in {', '.join(sorted(where))}")
    assert not wrong, "\n".join(wrong)


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
