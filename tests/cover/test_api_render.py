"""Every check of the public API draws what it found: ``Result.render(path)`` (flipcheck/api.py)
writes the picture, for a violation and for a clean result alike."""

from pathlib import Path

import pytest

import flipcheck

FIGURE1 = Path(__file__).resolve().parents[2] / "examples" / "graphs" / "figure1.json"
PAIR = flipcheck.job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])

CHECKS = {
    "plan": lambda: flipcheck.plan(FIGURE1, "wiki-b"),
    "prove": lambda: flipcheck.prove(FIGURE1, "flink-before-40482", states="all"),
    "prove-proved": lambda: flipcheck.prove(FIGURE1),
    "barriers": lambda: flipcheck.replay_barriers("B1@0 E@1", channels=2, handler="eop-not-aligned"),
    "explore": lambda: flipcheck.explore(PAIR, "cancel-pending-on-finish", records=1),
}


@pytest.mark.usefixtures("dot_program")
@pytest.mark.parametrize("check", CHECKS)
def test_result_renders(check, tmp_path):
    path = tmp_path / f"{check}.svg"
    assert CHECKS[check]().render(path) == str(path)
    assert path.read_text().lstrip().startswith(("<?xml", "<svg"))
