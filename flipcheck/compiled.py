"""Which build of the explorer runs: the pure-Python modules, or their mypyc-compiled copies.

``scripts/build_compiled.py`` compiles the modules listed in :data:`COMPILED_MODULES` from the
same source files into :data:`COMPILED_DIR` (``build/compiled`` in the repository), never next
to the sources. :func:`activate`, called once when ``flipcheck`` is imported, puts a finder in
front of the ordinary import system that loads exactly those modules from their extension files;
with ``FLIPCHECK_PURE_PYTHON=1``, or when nothing was built, it does nothing and every module is
the readable ``.py`` file. Because the choice is made by one finder, before any model module is
imported, a process never mixes the two builds of one module.

>>> import os
>>> label = build_label()
>>> label.startswith("compiled") or label.startswith("pure Python")
True
>>> "flipcheck.model.protocol.switches" in COMPILED_MODULES   # variants override its attributes
False
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["COMPILED_DIR", "COMPILED_MODULES", "PURE_PYTHON_VARIABLE", "activate", "active_modules", "build_label"]

#: Relative to the repository root (an editable install's parent of ``flipcheck/``).
COMPILED_DIR = "build/compiled"
PURE_PYTHON_VARIABLE = "FLIPCHECK_PURE_PYTHON"

#: The modules compiled, each unchanged but for annotations. docs/compiled.md says why the others
#: stay interpreted: switches.py is subclassed by every variant (compiled, it ignored their
#: overrides); structure.py and fingerprints.py crashed mypyc; protocol_explore.py names a
#: dataclass field ``property``, which mypyc takes for the decorator below it (a rename, not an
#: annotation, would fix it); explore.py crashes mypyc (``bytearray`` of a generator).
COMPILED_MODULES = (
    "flipcheck.model.protocol.state",
    "flipcheck.model.protocol.step",
    "flipcheck.model.protocol.tasks",
    "flipcheck.model.protocol.coordinator",
    "flipcheck.model.protocol.failover",
    "flipcheck.model.protocol.machine",
    "flipcheck.model.protocol.independence",
    "flipcheck.properties.protocol_reduction",
    "flipcheck.properties.protocol_symmetry",
)

_ROOT = Path(__file__).resolve().parent.parent
_active: dict[str, str] = {}


def _extension(name: str) -> Path | None:
    base = _ROOT / COMPILED_DIR / Path(*name.split("."))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if base.with_suffix(suffix).is_file():
            return base.with_suffix(suffix)
    return None


class _CompiledFinder:
    """Finds the compiled copy of a module in :data:`COMPILED_MODULES`, and nothing else."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        location = _active.get(name)
        if location is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(name, location)
        return importlib.util.spec_from_file_location(name, location, loader=loader)


def activate() -> None:
    """Load the compiled modules from now on, unless ``FLIPCHECK_PURE_PYTHON=1`` or none is built."""
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0") or _active:
        return
    found = {name: str(path) for name in COMPILED_MODULES if (path := _extension(name)) is not None}
    if not found:
        return
    _active.update(found)
    # mypyc puts the code of all modules in one shared library, imported by its top-level name.
    sys.path.append(str(_ROOT / COMPILED_DIR))
    sys.meta_path.insert(0, _CompiledFinder)


def active_modules() -> tuple[str, ...]:
    """The modules this process loads compiled."""
    return tuple(_active)


def build_label() -> str:
    """One phrase for ``flipcheck --version``: which build runs, and why."""
    if _active:
        return f"compiled (mypyc: {len(_active)} of {len(COMPILED_MODULES)} hot modules)"
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return f"pure Python ({PURE_PYTHON_VARIABLE} is set)"
    return "pure Python (no compiled build; see scripts/build_compiled.py)"
