"""Step tables as pictures: a titled table in DOT, rows shaded where a property fails.

Example
-------
>>> source = table_source("steps", ["#", "event"], [[1, "barrier 1"], [2, "<end>"]], bad_rows=[1])
>>> "&lt;end&gt;" in source and source.count("#f8c9c4") == 2
True
"""

from __future__ import annotations

import html
from typing import Iterable, Sequence

__all__ = ["table_source"]


def _q(text) -> str:
    return html.escape(str(text), quote=True)


def table_source(title: str, header: Sequence, body: Sequence[Sequence], bad_rows: Iterable[int] = ()) -> str:
    """DOT for a titled table (a step chart); ``bad_rows`` are shaded red."""
    bad = set(bad_rows)
    cells = "".join(f'<TD BGCOLOR="#dddddd"><B>{_q(h)}</B></TD>' for h in header)
    lines = [f"<TR>{cells}</TR>"]
    for n, row in enumerate(body):
        colour = ' BGCOLOR="#f8c9c4"' if n in bad else ""
        lines.append("<TR>" + "".join(f'<TD ALIGN="LEFT"{colour}>{_q(c)}</TD>' for c in row) + "</TR>")
    label = f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4">{"".join(lines)}</TABLE>>'
    return (f'digraph chart {{\n\tlabelloc=t label="{_q(title)}" fontname="Helvetica"\n'
            f'\tnode [shape=plaintext fontname="Helvetica" fontsize=10]\n\tchart [label={label}]\n}}\n')
