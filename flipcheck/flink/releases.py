"""Which Flink release a real run uses: the venv's, a cached release, or a user's own build.

:func:`resolve_flink` is the one entry point (``flipcheck flink run``, ``sweep --suite flink``,
``bench flink`` and anything that starts Flink call it). It turns ``--flink VERSION`` /
``--flink-home DIR`` into a :class:`FlinkInstall`:

* neither: the ``apache-flink-libraries`` package installed with the ``flink`` extra (2.3.0);
* ``--flink VERSION``: the venv's package when it is that version, else the release cache
  ``cache_root()/releases/VERSION/`` (``~/.cache/flipcheck/releases/1.14.6``), filled on first
  use by ``pip install --no-deps --target`` into a scratch directory renamed into place, so two
  processes installing at once end with one entry;
* ``--flink-home DIR``: a Flink distribution (``DIR/lib/flink-dist*.jar``, as a release tarball
  or ``flink-dist/target/flink-*-bin/flink-*`` lays it out) or its ``lib`` folder itself; the
  version comes from the flink-dist jar's name, else its manifest.

FLIP-147 first shipped in 1.14.0, so releases 1.14.0 up to 2.3.x are supported
(:data:`KNOWN_RELEASES`, and newer patch releases the registry lists).

Example
-------
>>> parse_version("1.14.6")
(1, 14, 6)
>>> version_from_jar_name("flink-dist_2.11-1.14.6.jar"), version_from_jar_name("flink-dist-2.2-SNAPSHOT.jar")
('1.14.6', '2.2-SNAPSHOT')
>>> supported("1.13.6"), supported("2.3.0")
(False, True)
>>> nearest_releases("1.14.1")
['1.14.0', '1.14.2']
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable

from flipcheck.errors import UsageError

__all__ = [
    "FLINK_DISTRIBUTION",
    "KNOWN_RELEASES",
    "OLDEST",
    "FlinkInstall",
    "parse_version",
    "supported",
    "version_from_jar_name",
    "dist_jar",
    "cache_root",
    "releases_dir",
    "installed_releases",
    "available_releases",
    "nearest_releases",
    "venv_flink",
    "install_release",
    "from_flink_home",
    "resolve_flink",
]

FLINK_DISTRIBUTION = "apache-flink-libraries"
# Every release of apache-flink-libraries from FLIP-147's first (1.14.0) on; 1.14.1 was never
# published to PyPI. `available_releases` adds newer patch releases when the registry answers.
KNOWN_RELEASES = (
    "1.14.0", "1.14.2", "1.14.3", "1.14.4", "1.14.5", "1.14.6",
    "1.15.0", "1.15.1", "1.15.2", "1.15.3", "1.15.4",
    "1.16.0", "1.16.1", "1.16.2", "1.16.3",
    "1.17.0", "1.17.1", "1.17.2",
    "1.18.0", "1.18.1",
    "1.19.0", "1.19.1", "1.19.2", "1.19.3",
    "1.20.0", "1.20.1", "1.20.2", "1.20.3", "1.20.4", "1.20.5",
    "2.0.0", "2.0.1", "2.0.2",
    "2.1.0", "2.1.1", "2.1.2", "2.1.3",
    "2.2.0", "2.2.1",
    "2.3.0",
)
OLDEST = (1, 14, 0)
_NEWEST_MINOR = (2, 3)   # 2.3.x is supported; the job builder has not met 2.4
_INDEX_TIMEOUT_SECONDS = 8
# A build of one's own may say "2.2-SNAPSHOT" (a branch's version) or "1.20.1-SNAPSHOT".
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?(?:-SNAPSHOT)?")
_RELEASE = re.compile(r"\d+\.\d+\.\d+")
_DIST_JAR = re.compile(r"flink-dist(?:_\d+\.\d+)?-(\d+\.\d+(?:\.\d+)?(?:-SNAPSHOT)?)\.jar")


@dataclass(frozen=True)
class FlinkInstall:
    """A Flink release's jars: ``lib`` holds ``flink-dist*.jar``; ``source`` says where they came
    from (``venv``, ``cache``, ``downloaded``, ``flink-home``)."""

    version: str
    lib: Path
    source: str

    def describe(self) -> dict:
        return {"version": self.version, "source": self.source, "lib": str(self.lib)}


def parse_version(text: str) -> tuple[int, int, int]:
    """``"1.14.6"`` -> ``(1, 14, 6)``, a build's ``"2.2-SNAPSHOT"`` -> ``(2, 2, 0)``; ValueError
    for anything else."""
    match = _VERSION.fullmatch(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a Flink version such as 1.14.6")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def supported(version: str) -> bool:
    """Between FLIP-147's first release (1.14.0) and 2.3.x."""
    try:
        parsed = parse_version(version)
    except ValueError:
        return False
    return OLDEST <= parsed and parsed[:2] <= _NEWEST_MINOR


