"""`flipcheck flink component approximate-recovery` on a stored transcript of Flink 2.3.0's harness
(no JVM here): exit 0 as Flink agrees, 1 on a changed observation or a buggy engine, 2 with one
line on a bad option or transcript, never a traceback."""

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flipcheck.cli import main
from flipcheck.generators.approximate_recovery import COMPONENT_SEQUENCES

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "flink_components" / "approximate-recovery-2.3.0.jsonl"
COMMAND = ["flink", "component", "approximate-recovery"]


def _run(capsys, *options):
    code = main([*COMMAND, *options])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _changed(tmp_path, name: str, step: int, outputs) -> str:
    """The fixture with one step's outputs replaced."""
    lines = []
    for line in FIXTURE.read_text().splitlines():
        record = json.loads(line)
        if record.get("sequence") == name and record.get("step") == step:
            record["out"] = outputs
        lines.append(json.dumps(record))
    path = tmp_path / "changed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_the_stored_transcript_agrees_but_for_the_known_zombie_difference(capsys):
    code, out, err = _run(capsys, "--observations", str(FIXTURE))
    assert (code, err) == (0, "")
    assert "12 agree, 1 known, 0 differ" in out and out.rstrip().endswith("ok")
    assert "step 3 `connect 0`: model [rejected 0 zombie], Flink [view_released 1, view_created 0]" in out
    assert "Flink breaks zombie_never_replaces_newer" in out
    assert "attempt 1 read bytes 6..8 (record 1); dropped bytes 4..6 (the rest of record 0)" in out


def test_json_carries_every_sequence_with_its_verdict_and_steps(capsys):
    code, out, _ = _run(capsys, "--observations", str(FIXTURE), "--json")
    document = json.loads(out)
    assert code == 0 and document["ok"] is True
    assert (document["agrees"], document["known"], document["differs"], document["engine_differs"]) == (12, 1, 0, 0)
    assert [row["name"] for row in document["sequences"]] == [s.name for s in COMPONENT_SEQUENCES]
    zombie = next(row for row in document["sequences"] if row["name"] == "zombie-connects-late")
    assert zombie["verdict"] == "known" and zombie["step"] == 3 and zombie["properties"] == ["zombie_never_replaces_newer"]
    assert zombie["observed"][2] == [["view_released", 1], ["view_created", 0]]
    assert document["harness_flink"] == "2.3.0" and document["flink"] is None and document["variant"] == "flip135"


def test_a_changed_observation_is_a_difference_and_exit_1(capsys, tmp_path):
    changed = _changed(tmp_path, "reconnect-mid-long-record", 7, [["data", 1, 0, 4, 6]])
    code, out, _ = _run(capsys, "--observations", changed)
    assert code == 1
    assert "DIFFERS  reconnect-mid-long-record" in out
    assert "step 7 `poll 1`: model [data 1 0 7 8], Flink [data 1 0 4 6]" in out
    assert "DIFFERENCE" in out.splitlines()[-1]


def test_a_step_past_the_end_of_a_sequence_is_a_difference(capsys, tmp_path):
    path = tmp_path / "longer.jsonl"
    path.write_text(FIXTURE.read_text() + '{"sequence": "release-partition", "step": 9, "out": [["none", 1]]}\n')
    code, out, _ = _run(capsys, "--observations", str(path))
    assert code == 1
    assert "step 9 `(no such event)`: model nothing (the sequence has ended), Flink [none 1]" in out


def test_a_buggy_reference_engine_is_a_difference_and_exit_1(capsys):
    code, out, _ = _run(capsys, "--observations", str(FIXTURE), "--variant", "cleanup-first-buffer-only")
    assert code == 1
    assert ("the reference engine differs: step 7 `poll 1`: model [data 1 0 7 8], "
            "engine cleanup-first-buffer-only [data 1 0 4 6]") in out


