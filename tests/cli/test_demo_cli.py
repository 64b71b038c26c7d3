"""`flipcheck demo` (what `make demo` runs) succeeds and leaves the pictures it names."""

from pathlib import Path

from flipcheck.cli import main


def test_demo_proves_flink_catches_wiki_b_and_writes_its_picture(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--budget", "5"]) == 0
    out = capsys.readouterr().out
    assert "COUNTEREXAMPLE" not in out and "SURVIVED" not in out
    picture = tmp_path / "wiki-b-counterexample.svg"
    assert str(picture) in out or "wiki-b-counterexample.svg" in out
    assert picture.read_text().lstrip().startswith(("<?xml", "<svg"))
    assert Path(tmp_path / "wiki-b-counterexample.json").exists()