def version_from_jar_name(name: str) -> str | None:
    """The version in a flink-dist jar's file name (``flink-dist_2.12-1.15.4.jar``), or None."""
    match = _DIST_JAR.fullmatch(name)
    return match.group(1) if match else None


def dist_jar(lib: Path) -> Path | None:
    jars = sorted(lib.glob("flink-dist*.jar"))
    return jars[0] if jars else None


def _manifest_version(jar: Path) -> str | None:
    try:
        with zipfile.ZipFile(jar) as archive:
            manifest = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    for key in ("Implementation-Version", "Bundle-Version"):
        match = re.search(rf"^{key}: *(\S+)", manifest, re.MULTILINE)
        if match and _VERSION.fullmatch(match.group(1)):
            return match.group(1)
    return None


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/flipcheck`` (default ``~/.cache/flipcheck``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "flipcheck"


def releases_dir() -> Path:
    return cache_root() / "releases"


def _cached_lib(version: str) -> Path:
    return releases_dir() / version / "pyflink" / "lib"


def installed_releases() -> list[FlinkInstall]:
    """Every release in the cache, oldest first (scratch directories of installs under way,
    ``.VERSION-*``, are not releases)."""
    found = []
    if releases_dir().is_dir():
        for entry in releases_dir().iterdir():
            if not entry.name.startswith(".") and supported(entry.name) and dist_jar(_cached_lib(entry.name)):
                found.append(FlinkInstall(entry.name, _cached_lib(entry.name), "cache"))
    return sorted(found, key=lambda install: parse_version(install.version))


def _index_versions(timeout: float) -> list[str] | None:
    """The registry's versions of apache-flink-libraries, or None (offline, slow, no pip)."""
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "index", "versions", FLINK_DISTRIBUTION,
                               "--disable-pip-version-check", "--timeout", str(int(timeout))],
                              capture_output=True, text=True, timeout=timeout + 2, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"^Available versions: (.+)$", done.stdout, re.MULTILINE)
    return [v.strip() for v in match.group(1).split(",")] if done.returncode == 0 and match else None


def available_releases(*, online: bool = True, timeout: float = _INDEX_TIMEOUT_SECONDS) -> tuple[list[str], bool]:
    """``(supported releases, whether the registry answered)``: :data:`KNOWN_RELEASES` plus, when
    ``online`` and the registry answers within ``timeout`` seconds, its newer supported ones."""
    versions = set(KNOWN_RELEASES)
    listed = _index_versions(timeout) if online else None
    if listed:
        versions |= {v for v in listed if supported(v)}
    return sorted(versions, key=parse_version), listed is not None


def nearest_releases(version: str, known=KNOWN_RELEASES) -> list[str]:
    """The known releases just below and just above ``version`` (by version order)."""
    try:
        wanted = parse_version(version)
    except ValueError:
        return [known[0], known[-1]]
    below = [v for v in known if parse_version(v) < wanted]
    above = [v for v in known if parse_version(v) > wanted]
    return below[-1:] + above[:1]


