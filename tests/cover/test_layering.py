"""The architecture, enforced: imports point one way, private names stay in their module, and
no two modules import each other (docs/architecture.md).

The layers, lowest first (a module may import its own layer and the layers below it):

    model <- reference_impl <- properties <- generators <- flipcheck

and inside ``flipcheck/``:

    errors, system_tools <- render, flink <- designs <- sweep <- bench <- api, pytest_plugin <- cli

(the package's ``__init__`` re-exports ``api`` lazily, so it imports nothing itself)

Every import counts, also one inside a function (lazy imports are still dependencies).
The scan reads the source with :mod:`ast`; it imports nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
# The installed package maps these folders to subpackages of flipcheck (pyproject.toml).
PACKAGE_DIRS = {"model": "flipcheck.model", "reference_impl": "flipcheck.reference_impl",
                "properties": "flipcheck.properties", "generators": "flipcheck.generators", "flipcheck": "flipcheck"}
# Lowest first; a module's layer is its longest matching prefix.
LAYERS = [
    ("flipcheck.model",),
    ("flipcheck.reference_impl",),
    ("flipcheck.properties",),
    ("flipcheck.generators",),
    ("flipcheck", "flipcheck.errors", "flipcheck.system_tools"),
    ("flipcheck.render", "flipcheck.flink"),
    ("flipcheck.designs",),
    ("flipcheck.sweep",),
    ("flipcheck.bench",),
    ("flipcheck.api", "flipcheck.pytest_plugin"),
    ("flipcheck.cli",),
]


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def layer_of(module: str) -> int:
    best, best_length = None, -1
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = rank, len(prefix)
    return best


def source_modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the package."""
    modules = {}
    for folder, package in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


def modules_of_tests() -> dict[str, Path]:
    return {"tests." + ".".join(p.relative_to(ROOT / "tests").with_suffix("").parts): p
            for p in sorted((ROOT / "tests").rglob("*.py"))}


def imports_of(module: str, path: Path, known: set[str]):
    """(line, imported module, names taken from it) for every import in the file, relative
    imports resolved; ``from package import module`` counts as importing the module."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names = []
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    yield node.lineno, f"{base}.{alias.name}", ()
                else:
                    names.append(alias.name)
            if names:
                yield node.lineno, base, tuple(names)


def private_attribute_uses(path: Path, module_aliases: set[str]):
    """``alias._name`` where ``alias`` was bound by importing one of our modules."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in module_aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            yield node.lineno, f"{node.value.id}.{node.attr}"


def module_aliases(path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.asname and a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module:
            aliases |= {a.asname or a.name for a in node.names if f"{node.module}.{a.name}" in known}
    return aliases


def upward_imports(modules: dict[str, Path]) -> list[str]:
    known = set(modules)
    problems = []
    for module, path in modules.items():
        own = layer_of(module)
        for line, target, _ in imports_of(module, path, known):
            if target.startswith("flipcheck") and target in known and layer_of(target) > own:
                problems.append(f"{shown(path)}:{line}: {module} imports {target}, a higher layer")
    return problems


def private_crossings(files: dict[str, Path], known: set[str]) -> list[str]:
    problems = []
    for module, path in files.items():
        for line, target, names in imports_of(module, path, known):
            if target.startswith("flipcheck") and target != module:
                for name in names:
                    if name.startswith("_") and not name.startswith("__"):
                        problems.append(f"{shown(path)}:{line}: imports private {target}.{name}")
        for line, use in private_attribute_uses(path, module_aliases(path, known)):
            problems.append(f"{shown(path)}:{line}: uses private {use} of another module")
    return problems


def import_cycles(modules: dict[str, Path]) -> list[list[str]]:
    """Cycles between modules (a package's ``__init__`` importing its own submodules aside)."""
    known = set(modules)
    graph = nx.DiGraph()
    for module, path in modules.items():
        for _, target, _ in imports_of(module, path, known):
            if target in known and target != module and not module.startswith(target + "."):
                graph.add_edge(module, target)
    return [sorted(cycle) for cycle in nx.simple_cycles(graph)]


MODULES = source_modules()


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []
    assert len(MODULES) > 100  # the scan sees the whole package


def test_no_upward_import():
    assert upward_imports(MODULES) == []


def test_no_private_name_crosses_a_module():
    assert private_crossings({**MODULES, **modules_of_tests()}, set(MODULES)) == []


def test_no_import_cycle():
    assert import_cycles(MODULES) == []


# The checks can fail: each finds its problem in a small fake package.


@pytest.fixture
def fake(tmp_path):
    def write(files: dict[str, str]) -> dict[str, Path]:
        modules = {}
        for name, text in files.items():
            path = tmp_path / (name.replace(".", "/") + ".py")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            modules[name] = path
        return modules

    return write


def test_an_upward_import_is_found(fake):
    modules = fake({"flipcheck.model.spec": "from flipcheck.designs import plan\n",
                    "flipcheck.designs.plan": "from flipcheck.model import spec\n"})
    problems = upward_imports(modules)
    assert len(problems) == 1 and "flipcheck.model.spec imports flipcheck.designs.plan" in problems[0]


def test_a_private_import_and_a_private_attribute_are_found(fake):
    modules = fake({"flipcheck.model.spec": "def _helper(): pass\n",
                    "flipcheck.properties.check": "from flipcheck.model.spec import _helper\n",
                    "flipcheck.properties.other": "from flipcheck.model import spec\nspec._helper()\n"})
    problems = private_crossings(modules, set(modules))
    assert [p.split(": ", 1)[1] for p in problems] == [
        "imports private flipcheck.model.spec._helper", "uses private spec._helper of another module"]


def test_a_cycle_is_found(fake):
    modules = fake({"flipcheck.sweep.runner": "from flipcheck.sweep.summary import finalise\n",
                    "flipcheck.sweep.summary": "def f():\n    from flipcheck.sweep.runner import read_cases\n"})
    assert import_cycles(modules) == [["flipcheck.sweep.runner", "flipcheck.sweep.summary"]]
