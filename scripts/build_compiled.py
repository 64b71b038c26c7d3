"""Build the optional mypyc-compiled copy of the explorer's hot modules into ``build/compiled``.

The compiled modules are built from the very same source files (no second copy of a rule): the
pure-Python files stay where they are, and the extension modules land in a separate directory
that :mod:`flipcheck.compiled` puts in front of them at import time unless
``FLIPCHECK_PURE_PYTHON=1`` is set. Needs a C compiler and mypy (which ships mypyc); without
either, one line says the explorer runs uncompiled and the exit code is 0.

Usage: ``.venv/bin/python scripts/build_compiled.py [--modules flipcheck.model.protocol.state ...]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "flipcheck"))  # compiled.py only, without importing the package
from compiled import COMPILED_DIR, COMPILED_MODULES  # noqa: E402

# Where each installed subpackage's sources live in the repository (pyproject's package-dir).
PACKAGE_DIRS = {"model": "model", "properties": "properties", "generators": "generators",
                "reference_impl": "reference_impl"}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", default=list(COMPILED_MODULES),
                        help="dotted module names to compile (default: flipcheck.compiled.COMPILED_MODULES)")
    args = parser.parse_args(argv)
    missing = _missing_tool()
    if missing:
        print(f"flipcheck: {missing}; the explorer runs uncompiled (pure Python)")
        return 0
    from mypyc.build import mypycify
    from setuptools import setup

    staging = ROOT / "build" / "compiled-src"
    _staging_tree(staging)
    paths = [str(Path("flipcheck", *name.split(".")[1:]).with_suffix(".py")) for name in args.modules]
    out = ROOT / COMPILED_DIR
    if out.exists():
        shutil.rmtree(out)
    os.chdir(staging)
    # Modules that stay interpreted are read for their types only; their own errors do not stop the build.
    options = ["--follow-imports=silent", "--ignore-missing-imports"]
    setup(name="flipcheck-compiled", ext_modules=mypycify(options + paths, opt_level="3"),
          script_args=["build_ext", "--build-lib", str(out), "--build-temp", str(ROOT / "build" / "compiled-tmp")])
    print(f"flipcheck: compiled {len(paths)} modules into {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
