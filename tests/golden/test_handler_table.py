"""The generated unit -> instruction -> handler table (`tensix-diff handlers`): every row names a function that
is defined in the file it names and registered for that instruction, and the command prints exactly the table."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

from golden import isa
from golden.handlers import UNITS, handler_table, load_all
from tensix_cli.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_each_row_names_the_registered_handler_where_it_is_defined():
    rows = handler_table()
    assert [r[1] for r in rows] and sorted(r[1] for r in rows) == sorted(isa.table())
    handlers = load_all()
    for unit, name, where in rows:
        assert unit == isa.table()[name].unit
        if name not in handlers:
            assert where == "-"
            continue
        path, _, fn = where.partition(":")
        defined = {n.name for n in ast.walk(ast.parse((ROOT / path).read_text())) if isinstance(n, ast.FunctionDef)}
        assert fn in defined and getattr(handlers[name], "__wrapped__", handlers[name]).__name__ == fn, where
    assert sum(where != "-" for *_, where in rows) == len(handlers)


def test_the_command_prints_the_table_by_unit(capsys):
    assert main(["handlers", "--unit", "sfpu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    want = [r for r in handler_table() if r[0] == "SFPU"]
    assert [line.split() for line in lines] == [list(r) for r in want] and len(want) == 42
    assert main(["handlers", "--unit", "nope"]) == 2


def test_every_module_of_every_unit_is_loaded():
    """The registry's list names every package of golden that holds handlers, and load_all imports each module."""
    load_all()
    packages = {p.parent.name for p in (ROOT / "golden").glob("*/__init__.py")}
    assert set(UNITS) == packages - {"analysis"}
    unit_modules = [f"golden.{p.parent.name}.{p.stem}" for u in UNITS for p in (ROOT / "golden" / u).glob("*.py")
                    if p.stem != "__init__"]
    assert len(unit_modules) > len(UNITS) and not [m for m in unit_modules if m not in sys.modules]
    registered = {getattr(fn, "__wrapped__", fn).__module__.split(".")[1] for fn in load_all().values()}
    assert registered == set(UNITS)
