"""`watch_jvm` (flipcheck/bench/flink.py) counts the JVMs its work starts, not the ones this
process ran before: in `make test` a Spark session's gateway JVM is a child of the pytest process,
and the job server's test once saw it as a second JVM (CI, tests/flink/test_job_server_run.py)."""

from flipcheck.bench import flink as bench_flink


def test_a_jvm_running_before_the_work_is_not_the_works(monkeypatch):
    running = [4100]                      # a JVM before the work: Spark's gateway, say
    monkeypatch.setattr(bench_flink, "java_children", lambda parent=None: list(running))
    monkeypatch.setattr(bench_flink, "listening_addresses", lambda pid: {("127.0.0.1", pid)})
    monkeypatch.setattr(bench_flink, "_rss_mb", lambda pid: 1.0)

    def work():
        running.append(4200)              # the work starts one JVM
        bench_flink.time.sleep(0.3)       # long enough for the sampler (every 0.1 s) to see it
        return "done"

    result, watch = bench_flink.watch_jvm(work)
    assert result == "done" and watch.pids == {4200} and watch.listening == {("127.0.0.1", 4200)}
