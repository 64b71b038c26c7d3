"""``report.html`` of a sweep: summary tables, throughput and coverage plots, counterexample pictures.

One self-contained HTML file: the plots are inline SVG drawn here, the counterexample pictures
are embedded as ``data:`` URIs (and also saved next to it in ``counterexamples/``), so the report
can be mailed or attached to a review as it is.

>>> svg = line_chart([[0, 0], [1.5, 3000], [3.0, 6000]], "seconds", "cases")
>>> svg.startswith("<svg") and "polyline" in svg
True
>>> "<rect" in bar_chart([("4", 10, 0), ("5", 7, 2)], "tasks")
True
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

__all__ = ["write_report", "render_report", "line_chart", "bar_chart"]

_OK, _BAD, _AXIS, _INK = "#4575b4", "#d73027", "#888888", "#222222"
_STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; } h3 { margin-bottom: .3em; }
table { border-collapse: collapse; margin: .6em 0; } td, th { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th { background: #f3f3f3; } td.left, th.left { text-align: left; }
.ok { color: #1a7f37; font-weight: bold; } .bad { color: #c62828; font-weight: bold; }
.statement { background: #eef7ee; border-left: 4px solid #1a7f37; padding: .5em 1em; }
.cex { border: 1px solid #ddd; padding: .8em 1em; margin: 1em 0; border-radius: 4px; }
.cex img { max-width: 100%; border: 1px solid #eee; background: white; }
code, pre { background: #f6f6f6; padding: .1em .3em; } pre { padding: .6em; overflow-x: auto; }
.plots { display: flex; flex-wrap: wrap; gap: 2em; }
"""


def _esc(value) -> str:
    return html.escape(str(value))


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}" if isinstance(value, int) else _esc(value)


def _ticks(top: float, count: int = 4) -> list[float]:
    if top <= 0:
        return [0.0]
    raw = top / count
    magnitude = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = max(1, round(raw / magnitude)) * magnitude
    return [step * k for k in range(int(top // step) + 1)]


def line_chart(points: list, x_label: str, y_label: str, width: int = 460, height: int = 260) -> str:
    """An SVG line chart of ``[x, y]`` points (both axes from 0)."""
    left, bottom, top_pad, right_pad = 64, 40, 12, 16
    plot_w, plot_h = width - left - right_pad, height - bottom - top_pad
    xs = [p[0] for p in points] or [0]
    ys = [p[1] for p in points] or [0]
    x_max, y_max = max(max(xs), 1e-9), max(max(ys), 1)

    def sx(x):
        return left + plot_w * x / x_max

    def sy(y):
        return top_pad + plot_h * (1 - y / y_max)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{_esc(y_label)} over {_esc(x_label)}">']
    for y in _ticks(y_max):
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#eee"/>'
                     f'<text x="{left - 6}" y="{sy(y) + 4:.1f}" font-size="11" text-anchor="end" fill="{_INK}">'
                     f'{y:,.0f}</text>')
    for x in _ticks(x_max):
        parts.append(f'<text x="{sx(x):.1f}" y="{top_pad + plot_h + 16}" font-size="11" text-anchor="middle" '
                     f'fill="{_INK}">{x:,.0f}</text>')
    parts.append(f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="{_AXIS}"/>'
                 f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot_h}" stroke="{_AXIS}"/>')
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in [[0, 0], *points])
    parts.append(f'<polyline points="{path}" fill="none" stroke="{_OK}" stroke-width="2"/>')
    for x, y in points:
        parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{_OK}"/>')
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 6}" font-size="12" text-anchor="middle">{_esc(x_label)}</text>'
                 f'<text x="14" y="{top_pad + plot_h / 2:.0f}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 14 {top_pad + plot_h / 2:.0f})">{_esc(y_label)}</text></svg>')
    return "".join(parts)


