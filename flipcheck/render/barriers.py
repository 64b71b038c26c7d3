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
>>> from flipcheck.properties.barriers_replay import replay
>>> source = chart_source(replay(Config(2), [parse_event(t) for t in ("B1@0", "D@1", "E@1")]))
>>> source.count("penwidth=4")        # channel 0 blocked between steps 1 and 3
2
>>> "TRIGGER 1" in source and "EOP" in source
True
"""

from __future__ import annotations

from flipcheck.model.barriers import (
    ABORTED, ALIGNMENT_START, ANNOUNCE, BARRIER, CANCEL, COMPLETED, DATA, END, IN_FLIGHT, RPC, TIMEOUT, TRIGGERED,
    initial_state, view,
)

from flipcheck.properties.barriers_replay import Replay
from flipcheck.render.sequence_chart import LaneChart

__all__ = ["chart_source", "render_chart"]

_EVENT_STYLE = {
    BARRIER: 'shape=box style="filled" fillcolor="#cfe2ff" color="#1f4e9c"',
    CANCEL: 'shape=box style="filled" fillcolor="#e5e5e5" color="#555555"',
    ANNOUNCE: 'shape=box style="dashed" color="#1f4e9c"',
    END: 'shape=box style="filled" fillcolor="black" fontcolor="white"',
    DATA: 'shape=circle style="filled" fillcolor="white" fixedsize=true width=0.45 fontsize=9',
}


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
    heading = title or (f"{cfg.channels} channels, {cfg.mode}" + (", alignment timeout" if cfg.alignment_timeout else "")
                        + ("" if cfg.after_finished else ", checkpoints after tasks finished off"))
    chart = LaneChart("barriers", lanes, heading,
                      "red lane: blocked   dotted lane: ended   orange record: in-flight data", nodesep=0.5, ranksep=0.25)
    chart.row({lane: (f"channel {lane[1:]}" if lane != "task" else "task") for lane in lanes}, header=True)
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
        chart.row(cells)
        for ch in range(cfg.channels):  # the lane segment from the previous row to this one
            if before.blocked >> ch & 1:
                look = 'color="#c62828" penwidth=4'
            elif not before.open >> ch & 1:
                look = 'color=grey70 style=dotted'
            else:
                look = "color=grey60"
            chart.segment(f"c{ch}", index, look)
        chart.segment("task", index, "color=grey80")
        if task is not None and event[0] in _EVENT_STYLE:
            chart.arrow(f"c{event[-1]}", index, "task", index, "style=dashed color=grey40")
        before = s.view
    return chart.source()


def render_chart(result: Replay, path: str) -> str:
    """Write the chart to ``path`` (format from the extension: .svg or .png)."""
    from flipcheck.render.core import render_source

    return render_source(chart_source(result), path)
