"""Pictures of checkpoint plans: the execution graph, grouped per job vertex, coloured by the plan.

Each job vertex is a graphviz cluster labelled with its id and parallelism ("fully finished"
when every subtask is FINISHED); inside it, one node per subtask:

* triggered tasks are filled blue (the new "roots" the coordinator triggers),
* running tasks that are waited for are plain white,
* FINISHED tasks are grey,
* unfinished tasks in another state (CANCELED, DEPLOYING, ...) are yellow and name the state.

ALL_TO_ALL job edges are drawn once, as a bold edge between the two clusters; POINTWISE edges
are drawn task to task, dashed, following Flink's wiring rule (flip147 facts §1.7). Edges leaving
finished tasks are grey: those channels have already delivered EndOfPartition.

Vertices with more than :data:`COLLAPSE_ABOVE` subtasks are collapsed: consecutive subtasks
that look the same become one node labelled with their index range (``0-49``). If a vertex
still needs more than :data:`MAX_GROUPS` nodes, the smallest neighbouring groups are merged
into striped "mixed" nodes whose stripes show the share of each kind.

:func:`render_counterexample` draws one picture comparing an algorithm's plan with the
specification's (:func:`flipcheck.model.plan.checkpoint_plan`): tasks triggered by both are
blue, by the algorithm only red, by the specification only white with a thick red dashed
border; tasks whose other plan memberships differ get a red border and a note.

Example
-------
>>> from flipcheck.model.jobgraph import JobGraph, ALL_TO_ALL
>>> g = JobGraph.build([("A", 1), ("B", 1), ("C", 1)], [("A", "C", ALL_TO_ALL), ("B", "C", ALL_TO_ALL)],
...                    states={"A": ["FINISHED"]})
>>> source = plan_dot_source(g, "flink")
>>> source.count("subgraph cluster_v")
3
>>> "ALL_TO_ALL" in source and "legend" in source
True
>>> output_format("plan.svg"), output_format("plan.PNG")
('svg', 'png')
"""

from __future__ import annotations

import bisect
import heapq
import html
import os
import subprocess
from collections import Counter
from typing import NamedTuple, Sequence

from flipcheck.errors import InputError, UsageError
from flipcheck.model.jobgraph import ALL_TO_ALL, FINISHED, RUNNING, JobGraph
from flipcheck.model.plan import CheckpointPlan, Declined, PlanResult, checkpoint_plan
from flipcheck.model.pointwise import consumed_partitions
from flipcheck.render.plan_text import compress_indices
from flipcheck.system_tools import find_program, missing_program_message

__all__ = [
    "COLLAPSE_ABOVE",
    "MAX_GROUPS",
    "PALETTE",
    "TRIGGERED",
    "ALGORITHM_ONLY",
    "SPEC_ONLY",
    "Look",
    "Group",
    "plan_looks",
    "compare_looks",
    "group_subtasks",
    "OUTPUT_FORMATS",
    "DotNotFoundError",
    "output_format",
    "plan_dot_source",
    "counterexample_dot_source",
    "render_plan_graph",
    "render_counterexample",
    "render_source",
]

# A vertex with more subtasks than this is drawn as groups of consecutive subtasks.
COLLAPSE_ABOVE = 12
# At most this many nodes per vertex, however the subtasks' looks alternate.
MAX_GROUPS = 12
OUTPUT_FORMATS = ("svg", "png")
PNG_DPI = 110

# Marks: how the plan (or the comparison) singles a task out.
TRIGGERED = "triggered"
ALGORITHM_ONLY = "triggered by the algorithm only"
SPEC_ONLY = "triggered by the spec only"

# Colours, chosen to stay apart in greyscale too: blue and red are dark, grey and yellow light.
_BLUE, _RED, _GREY, _YELLOW = "#2166ac", "#d7301f", "#d9d9d9", "#fff2a8"
_DARK_GREY, _MUTED = "#8c8c8c", "#6b6b6b"
_TINT = {_BLUE: "#92c5de", _RED: "#f4a582"}
_STRIPE_ORDER = (_BLUE, _RED, "white", _YELLOW, _GREY)
_FONT = "Helvetica"
# The fill of each kind of task node (docs/render.md explains them).
PALETTE = {
    "triggered": _BLUE,
    "triggered by the algorithm only": _RED,
    "running": "white",
    "finished": _GREY,
    "other state": _YELLOW,
}


