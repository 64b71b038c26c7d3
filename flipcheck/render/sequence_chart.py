"""Lane charts: the DOT layout shared by flipcheck's message-sequence charts.

Time runs downwards, one row per step; one column (*lane*) per actor. Every row has a node in
every lane (an invisible point when nothing happens there), so Graphviz keeps the rows level
(``rank=same``) and the lanes in order (invisible edges left to right); lane *segments* join a
lane's nodes from one row to the next, and *arrows* join any two cells (a message from its
sender to its receiver).

Example
-------
>>> chart = LaneChart("demo", ["a", "b"], "two lanes")
>>> chart.row({"a": "a", "b": "b"}, header=True)
0
>>> chart.row({"a": ("send", "shape=box")})
1
>>> chart.row({"b": ("receive", "shape=box")})
2
>>> chart.arrow("a", 1, "b", 2, "color=blue")
>>> source = chart.source()
>>> "a_1 -> b_2" in source and source.count("rank=same") == 3
True
"""

from __future__ import annotations

import html
import math
import textwrap

__all__ = ["LaneChart", "quote", "literal", "heading_label", "EMPTY_CELL", "WIDE_EM", "HEADING_SIZE", "SUBHEADING_SIZE"]

EMPTY_CELL = "shape=point width=0.02 color=grey60"
_HEADER = "shape=plaintext fontsize=11"
HEADING_SIZE, SUBHEADING_SIZE = 14, 9   # points
# Graphviz measures text with its own metrics of Helvetica; a browser may draw it in a wider
# font (DejaVu Sans where Helvetica is missing). A heading's cell is made as wide as that wider
# font needs (an upper estimate: this many ems a character, bold included), its lines start at
# the cell's left edge, and long lines are wrapped, so no heading runs past the picture's edge.
WIDE_EM = 0.68
_HEADING_CHARS, _SUBHEADING_CHARS = 80, 110


def heading_label(heading: str, subheading: str = "") -> str:
    """A chart's title (bold) and subtitle (small) as a Graphviz HTML label, wrapped and escaped.

    >>> label = heading_label("consistent_cut violated", "checkpoint 2, channel a -> b: " + "lost " * 30)
    >>> label.count("<br/>"), "a -&gt; b" in label
    (1, True)
    """
    title = textwrap.wrap(heading, _HEADING_CHARS) or [""]
    small = textwrap.wrap(subheading, _SUBHEADING_CHARS)
    width = math.ceil(WIDE_EM * max([HEADING_SIZE * len(line) for line in title]
                                    + [SUBHEADING_SIZE * len(line) for line in small]))
    cell = f'<td align="left" balign="left" width="{width}">'
    rows = f"<tr>{cell}<b>{'<br/>'.join(html.escape(line) for line in title)}</b></td></tr>"
    if small:
        rows += (f'<tr>{cell}<font point-size="{SUBHEADING_SIZE}">'
                 f"{'<br/>'.join(html.escape(line) for line in small)}</font></td></tr>")
    return f'<<table border="0" cellborder="0" cellspacing="0" cellpadding="1">{rows}</table>>'


def quote(text: str) -> str:
    """A DOT string; labels here contain no backslashes except the ``\\n`` line breaks (text
    from an input goes through :func:`literal` first)."""
    return '"' + text.replace('"', '\\"') + '"'


def literal(text: str) -> str:
    """Text from an input (a vertex name, a file name) for a label: its backslashes doubled, so
    that DOT reads none of them as an escape (``\\N``, ``\\l``).

    >>> backslash = chr(92)
    >>> literal("a" + backslash + "N") == "a" + 2 * backslash + "N"
    True
    """
    return text.replace("\\", "\\\\")


class LaneChart:
    """Builds the DOT source of a lane chart row by row."""

    def __init__(self, name: str, lanes, heading: str, subheading: str = "", *, nodesep: float = 0.4,
                 ranksep: float = 0.2):
        self.lanes = list(lanes)
        self.rows = 0
        self._out = [f"digraph {name} {{",
                     f'  graph [rankdir=TB nodesep={nodesep} ranksep={ranksep} remincross=false fontname="Helvetica"];',
                     '  node [fontname="Helvetica" fontsize=10];', '  edge [arrowhead=none fontname="Helvetica"];',
                     f"  labelloc=t labeljust=l fontsize={HEADING_SIZE} label={heading_label(heading, subheading)};"]

    def row(self, cells: dict, header: bool = False) -> int:
        """Add a row: ``cells`` maps a lane to ``(label, style)`` (or, with ``header``, to its
        title). Returns the row's index."""
        index = self.rows
        self._out.append("  { rank=same;")
        for lane in self.lanes:
            cell = cells.get(lane)
            label, style = ((cell or "", _HEADER) if header else (cell or ("", EMPTY_CELL)))
            self._out.append(f"    {lane}_{index} [label={quote(label)} {style}];")
        self._out.append("  }")
        for left, right in zip(self.lanes, self.lanes[1:]):  # keep the lanes in order
            self._out.append(f"  {left}_{index} -> {right}_{index} [style=invis];")
        self.rows += 1
        return index

    def segment(self, lane: str, index: int, look: str = "color=grey70") -> None:
        """The lane's line from row ``index - 1`` to row ``index``."""
        self._out.append(f"  {lane}_{index - 1} -> {lane}_{index} [{look} weight=100];")

    def arrow(self, from_lane: str, from_row: int, to_lane: str, to_row: int, look: str = "") -> None:
        """An arrow between two cells that does not disturb the layout."""
        self._out.append(f"  {from_lane}_{from_row} -> {to_lane}_{to_row} [arrowhead=normal constraint=false {look}];")

    def source(self) -> str:
        return "\n".join(self._out + ["}"]) + "\n"
