"""An unreachable standalone master fails with exit 2 and one line naming it, in a real process:
a closed port (refused before any JVM starts) and a port that accepts connections but is no
Spark master (the JVM starts; Spark alone would retry for a minute). Time to fail is measured by
hand (see the commit), not asserted here."""

import socket
import subprocess
import threading

import pytest

pytestmark = pytest.mark.spark


@pytest.fixture
def silent_port():
    """A port on 127.0.0.1 that accepts TCP connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted = []

    def accept_forever():
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:  # the server socket was closed
                return

    threading.Thread(target=accept_forever, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for connection in accepted:
        connection.close()


def run_sweep_against(master, flipcheck_cli, cli_env, out):
    return subprocess.run([*flipcheck_cli, "sweep", "--suite", "plan", "--cases", "10", "--master", master,
                           "--out", str(out)], env=cli_env, capture_output=True, text=True, timeout=120)


def test_a_closed_port_is_refused_with_one_line(flipcheck_cli, cli_env, tmp_path):
    master = "spark://127.0.0.1:1"
    result = run_sweep_against(master, flipcheck_cli, cli_env, tmp_path / "o")
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"flipcheck sweep: --master '{master}': no Spark master reachable: 127.0.0.1:1 connection refused",
    ]
    assert result.stdout == ""


def test_a_port_that_is_no_spark_master_says_what_it_waits_for_then_fails_in_one_line(silent_port, flipcheck_cli, cli_env, tmp_path):
    master = f"spark://127.0.0.1:{silent_port}"
    result = run_sweep_against(master, flipcheck_cli, cli_env, tmp_path / "o")
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"connecting to Spark master {master} (up to 15 s)...",
        f"flipcheck sweep: --master '{master}': no Spark master accepted the application within 15 s "
        f"(details: {tmp_path / 'o' / 'spark.log'})",
    ]
    assert result.stdout == ""