class DotNotFoundError(UsageError):
    """graphviz's ``dot`` program is missing: the CLI prints one line and exits 2."""


class Look(NamedTuple):
    """How one task is drawn: its state, the plan's mark on it, and notes on anomalies."""

    state: str
    mark: str | None = None
    notes: tuple[str, ...] = ()


class Group(NamedTuple):
    """Consecutive subtasks ``start .. stop-1`` of one vertex drawn as one node."""

    start: int
    stop: int
    looks: Counter  # Look -> number of subtasks

    @property
    def look(self) -> Look | None:
        """The common look, or None for a mixed group."""
        return next(iter(self.looks)) if len(self.looks) == 1 else None


def output_format(path: str) -> str:
    """The graphviz output format named by ``path``'s extension (``svg`` or ``png``)."""
    extension = os.path.splitext(path)[1].lower().lstrip(".")
    if extension not in OUTPUT_FORMATS:
        raise UsageError(f"{path}: cannot tell the picture format from the file name (use .svg or .png)")
    return extension


# -- what each task looks like --------------------------------------------------------------


def _trigger_sets(graph: JobGraph, result: PlanResult) -> dict[str, frozenset[int]]:
    if isinstance(result, Declined):
        return {}
    return {v: frozenset(result.tasks_to_trigger.indices(v)) for v in graph.topological_order}


def plan_looks(graph: JobGraph, result: PlanResult) -> dict[str, list[Look]]:
    """Per vertex, the look of each subtask under one plan.

    A plan that waits for a FINISHED task, or does not wait for an unfinished one, breaks rule
    R6 of the spec; such tasks get a note so that a buggy algorithm's picture shows it.
    """
    triggered = _trigger_sets(graph, result)
    looks: dict[str, list[Look]] = {}
    for vertex_id in graph.topological_order:
        trigger = triggered.get(vertex_id, frozenset())
        wait = frozenset(result.tasks_to_wait_for.indices(vertex_id)) if isinstance(result, CheckpointPlan) else None
        row = []
        for index, state in enumerate(graph.states[vertex_id]):
            notes: tuple[str, ...] = ()
            if wait is not None and (index in wait) == (state == FINISHED):
                notes = ("waited for" if index in wait else "not waited for",)
            row.append(Look(state, TRIGGERED if index in trigger else None, notes))
        looks[vertex_id] = row
    return looks


_COMPARED_FIELDS = (("tasks_to_wait_for", "wait"), ("tasks_to_commit_to", "commit"), ("finished_tasks", "finished"))


def compare_looks(graph: JobGraph, result: PlanResult, spec: PlanResult) -> dict[str, list[Look]]:
    """Per vertex, the look of each subtask when ``result`` is compared with ``spec``."""
    ours, theirs = _trigger_sets(graph, result), _trigger_sets(graph, spec)
    both_plans = isinstance(result, CheckpointPlan) and isinstance(spec, CheckpointPlan)
    looks: dict[str, list[Look]] = {}
    for vertex_id in graph.topological_order:
        mine, wanted = ours.get(vertex_id, frozenset()), theirs.get(vertex_id, frozenset())
        memberships = []
        if both_plans:
            for field, short in _COMPARED_FIELDS:
                a = frozenset(getattr(result, field).indices(vertex_id))
                s = frozenset(getattr(spec, field).indices(vertex_id))
                if a != s:
                    memberships.append((short, a, s))
        row = []
        for index, state in enumerate(graph.states[vertex_id]):
            if index in mine:
                mark = TRIGGERED if index in wanted else ALGORITHM_ONLY
            else:
                mark = SPEC_ONLY if index in wanted else None
            notes = tuple(
                f"{short}: {'algorithm' if index in a else 'spec'} only"
                for short, a, s in memberships
                if (index in a) != (index in s)
            )
            row.append(Look(state, mark, notes))
        looks[vertex_id] = row
    return looks


# -- grouping large vertices ----------------------------------------------------------------


