"""`--master` URLs are checked as Spark checks them, before a JVM or a progress bar starts, and an
unreachable standalone master is one line naming it (no JVM: nothing listens on the port)."""

import io
import socket

import pytest

from flipcheck.cli import main
from flipcheck.sweep.spark import is_local_master, master_problem, standalone_addresses

CLUSTER_ENV = {"HADOOP_CONF_DIR": "/etc/hadoop/conf"}


@pytest.mark.parametrize("master", [
    "local", "local[1]", "local[*]", "local[2,3]", "local[*, 4]", "local[2 ,0]", "local-cluster[2, 1, 1024]",
    "spark://127.0.0.1:7077", "spark://a.example:7077,b.example:7078", "spark://[::1]:7077",
    "spark://master-1.cluster.local:7077,", "spark://1b:7077", "yarn",
    "k8s://https://kube.example:6443", "k8s://kube.example:443", "k8s://HTTP://10.0.0.1:8080",
])
def test_spark_accepts_these_masters(master):
    assert master_problem(master, environ=CLUSTER_ENV) is None


@pytest.mark.parametrize("master,fragment", [
    ("local[0]", "no task with 0 threads"),  # SparkContext: "Asked to run locally with 0 threads"
    ("local[0,3]", "no task with 0 threads"),  # ResourceUtils.validateTaskCpusLargeEnough
    ("local[2147483648]", "not a number Spark can hold"),
    ("local[2,99999999999]", "not a number Spark can hold"),
    ("local[ 2 ]", "not a Spark master URL"),  # LOCAL_N_REGEX allows no spaces
    ("local[-1]", "not a Spark master URL"),
    ("local[٢]", "not a Spark master URL"),  # Spark's [0-9] is ASCII
    ("localhost", "not a Spark master URL"),
    ("local-cluster[0,1,1024]", "0 workers"),
    ("local-cluster[1,0,1024]", "no task with 0 cores"),
    ("local-cluster[1,1,512]", "spark.executor.memory=1024 MiB"),
    ("spark://", "a master is missing"),
    ("spark://host", "'host' is not HOST:PORT"),
    ("spark://host:", "'host:' is not HOST:PORT"),
    ("spark://my_host:7077", "is not HOST:PORT"),  # java.net.URI finds no host
    ("spark://a:1,,b:2", "a master is missing"),
    ("spark://user@host:7077", "is not HOST:PORT"),
    ("spark://host:7077/path", "is not HOST:PORT"),
    ("spark://host:0", "not in 1..65535"),
    ("spark://host:70000", "not in 1..65535"),
    ("spark://1.2.3.999:7077", "neither a host name nor an IPv4 address"),
    ("spark://[1::2::3]:7077", "not an IPv6 address"),
    ("yarn", "HADOOP_CONF_DIR or YARN_CONF_DIR"),
    ("yarn-client", "not a Spark master URL"),
    ("k8s://", "needs the Kubernetes API server"),
    ("k8s://ftp://kube.example", "scheme 'ftp' is not http or https"),
    ("k8s://https://kube example", "space or a control character"),
    ("mesos://zk://10.0.0.1:2181/mesos", "Mesos support was removed in Spark 4"),
    ("http://example.org", "not a Spark master URL"),
    ("", "not a Spark master URL"),
    ("local[2]\n", "not a Spark master URL"),
])
def test_spark_refuses_these_masters(master, fragment):
    problem = master_problem(master, environ={})
    assert problem is not None and fragment in problem


def test_cores_and_memory_are_checked_against_the_conf():
    assert "fewer than spark.task.cpus=4" in master_problem("local[2]", {"spark.task.cpus": "4"})
    assert master_problem("local[4]", {"spark.task.cpus": "4"}) is None
    assert master_problem("local-cluster[1,2,512]", {"spark.executor.memory": "512m"}) is None
    assert "2048 MiB" in master_problem("local-cluster[1,2,1024]", {"spark.executor.memory": "2g"})


def test_yarn_is_accepted_with_either_configuration_directory():
    assert master_problem("yarn", environ={"YARN_CONF_DIR": "/etc/hadoop"}) is None
    assert master_problem("yarn", environ={"HADOOP_CONF_DIR": "/etc/hadoop"}) is None


def test_standalone_addresses_and_locality():
    assert standalone_addresses("spark://[::1]:7077,127.0.0.1:7078") == [("::1", 7077), ("127.0.0.1", 7078)]
    assert is_local_master("spark://localhost:7077,127.0.0.1:7078")
    assert not is_local_master("spark://10.0.0.5:7077")
    assert not is_local_master("spark://not a url")


def assert_one_line_naming(err: str, *fragments: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "sweep [" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("master,fragment", [
    ("local[0]", "no task with 0 threads"),
    ("yarn", "HADOOP_CONF_DIR or YARN_CONF_DIR"),
    ("spark://127.0.0.1", "is not HOST:PORT"),
    ("mesos://host:5050", "Mesos"),
    ("local[2]\r\x1b[2J", "not a Spark master URL"),
])
def test_sweep_and_demo_refuse_a_bad_master_with_one_line(master, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    monkeypatch.delenv("YARN_CONF_DIR", raising=False)
    for argv in (["sweep", "--suite", "plan", "--cases", "5", "--master", master, "--out", str(tmp_path / "s")],
                 ["demo", "--master", master, "--out", str(tmp_path / "d")]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        line = assert_one_line_naming(captured.err, "--master", repr(master), fragment)
        assert "\x1b" not in line and "\r" not in line
    assert not (tmp_path / "s").exists() and not (tmp_path / "d").exists()


def test_a_task_cpus_conf_larger_than_the_threads_is_refused(capsys, tmp_path):
    argv = ["sweep", "--suite", "plan", "--cases", "5", "--master", "local[2]", "--conf", "spark.task.cpus=3",
            "--out", str(tmp_path / "s")]
    assert main(argv) == 2
    assert_one_line_naming(capsys.readouterr().err, "--master 'local[2]'", "spark.task.cpus=3")


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on: bound, never listened on, released."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("command", ["sweep", "demo"])
def test_an_unreachable_master_is_named_in_one_line(command, capsys, tmp_path):
    port = _closed_port()
    master = f"spark://127.0.0.1:{port},127.0.0.1:1"
    argv = [command, "--master", master, "--out", str(tmp_path / "o")]
    if command == "sweep":
        argv += ["--suite", "plan", "--cases", "5"]
    assert main(argv) == 2
    (error,) = capsys.readouterr().err.strip().splitlines()  # refused at once: no status line before it
    assert error == (f"flipcheck {command}: --master {master!r}: no Spark master reachable: "
                     f"127.0.0.1:{port} connection refused; 127.0.0.1:1 connection refused")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_the_status_line_is_erased_afterwards():
    from flipcheck.sweep.spark import show_status

    terminal = _Terminal()
    with show_status(terminal, "connecting to Spark master spark://127.0.0.1:7077 (up to 15 s)..."):
        pass
    assert terminal.getvalue() == "connecting to Spark master spark://127.0.0.1:7077 (up to 15 s)...\r\033[K"
