"""Step tables of a batch-recovery run (FLIP-383): one row per action, as an SVG.

Columns: the action, the JM phase, each task's state (``F`` finished, ``R`` running, ``C``
created, ``X`` cancelled), the event file and the unflushed buffer (``f<task>`` a finished event,
``*`` with a coordinator snapshot, ``r`` a reset event), the partitions the TaskManagers hold,
each source coordinator's unassigned splits, and the properties the step violated (red rows; the
first violation is the title).

Example
-------
>>> from flipcheck.designs.batch_recovery import EXPLORATION_CONFIGS
>>> from flipcheck.properties.batch_recovery_explore import replay
>>> config = EXPLORATION_CONFIGS[0]
>>> "crash" in run_source(config, replay(config, [("start", 0), ("crash",)]))
True
"""

from __future__ import annotations

from flipcheck.model.batch_recovery import Config, State, topology
from flipcheck.render.tables import table_source

__all__ = ["run_source", "render_run"]


def _events(events) -> str:
    return " ".join(f"f{e[1]}{'*' if e[2] is not None else ''}" if e[0] == "finished" else "r" for e in events) or "-"


def _row(config: Config, action, s: State) -> list:
    topo = topology(config)
    tasks = " ".join(f"{v}{i}:{st[0] if st != 'CANCELED' else 'X'}" for (v, i), st in zip(topo.tasks, s.status))
    partitions = " ".join(f"{topo.tasks[t][0]}{topo.tasks[t][1]}@{o[0]}{list(x[1] for x in o[1])}"
                          for t, o in enumerate(s.outputs) if o is not None) or "-"
    pools = " ".join(f"{v}{sorted(x[1] for x in c[0])}" for v, c in zip(topo.sources, s.coordinators)
                     if c is not None) or "-"
    return [" ".join(map(str, action)), s.phase, tasks, _events(s.log), _events(s.buffer), partitions, pools]


def run_source(config: Config, steps, variant: str = "flink") -> str:
    bad = [n for n, s in enumerate(steps) if s.violations]
    title = f"{variant}: " + (str(steps[bad[0]].violations[0]) if bad else "no violation")
    body = [_row(config, s.action, s.after) + [", ".join(dict.fromkeys(v.property for v in s.violations)) or ""]
            for s in steps]
    return table_source(title, ["action", "phase", "tasks", "event file", "buffer", "partitions (attempt, splits)",
                                "unassigned", "violated"], body, bad)


def render_run(config: Config, steps, path: str, variant: str = "flink") -> str:
    """Write the table of ``steps`` (from :func:`~flipcheck.properties.batch_recovery_explore.replay`) to ``path``."""
    from flipcheck.render.core import render_source

    return render_source(run_source(config, steps, variant), path)
