"""The job server (flipcheck/flink/job_server.py, JobServer.java) without a JVM: which jobs it takes,
its line protocol driven by a stand-in process, what happens to a job that hangs or a JVM that
dies, and that JobServer resets every static field the job builder's faults keep."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from flipcheck.flink.engine import FAULTS_SOURCE, FlinkRunError, log4j_properties, reported_line
from flipcheck.flink.job_server import DISABLE_ENV, SERVER_SOURCE, JobServer

PLAIN = {"local_recovery": False, "batch": None, "taskmanagers": 1}

# A stand-in for the JVM, speaking JobServer.java's protocol: a spec path per line; the spec's
# "act" says what to do: finish, report an error, hang, or exit.
STAND_IN = textwrap.dedent("""
    import json, sys, time
    print("FLIPCHECK server 1", flush=True)
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        act = json.load(open(line.strip()))["act"]
        if act == "hang":
            time.sleep(3600)
        if act == "exit":
            sys.exit(3)
        if act == "error":
            print("FLIPCHECK error IllegalArgumentException: no such vertex", flush=True)
            print("FLIPCHECK end 2", flush=True)
            continue
        for key in ("submitted", "job_id", "done"):
            print(f"FLIPCHECK {key} 1", flush=True)
        print('FLIPCHECK result {"status":"FINISHED"}', flush=True)
        print("FLIPCHECK end 0", flush=True)
