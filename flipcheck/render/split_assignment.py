"""Message-sequence charts of a split-assignment run (FLIP-27 with checkpoints).

Time runs downwards, one row per action. Lanes: the ``CheckpointCoordinator``, the
``SourceCoordinator`` (the enumerator), and one per reader. On the coordinator lanes: checkpoint
triggers, the coordinator snapshot with the enumerator's splits, task triggers, completions,
aborts, notifications; on the enumerator lane every ``AddSplitEvent`` (orange when the gateway
holds it); on a reader lane what reaches it (``split x``, ``barrier c`` with the snapshot taken),
finished splits, failures (red) and resets with what was restored and returned. The step that
violated a property is drawn with a thick red border and the violation is the chart's title. A
column on the right shows who owns which split after each step.

Example
-------
>>> from flipcheck.model.split_assignment import Config
>>> from flipcheck.properties.split_assignment_explore import replay
>>> steps = replay(Config(readers=1, splits=1), [("register", 0), ("trigger",), ("assign", 0)])
>>> source = chart_source(Config(readers=1, splits=1), steps)
>>> "AddSplit(0) held" in source and "snapshot 1" in source
True
"""

from __future__ import annotations

from flipcheck.model.split_assignment import SPLIT, Config, View
from flipcheck.render.sequence_chart import LaneChart

__all__ = ["chart_source", "render_chart", "ownership"]

_RED = "#c62828"
_STYLES = {
    "ok": 'shape=box style="rounded,filled" fillcolor="#f4f4f4"',
    "event": 'shape=box style="rounded,filled" fillcolor="#cfe2ff" color="#1f4e9c"',
    "held": 'shape=box style="rounded,filled" fillcolor="#ffc680"',
    "good": 'shape=box style="rounded,filled" fillcolor="#c7efc4"',
    "bad": f'shape=box style="rounded,filled" fillcolor="#f7c6c6" color="{_RED}"',
}


def _set(items) -> str:
    return "{" + ",".join(map(str, sorted(items))) + "}"


def ownership(v: View) -> str:
    """One line per owner: the enumerator's pool and each reader's inbox, splits and done splits."""
    lines = [f"enumerator {_set(v.pool)}"]
    for r in range(len(v.alive)):
        if not v.alive[r]:
            lines.append(f"r{r}: FAILED")
            continue
        inbox = " ".join(f"s{i[1]}" if i[0] == SPLIT else f"B{i[1]}" for i in v.inbox[r])
        lines.append(f"r{r}: {_set(v.splits[r])} done {_set(v.done[r])}" + (f" ← [{inbox}]" if inbox else ""))
    if v.completed is not None:
        lines.append(f"checkpoint {v.completed.id}: enum {_set(v.completed.pool)} "
                     + " ".join(f"r{r}{_set(s | d)}" for r, (s, d) in enumerate(v.completed.readers)))
    return "\\l".join(lines) + "\\l"


