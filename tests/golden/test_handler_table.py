"""The generated unit -> instruction -> handler table (`tensix-diff handlers`): every row names a function that
is defined in the file it names and registered for that instruction, and the command prints exactly the table."""
from __future__ import annotations

import ast
import subprocess
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


def test_each_handler_is_in_a_package_its_unit_loads():
    """handler_of loads only the packages of an instruction's unit (UNIT_PACKAGES) and ALWAYS: every handler lives
    in one of them, and the checks and stages every stream passes are registered by ALWAYS's modules."""
    from golden.handlers import ALWAYS, FRONTEND, PRE_ISSUE, STAGE_ENGAGED, UNIT_PACKAGES
    for name, fn in load_all().items():
        unit = isa.table()[name].unit
        package = getattr(fn, "__wrapped__", fn).__module__.split(".")[1]
        assert package in UNIT_PACKAGES.get(unit, UNITS) + ALWAYS, (name, unit, package)
    assert PRE_ISSUE and FRONTEND and STAGE_ENGAGED
    for fn in PRE_ISSUE + FRONTEND + list(STAGE_ENGAGED) + list(STAGE_ENGAGED.values()):
        assert fn.__module__.split(".")[1] in ALWAYS, fn


def test_decoding_a_word_loads_only_its_units_packages():
    code = ("import sys; from golden import core, isa; d = core.decode(isa.assemble_line('SETDMAREG regindex16b=1'));"
            "print(d.handler.__name__, sorted({m.split('.')[1] for m in sys.modules if m.startswith('golden.')"
            " and m.count('.') == 2}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.split(" ", 1) == ["setdmareg", "['frontend', 'sync', 'thcon']\n"]
