"""Choosing the Flink release without starting a JVM: version parsing, the release list, the
release cache and its installer, --flink / --flink-home refusals (exit 2, one line naming the
option), the adapters and configuration keys each release gets, `flipcheck flink releases`."""

import json
import os
import sys
import zipfile
from pathlib import Path

import pytest

from flipcheck.cli import main
from flipcheck.flink import engine, releases
from flipcheck.flink.releases import KNOWN_RELEASES, parse_version, resolve_flink, supported, version_from_jar_name

CHAIN = str(Path(__file__).resolve().parents[2] / "examples" / "graphs" / "flink" / "chain.json")


def _refused(capsys, argv, *needles):
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 1 and lines[0].startswith("flipcheck"), captured.err
    assert "Traceback" not in captured.err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "flipcheck" / "releases"


@pytest.fixture
def no_jvm(monkeypatch):
    def started(*_, **__):
        raise AssertionError("a refused run must not start javac or java")
    # compile_job comes before the JVM's start (subprocess is shared with pip: left alone).
    monkeypatch.setattr(engine, "compile_job", started)


def _fake_pip(monkeypatch, script: str):
    """The installer replaced by a Python one-liner run with the target directory as argv[1]."""
    monkeypatch.setattr(releases, "_installer", lambda version, target: [sys.executable, "-c", script, str(target), version])


@pytest.mark.parametrize("name, version", [
    ("flink-dist-1.17.2.jar", "1.17.2"), ("flink-dist_2.11-1.14.6.jar", "1.14.6"),
    ("flink-dist_2.12-1.15.4.jar", "1.15.4"), ("flink-dist-2.1.0-SNAPSHOT.jar", "2.1.0-SNAPSHOT"),
    ("flink-dist-2.2-SNAPSHOT.jar", "2.2-SNAPSHOT"), ("flink-dist_2.12-1.14-SNAPSHOT.jar", "1.14-SNAPSHOT"),
    ("flink-dist.jar", None), ("flink-dist-2.x.jar", None), ("flink-table-1.17.2.jar", None),
])
def test_the_version_is_read_from_a_flink_dist_jar_name(name, version):
    assert version_from_jar_name(name) == version


def test_versions_parse_and_the_supported_range_is_flip_147s():
    assert parse_version("1.20.5") == (1, 20, 5) and parse_version("2.0.0-SNAPSHOT") == (2, 0, 0)
    assert parse_version("2.2-SNAPSHOT") == (2, 2, 0)  # a branch built with mvn install
    for bad in ("1", "v1.14.0", "1.14.x", "", "1.14.6-rc1"):
        with pytest.raises(ValueError):
            parse_version(bad)
    assert [supported(v) for v in ("1.13.6", "1.14.0", "2.3.0", "2.3.7", "2.4.0", "9.9.9", "0.0", "2.3-SNAPSHOT")] == \
        [False, True, True, True, False, False, False, True]


def test_the_known_release_list_runs_from_1_14_0_to_2_3_0_without_the_unpublished_1_14_1():
    assert KNOWN_RELEASES[0] == "1.14.0" and KNOWN_RELEASES[-1] == "2.3.0" and "1.14.1" not in KNOWN_RELEASES
    assert list(KNOWN_RELEASES) == sorted(set(KNOWN_RELEASES), key=parse_version)
    assert all(supported(v) for v in KNOWN_RELEASES)
    minors = {v.rsplit(".", 1)[0] for v in KNOWN_RELEASES}
    assert minors == {"1.14", "1.15", "1.16", "1.17", "1.18", "1.19", "1.20", "2.0", "2.1", "2.2", "2.3"}


def test_the_registry_adds_newer_supported_releases_and_offline_the_known_list_stands(monkeypatch):
    monkeypatch.setattr(releases, "_index_versions", lambda timeout: ["2.3.1", "2.4.0", "1.13.6", "2.3.0", "0.0"])
    listed, answered = releases.available_releases()
    assert answered and listed[-1] == "2.3.1" and "2.4.0" not in listed and "1.13.6" not in listed
    monkeypatch.setattr(releases, "_index_versions", lambda timeout: None)
    assert releases.available_releases() == (list(KNOWN_RELEASES), False)