def group_subtasks(looks: Sequence[Look], *, collapse_above: int = COLLAPSE_ABOVE, max_groups: int = MAX_GROUPS) -> list[Group]:
    """Subtasks as drawn: one group each for small vertices, else runs of equal looks.

    Runs beyond ``max_groups`` are merged pairwise, always the two neighbours with the fewest
    subtasks together, so that large uniform runs survive and only the noisy parts get mixed.

    >>> [(g.start, g.stop) for g in group_subtasks([Look("RUNNING")] * 3)]
    [(0, 1), (1, 2), (2, 3)]
    >>> many = [Look("FINISHED")] * 50 + [Look("RUNNING", TRIGGERED)] * 50
    >>> [(g.start, g.stop) for g in group_subtasks(many)]
    [(0, 50), (50, 100)]
    >>> len(group_subtasks([Look("FINISHED"), Look("RUNNING")] * 50))
    12
    """
    if len(looks) <= collapse_above:
        return [Group(i, i + 1, Counter({look: 1})) for i, look in enumerate(looks)]
    runs: list[list] = []  # [start, stop, Counter]
    for index, look in enumerate(looks):
        if runs and runs[-1][1] == index and look in runs[-1][2] and len(runs[-1][2]) == 1:
            runs[-1][1] = index + 1
            runs[-1][2][look] += 1
        else:
            runs.append([index, index + 1, Counter({look: 1})])
    if len(runs) > max_groups:
        runs = _merge_smallest_neighbours(runs, max_groups)
    return [Group(start, stop, counter) for start, stop, counter in runs]


def _merge_smallest_neighbours(runs: list[list], limit: int) -> list[list]:
    # A doubly linked list of runs and a heap of neighbouring pairs keyed by their joint size;
    # a pair is stale once either side has been merged away or grown.
    alive = [True] * len(runs)
    following = list(range(1, len(runs) + 1))
    preceding = list(range(-1, len(runs) - 1))
    size = [stop - start for start, stop, _ in runs]
    heap = [(size[i] + size[i + 1], i, i + 1, size[i], size[i + 1]) for i in range(len(runs) - 1)]
    heapq.heapify(heap)
    remaining = len(runs)
    while remaining > limit:
        _, left, right, left_size, right_size = heapq.heappop(heap)
        if not (alive[left] and alive[right]) or (size[left], size[right]) != (left_size, right_size):
            continue
        runs[left][1] = runs[right][1]
        runs[left][2].update(runs[right][2])
        size[left] += size[right]
        alive[right] = False
        remaining -= 1
        following[left] = following[right]
        if following[left] < len(runs):
            preceding[following[left]] = left
            nxt = following[left]
            heapq.heappush(heap, (size[left] + size[nxt], left, nxt, size[left], size[nxt]))
        if preceding[left] >= 0:
            prv = preceding[left]
            heapq.heappush(heap, (size[prv] + size[left], prv, left, size[prv], size[left]))
    return [run for run, keep in zip(runs, alive) if keep]


# -- drawing --------------------------------------------------------------------------------


def _fill(look: Look) -> str:
    if look.mark == TRIGGERED:
        return _BLUE
    if look.mark == ALGORITHM_ONLY:
        return _RED
    if look.state == FINISHED:
        return _GREY
    if look.state != RUNNING:
        return _YELLOW
    return "white"


def _node_style(look: Look | None, group: Group) -> dict[str, str]:
    if look is None:  # mixed: stripes in proportion to the kinds of subtasks
        total = group.stop - group.start
        shares: Counter = Counter()
        for each, count in group.looks.items():
            shares[_fill(each)] += count
        # Light tints, so that the black label stays readable on every stripe.
        stripes = ":".join(
            f"{_TINT.get(colour, colour)};{shares[colour] / total:.3f}" for colour in _STRIPE_ORDER if colour in shares
        )
        style = {"shape": "box", "style": "striped", "fillcolor": stripes, "color": "black"}
        if any(each.mark == SPEC_ONLY or each.notes for each in group.looks):
            style.update(color=_RED, penwidth="3")  # collapsing must not hide a difference
        return style
    style = {"fillcolor": _fill(look), "color": "black", "fontcolor": "black"}
    if style["fillcolor"] in (_BLUE, _RED):
        style.update(fontcolor="white", penwidth="2")
    elif look.state == FINISHED:
        style.update(color=_DARK_GREY, fontcolor=_MUTED)
    if look.mark == SPEC_ONLY:
        style.update(color=_RED, penwidth="3", style="rounded,filled,dashed")
    elif look.notes:
        style.update(color=_RED, penwidth="3")
    return style


