"""The ``flipcheck`` command line: one subcommand per module of this package.

Subcommand modules are light to import (heavy libraries such as z3, pyspark and graphviz are
imported inside ``run``), so ``flipcheck --help`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from typing import Sequence

from flipcheck.cli.types import one_line
from flipcheck.errors import InputError, UsageError

# name -> module of this package; order is the order of `flipcheck --help`.
COMMANDS = {
    "plan": "plan",
    "prove": "prove",
    "barriers": "barriers",
    "explore": "explore",
    "render": "render",
    "import-plan": "import_plan",
    "conform": "conform",
    "flink": "flink",
    "bench": "bench",
    "verify": "verify",
    "mutants": "mutants",
    "sweep": "sweep",
    "replay": "replay",
    "demo": "demo",
}

EPILOG = """\
examples:
  flipcheck plan examples/graphs/figure1.json           the checkpoint plan as a table
  flipcheck plan --json --algorithm wiki-b examples/graphs/figure1.json
                                                        one JSON object per input file
  flipcheck prove --algorithm wiki-b examples/graphs/figure1.json
                                                        z3: algorithm == spec for all 2^tasks
                                                        states? No: a counterexample, exit 1
  flipcheck render examples/graphs/figure1.json --out figure1.svg
                                                        picture of the execution graph and plan

exit codes: 0 ok / proved, 1 a property is violated (counterexample printed), 2 bad input or option.
"""


class _OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        sys.stderr.write(one_line(f"{self.prog}: {message} (see {self.prog} --help)") + "\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineErrorParser(
        prog="flipcheck",
        description="Executable specification and verification suite for checkpointing and recovery "
        "in dataflow engines (Apache Flink FLIP-147 and related designs).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from flipcheck import __version__
    from flipcheck.compiled import build_label

    parser.add_argument("--version", action="version", version=f"flipcheck {__version__}, {build_label()}",
                        help="show the version and which build of the explorer runs (compiled or pure Python)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineErrorParser)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"{__name__}.{module_name}")
        sub = subparsers.add_parser(
            name,
            help=module.HELP,
            # A command whose text lists the registered designs builds it now, not at import.
            description=module.description() if hasattr(module, "description") else module.DESCRIPTION,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            epilog=getattr(module, "EPILOG", None),
        )
        module.configure(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error already printed on one line
        return stop.code if isinstance(stop.code, int) else 2
    if getattr(sys.stdout, "errors", None) == "strict" and hasattr(sys.stdout, "reconfigure"):
        # A file name from the command line may hold undecodable bytes (os.fsdecode's lone
        # surrogates); echoing it must not crash the command after its work is done.
        sys.stdout.reconfigure(errors="backslashreplace")
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    args.command_line = argv is None   # this process runs the command line (explore may start it again)
    try:
        with warnings.catch_warnings():
            # A warning (a variant setting the base's own value, say) is one line, like an error.
            warnings.showwarning = lambda message, *_, **__: sys.stderr.write(
                one_line(f"flipcheck {args.command}: warning: {message}") + "\n")
            return int(args.run(args) or 0)
    except InputError as error:
        sys.stderr.write(one_line(f"flipcheck: {error.source}: {error.message}") + "\n")
        return 2
    except UsageError as error:
        sys.stderr.write(one_line(f"flipcheck {args.command}: {error}") + "\n")
        return 2
    except BrokenPipeError:
        # `flipcheck plan ... | head`: stop quietly, like other Unix tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("flipcheck: interrupted\n")
        return 130
    except Exception as error:
        # A user's own variant (--variant FILE.py:Class) that raises is a bad option, not a
        # flipcheck crash: one line naming their file and line. Anything else is ours: traceback.
        from flipcheck.reference_impl.user_variants import failure_in_variant
        where = failure_in_variant(error)
        if where is None:
            raise
        sys.stderr.write(one_line(f"flipcheck {args.command}: {where}") + "\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