""")


class StandIn(JobServer):
    def command(self, workdir: Path) -> list[str]:
        (workdir / "stand_in.py").write_text(STAND_IN)
        return [sys.executable, str(workdir / "stand_in.py")]


def _job(tmp_path: Path, name: str, act: str) -> tuple[Path, Path]:
    out = tmp_path / name
    out.mkdir()
    (out / "spec.json").write_text(f'{{"act": "{act}"}}')
    return out / "spec.json", out


def test_the_server_takes_plain_jobs_and_leaves_the_others_a_jvm_of_their_own(monkeypatch):
    server = StandIn()
    assert not server.accepts({**PLAIN, "local_recovery": True})
    assert not server.accepts({**PLAIN, "batch": {"hold": []}})
    assert not server.accepts({**PLAIN, "taskmanagers": 2})
    assert server.pid is None   # refusing starts nothing
    monkeypatch.setenv(DISABLE_ENV, "0")
    assert not server.accepts(PLAIN) and server.pid is None


def test_many_jobs_run_through_one_process_each_with_its_own_transcript(tmp_path):
    with StandIn() as server:
        pids = set()
        for n in range(3):
            spec, out = _job(tmp_path, f"job{n}", "finish")
            assert server.accepts(PLAIN)
            reported, marks = server.run(spec, out, timeout_seconds=60)
            assert reported["result"] == '{"status":"FINISHED"}' and set(marks) >= {"submitted", "done", "end"}
            assert (out / "jvm.out").read_text().splitlines()[-1] == "FLIPCHECK end 0"
            pids.add(server.pid)
        assert len(pids) == 1 and server.starts == 1 and server.jobs == 3
    assert server.pid is None


def test_a_job_the_server_cannot_run_is_an_error_and_the_server_goes_on(tmp_path):
    with StandIn() as server:
        spec, out = _job(tmp_path, "bad", "error")
        with pytest.raises(FlinkRunError, match="no such vertex"):
            server.run(spec, out, timeout_seconds=60)
        spec, out = _job(tmp_path, "good", "finish")
        assert server.run(spec, out, timeout_seconds=60)[0]["result"]
        assert server.starts == 1


def test_a_hanging_job_kills_the_jvm_and_the_next_job_gets_a_new_one(tmp_path):
    with StandIn() as server:
        spec, out = _job(tmp_path, "hang", "hang")
        assert server.accepts(PLAIN)
        hung = server.pid
        with pytest.raises(FlinkRunError, match="reported nothing for 0.5 s"):
            server.run(spec, out, timeout_seconds=0.5)
        assert server.pid is None and not Path(f"/proc/{hung}").exists()   # killed, not orphaned
        spec, out = _job(tmp_path, "after", "finish")
        assert server.run(spec, out, timeout_seconds=60)[0]["result"] and server.starts == 2


def test_a_jvm_that_dies_is_an_error_naming_its_exit_code(tmp_path):
    with StandIn() as server:
        spec, out = _job(tmp_path, "dies", "exit")
        with pytest.raises(FlinkRunError, match="exited with code 3"):
            server.run(spec, out, timeout_seconds=60)
        assert server.pid is None


def test_a_server_that_cannot_start_says_so_in_one_line_and_refuses_jobs():
    heard = []

    class Broken(JobServer):
        def command(self, workdir):
            raise FlinkRunError("javac could not compile JobServer.java against Flink 1.14.6: error")

    server = Broken(notice=heard.append)
    assert not server.accepts(PLAIN) and not server.accepts(PLAIN)
    assert heard == ["flipcheck: the job server cannot start (javac could not compile JobServer.java against "
                     "Flink 1.14.6: error): one JVM per job"]


def test_the_server_log_configuration_has_no_file_of_its_own():
    assert "appender" not in log4j_properties(None) and "DEBUG" in log4j_properties(None)
    assert "appender.file.fileName = /x/flink.log" in log4j_properties(Path("/x/flink.log"))
    assert reported_line("FLIPCHECK end 0\n") == ("end", "0")


# -- every static field of the faults is reset between jobs ------------------------------------

_MUTABLE = re.compile(r"static final (?:Map|Set|AtomicLong|AtomicBoolean|AtomicInteger|List)\b[^=;]*?\s(\w+)\s*=")


def unreset_fields(faults_source: str) -> list[str]:
    """The mutable static fields of Faults.java that its reset() does not name."""
    body = faults_source.split("static void reset() {", 1)[1].split("\n    }", 1)[0]
    return [name for name in _MUTABLE.findall(faults_source) if not re.search(rf"\b{name}\.", body)]


def test_every_mutable_static_field_of_the_faults_is_reset_between_jobs():
    source = FAULTS_SOURCE.read_text()
    assert len(_MUTABLE.findall(source)) >= 10
    assert unreset_fields(source) == []
    # The check can fail: a new field that reset() forgets is named.
    doctored = source.replace("    private Faults() {}",
                              "    static final Set<String> NEW_FAULT = ConcurrentHashMap.newKeySet();\n    private Faults() {}")
    assert unreset_fields(doctored) == ["NEW_FAULT"]
    server = SERVER_SOURCE.read_text()
    assert "Faults.reset();" in server and "FlipcheckJob.FailPoint.FIRED.set(false);" in server


def test_the_server_opens_no_port_of_its_own_and_reads_json_only():
    server = SERVER_SOURCE.read_text()
    assert "ServerSocket" not in server and "ObjectInputStream" not in server
    assert "json.readTree(new File(" in server and os.path.basename(str(SERVER_SOURCE)) == "JobServer.java"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_server_dies_with_its_parent(tmp_path):
    """A parent killed outright (no atexit, no quit line) leaves no server behind."""
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_job_server import StandIn, PLAIN
        server = StandIn()
        server.accepts(PLAIN)
        print(server.pid, flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert Path(f"/proc/{child}").exists()
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    # The kernel's signal is asynchronous: wait for the child to be reaped by init, bounded.
    for _ in range(200):
        state = Path(f"/proc/{child}/stat")
        if not state.exists() or state.read_text().split(") ")[1].startswith("Z"):
            break
        time.sleep(0.05)
    else:
        os.kill(child, 9)
        pytest.fail(f"the server {child} outlived its parent")


# -- who uses it: the flink sweep suite, bench flink --jobs --------------------------------------

def test_a_flink_sweep_case_runs_through_this_workers_shared_server(tmp_path, monkeypatch):
    from flipcheck.designs import flink_jobs
    from flipcheck.flink import job_server

    seen = []

    def record_run(graph, out, *, server=None, **options):
        seen.append(server)
        raise FlinkRunError("stopped here: the test only needs the server the job was given")

    monkeypatch.setattr(flink_jobs, "run_graph", record_run)
    space = flink_jobs.suite.space("t5")
    space.workdir = str(tmp_path)
    for index in (1, 2):
        assert space.check(space.case(index), "flink").error.startswith("flink run: stopped here")
    assert len(seen) == 2 and seen[0] is seen[1] is job_server.shared_server(flink_jobs.case_release())
    assert isinstance(seen[0], JobServer) and seen[0].pid is None   # nothing started: run_graph decides


@pytest.mark.parametrize("argv,option", [
    (["bench", "flink", "--master", "local[2]"], "--master"),
    (["bench", "plan", "--jobs", "3"], "--jobs"),
    (["bench", "flink", "--jobs", "0"], "--jobs"),
    (["bench", "conform", "--master", "local[1]"], "--master"),
])
def test_bench_flink_throughput_options_are_checked_in_one_line(argv, option, capsys):
    from flipcheck.cli import main

    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in captured.err, captured.err


def test_the_throughput_report_names_both_ways_and_their_errors():
    from flipcheck.bench.flink import throughput_lines

    row = {"jobs": 4, "validated": 4, "errors": [], "seconds": 60.0, "validated_per_minute": 4.0, "server": False}
    report = {"master": "local[2]", "jobs": 4, "old": row,
              "new": dict(row, validated=3, validated_per_minute=6.0, errors=["flink run: hung"], server=True),
              "speedup": 1.5}
    lines = throughput_lines(report)
    assert lines[1].split()[:2] == ["old", "4"] and "one JVM per job" in lines[1]
    assert lines[2].split()[:3] == ["new", "4", "3"] and "one job server per Spark worker" in lines[2]
    assert lines[3].strip() == "error: flink run: hung" and lines[-1] == "new/old: 1.5x"


# -- a stored reused-JVM run: the second job of one server (tests/flink/test_job_server_run.py) ----

SERVED = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs" / "job-server-join-unaligned"


def test_a_stored_job_of_a_reused_jvm_conforms_with_every_check_and_stands_alone():
    from flipcheck.flink.conform import conform_files

    run = json.loads((SERVED / "run.json").read_text())
    log = (SERVED / "flink.log").read_text()
    # It starts at its own submission (no cluster start-up), names only its own job, counts from 1.
    assert "Received application submission" in log.splitlines()[0]
    assert set(re.findall(r"\bjob ([0-9a-f]{32})\b", log)) == {run["job_id"]}
    assert "Triggering checkpoint 1 " in log and json.loads((SERVED / "spec.json").read_text())["mode"] == "unaligned"
    result = conform_files(str(SERVED / "plan.json"), [str(SERVED / "flink.log")])
    assert result.conforms, (result.first_unexplained, [c for c in result.checks if not c.ok])
    assert {c.name for c in result.checks} == {"model", "trigger-plan", "final-checkpoint", "ids-in-order",
                                              "committed-output", "job-finished"}


@pytest.mark.parametrize("alteration,rule", [("completed-without-acknowledgement", "model")])
def test_a_stored_job_of_a_reused_jvm_altered_is_rejected_naming_the_rule(tmp_path, alteration, rule):
    """One alteration: tests/cover/test_conform.py applies all of them to the suite's runs."""
    from flipcheck.flink.conform import conform_files
    from flipcheck.flink.suite import alter_run

    what = alter_run(SERVED, alteration, tmp_path / "run")
    result = conform_files(str(tmp_path / "run" / "plan.json"), [str(tmp_path / "run" / "flink.log")])
    assert not result.conforms and rule in {c.name for c in result.checks if not c.ok}, what


def test_the_undecided_stored_job_of_a_reused_jvm_names_only_its_own_job():
    """Its conform search conforms after 322,585 states (it ran out of 2,000,000 before the lazy
    stop; docs/conformance.md, "Many jobs in one JVM" and "Cost"): too long for make test; what
    the server owes it, a log of its own, is checked."""
    undecided = SERVED.with_name("job-server-join-failover-undecided")
    run = json.loads((undecided / "run.json").read_text())
    log = (undecided / "flink.log").read_text()
    assert set(re.findall(r"\bjob ([0-9a-f]{32})\b", log)) == {run["job_id"]} and run["failure_injected"]
    assert "Received application submission" in log.splitlines()[0]