_SHORT = {TRIGGERED: "triggered", ALGORITHM_ONLY: "algorithm only", SPEC_ONLY: "spec only"}


def _describe(look: Look) -> str:
    """A few words for one kind of subtask in a mixed group's label."""
    if look.mark is not None:
        words = _SHORT[look.mark] if look.state == RUNNING else f"{_SHORT[look.mark]} {look.state}"
    else:
        words = {RUNNING: "running", FINISHED: "finished"}.get(look.state, look.state)
    return words + "".join(f" ({note})" for note in look.notes)


def _node_label(group: Group) -> str:
    count = group.stop - group.start
    indices = str(group.start) if count == 1 else f"{group.start}-{group.stop - 1}"
    look = group.look
    lines = []
    if look is None:
        kinds: Counter = Counter()
        for each, n in group.looks.items():
            kinds[_describe(each)] += n
        lines.append("mixed: " + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1])))
    else:
        if look.state not in (RUNNING, FINISHED):
            lines.append(look.state)
        if look.mark in (ALGORITHM_ONLY, SPEC_ONLY):
            lines.append(_SHORT[look.mark])
        lines.extend(look.notes)
    head = f"<B>{indices}</B>" if count == 1 else f"<B>{indices}</B> ({count})"
    return "<" + "<BR/>".join([head, *(html.escape(line, quote=False) for line in lines)]) + ">"


def _all_finished(group: Group) -> bool:
    return all(look.state == FINISHED for look in group.looks)


def _cluster_label(graph: JobGraph, vertex_id: str, fully_finished: bool) -> str:
    vertex = graph.vertex(vertex_id)
    details = f"parallelism {vertex.parallelism}" + (" · fully finished" if fully_finished else "")
    name = vertex.extra.get("name")
    extra = f"<BR/><FONT POINT-SIZE='9'>{html.escape(_shorten(str(name), 40))}</FONT>" if name and name != vertex_id else ""
    return f"<<B>{html.escape(vertex_id)}</B>{extra}<BR/>{details}>"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _fully_finished(graph: JobGraph, result: PlanResult) -> frozenset[str]:
    if isinstance(result, CheckpointPlan):
        return result.fully_finished_vertices
    return frozenset(v for v in graph.topological_order if all(s == FINISHED for s in graph.states[v]))


def _pointwise_group_edges(graph: JobGraph, source: str, target: str, groups: dict[str, list[Group]]):
    """``(upstream group index, downstream group index)`` pairs some subtask wiring connects."""
    upstream, downstream = graph.parallelism(source), graph.parallelism(target)
    starts = [g.start for g in groups[source]]

    for k, group in enumerate(groups[target]):
        # Flink's wiring is monotone and contiguous, so a run of downstream subtasks reads the
        # partitions from the first one's first to the last one's last (flip147 facts §1.7).
        first = consumed_partitions(upstream, downstream, group.start).start
        last = consumed_partitions(upstream, downstream, group.stop - 1).stop - 1
        for j in range(bisect.bisect_right(starts, first) - 1, bisect.bisect_right(starts, last)):
            yield j, k


