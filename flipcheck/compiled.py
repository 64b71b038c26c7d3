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
>>> digests = source_digests()
>>> stale_sources(digests), stale_sources({**digests, "model/protocol/tasks.py": "edited"})
([], ['model/protocol/tasks.py'])
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

__all__ = ["COMPILED_DIR", "COMPILED_MODULES", "PACKAGE_DIRS", "PURE_PYTHON_VARIABLE", "RECORD_REPLACE_MODULE",
           "SOURCES_FILE", "activate",
           "active_modules", "build_label", "source_digests", "stale_sources"]

#: Relative to the repository root (an editable install's parent of ``flipcheck/``).
COMPILED_DIR = "build/compiled"
#: What the build was made from (``{source path: sha256}``), written by scripts/build_compiled.py.
SOURCES_FILE = "sources.json"
#: Where each installed subpackage's sources live in the repository (pyproject's package-dir).
PACKAGE_DIRS = {"model": "model", "properties": "properties", "generators": "generators",
                "reference_impl": "reference_impl"}
PURE_PYTHON_VARIABLE = "FLIPCHECK_PURE_PYTHON"

#: Where the compiled ``_replace`` of the model's records comes from (:func:`_install_replace`).
RECORD_REPLACE_MODULE = "flipcheck.record_replace"

#: The modules compiled: model/ files unchanged but for annotations, properties/ files with a few
#: small edits where mypyc crashed (docs/compiled.md). Interpreted: switches.py, subclassed by
#: every variant (compiled, it would ignore their overrides), and structure.py (a NamedTuple field
#: ``index`` shadows ``tuple.index``, which no annotation fixes).
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
    "flipcheck.properties.fingerprints",
    "flipcheck.properties.explore",
    "flipcheck.properties.protocol_properties",
    "flipcheck.properties.protocol_explore",
    "flipcheck.properties.protocol_trace_validation",
    "flipcheck.parallel_explore.expansion",
    RECORD_REPLACE_MODULE,
)

_ROOT = Path(__file__).resolve().parent.parent
_active: dict[str, str] = {}
_stale: list[str] = []


def _source_of(name: str) -> Path:
    """The source file of the installed module ``name`` (``flipcheck.model.x`` is model/x.py)."""
    parts = name.split(".")[1:]
    if parts[0] in PACKAGE_DIRS:
        return (_ROOT / PACKAGE_DIRS[parts[0]]).joinpath(*parts[1:]).with_suffix(".py")
    return (_ROOT / "flipcheck").joinpath(*parts).with_suffix(".py")


def _sources() -> list[Path]:
    """The files a build depends on: each compiled module's source, and every file of
    model/protocol (the compiled rules read the interpreted ``structure`` and ``switches``)."""
    files = {_source_of(name) for name in COMPILED_MODULES}
    files.update((_ROOT / "model" / "protocol").glob("*.py"))
    return sorted(files)


def source_digests() -> dict[str, str]:
    """``{path relative to the repository: sha256}`` of what a build is made from."""
    return {str(f.relative_to(_ROOT)): hashlib.sha256(f.read_bytes()).hexdigest() for f in _sources()}


def stale_sources(built: dict[str, str] | None = None) -> list[str]:
    """The sources changed since the build (all of them if it recorded none); ``built``: the
    digests it recorded, read from the build by default."""
    if built is None:
        try:
            built = json.loads((_ROOT / COMPILED_DIR / SOURCES_FILE).read_text())
        except (OSError, ValueError):
            built = {}
    return [path for path, digest in source_digests().items() if built.get(path) != digest]


def _extension(name: str) -> Path | None:
    base = _ROOT / COMPILED_DIR / Path(*name.split("."))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if base.with_suffix(suffix).is_file():
            return base.with_suffix(suffix)
    return None


def _install_replace() -> None:
    """Give the records (NamedTuple classes) of every compiled module imported so far the
    compiled ``_replace`` (:mod:`flipcheck.record_replace`): mypyc leaves them Python classes,
    whose ``_replace`` is ``collections``' interpreted one. It answers exactly as that one does
    (tested). Run after each compiled module the finder loads: mypyc imports the other modules of
    its build from within, past the finder, so each time every compiled module is looked at."""
    from flipcheck.record_replace import Replace
    for name in _active:
        module = sys.modules.get(name)
        if module is None or name == RECORD_REPLACE_MODULE:
            continue
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")
                    and value.__module__ == name and not isinstance(value.__dict__.get("_replace"), Replace)):
                value._replace = Replace()


class _CompiledLoader(importlib.machinery.ExtensionFileLoader):
    def exec_module(self, module) -> None:
        super().exec_module(module)
        if module.__name__ != RECORD_REPLACE_MODULE:
            _install_replace()


class _CompiledFinder:
    """Finds the compiled copy of a module in :data:`COMPILED_MODULES`, and nothing else."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        location = _active.get(name)
        if location is None:
            return None
        loader = _CompiledLoader(name, location)
        return importlib.util.spec_from_file_location(name, location, loader=loader)


def activate() -> None:
    """Load the compiled modules from now on, unless ``FLIPCHECK_PURE_PYTHON=1`` or none is built."""
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0") or _active:
        return
    found = {name: str(path) for name in COMPILED_MODULES if (path := _extension(name)) is not None}
    if not found:
        return
    # A rule edited since the build would silently run its old compiled copy: run pure instead.
    _stale[:] = stale_sources()
    if _stale:
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
    if _stale:
        return f"pure Python (the compiled build is older than {_stale[0]}; `make install` rebuilds it)"
    return "pure Python (no compiled build; see scripts/build_compiled.py)"
