"""`flipcheck demo` checks what it needs before minutes of work (the sweep itself: tests/spark)."""

from flipcheck import system_tools
from flipcheck.cli import main


def test_demo_without_dot_refuses_to_start_with_one_line_naming_the_fix(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(system_tools, "find_program", lambda name: None)
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
    assert "apt-get install graphviz" in captured.err
    assert not out.exists()