def test_a_flink_home_without_jars_is_one_line_naming_the_option(tmp_path, capsys, no_jvm):
    (tmp_path / "flink-1.17.2" / "lib").mkdir(parents=True)
    line = _refused(capsys, ["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink-home", str(tmp_path / "flink-1.17.2")],
                    "--flink-home", "flink-dist")
    assert str(tmp_path / "flink-1.17.2") in line
    _refused(capsys, ["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink-home", str(tmp_path / "nope")],
             "--flink-home", "is not a directory")


def test_a_flink_home_or_its_lib_folder_gives_the_version_of_its_flink_dist_jar(tmp_path):
    lib = tmp_path / "flink-1.17.2" / "lib"
    lib.mkdir(parents=True)
    (lib / "flink-dist-1.17.2.jar").write_bytes(b"")
    for home in (tmp_path / "flink-1.17.2", lib):
        install = resolve_flink(flink_home=str(home))
        assert (install.version, install.lib, install.source) == ("1.17.2", lib.resolve(), "flink-home")


def test_a_flink_dist_jar_without_a_version_in_its_name_is_read_by_its_manifest(tmp_path, capsys, no_jvm):
    lib = tmp_path / "lib"
    lib.mkdir()
    with zipfile.ZipFile(lib / "flink-dist.jar", "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nImplementation-Version: 1.16-SNAPSHOT\n")
    install = resolve_flink(flink_home=str(tmp_path))
    assert install.version == "1.16-SNAPSHOT" and engine.adapters(install.version) == ("flink1", "sink2", "sinkv2_1_15")
    with zipfile.ZipFile(lib / "flink-dist.jar", "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    _refused(capsys, ["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink-home", str(tmp_path)],
             "--flink-home", "cannot tell the Flink version")


def test_a_flink_home_of_an_unsupported_release_is_refused(tmp_path, capsys, no_jvm):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "flink-dist_2.11-1.13.6.jar").write_bytes(b"")
    line = _refused(capsys, ["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink-home", str(tmp_path)],
                    "--flink-home", "1.13.6 is not supported")
    assert "1.14.0" in line and not (tmp_path / "o" / "run.json").exists()  # refused before any run


@pytest.mark.parametrize("version, needles", [
    ("9.9.9", ("--flink 9.9.9", "1.14.0 to 2.3.x")), ("1.13.6", ("--flink 1.13.6", "not supported")),
    ("1.2", ("--flink", "not a Flink release such as 1.14.6")),
    ("2.2-SNAPSHOT", ("--flink", "not a Flink release")),  # a build is --flink-home's
])
def test_an_unsupported_flink_version_is_one_line_without_pip(version, needles, tmp_path, capsys, cache, monkeypatch, no_jvm):
    monkeypatch.setattr(releases.subprocess, "run", lambda *a, **k: pytest.fail("pip must not be asked"))
    _refused(capsys, ["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink", version], *needles)
    assert not cache.exists() or not any(cache.iterdir()), "nothing may be installed"


def test_flink_and_flink_home_exclude_each_other(tmp_path, capsys, no_jvm):
    line = _refused(capsys, ["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink", "1.14.6",
                             "--flink-home", str(tmp_path)], "--flink-home", "--flink")
    assert "not allowed with" in line and not (tmp_path / "o").exists()  # argparse refuses before any work


def test_a_release_missing_from_the_registry_names_the_nearest_ones(tmp_path, capsys, cache, monkeypatch, no_jvm):
    monkeypatch.setattr(releases, "_index_versions", lambda timeout: list(KNOWN_RELEASES))
    _refused(capsys, ["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink", "1.14.1"],
             "--flink 1.14.1", "no such release", "1.14.0, 1.14.2")
    assert not (releases.releases_dir() / "1.14.1").exists()  # no install was attempted into the cache


def test_offline_the_install_fails_in_one_line_and_leaves_no_scratch(tmp_path, capsys, cache, monkeypatch, no_jvm):
    # The real pip, against a package index that refuses connections (nothing listens on port 9).
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_NO_INDEX", "0")
    assert main(["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink", "1.14.5"]) == 2
    captured = capsys.readouterr()
    progress, line = captured.err.splitlines()  # the install's progress line, then the error's
    assert progress.startswith("flipcheck: installing Flink 1.14.5") and captured.out == ""
    assert line.startswith("flipcheck flink: --flink 1.14.5: ") and "unreachable (offline?)" in line, line
    assert not cache.exists() or os.listdir(cache) == []


