"""report.html in a real browser (headless Chromium): every counterexample picture decodes and
has a size, the inline plots lay out, and nothing is fetched from the network."""

import json
import re
import subprocess

import pytest

from flipcheck.sweep.runner import plan_sweep, run_sweep

pytestmark = [pytest.mark.spark, pytest.mark.browser]

# Appended to a copy of the report: after every image settled, write what the page looks like
# into the DOM, which --dump-dom prints.
PROBE = """
<script>
window.addEventListener("load", () => {
  const images = [...document.images].map(img => ({
    complete: img.complete, width: img.naturalWidth, height: img.naturalHeight,
    shown: img.getBoundingClientRect().width}));
  const plots = [...document.querySelectorAll("figure > svg")].map(svg => {
    const box = svg.getBoundingClientRect();
    return {width: box.width, height: box.height, marks: svg.querySelectorAll("rect, polyline, circle").length};
  });
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({images, plots, title: document.title});
  document.body.appendChild(out);
});
</script>
"""


def _chromium(chromium, tmp_path, *arguments):
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'profile'}", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory, dot_program):
    out = tmp_path_factory.mktemp("report")
    spec = plan_sweep(["plan", "barriers"], None, cases=1500, seed="browser",
                      extra_targets=[("plan", "wiki-b"), ("barriers", "eop-aborts-pending")])
    summary = run_sweep(spec, str(out), spark=spark)
    assert summary["counterexamples"], "the report needs pictures to check"
    return out, summary


def test_pictures_and_plots_render_in_headless_chromium(report, tmp_path, chromium_program):
    out, summary = report
    probe = out / "report-probe.html"
    probe.write_text((out / "report.html").read_text().replace("</body>", PROBE + "</body>"))
    result = _chromium(chromium_program, tmp_path, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri())
    match = re.search(r'<pre id="probe">(.*?)</pre>', result.stdout, re.S)
    assert match, result.stderr[-2000:]
    page = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert page["title"] == "flipcheck sweep report"
    pictures = [c for c in summary["counterexamples"] if c["picture"]]
    assert len(page["images"]) == len(pictures) >= 2
    for image in page["images"]:
        assert image["complete"] and image["width"] > 50 and image["height"] > 50 and image["shown"] > 50, image
    # One throughput plot and one coverage plot per target, each laid out and with marks drawn.
    assert len(page["plots"]) == 1 + len(summary["targets"])
    for plot in page["plots"]:
        assert plot["width"] > 100 and plot["height"] > 100 and plot["marks"] > 0, plot


def test_screenshot_of_the_report(report, tmp_path, chromium_program):
    out, _ = report
    shot = tmp_path / "report.png"
    _chromium(chromium_program, tmp_path, "--window-size=1200,3000", f"--screenshot={shot}", (out / "report.html").as_uri())
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 50_000  # a blank page compresses to a few kB


def test_the_probe_notices_a_broken_picture(report, tmp_path, chromium_program):
    """Control: the same check on a copy whose first picture is corrupt reports it."""
    out, _ = report
    broken = out / "report-broken.html"
    text = (out / "report.html").read_text().replace("data:image/svg+xml;base64,", "data:image/svg+xml;base64,AAAA", 1)
    broken.write_text(text.replace("</body>", PROBE + "</body>"))
    result = _chromium(chromium_program, tmp_path, "--virtual-time-budget=10000", "--dump-dom", broken.as_uri())
    page = json.loads(re.search(r'<pre id="probe">(.*?)</pre>', result.stdout, re.S).group(1).replace("&quot;", '"'))
    assert page["images"][0]["width"] == 0 and all(image["width"] > 50 for image in page["images"][1:])
