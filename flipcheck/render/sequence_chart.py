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

__all__ = ["LaneChart", "quote", "EMPTY_CELL"]

EMPTY_CELL = "shape=point width=0.02 color=grey60"
_HEADER = "shape=plaintext fontsize=11"


def quote(text: str) -> str:
    """A DOT string; labels here contain no backslashes except the ``\\n`` line breaks."""
    return '"' + text.replace('"', '\\"') + '"'


class LaneChart:
    """Builds the DOT source of a lane chart row by row."""

    def __init__(self, name: str, lanes, heading: str, subheading: str = "", *, nodesep: float = 0.4,
                 ranksep: float = 0.2):
        self.lanes = list(lanes)
        self.rows = 0
        small = f'<br/><font point-size="9">{html.escape(subheading)}</font>' if subheading else ""
        self._out = [f"digraph {name} {{",
                     f'  graph [rankdir=TB nodesep={nodesep} ranksep={ranksep} remincross=false fontname="Helvetica"];',
                     '  node [fontname="Helvetica" fontsize=10];', '  edge [arrowhead=none];',
                     f"  labelloc=t label=<<b>{html.escape(heading)}</b>{small}>;"]

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