def test_pip_saying_no_such_release_names_the_nearest_ones(tmp_path, capsys, cache, monkeypatch, no_jvm):
    _fake_pip(monkeypatch, "import sys; sys.stderr.write('ERROR: No matching distribution found for "
                           "apache-flink-libraries==1.15.4\\n'); sys.exit(1)")
    assert main(["flink", "run", CHAIN, "--out", str(tmp_path / "o"), "--flink", "1.15.4"]) == 2
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.startswith("flipcheck flink: --flink 1.15.4: no such release (nearest: 1.15.3, 1.16.0)"), line


INSTALL = ("import pathlib, sys, time; lib = pathlib.Path(sys.argv[1], 'pyflink', 'lib'); lib.mkdir(parents=True); "
           "time.sleep(0.3); (lib / f'flink-dist-{sys.argv[2]}.jar').write_bytes(b'')")


def test_a_release_is_installed_once_with_one_progress_line_and_then_comes_from_the_cache(cache, monkeypatch):
    _fake_pip(monkeypatch, INSTALL)
    lines = []
    first = resolve_flink("1.16.2", progress=lines.append)
    assert (first.version, first.source, first.lib) == ("1.16.2", "downloaded", cache / "1.16.2" / "pyflink" / "lib")
    assert len(lines) == 1 and "1.16.2" in lines[0] and str(cache / "1.16.2") in lines[0]
    again = resolve_flink("1.16.2", progress=lines.append)
    assert (again.source, again.lib, len(lines)) == ("cache", first.lib, 1)
    assert [i.version for i in releases.installed_releases()] == ["1.16.2"]


def test_two_installs_at_once_end_with_one_cache_entry(cache, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    _fake_pip(monkeypatch, INSTALL)
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: releases.install_release("1.18.0"), range(2))
    assert first.lib == second.lib and first.lib.is_dir()
    assert sorted(os.listdir(cache)) == ["1.18.0"]  # no scratch left behind


def test_releases_install_fetches_ahead_of_a_run_and_lists_them_installed(cache, monkeypatch, capsys):
    _fake_pip(monkeypatch, INSTALL)
    monkeypatch.setattr(releases, "available_releases", lambda **_: (list(KNOWN_RELEASES), False))
    assert main(["flink", "releases", "--install", "1.16.2, 1.18.0", "--json"]) == 0
    captured = capsys.readouterr()
    listed = {entry["version"]: entry["source"] for entry in json.loads(captured.out)["installed"]}
    assert listed["1.16.2"] == listed["1.18.0"] == "cache"
    assert [line for line in captured.err.splitlines() if "installing Flink" in line] == [
        f"flipcheck: installing Flink {v} (apache-flink-libraries, about 250 MB) into {cache / v}" for v in ("1.16.2", "1.18.0")]


@pytest.mark.parametrize("listed, needles", [
    ("9.9.9", ("--install 9.9.9", "1.14.0 to 2.3.x")), ("1.20.0,", ("--install", "comma-separated")),
    ("1.2", ("--install", "not a Flink release such as 1.14.6")),
])
def test_releases_install_refuses_in_one_line_naming_install(listed, needles, cache, capsys):
    _refused(capsys, ["flink", "releases", "--install", listed], *needles)
    assert not cache.exists() or not os.listdir(cache)


def test_the_venv_release_serves_its_own_version(monkeypatch, cache):
    venv = releases.venv_flink()
    if venv is None:
        pytest.skip("the flink extra is not installed")
    monkeypatch.setattr(releases.subprocess, "run", lambda *a, **k: pytest.fail("pip must not be asked"))
    assert resolve_flink() == venv and resolve_flink(venv.version) == venv and venv.source == "venv"


