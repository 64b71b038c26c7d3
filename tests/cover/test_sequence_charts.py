"""The message-sequence charts of whole-job traces (`flipcheck explore --render`, `flipcheck
conform --render`): what issue 24 found hard to read in them."""

import html
import re

import pytest

from flipcheck.generators.protocol import example_graph
from flipcheck.model.protocol import initial_state
from flipcheck.properties.protocol_explore import replay
from flipcheck.properties.protocol_properties import check_step
from flipcheck.reference_impl.protocol_variants import make_job
from flipcheck.render.protocol import chart_source, render_trace
from flipcheck.render.sequence_chart import WIDE_EM

needs_dot = pytest.mark.usefixtures("dot_program")

# wiki-b-trigger's shortest consistent_cut counterexample on the twin graph with 1 record
# (docs/protocol.md): b[0] emits r1 after its snapshot of checkpoint 1 and before its end of data;
# checkpoint 2 never triggers b[0] again, so r1, sent before b[0]'s snapshot 2, is lost by the cut.
LOST_RECORD_TRACE = [
    ("emit", 0, 0), ("end-of-data", 0), ("receive", 2, 0, ("D", 0)), ("receive", 2, 0, ("EOD",)), ("trigger", 1),
    ("rpc", 0, 1), ("ack", 0, 1), ("rpc", 1, 1), ("emit", 1, 1), ("end-of-data", 1), ("ack", 1, 1),
    ("receive", 2, 0, ("B", 1)), ("receive", 2, 1, ("B", 1)), ("ack", 2, 1), ("notify", 0, 1), ("finish", 0),
    ("report-finished", 0), ("trigger", 2), ("rpc", 1, 2), ("ack", 1, 2), ("rpc", 2, 2), ("ack", 2, 2),
]


def _lost_record_chart():
    job = make_job(example_graph("twin"), "wiki-b-trigger", records=1)
    steps = replay(job, LOST_RECORD_TRACE, canonical_labels=False)
    before = steps[-2].state if len(steps) > 1 else initial_state(job)
    violations = check_step(job, before, steps[-1].label, steps[-1].notes, steps[-1].state)
    assert [v.property for v in violations] == ["consistent_cut"]
    return job, steps, violations[0].message


def test_a_record_the_cut_lost_is_drawn_in_flight_on_its_channel():
    """Issue 24: the lost record of a consistent_cut chart was never drawn: only received
    messages got an arrow. It now runs from the step that emitted it to the receiver's lane at
    the last row, labelled as in flight."""
    job, steps, message = _lost_record_chart()
    assert "b[0] -> join[0]" in message
    source = chart_source(job, steps, "wiki-b-trigger: consistent_cut violated", message)
    emitted = next(row for row, step in enumerate(steps, 1) if step.label == ("emit", 1, 1))
    sender, receiver = f"t{job.task_index[('b', 0)]}", f"t{job.task_index[('join', 0)]}"
    arrows = [line for line in source.splitlines() if f"{sender}_{emitted} -> {receiver}_{len(steps)} " in line]
    assert len(arrows) == 1 and 'xlabel="r1 in flight"' in arrows[0] and "style=dashed" in arrows[0]
    assert source.count("in flight\"") == 1   # r0 was polled: only r1 is still on its way


def _svg_width(svg: str) -> float:
    return float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))


