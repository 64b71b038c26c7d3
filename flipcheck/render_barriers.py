"""Message-sequence charts of a barrier replay (``flipcheck barriers --render FILE.svg``).

Time runs downwards, one row per step. One lane per input channel and one for the task:

* on a channel lane, the event of the step: barrier ``B1`` (blue box), cancellation marker
  ``C1`` (grey box), announcement ``A1`` (dashed box), EndOfPartition (black ``EOP``), record
  ``D#k`` (k-th record of that channel; orange when persisted as in-flight data);
* the lane itself is grey while the channel is open, **thick red while it is blocked**, dotted
  after EndOfPartition;
* on the task lane, what the step caused: a green ``TRIGGER``, a red ``ABORT`` with Flink's
  reason, ``complete`` when every barrier arrived, alignment starts; RPC triggers and timeouts
  appear there as their own events. A dashed arrow links an event to what it caused.

Example
-------
>>> from flipcheck.model.barriers import Config, parse_event
>>> from flipcheck.barrier_replay import replay
>>> source = chart_source(replay(Config(2), [parse_event(t) for t in ("B1@0", "D@1", "E@1")]))
>>> source.count("penwidth=4")        # channel 0 blocked between steps 1 and 3
2
>>> "TRIGGER 1" in source and "EOP" in source
True
"""

from __future__ import annotations

import html

from flipcheck.model.barriers import (
    ABORTED, ALIGNMENT_START, ANNOUNCE, BARRIER, CANCEL, COMPLETED, DATA, END, IN_FLIGHT, RPC, TIMEOUT, TRIGGERED,
    initial_state, view,
)

from .barrier_replay import Replay

__all__ = ["chart_source", "render_chart"]

_EVENT_STYLE = {
    BARRIER: 'shape=box style="filled" fillcolor="#cfe2ff" color="#1f4e9c"',
    CANCEL: 'shape=box style="filled" fillcolor="#e5e5e5" color="#555555"',
    ANNOUNCE: 'shape=box style="dashed" color="#1f4e9c"',
    END: 'shape=box style="filled" fillcolor="black" fontcolor="white"',
    DATA: 'shape=circle style="filled" fillcolor="white" fixedsize=true width=0.45 fontsize=9',
}


def _quote(text: str) -> str:
    """A DOT string; labels here contain no backslashes except the ``\\n`` line breaks."""
    return '"' + text.replace('"', '\\"') + '"'


def _event_label(event: tuple, record: int | None) -> str:
    kind = event[0]
    if kind in (BARRIER, CANCEL, ANNOUNCE):
        return f"{kind}{event[1]}"
    if kind == END:
        return "EOP"
    return f"D#{record}"


def _task_cell(event: tuple, outputs: tuple) -> tuple[str, str] | None:
    """Label and style of the task-lane node of a step (None: nothing happened there)."""
    lines, fill = [], None
    if event[0] == RPC:
        lines.append(f"RPC trigger {event[1]}")
        fill = "#fff3c4"
    elif event[0] == TIMEOUT:
        lines.append("alignment timeout")
        fill = "#fff3c4"
    for o in outputs:
        if o[0] == TRIGGERED:
            lines.append(f"TRIGGER {o[1]} ({o[2]})")
            fill = "#c7efc4"
        elif o[0] == ABORTED:
            lines.append(f"ABORT {o[1]} ({o[2].removeprefix('CHECKPOINT_DECLINED_')})")
            fill = "#f7c6c6"
        elif o[0] == COMPLETED:
            lines.append(f"complete {o[1]}")
        elif o[0] == ALIGNMENT_START:
            lines.append(f"alignment {o[1]} starts")
    if not lines:
        return None
    style = f'shape=box style="rounded,filled" fillcolor="{fill or "#f4f4f4"}"'
    return "\\n".join(lines), style


def chart_source(result: Replay, title: str | None = None) -> str:
    """The DOT source of the chart."""
    cfg = result.config
    lanes = [f"c{ch}" for ch in range(cfg.channels)] + ["task"]
    out = ["digraph barriers {", '  graph [rankdir=TB nodesep=0.5 ranksep=0.25 remincross=false fontname="Helvetica"];',
           '  node [fontname="Helvetica" fontsize=10];', '  edge [arrowhead=none];']
    heading = title or (f"{cfg.channels} channels, {cfg.mode}" + (", alignment timeout" if cfg.alignment_timeout else "")
                        + ("" if cfg.after_finished else ", checkpoints after tasks finished off"))
    legend = "red lane: blocked   dotted lane: ended   orange record: in-flight data"
    out.append(f'  labelloc=t label=<<b>{html.escape(heading)}</b><br/><font point-size="9">{legend}</font>>;')

    def row(index: int, cells: dict) -> None:
        out.append("  { rank=same;")
        for lane in lanes:
            name = f"{lane}_{index}"
            label, style = cells.get(lane, ("", "shape=point width=0.02 color=grey60"))
            out.append(f"    {name} [label={_quote(label)} {style}];")
        out.append("  }")
        for left, right in zip(lanes, lanes[1:]):  # keep the lanes in order
            out.append(f"  {left}_{index} -> {right}_{index} [style=invis];")

    row(0, {lane: (f"channel {lane[1:]}" if lane != "task" else "task", "shape=plaintext fontsize=11")
            for lane in lanes})
    before = view(cfg, initial_state(cfg))
    for index, (s, record) in enumerate(zip(result.steps, result.record_index), 1):
        cells = {}
        event = s.event
        if event[0] in _EVENT_STYLE:
            lane = f"c{event[-1]}"
            style = _EVENT_STYLE[event[0]]
            captured = [o for o in s.outputs if o[0] == IN_FLIGHT]
            if captured:
                style = style.replace('fillcolor="white"', 'fillcolor="#ffc680"')
            cells[lane] = (_event_label(event, record), style)
        task = _task_cell(event, s.outputs)
        if task is not None:
            cells["task"] = task
        row(index, cells)
        for ch in range(cfg.channels):  # the lane segment from the previous row to this one
            if before.blocked >> ch & 1:
                look = 'color="#c62828" penwidth=4'
            elif not before.open >> ch & 1:
                look = 'color=grey70 style=dotted'
            else:
                look = "color=grey60"
            out.append(f"  c{ch}_{index - 1} -> c{ch}_{index} [{look} weight=100];")
        out.append(f"  task_{index - 1} -> task_{index} [color=grey80 weight=100];")
        if task is not None and event[0] in _EVENT_STYLE:
            out.append(f"  c{event[-1]}_{index} -> task_{index} [style=dashed arrowhead=normal constraint=false "
                       "color=grey40];")
        before = s.view
    out.append("}")
    return "\n".join(out) + "\n"


def render_chart(result: Replay, path: str) -> str:
    """Write the chart to ``path`` (format from the extension: .svg or .png)."""
    from .render import render_source

    return render_source(chart_source(result), path)
