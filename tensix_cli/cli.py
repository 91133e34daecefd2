"""`tensix-diff`: the console entry point (../shared/contract.md, Commands).

Each subcommand lives in its own module exposing ``add_parser(subparsers)`` and ``run(args) -> int``.
Exit status: 0 matched, 1 divergence, 2 bad input or usage, 3 device or simulator failure.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from golden import isa

from .exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, BackendFailure, UsageError

# Subcommand modules; a module missing from the tree is skipped, so commands land independently.
COMMAND_MODULES = (
    "tensix_cli.run",
    "tensix_cli.fuzz",
    "tensix_cli.record",
    "tensix_cli.minimize",
    "tensix_cli.coverage",
    "tensix_cli.store",
    "tensix_cli.race",
    "tensix_cli.selftest",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no usage dump
        raise UsageError(f"{self.prog}: {message}")


def _asm(args: argparse.Namespace) -> int:
    for word in isa.assemble(args.text):
        print(f"{word:#010x}" + (f"  stream {isa.to_stream(word):#010x}" if args.stream else ""))
    return EXIT_OK


def _disasm(args: argparse.Namespace) -> int:
    for text in args.words:
        word = isa.parse_int(text, "disasm")
        if args.stream:
            word = isa.from_stream(word)
        print(isa.disassemble(word))
    return EXIT_OK


def _handlers(args: argparse.Namespace) -> int:
    from golden.handlers import handler_table     # late for start-up cost: only this command loads every handler
    rows = [r for r in handler_table() if args.unit is None or r[0] == args.unit.upper()]
    if not rows:
        raise UsageError(f"handlers: no instruction of unit '{args.unit}' in golden/isa.yaml")
    width = max(len(r[1]) for r in rows)
    for unit, name, where in rows:
        print(f"{unit:<7} {name:<{width}} {where}")
    return EXIT_OK


# A command's objects mostly live until it ends (cases, decoded programs, results) and golden makes little cyclic
# garbage (a run of tests/corpus: about 300 objects): the collector's youngest generation waits for this many new
# objects (a 40,000-word case makes about 84,000), so a one-case command ends before the collector walks them.
YOUNG_OBJECTS = 200_000

# The command each module adds, named alike (so one command imports only its own module: start-up stays short).
COMMAND_OF = {m.rpartition(".")[2]: m for m in COMMAND_MODULES}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only`` (a command name) just the built-in commands and that command's module."""
    p = _Parser(prog="tensix-diff", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="store_true", help="print the package, golden and hw stack versions")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    a = sub.add_parser("asm", help="assemble instruction text to 32-bit Tensix words")
    a.add_argument("text", help='e.g. "SETRWC bitmask=15"; several separated by ";"')
    a.add_argument("--stream", action="store_true", help="also print the TRISC instruction-stream form rotl(W, 2)")
    a.set_defaults(func=_asm)
    d = sub.add_parser("disasm", help="disassemble 32-bit Tensix words to canonical text")
    d.add_argument("words", nargs="+")
    d.add_argument("--stream", action="store_true", help="the words are in instruction-stream form rotl(W, 2)")
    d.set_defaults(func=_disasm)
    h = sub.add_parser("handlers", help="the ISA table's units, their instructions and golden's handler for each")
    h.add_argument("--unit", metavar="UNIT", help="only this unit (MATH, SFPU, PACK, UNPACK, SYNC, CFG, THCON, ...)")
    h.set_defaults(func=_handlers)
    wanted = COMMAND_MODULES if only is None else [m for c, m in COMMAND_OF.items() if c == only]
    for name in wanted:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name and name.startswith(e.name):
                continue
            raise
        mod.add_parser(sub)
    return p


def _version() -> str:
    """``--version``: the package, golden's source digest and git revision, and the hw stack when installed."""
    # late for start-up cost: only --version reads these
    from hwbridge.hw.device import installed_version as of
    from tensix_diff.revision import sources_hash
    from tensix_diff.store import harness_revision
    return (f"tensix-diff {of('tensix-diff')}\ngolden {sources_hash(())} (harness {harness_revision()})\n"
            f"tt-exalens {of('tt-exalens')}\ntt-umd {of('tt-umd')}")


def _input_errors() -> tuple[type, ...]:
    """Bad input met while a command ran: a malformed case, an unusable recording (exit 2). Looked up among the
    modules loaded (those that raise them), so disasm never imports cases or the store."""
    found = ((sys.modules.get(m), name) for m, name in (("tensix_diff.case", "CaseError"),
                                                        ("tensix_diff.store", "StoreError")))
    return tuple(getattr(mod, name) for mod, name in found if mod is not None)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    if argv is None:    # the process's command, before numpy loads: OpenBLAS would start a thread per core (about
        # 50 CPU-ms at start here, docs/speed.md); golden calls no BLAS routine (its matrix products are integer)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args_in[:1] == ["--version"]:
        print(_version())
        return EXIT_OK
    first = next((a for a in args_in if not a.startswith("-")), None)
    only = first if first in COMMAND_OF or first in ("asm", "disasm", "handlers") else None
    try:
        if argv is None:    # the process's command: the collector waits for the command's imports to finish
            gc.disable()
        try:
            args = build_parser(only).parse_args(args_in)
        finally:
            if argv is None:    # what it imported lives as long as the process: the collector stops walking
                gc.freeze()     # those objects each time a big case's allocations wake it, and first runs
                gc.set_threshold(YOUNG_OBJECTS)     # after YOUNG_OBJECTS more, not 700 (docs/speed.md)
                gc.enable()
        return args.func(args)
    except (UsageError, isa.IsaError) as e:
        print(f"tensix-diff: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BackendFailure as e:   # a command cannot go on: its one line and exit status (2 or 3)
        print(f"tensix-diff: error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("tensix-diff: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:         # the reader went away (| head): stop quietly, as a shell tool does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as e:
        if not isinstance(e, _input_errors()):
            raise
        print(f"tensix-diff: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if argv is None:    # the process ends: shutdown's collections skip what the command made (docs/speed.md);
            gc.freeze()     # cleanup at exit is atexit's (hwbridge.hw.backend)


if __name__ == "__main__":
    sys.exit(main())
