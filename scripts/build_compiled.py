"""Build the optional mypyc-compiled copy of the explorer's hot modules into ``build/compiled``.

The compiled modules are built from the very same source files (no second copy of a rule): the
pure-Python files stay where they are, and the extension modules land in a separate directory
that :mod:`flipcheck.compiled` puts in front of them at import time unless
``FLIPCHECK_PURE_PYTHON=1`` is set. Needs a C compiler and mypy (which ships mypyc); without
either, one line says the explorer runs uncompiled and the exit code is 0.

Usage: ``.venv/bin/python scripts/build_compiled.py [--if-stale] [--modules flipcheck.model.protocol.state ...]``
(``make install`` runs it with ``--if-stale``; the compiler's output goes to ``build/compiled.log``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "flipcheck"))  # compiled.py only, without importing the package
from compiled import COMPILED_DIR, COMPILED_MODULES, PACKAGE_DIRS, SOURCES_FILE, source_digests, stale_sources  # noqa: E402


def _missing_tool() -> str | None:
    compiler = sysconfig.get_config_var("CC") or "cc"
    if shutil.which(compiler.split()[0]) is None:
        return f"no C compiler ({compiler})"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypy (which ships mypyc) is not installed"
    return None


def _staging_tree(staging: Path) -> None:
    """mypyc names a module by its path, so the sources are seen as the installed package
    ``flipcheck`` would lay them out, through symlinks (nothing is copied)."""
    if staging.exists():
        shutil.rmtree(staging)
    package = staging / "flipcheck"
    package.mkdir(parents=True)
    for entry in (ROOT / "flipcheck").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, directory in PACKAGE_DIRS.items():
        (package / name).symlink_to(ROOT / directory)


@contextlib.contextmanager
def _output_to(log: Path):
    """Send this process's stdout and stderr (the compiler's too) to ``log`` for a while."""
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log, "w") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", default=list(COMPILED_MODULES),
                        help="dotted module names to compile (default: flipcheck.compiled.COMPILED_MODULES)")
    parser.add_argument("--if-stale", action="store_true",
                        help="do nothing when the build is there and its sources are unchanged (make install)")
    args = parser.parse_args(argv)
    if args.if_stale and not stale_sources():
        return 0    # built from these very sources (checked first: importing mypyc takes seconds)
    missing = _missing_tool()
    if missing:
        print(f"flipcheck: {missing}; the explorer runs uncompiled (pure Python)")
        return 0
    started = time.perf_counter()
    from mypyc.build import mypycify
    from setuptools import setup

    digests = source_digests()   # before compiling: an edit made meanwhile makes the build stale
    staging = ROOT / "build" / "compiled-src"
    _staging_tree(staging)
    paths = [str(Path("flipcheck", *name.split(".")[1:]).with_suffix(".py")) for name in args.modules]
    out = ROOT / COMPILED_DIR
    if out.exists():
        shutil.rmtree(out)
    os.chdir(staging)
    # Modules that stay interpreted are read for their types only; their own errors do not stop the build.
    options = ["--follow-imports=silent", "--ignore-missing-imports"]
    log = ROOT / "build" / "compiled.log"
    with _output_to(log):   # mypy's and gcc's lines: one line here, the rest in the log
        try:
            setup(name="flipcheck-compiled", ext_modules=mypycify(options + paths, opt_level="3"),
                  script_args=["build_ext", "--build-lib", str(out), "--build-temp", str(ROOT / "build" / "compiled-tmp")])
            failed = None
        except (Exception, SystemExit) as error:   # mypyc reports a type error by exiting
            failed = error
    if failed is not None:
        shutil.rmtree(out, ignore_errors=True)
        why = "mypy found errors" if isinstance(failed, SystemExit) else str(failed)[:120] or type(failed).__name__
        print(f"flipcheck: the compiled build failed ({why}; "
              f"see {log.relative_to(ROOT)}); the explorer runs uncompiled (pure Python)")
        return 0
    # Written last: flipcheck.compiled loads the build only while these sources are unchanged.
    (out / SOURCES_FILE).write_text(json.dumps(digests, indent=1, sort_keys=True))
    print(f"flipcheck: compiled {len(paths)} modules into {out.relative_to(ROOT)} "
          f"in {time.perf_counter() - started:.0f} s (mypyc; FLIPCHECK_PURE_PYTHON=1 runs them uncompiled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
