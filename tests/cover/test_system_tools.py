"""Finding the system programs flipcheck runs (dot, Chromium), and what `make install` does to
provide them (scripts/provide-tools.sh)."""

import os
import subprocess
from pathlib import Path

from flipcheck import system_tools
from flipcheck.system_tools import PROGRAMS, find_program, missing_program_message

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "provide-tools.sh"


def _executable(path: Path, text: str = "#!/bin/sh\necho fake\n") -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_program_beside_our_python_is_found_when_path_lacks_it(tmp_path, monkeypatch):
    fake_python = tmp_path / "venv-bin" / "python"
    fake_python.parent.mkdir()
    dot = _executable(fake_python.parent / "dot")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(system_tools.sys, "executable", str(fake_python))
    assert find_program("dot") == str(dot)


def test_path_comes_first(tmp_path, monkeypatch):
    on_path = tmp_path / "on-path"
    on_path.mkdir()
    dot = _executable(on_path / "dot")
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.setattr(system_tools.sys, "executable", str(tmp_path / "nowhere" / "python"))
    assert find_program("dot") == str(dot)


def test_each_missing_program_message_is_one_line_naming_the_package():
    for name, (_, package) in PROGRAMS.items():
        message = missing_program_message(name)
        assert "\n" not in message and f"apt-get install {package}" in message and "make install" in message


def _provide(tmp_path, path_dirs, *tools):
    venv_bin = tmp_path / "venv-bin"
    venv_bin.mkdir(exist_ok=True)
    env = {**os.environ, "PATH": os.pathsep.join(map(str, path_dirs))}
    result = subprocess.run(["bash", str(SCRIPT), str(venv_bin), *tools], capture_output=True, text=True, env=env)
    return result, venv_bin


def test_provide_tools_links_a_program_found_on_path_into_the_venv(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    dot = _executable(tools / "dot")
    system = [Path(p) for p in ("/usr/bin", "/bin")]  # bash, id, ln
    result, venv_bin = _provide(tmp_path, [tools, *system], "dot")
    assert result.returncode == 0, result.stderr
    assert (venv_bin / "dot").resolve() == dot.resolve()
    # Idempotent: a second run keeps the link and says nothing.
    again, _ = _provide(tmp_path, [tools, *system], "dot")
    assert again.returncode == 0 and again.stdout == "" and again.stderr == ""