@pytest.mark.parametrize("version, chosen", [
    ("1.14.0", ("flink1", "sinkv1_1_14")), ("1.14.6", ("flink1", "sinkv1_1_14")),
    ("1.15.0", ("flink1", "sink2", "sinkv2_1_15")), ("1.18.1", ("flink1", "sink2", "sinkv2_1_15")),
    ("1.20.5", ("flink1", "sink2", "sinkv2_1_15")), ("2.0.0", ("flink2", "sink2", "sinkv2_2_0")),
    ("2.3.0", ("flink2", "sink2", "sinkv2_2_0")),
])
def test_each_release_gets_one_compat_and_one_sink_adapter(version, chosen):
    assert engine.adapters(version) == chosen
    sources = engine.java_sources(version)
    assert sources[0] == engine.JAVA_SOURCE and all(path.is_file() for path in sources)
    names = [path.name for path in sources]
    assert names.count("Compat.java") == 1 and names.count("SinkV2.java") == 1


@pytest.mark.parametrize("version, unaligned, after_finish, restart", [
    ("1.14.6", "execution.checkpointing.unaligned", "execution.checkpointing.checkpoints-after-tasks-finish.enabled",
     "restart-strategy"),
    ("1.17.2", "execution.checkpointing.unaligned.enabled",
     "execution.checkpointing.checkpoints-after-tasks-finish.enabled", "restart-strategy.type"),
    ("1.20.0", "execution.checkpointing.unaligned.enabled", "execution.checkpointing.checkpoints-after-tasks-finish",
     "restart-strategy.type"),
    ("2.3.0", "execution.checkpointing.unaligned.enabled", "execution.checkpointing.checkpoints-after-tasks-finish",
     "restart-strategy.type"),
])
def test_configuration_keys_are_named_as_each_release_names_them(version, unaligned, after_finish, restart):
    spec = {"interval_ms": 100, "mode": "unaligned", "checkpoints_after_tasks_finished": False, "restart_attempts": 3}
    conf = engine.flink_configuration(spec, version)
    assert (conf[unaligned], conf[after_finish], conf[restart]) == ("true", "false", "fixed-delay")
    # FLIP-147's switch is always set: 1.14 defaults it to off.
    assert engine.flink_configuration(dict(spec, checkpoints_after_tasks_finished=True), version)[after_finish] == "true"
    assert all(value == "127.0.0.1" for key, value in conf.items() if key.endswith(("host", "address")))


def test_releases_lists_the_installed_and_the_installable(cache, monkeypatch, capsys):
    monkeypatch.setattr(releases, "_index_versions", lambda timeout: None)  # offline
    (cache / "1.14.6" / "pyflink" / "lib").mkdir(parents=True)
    (cache / "1.14.6" / "pyflink" / "lib" / "flink-dist_2.11-1.14.6.jar").write_bytes(b"")
    (cache / ".1.15.0-scratch" / "pyflink" / "lib").mkdir(parents=True)  # an install under way
    assert main(["flink", "releases", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    cached = [i for i in listed["installed"] if i["source"] == "cache"]
    assert cached == [{"version": "1.14.6", "source": "cache", "lib": str(cache / "1.14.6" / "pyflink" / "lib")}]
    assert listed["index_answered"] is False and "1.14.6" not in listed["installable"] and "1.15.0" in listed["installable"]
    assert main(["flink", "releases"]) == 0
    text = capsys.readouterr().out
    assert "1.14.6" in text and "did not answer" in text


def test_a_rebuilt_flink_home_is_compiled_against_again(tmp_path, cache):
    # A stand-in javac: writes the class file the cache entry is marked complete by.
    javac = tmp_path / "javac"
    javac.write_text(f"#!{sys.executable}\nimport pathlib, sys\n"
                     "out = pathlib.Path(sys.argv[sys.argv.index('-d') + 1])\n(out / 'FlipcheckJob.class').write_bytes(b'')\n")
    javac.chmod(0o755)
    lib = tmp_path / "flink-2.2-SNAPSHOT" / "lib"
    lib.mkdir(parents=True)
    (lib / "flink-dist-2.2-SNAPSHOT.jar").write_bytes(b"first build")
    first, _ = engine.compile_job(str(javac), "2.2-SNAPSHOT", lib)
    assert engine.compile_job(str(javac), "2.2-SNAPSHOT", lib) == (first, 0.0)  # cached
    (lib / "flink-dist-2.2-SNAPSHOT.jar").write_bytes(b"the second build")
    second, _ = engine.compile_job(str(javac), "2.2-SNAPSHOT", lib)
    assert second != first and second.name.startswith("flink-2.2-SNAPSHOT-")