def _cells(step, readers: int) -> dict:
    """Lane -> (label, style kind) for one step."""
    action, before, after = step.action, step.before, step.after
    kind = action[0]
    cells: dict = {}
    if kind == "register":
        cells[f"r{action[1]}"] = ("register", "ok")
    elif kind == "assign":
        r = action[1]
        given = sorted(before.pool - after.pool)
        split = given[0] if given else "?"
        gateway = _gateway_holds(before, r)
        cells["enum"] = (f"AddSplit({split}) {'held' if gateway else '→'} r{r}", "held" if gateway else "event")
    elif kind == "deliver":
        r = action[1]
        item = before.inbox[r][0] if before.inbox[r] else ("?", "?")
        if item[0] == SPLIT:
            cells[f"r{r}"] = (f"split {item[1]}", "event")
        else:
            snap = _set(after.splits[r] | after.done[r])
            cells[f"r{r}"] = (f"barrier {item[1]}\\nsnapshot {snap}", "good")
            if after.completed is not None and (before.completed is None or before.completed.id != after.completed.id):
                cells["cc"] = (f"checkpoint {after.completed.id} complete", "good")
    elif kind == "finish":
        r = action[1]
        cells[f"r{r}"] = (f"done {_set(after.done[r] - before.done[r])}", "ok")
    elif kind == "trigger":
        cells["cc"] = (f"trigger {after.pending or before.pending or ''}", "good")
        if after.coordinator_snapshot > before.coordinator_snapshot:
            cells["enum"] = (f"snapshot {after.coordinator_snapshot}\\nenumerator {_set(after.pool)}", "good")
    elif kind == "trigger_tasks":
        cells["cc"] = (f"trigger tasks {before.pending}", "good")
        if after.coordinator_snapshot > before.coordinator_snapshot:
            cells["enum"] = (f"snapshot {after.coordinator_snapshot}\\nenumerator {_set(after.pool)}", "good")
    elif kind == "notify":
        cells["enum"] = (f"notified of {after.notified}", "ok")
    elif kind == "expire":
        cells["cc"] = (f"abort {before.pending}", "bad")
    elif kind == "lose":
        r = action[1]
        cells[f"r{r}"] = (f"AddSplit({before.inbox[r][0][1]}) lost", "bad")
    elif kind in ("detect", "fail"):
        r = action[1]
        cells[f"r{r}"] = ("FAIL" + (" (lost event noticed)" if kind == "detect" else ""), "bad")
        if before.pending is not None and after.pending is None:
            cells["cc"] = (f"abort {before.pending}", "bad")
    elif kind == "reset":
        r = action[1]
        restored = before.completed.id if before.completed is not None else -1
        cells[f"r{r}"] = (f"reset to {restored}\\nrestored {_set(after.splits[r] | after.done[r])}", "ok")
        back = after.pool - before.pool
        if back:
            cells["enum"] = (f"addSplitsBack {_set(back)}", "event")
    elif kind == "global":
        cells["cc"] = ("GLOBAL FAILOVER", "bad")
        cells["enum"] = (f"recreated: {_set(after.pool)}", "ok")
        for r in range(readers):
            cells[f"r{r}"] = (f"restored {_set(after.splits[r] | after.done[r])}", "ok")
    else:
        cells["cc"] = (" ".join(map(str, action)), "ok")
    return cells


def _gateway_holds(before: View, r: int) -> bool:
    return before.pending is not None and before.coordinator_snapshot >= before.pending and \
        before.snapshots[r] < before.pending


def chart_source(config: Config, steps, title: str | None = None) -> str:
    """The DOT source of the chart of ``steps`` (from :func:`~flipcheck.properties.split_assignment_explore.replay`)."""
    lanes = ["cc", "enum"] + [f"r{r}" for r in range(config.readers)] + ["owners"]
    names = {"cc": "CheckpointCoordinator", "enum": "SourceCoordinator\\n(enumerator)", "owners": "who owns what"}
    names.update({f"r{r}": f"reader {r}" for r in range(config.readers)})
    bad = next((s for s in steps if s.violations), None)
    heading = title or (str(bad.violations[0]) if bad is not None else
                        f"{config.readers} readers, {config.splits} splits ({config.design})")
    chart = LaneChart("splits", lanes, heading)
    chart.row(names, header=True)
    for index, step in enumerate(steps, 1):
        cells = {lane: (label, _STYLES[kind]) for lane, (label, kind) in _cells(step, config.readers).items()}
        if step.violations:
            cells = {lane: (label, style + f' penwidth=3 color="{_RED}"') for lane, (label, style) in cells.items()}
        cells["owners"] = (ownership(step.after), 'shape=plaintext fontsize=9 fontname="Courier"')
        chart.row(cells)
        for lane in lanes[:-1]:
            chart.segment(lane, index)
        chart.segment("owners", index, "style=invis")
    return chart.source()


def render_chart(config: Config, steps, path: str, title: str | None = None) -> str:
    """Write the chart to ``path`` (.svg or .png)."""
    from flipcheck.render.core import render_source

    return render_source(chart_source(config, steps, title), path)
