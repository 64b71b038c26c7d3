"""The system programs flipcheck runs: graphviz's ``dot`` (pictures) and Chromium (the report test).

``make install`` provides them (``scripts/provide-tools.sh``: apt-get as root when missing) and
links each into the virtualenv's ``bin/``, so a program is found on ``PATH`` or beside the Python
that runs flipcheck. Where one is missing, :func:`missing_program_message` is the one line that
says exactly what to install.

>>> find_program("no-such-program-flipcheck") is None
True
>>> missing_program_message("dot")
"graphviz's dot program is not installed: run `make install` as root, or install the Debian package graphviz (apt-get install graphviz)"
"""

from __future__ import annotations

import os
import shutil
import sys

__all__ = ["PROGRAMS", "find_program", "missing_program_message"]

# program -> (what it is, the Debian package that ships it)
PROGRAMS = {
    "dot": ("graphviz's dot program", "graphviz"),
    "chromium": ("headless Chromium", "chromium"),
}


def find_program(name: str) -> str | None:
    """The path of program ``name``: on ``PATH``, else beside ``sys.executable`` (where ``make
    install`` links it), else None."""
    return shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))


def missing_program_message(name: str) -> str:
    """One line naming the missing program and exactly what installs it."""
    what, package = PROGRAMS[name]
    return (f"{what} is not installed: run `make install` as root, or install the Debian package "
            f"{package} (apt-get install {package})")
