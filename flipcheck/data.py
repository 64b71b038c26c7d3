"""Where flipcheck's own data files are, in a checkout and in an installed wheel.

The example job graphs live in the repository's ``examples/graphs/``; the wheel ships the same
files as the data-only package ``flipcheck.graphs`` (pyproject.toml), beside flipcheck's modules.

>>> sorted(p.name for p in example_graphs().glob("figure1.json"))
['figure1.json']
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["example_graphs"]

_PACKAGE = Path(__file__).resolve().parent


def example_graphs() -> Path:
    """The folder of the example job graphs: ``flipcheck/graphs`` when flipcheck is installed from
    a wheel, else ``examples/graphs`` of the checkout it runs from."""
    installed = _PACKAGE / "graphs"
    return installed if installed.is_dir() else _PACKAGE.parent / "examples" / "graphs"
