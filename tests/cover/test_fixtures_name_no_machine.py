"""Stored runs are data for every machine: none names a worktree or home folder of the machine that
recorded it (a `flipcheck flink run` directory's run.json records the Flink lib folder it used)."""

import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_no_fixture_names_a_folder_of_the_recording_machine():
    machine = re.compile(r"/(?:work|root)/|/home/\w+/")   # not spelt out: this file names no folder either
    found = [f"{path.relative_to(FIXTURES)}: {match.group(0)}" for path in FIXTURES.rglob("*.json")
             for match in [machine.search(path.read_text(errors="replace"))] if match]
    assert found == []