def bar_chart(bars: list[tuple[str, int, int]], x_label: str, width: int = 460, height: int = 260) -> str:
    """An SVG bar chart: per label, ``ok`` cases (blue) with ``violations`` (red) stacked on top."""
    left, bottom, top_pad, right_pad = 64, 40, 12, 16
    plot_w, plot_h = width - left - right_pad, height - bottom - top_pad
    y_max = max([ok + bad for _, ok, bad in bars] or [1]) or 1
    slot = plot_w / max(len(bars), 1)
    label_every = max(1, len(bars) // 16)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="cases by {_esc(x_label)}">']
    for y in _ticks(y_max):
        ypos = top_pad + plot_h * (1 - y / y_max)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{ypos:.1f}" y2="{ypos:.1f}" stroke="#eee"/>'
                     f'<text x="{left - 6}" y="{ypos + 4:.1f}" font-size="11" text-anchor="end" fill="{_INK}">{y:,.0f}</text>')
    for n, (label, ok, bad) in enumerate(bars):
        x = left + n * slot + slot * 0.1
        w = max(slot * 0.8, 1)
        ok_h, bad_h = plot_h * ok / y_max, plot_h * bad / y_max
        base = top_pad + plot_h
        parts.append(f'<rect x="{x:.1f}" y="{base - ok_h:.1f}" width="{w:.1f}" height="{ok_h:.1f}" fill="{_OK}">'
                     f'<title>{_esc(label)}: {ok:,} ok</title></rect>')
        if bad:
            parts.append(f'<rect x="{x:.1f}" y="{base - ok_h - bad_h:.1f}" width="{w:.1f}" height="{bad_h:.1f}" '
                         f'fill="{_BAD}"><title>{_esc(label)}: {bad:,} violations</title></rect>')
        if n % label_every == 0:
            parts.append(f'<text x="{x + w / 2:.1f}" y="{base + 16}" font-size="11" text-anchor="middle" '
                         f'fill="{_INK}">{_esc(label)}</text>')
    parts.append(f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="{_AXIS}"/>'
                 f'<text x="{left + plot_w / 2:.0f}" y="{height - 6}" font-size="12" text-anchor="middle">{_esc(x_label)}</text>'
                 f'<text x="14" y="{top_pad + plot_h / 2:.0f}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 14 {top_pad + plot_h / 2:.0f})">cases</text></svg>')
    return "".join(parts)


def _table(header: list[str], rows: list[list], left_columns: int = 1) -> str:
    head = "".join(f'<th class="{"left" if n < left_columns else ""}">{_esc(h)}</th>' for n, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"left" if n < left_columns else ""}">{cell}</td>' for n, cell in enumerate(row)) + "</tr>"
        for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _picture(out: Path, relative: str | None) -> str:
    if not relative or not (out / relative).exists():
        return "<p><em>no picture (graphviz's dot is needed to draw counterexamples)</em></p>"
    data = base64.b64encode((out / relative).read_bytes()).decode()
    return (f'<p><a href="{_esc(relative)}"><img alt="counterexample {_esc(relative)}" '
            f'src="data:image/svg+xml;base64,{data}"></a></p>')