def test_the_help_teaches_why_a_component_and_not_a_run(capsys):
    assert main([*COMMAND, "--help"]) == 0
    text = capsys.readouterr().out
    for fragment in ("checks Flink's component, not a run",
                     "Approximate local recovery can not be used together with\nPipelinedRegionScheduler for now!",
                     "ApproximateLocalRecoveryDownstreamITCase is @Ignore'd", "examples:", "exit codes:"):
        assert fragment in text


def _one_line_exit_2(capsys, *options, fragment) -> str:
    """The one line a bad option or transcript gets (asserted: exit 2, nothing on stdout)."""
    code, out, err = _run(capsys, *options)
    assert (code, out) == (2, ""), err
    assert len(err.splitlines()) == 1 and fragment in err, err
    return err.strip()


def test_bad_options_and_transcripts_are_one_line_exit_2(capsys, tmp_path):
    lines = []
    lines.append(_one_line_exit_2(capsys, "--variant", "no-such-variant", fragment="--variant"))
    lines.append(_one_line_exit_2(capsys, "--observations", str(FIXTURE), "--flink", "2.3.0", fragment="takes no --flink"))
    lines.append(_one_line_exit_2(capsys, "--observations", str(FIXTURE), "--cases", "3", fragment="takes no --cases"))
    lines.append(_one_line_exit_2(capsys, "--cases", "5001", fragment="--cases"))
    lines.append(_one_line_exit_2(capsys, "--observations", str(FIXTURE), "--save", str(tmp_path / "t.jsonl"), fragment="--save"))
    lines.append(_one_line_exit_2(capsys, "--save", str(tmp_path / "no" / "such" / "t.jsonl"), fragment="--save"))
    lines.append(_one_line_exit_2(capsys, "--flink", "9.9.9", fragment="--flink 9.9.9"))
    lines.append(_one_line_exit_2(capsys, "--flink-home", str(tmp_path / "nonexistent"), fragment="--flink-home"))
    lines.append(_one_line_exit_2(capsys, "--observations", str(tmp_path / "missing.jsonl"), fragment="cannot read it"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(FIXTURE.read_text().replace('"step": 2,', '"step": 9,', 1))
    lines.append(_one_line_exit_2(capsys, "--observations", str(bad), fragment="field 'step'"))
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(FIXTURE.read_text().replace("release-partition", "no-such-sequence"))
    lines.append(_one_line_exit_2(capsys, "--observations", str(unknown), fragment="'no-such-sequence' is no sequence"))
    # each problem names itself: no two of these inputs get the same line
    assert len(set(lines)) == len(lines) == 11, lines


@settings(max_examples=25, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 6000), junk=st.text(max_size=20))
def test_a_mangled_transcript_never_crashes(capsys, tmp_path, cut, junk):
    text = FIXTURE.read_text()
    path = tmp_path / "mangled.jsonl"
    path.write_text(text[:cut] + junk + text[cut + len(junk):], encoding="utf-8", errors="surrogateescape")
    code, _, err = _run(capsys, "--observations", str(path))
    assert code in (0, 1, 2), err
    assert code != 2 or len(err.splitlines()) == 1, err


def _examples_without_a_jvm():
    """The --help examples that judge the stored transcript: (argv, documented exit code)."""
    from flipcheck.cli.flink_component import AR_EPILOG

    lines = AR_EPILOG.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    examples = []
    for line in lines:
        if line.strip().startswith("flipcheck "):
            command, _, comment = line.strip().partition("  ")
            examples.append([command.split()[1:], comment])
        elif examples:
            examples[-1][1] += " " + line.strip()
    return [(argv, 1 if "exit 1" in comment else 0) for argv, comment in examples if "--observations" in argv]


def test_the_help_examples_that_judge_the_stored_transcript_exit_as_documented(capsys, monkeypatch):
    examples = _examples_without_a_jvm()
    assert [code for _, code in examples] == [0, 1]
    monkeypatch.chdir(FIXTURE.parents[3])
    for argv, documented in examples:
        assert main(argv) == documented, argv
    capsys.readouterr()