@needs_dot
def test_a_long_subtitle_is_wrapped_inside_the_picture(tmp_path):
    """Issue 24: the violation's 170-character message ran past the right edge of the SVG in a
    browser whose sans-serif font is wider than Graphviz's estimate. Every heading line now fits
    even at a wide font's width (WIDE_EM ems a character)."""
    job, steps, message = _lost_record_chart()
    path = tmp_path / "chart.svg"
    render_trace(job, steps, str(path), "wiki-b-trigger: consistent_cut violated", message)
    svg = path.read_text()
    width = _svg_width(svg)
    heading = [(float(x), float(size), html.unescape(text)) for x, size, text in re.findall(
        r'<text text-anchor="start" x="([\d.]+)" y="[^"]+" font-family="[^"]+"(?: font-weight="bold")? '
        r'font-size="([\d.]+)">([^<]*)</text>', svg)]
    assert len(heading) >= 3 and "".join(text for _, _, text in heading[1:]).replace(" ", "") == message.replace(" ", "")
    for x, size, text in heading:
        assert x + WIDE_EM * size * len(text) <= width, (text, width)


RUNS = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs"


def _svg_height(svg: str) -> float:
    return float(re.search(r'<svg width="[\d.]+pt" height="([\d.]+)pt"', svg).group(1))


@needs_dot
def test_the_conform_chart_of_a_six_task_run_is_small_named_by_task_and_numbered(tmp_path):
    """Issue 24: the chart of chain-closing-decline (2 sources, 2 maps, 2 sinks; 143 events) was
    1,497 x 6,335 pt, its lanes named by hashed vertex ids, its cells without log lines. Now
    Flink's task names head the lanes, each step names the lines it explains, and the compact
    layout keeps it under 2,000 pt tall (1,582 x 1,785 pt here)."""
    from flipcheck.flink.conform import conform_files, render_conformance

    run = RUNS / "chain-closing-decline"
    result = conform_files(str(run / "plan.json"), [str(run / "flink.log")])
    render_conformance(result, str(tmp_path / "chart.svg"))
    svg = (tmp_path / "chart.svg").read_text()
    assert _svg_height(svg) <= 2_000 and _svg_width(svg) <= 1_800
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    for lane in ("Source: src (1/2)", "Source: src (2/2)", "map (1/2)", "map (2/2)", "Sink: sink (1/2)", "Sink: sink (2/2)"):
        assert lane in texts
    assert not any("f362c8" in t or "2e588c" in t for t in texts)   # no hashed vertex ids
    numbered = {int(n) for t in texts for refs in re.findall(r"flink\.log:([\d,]+)", t) for n in refs.split(",")}
    lines = [e.line for _, e in result.observations]
    # Every line is on the step it shows, but for the one trigger RPC that reached a closing task
    # (logged, never delivered: flip147 facts §4.3).
    assert [n for n in lines if n not in numbered] == [571]
    assert "Trigger checkpoint 6@" in (run / "flink.log").read_text().splitlines()[570]
    assert "stroke=\"#c62828\" stroke-width=\"3\"" not in svg   # a conforming run outlines no step


@needs_dot
def test_the_conform_chart_escapes_what_the_plan_and_log_say(tmp_path):
    """Vertex names come from the plan and the first unexplained event's text from the log:
    both reach the SVG escaped, and a backslash is no DOT escape."""
    import json
    import shutil

    from flipcheck.flink.conform import conform_files, render_conformance
    from flipcheck.flink.suite import alter_run

    run = tmp_path / "run"
    alter_run(RUNS / "union-state", "completed-without-acknowledgement", run)
    plan = json.loads((run / "plan.json").read_text())
    for node in plan["plan"]["nodes"]:
        if node["description"].startswith("Source: src"):
            node["description"] = node["description"].replace("Source: src", 'Source: <b>&"\\N')
    (run / "plan.json").write_text(json.dumps(plan))
    shutil.move(run / "flink.log", run / "a<&>.log")
    result = conform_files(str(run / "plan.json"), [str(run / "a<&>.log")])
    assert result.first_unexplained is not None
    render_conformance(result, str(tmp_path / "chart.svg"))
    svg = (tmp_path / "chart.svg").read_text()
    assert "<b>&" not in svg and "a<&>.log" not in svg
    assert 'Source: &lt;b&gt;&amp;&quot;\\N (1/2)' in svg and "a&lt;&amp;&gt;.log:" in svg
