"""Split assignment on real Flink 2.3 (issue 25 item 1): a lazy FLIP-27 source with a reader
failure and with an enumerator failure, each one real MiniCluster job (about 10-15 s), must
conform to model/split_assignment.py and to the protocol, every split read exactly once.
The stored runs of tests/fixtures/flink_runs/splits-* cover the rest without a JVM."""

import json

import pytest

from flipcheck.cli import main
from flipcheck.data import example_graphs
from flipcheck.flink.conform import conform_files
from flipcheck.flink.logs import read_logs

pytestmark = pytest.mark.flink

GRAPH = str(example_graphs() / "flink" / "splits.json")


def _run_and_conform(tmp_path_factory, name, *faults):
    out = tmp_path_factory.mktemp(name) / "out"
    code = main(["flink", "run", GRAPH, "--out", str(out), *faults])
    assert code == 0, (out / "jvm.out").read_text()[-2000:]
    result = conform_files(str(out / "plan.json"), [str(out / "flink.log")])
    kinds = [e.kind for e in read_logs([str(out / "flink.log")]).events]
    return out, result, kinds


def _assert_conforms(out, result):
    assert json.loads((out / "run.json").read_text())["designs"] == ["protocol", "split-assignment"]
    split = result.designs["split-assignment"]
    assert result.designs["protocol"].conforms, result.first_unexplained
    assert split.conforms, split.first_unexplained
    assert all(c.ok and "not checked" not in c.detail for c in split.checks), split.checks
    assert result.conforms


def test_a_reader_failure_resets_each_source_subtask_and_conforms(tmp_path_factory):
    out, result, kinds = _run_and_conform(tmp_path_factory, "reader", "--fail", "src:0@12")
    assert "source-reset" in kinds and "split-add-back" in kinds and "global-failure" not in kinds
    _assert_conforms(out, result)


def test_an_enumerator_failure_is_a_global_failover_and_conforms(tmp_path_factory):
    out, result, kinds = _run_and_conform(tmp_path_factory, "enumerator", "--fail-enumerator", "src")
    assert kinds.count("split-start") == 2 and "global-failure" in kinds and "source-reset" not in kinds
    _assert_conforms(out, result)