def render_report(summary: dict, out: Path) -> str:
    """The HTML text of the report for ``summary`` (pictures read from ``out``)."""
    verdict = ('<span class="bad">violations found</span>' if summary["violations"]
               else '<span class="ok">no violation</span>')
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>flipcheck sweep report</title>"
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>flipcheck sweep: {verdict}</h1>",
             f"<p>{_esc(summary['mode'])} sweep" + (f", seed <code>{_esc(summary['seed'])}</code>" if summary.get("seed") else "")
             + f"; rows in <code>{_esc(summary['parquet'])}</code>, summary in <code>summary.json</code>.</p>"]
    overview = [["cases", _number(summary["cases"])], ["violations (cases)", _number(summary["violations"])],
                ["cases per second", _number(summary["cases_per_second"])],
                ["wall seconds", _number(summary["wall_seconds"])], ["Spark jobs (chunks)", _number(summary["chunks"])],
                ["driver runs (1 + resumes)", _number(summary["timing"]["runs"])]]
    if summary.get("shapes") is not None:
        overview.insert(2, ["DAG shapes (up to isomorphism)", _number(summary["shapes"])])
    if summary.get("errors"):  # cases that could not be checked (real runs that did not finish)
        overview.insert(2, ["cases not checked (outcome error)", _number(summary["errors"])])
    parts.append("<h2>Summary</h2>" + _table(["", "value"], overview))
    rows = []
    for t in summary["targets"]:
        methods = ", ".join(f"{m}: {n:,}" for m, n in t["methods"].items())
        cls = "bad" if t["violations"] else "ok"
        rows.append([_esc(t["suite"]), _esc(t["algorithm"]), f"<code>{_esc(t['token'])}</code>", _number(t["cases"]),
                     f'<span class="{cls}">{t["violations"]:,}</span>', _number(t["assignments"]), _esc(methods)])
    parts.append("<h2>Suites</h2>" + _table(
        ["suite", "algorithm", "seed / space", "cases", "violations", "assignments covered", "checked by"], rows, 3))
    for t in summary["targets"]:
        if t.get("statement"):
            parts.append(f'<p class="statement">Proved: {_esc(t["statement"])}.</p>')
        coverage = t.get("coverage") or {}
        if "topologies_by_vertices" in coverage:
            sizes = sorted(coverage["topologies_by_vertices"], key=int)
            parts.append(f"<h3>Exhaustive coverage: {_esc(t['suite'])}/{_esc(t['algorithm'])}</h3>" + _table(
                ["vertices", "DAG shapes", "topologies"],
                [[n, _number(coverage["shapes_by_vertices"][n]), _number(coverage["topologies_by_vertices"][n])] for n in sizes]
                + [["all", _number(coverage["shapes"]), _number(coverage["topologies"])]]))
        if t["by_property"]:
            parts.append(f"<h3>Violations by property: {_esc(t['suite'])}/{_esc(t['algorithm'])}</h3>" + _table(
                ["property", "cases"], [[f"<code>{_esc(p)}</code>", _number(n)] for p, n in t["by_property"].items()]))
    parts.append('<h2>Throughput and coverage</h2><div class="plots">')
    timeline = summary["timing"]["timeline"]
    parts.append(f"<figure>{line_chart(timeline, 'seconds (wall, Spark start-up included)', 'cases done')}"
                 f"<figcaption>cases done over time: {_number(summary['cases_per_second'])} cases/s overall</figcaption></figure>")
    for t in summary["targets"]:
        bars = [(size, ok, bad) for size, (ok, bad) in t["sizes"].items()]
        parts.append(f"<figure>{bar_chart(bars, t['size_unit'])}<figcaption>coverage by size: "
                     f"{_esc(t['suite'])}/{_esc(t['algorithm'])} (red: violations)</figcaption></figure>")
    parts.append("</div>")
    parts.append("<h2>Counterexamples</h2>")
    if not summary["counterexamples"]:
        parts.append("<p>None: no property was violated.</p>")
    for cex in summary["counterexamples"]:
        parts.append(
            f'<div class="cex"><h3>{_esc(cex["suite"])}/{_esc(cex["algorithm"])}: <code>{_esc(cex["property"])}</code></h3>'
            f"<p>{_esc(cex['message'] or '')}</p>"
            f"<p>First violating case <code>{_esc(cex['case_id'])}</code> ({cex['original_size']} {_esc(cex['size_unit'])}), "
            f"minimised to {cex['size']} {_esc(cex['size_unit'])}. Reproduce: <code>{_esc(cex['replay'])}</code></p>"
            + _picture(out, cex.get("picture"))
            + f"<details><summary>minimised case (JSON, <a href=\"{_esc(cex['json'])}\">file</a>)</summary>"
            f"<pre>{_esc(json.dumps(cex['minimised'], indent=1))}</pre></details></div>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(summary: dict, out) -> str:
    """Write ``out/report.html``; returns its path."""
    out = Path(out)
    path = out / "report.html"
    path.write_text(render_report(summary, out))
    return str(path)