def _build_dot(
    graph: JobGraph, looks: dict[str, list[Look]], fully_finished: frozenset[str], title_lines: Sequence[str],
    *, compare: bool, declined: bool = False,
) -> str:
    import graphviz

    dot = graphviz.Digraph("checkpoint_plan")
    dot.attr(
        # remincross=false: a second crossing minimisation over clusters would undo the
        # subtask order the invisible edges below ask for.
        compound="true", rankdir="LR", newrank="true", remincross="false", nodesep="0.12", ranksep="1.1",
        fontname=_FONT, labelloc="t", labeljust="l", label=_title_label(title_lines, compare=compare, declined=declined),
    )
    dot.attr("node", shape="box", style="rounded,filled", fontname=_FONT, fontsize="11", height="0.3", margin="0.08,0.03")
    dot.attr("edge", fontname=_FONT, fontsize="9", arrowsize="0.6")

    groups = {v: group_subtasks(looks[v]) for v in graph.topological_order}
    node_ids = {v: [f"v{n}g{k}" for k in range(len(groups[v]))] for n, v in enumerate(graph.topological_order)}
    clusters = {v: f"cluster_v{n}" for n, v in enumerate(graph.topological_order)}
    for vertex_id in graph.topological_order:
        finished = vertex_id in fully_finished
        with dot.subgraph(name=clusters[vertex_id]) as cluster:
            cluster.attr(
                # All subtasks of a vertex in one column, whatever edges reach them.
                rank="same",
                label=_cluster_label(graph, vertex_id, finished), fontsize="12", labeljust="c",
                style="rounded,filled" + (",dashed" if finished else ""),
                fillcolor="#f2f2f2" if finished else "#fbfbfb", color=_DARK_GREY if finished else "#4d4d4d",
            )
            for node_id, group in zip(node_ids[vertex_id], groups[vertex_id]):
                cluster.node(node_id, label=_node_label(group), **_node_style(group.look, group))
            # Invisible flat edges keep the subtasks in index order, top to bottom (dot would
            # reorder them to save crossings; with rankdir=LR a flat edge points upwards).
            for upper, lower in zip(node_ids[vertex_id], node_ids[vertex_id][1:]):
                cluster.edge(lower, upper, style="invis")

    # Edge texts are xlabels: a plain label would add a rank of label nodes between the
    # vertices, and with remincross=false those make edges take long detours.
    for edge in graph.edges:
        if edge.pattern == ALL_TO_ALL:
            tail, head = node_ids[edge.source], node_ids[edge.target]
            dead = edge.source in fully_finished
            dot.edge(
                tail[len(tail) // 2], head[len(head) // 2], ltail=clusters[edge.source], lhead=clusters[edge.target],
                xlabel="ALL_TO_ALL", penwidth="3", style="bold", arrowsize="1",
                color=_DARK_GREY if dead else "#333333", fontcolor=_MUTED if dead else "black",
            )
        else:
            for n, (j, k) in enumerate(_pointwise_group_edges(graph, edge.source, edge.target, groups)):
                dead = _all_finished(groups[edge.source][j])
                dot.edge(
                    node_ids[edge.source][j], node_ids[edge.target][k], style="dashed",
                    color=_DARK_GREY if dead else "#333333", xlabel="POINTWISE" if n == 0 else None,
                    fontcolor=_MUTED,
                )
    return dot.source


def _title_label(lines: Sequence[str], *, compare: bool, declined: bool) -> str:
    """The graph's label: the title, the summary lines and, below them, the legend.

    The legend is two small tables side by side (task kinds, edge kinds) so that neither
    stretches the other; graphviz widens nested tables to the width of their column.
    """
    first, *rest = lines
    rows = [f'<TR><TD ALIGN="LEFT" COLSPAN="2"><FONT POINT-SIZE="15"><B>{html.escape(first)}</B></FONT></TD></TR>']
    for line in rest:
        text = html.escape(line)
        if "declined:" in line:
            text = f'<FONT COLOR="{_RED}">{text}</FONT>'
        rows.append(f'<TR><TD ALIGN="LEFT" COLSPAN="2">{text}</TD></TR>')
    rows.append(
        f'<TR><TD ALIGN="LEFT" VALIGN="TOP">{_legend_tasks(compare, declined)}</TD>'
        f'<TD ALIGN="LEFT" VALIGN="TOP">{_legend_edges()}</TD></TR>'
    )
    return '<<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="2">' + "".join(rows) + "</TABLE>>"


def _swatch(text: str, look: Look) -> str:
    """A legend cell drawn like a task node with ``look``."""
    style = _node_style(look, Group(0, 1, Counter({look: 1})))
    dashed = ' STYLE="dashed"' if "dashed" in style.get("style", "") else ' STYLE="rounded"'
    border = style.get("penwidth", "1")
    return (
        f'<TD BGCOLOR="{style["fillcolor"]}" COLOR="{style["color"]}" BORDER="{border}"{dashed}>'
        f'<FONT COLOR="{style["fontcolor"]}">{html.escape(text)}</FONT></TD>'
    )


_LEGEND_TABLE = '<TABLE BORDER="1" CELLBORDER="0" COLOR="#bdbdbd" STYLE="rounded" CELLSPACING="4" CELLPADDING="3">'
_LEGEND_COLUMNS = 4


def _legend_tasks(compare: bool, declined: bool) -> str:
    running = "running" if declined and not compare else "running, waited for"
    entries = [("triggered by both" if compare else "triggered", Look(RUNNING, TRIGGERED))]
    if compare:
        entries += [("algorithm only", Look(RUNNING, ALGORITHM_ONLY)), ("spec only", Look(RUNNING, SPEC_ONLY))]
    entries += [
        (running, Look(RUNNING)),
        ("finished", Look(FINISHED)),
        ("other state (named)", Look("CANCELED")),
        ("wait/commit/finished differ" if compare else "wrongly (not) waited for", Look(RUNNING, None, ("note",))),
    ]
    cells = [_swatch(text, look) for text, look in entries]
    # A mixed group: stripes in proportion to its kinds of subtasks.
    cells.append(
        '<TD BORDER="1" CELLPADDING="0"><TABLE BORDER="0" CELLSPACING="0" CELLPADDING="3"><TR>'
        f'<TD BGCOLOR="{_TINT[_BLUE]}">mixed</TD><TD BGCOLOR="{_GREY}">group</TD></TR></TABLE></TD>'
    )
    rows = [cells[n : n + _LEGEND_COLUMNS] for n in range(0, len(cells), _LEGEND_COLUMNS)]
    body = "".join("<TR>" + "".join(row) + "</TR>" for row in rows)
    title = f'<TR><TD COLSPAN="{_LEGEND_COLUMNS}" ALIGN="LEFT"><B>legend</B>: tasks (collapsed: index range, count)</TD></TR>'
    return f'<FONT POINT-SIZE="10">{_LEGEND_TABLE}{title}{body}</TABLE></FONT>'


def _legend_edges() -> str:
    rows = [
        ('BORDER="3" COLOR="black"', "ALL_TO_ALL, one per job edge"),
        ('BORDER="1" COLOR="black" STYLE="dashed"', "POINTWISE, subtask to subtask"),
        (f'BORDER="1" COLOR="{_DARK_GREY}"', f'<FONT COLOR="{_MUTED}">from finished tasks</FONT>'),
    ]
    body = "".join(f'<TR><TD {line} SIDES="B" WIDTH="36"> </TD><TD ALIGN="LEFT" VALIGN="BOTTOM">{text}</TD></TR>' for line, text in rows)
    return f'<FONT POINT-SIZE="10">{_LEGEND_TABLE}<TR><TD COLSPAN="2" ALIGN="LEFT">edges</TD></TR>{body}</TABLE></FONT>'


# -- titles ---------------------------------------------------------------------------------


def _summary(result: PlanResult) -> str:
    if isinstance(result, Declined):
        return f"declined: {result.reason}"
    fully = sorted(result.fully_finished_vertices)
    return (
        f"{len(result.tasks_to_trigger)} to trigger, {len(result.tasks_to_wait_for)} to wait for and commit to, "
        f"{len(result.finished_tasks)} finished"
        + (f"; fully finished: {_shorten(', '.join(fully), 60)}" if fully else "")
    )


def _task_runs(graph: JobGraph, tasks) -> str:
    by_vertex: dict[str, list[int]] = {}
    for vertex_id, index in tasks:
        by_vertex.setdefault(vertex_id, []).append(index)
    parts = [f"{v}[{compress_indices(sorted(by_vertex[v]))}]" for v in graph.topological_order if v in by_vertex]
    return _shorten(" ".join(parts), 100)


def _differences(graph: JobGraph, result: PlanResult, spec: PlanResult) -> list[str]:
    if isinstance(result, Declined) or isinstance(spec, Declined):
        return []
    lines = []
    for field in ("tasks_to_trigger", "tasks_to_wait_for", "tasks_to_commit_to", "finished_tasks"):
        mine, theirs = set(getattr(result, field)), set(getattr(spec, field))
        for who, extra in (("algorithm", mine - theirs), ("spec", theirs - mine)):
            if extra:
                lines.append(f"{field}: {who} only {_task_runs(graph, extra)}")
    for who, extra in (
        ("algorithm", result.fully_finished_vertices - spec.fully_finished_vertices),
        ("spec", spec.fully_finished_vertices - result.fully_finished_vertices),
    ):
        if extra:
            lines.append(f"fully_finished_vertices: {who} only {', '.join(sorted(extra))}")
    return lines


# -- entry points ---------------------------------------------------------------------------


def plan_dot_source(graph: JobGraph, algorithm_name: str, *, result: PlanResult | None = None, title: str | None = None) -> str:
    """Graphviz source of the picture of ``algorithm_name``'s plan for ``graph``.

    ``result`` is computed with the named algorithm unless given. The title names the
    algorithm and summarises the plan, or gives the reason it was declined.
    """
    if result is None:
        from flipcheck.reference_impl.plan import plan_algorithm

        result = plan_algorithm(algorithm_name)(graph)
    heading = title or f"checkpoint plan ({algorithm_name})"
    return _build_dot(graph, plan_looks(graph, result), _fully_finished(graph, result), [heading, _summary(result)], compare=False,
        declined=isinstance(result, Declined),
    )


def counterexample_dot_source(
    graph: JobGraph, algorithm_name: str, *, result: PlanResult | None = None, title: str | None = None
) -> str:
    """Graphviz source of the picture comparing ``algorithm_name``'s plan with the spec's."""
    if result is None:
        from flipcheck.reference_impl.plan import plan_algorithm

        result = plan_algorithm(algorithm_name)(graph)
    spec = checkpoint_plan(graph)
    same = "the same plan as" if result == spec else "differs from"
    lines = [
        title or f"{algorithm_name} {same} the spec",
        f"{algorithm_name}: {_summary(result)}",
        f"spec: {_summary(spec)}",
        *_differences(graph, result, spec),
    ]
    return _build_dot(graph, compare_looks(graph, result, spec), _fully_finished(graph, spec), lines, compare=True)


def render_source(source: str, out_path: str) -> str:
    """Run ``dot`` on ``source`` and write the picture to ``out_path`` (format from its extension)."""
    fmt = output_format(out_path)
    dot = find_program("dot")
    if dot is None:
        raise DotNotFoundError(missing_program_message("dot"))
    if fmt == "png":
        # Bitmaps at graphviz's default 72 dpi blur small bold digits; SVG scales by itself.
        head, _, body = source.partition("{")
        source = head + "{\n\tdpi=" + str(PNG_DPI) + body
    # dot found beside our Python may not be on PATH, so it is run by path, not through graphviz.Source.
    completed = subprocess.run([dot, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True)
    if completed.returncode != 0:
        message = completed.stderr.decode(errors="replace").strip().splitlines()
        raise UsageError(f"dot failed: {message[0] if message else f'exit code {completed.returncode}'}")
    try:
        with open(out_path, "wb") as handle:
            handle.write(completed.stdout)
    except OSError as error:
        raise InputError(out_path, f"cannot write picture ({error.strerror})") from None
    return out_path


def render_plan_graph(
    graph: JobGraph, algorithm_name: str, out_path: str, *, result: PlanResult | None = None, title: str | None = None
) -> str:
    """Draw ``algorithm_name``'s plan for ``graph`` into ``out_path`` (.svg or .png); returns the path."""
    output_format(out_path)  # a bad extension fails before any work
    return render_source(plan_dot_source(graph, algorithm_name, result=result, title=title), out_path)


def render_counterexample(
    graph: JobGraph, algorithm_name: str, out_path: str, *, result: PlanResult | None = None, title: str | None = None
) -> str:
    """Draw where ``algorithm_name``'s plan differs from the spec's into ``out_path``; returns the path."""
    output_format(out_path)
    return render_source(counterexample_dot_source(graph, algorithm_name, result=result, title=title), out_path)