def venv_flink() -> FlinkInstall | None:
    """The ``apache-flink-libraries`` installed beside flipcheck (the flink extra), if any."""
    try:
        distribution = metadata.distribution(FLINK_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    lib = Path(distribution.locate_file("pyflink/lib"))
    return FlinkInstall(distribution.version, lib, "venv") if dist_jar(lib) else None


def _installer(version: str, target: Path) -> list[str]:
    # Only the jars' package: pyflink's Python dependencies are never needed.
    return [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--disable-pip-version-check",
            "--quiet", "--retries", "1", "--timeout", "20", "--target", str(target), f"{FLINK_DISTRIBUTION}=={version}"]


def _install_failure(version: str, code: int, stderr: str) -> str:
    """Why pip could not install a release, in a few words."""
    if re.search(r"NewConnectionError|Failed to establish|name resolution|Network is unreachable|timed out", stderr):
        return f"cannot download {FLINK_DISTRIBUTION}=={version}: the package index is unreachable (offline?)"
    if "No matching distribution" in stderr:
        return f"no such release (nearest: {', '.join(nearest_releases(version))})"
    errors = [line.strip() for line in stderr.splitlines() if line.strip().startswith("ERROR")]
    return f"pip could not install {FLINK_DISTRIBUTION}=={version} ({errors[0] if errors else f'exit code {code}'})"


def install_release(version: str, progress: Callable[[str], None] | None = None) -> FlinkInstall:
    """Release ``version`` from the cache, installing it first when missing (one ``progress``
    line); :class:`UsageError` naming ``--flink`` when pip cannot fetch it."""
    lib = _cached_lib(version)
    if dist_jar(lib):
        return FlinkInstall(version, lib, "cache")
    target = releases_dir() / version
    try:
        releases_dir().mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=releases_dir()))
    except OSError as error:
        raise UsageError(f"--flink {version}: cannot write the release cache {releases_dir()} "
                         f"({error.strerror or error}): set XDG_CACHE_HOME to a writable directory") from None
    if progress:
        progress(f"flipcheck: installing Flink {version} ({FLINK_DISTRIBUTION}, about 250 MB) into {target}")
    try:
        done = subprocess.run(_installer(version, scratch), capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0 or not dist_jar(scratch / "pyflink" / "lib"):
            raise UsageError(f"--flink {version}: {_install_failure(version, done.returncode, done.stderr)}")
        try:
            os.rename(scratch, target)
        except OSError:
            if not dist_jar(lib):
                raise
            # Another process installed the same release meanwhile: use its copy.
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return FlinkInstall(version, lib, "downloaded")


def from_flink_home(directory: str) -> FlinkInstall:
    """``--flink-home DIR``: a Flink distribution (``DIR/lib``) or its ``lib`` folder itself."""
    home = Path(directory)
    for lib in (home / "lib", home):
        jar = dist_jar(lib) if lib.is_dir() else None
        if jar is None:
            continue
        version = version_from_jar_name(jar.name) or _manifest_version(jar)
        if version is None:
            raise UsageError(f"--flink-home {directory}: cannot tell the Flink version of {jar.name} "
                             "(neither its name nor its manifest holds one)")
        if not supported(version):
            raise UsageError(f"--flink-home {directory}: Flink {version} is not supported "
                             f"(releases {KNOWN_RELEASES[0]} to 2.3.x)")
        return FlinkInstall(version, lib.resolve(), "flink-home")
    what = "is not a directory" if not home.is_dir() else "has no lib/flink-dist*.jar (nor flink-dist*.jar itself)"
    raise UsageError(f"--flink-home {directory}: {what}; give a Flink distribution such as flink-1.17.2/")


def resolve_flink(flink: str | None = None, flink_home: str | None = None,
                  progress: Callable[[str], None] | None = None) -> FlinkInstall:
    """The Flink release a run uses (see the module's docstring); :class:`UsageError` (one line
    naming the option) when it cannot be had."""
    if flink is not None and flink_home is not None:
        raise UsageError("--flink and --flink-home exclude each other")
    if flink_home is not None:
        return from_flink_home(flink_home)
    venv = venv_flink()
    if flink is None:
        if venv is None:
            raise UsageError(f"the Flink jars are not installed: pip install 'flipcheck[flink]' (the {FLINK_DISTRIBUTION} "
                             "package, about 330 MB), run `make install`, or choose one with --flink VERSION")
        return venv
    if not _RELEASE.fullmatch(flink):
        raise UsageError(f"--flink: {flink!r} is not a Flink release such as 1.14.6")
    if not supported(flink):
        raise UsageError(f"--flink {flink}: not supported: FLIP-147 runs need a release from {KNOWN_RELEASES[0]} to 2.3.x")
    if venv is not None and venv.version == flink:
        return venv
    if flink not in KNOWN_RELEASES and not dist_jar(_cached_lib(flink)):
        listed, answered = available_releases()
        if answered and flink not in listed:
            raise UsageError(f"--flink {flink}: no such release (nearest: {', '.join(nearest_releases(flink, listed))})")
    return install_release(flink, progress)
