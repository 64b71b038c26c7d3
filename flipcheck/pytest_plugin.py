"""flipcheck's pytest plugin: check your own protocol, plan algorithm or barrier handler in your
own tests. Installed with flipcheck (entry point ``pytest11``), on by default.

* The fixture ``flipcheck_checker`` runs a flipcheck check within the profile's bounds and fails
  the test with a readable report when a property is violated: the shortest counterexample step
  by step, the path of its picture, and the command that replays it.
* ``--flipcheck-profile ci|nightly`` picks the bounds (:data:`PROFILES`): ``ci`` (the default)
  explores at most 200,000 states and verifies for 20 s; ``nightly`` goes to 5,000,000 states and
  10 minutes. Given on the command line it also loads the hypothesis settings profile of the
  same name (``flipcheck-ci``: 100 examples, derandomised; ``flipcheck-nightly``: 2,000).
* What ``explore`` searches when you leave the configuration to it (a failing test's report lists
  the configurations, ``searched: ...``; the result has them in ``detail["configurations"]``):

  - **no graph** (``flipcheck_checker.explore(protocol=MyProtocol)``): flipcheck's first
    configuration set, small jobs that together show every change of its catalogue of real Flink
    bugs: two sources into a two-phase-commit sink, aligned and unaligned; a failover; a
    stop-with-savepoint; union list state; a Sink V2 sink with a failover (about 15,000 states for
    a protocol that breaks nothing; a change to ``plan``, ``no_transaction_after_finish`` or
    ``wait_for_end_of_data_acks`` adds the larger job that shows it);
  - **your graph**: kept as it is, with the bounds you give (``records``, ``checkpoints``,
    ``failures``, ``stop_with_savepoint``; defaults 1, 1, 0, off) and, unless you give ``mode``,
    searched both aligned and unaligned: some changes show in one mode only.

  ``max_states`` bounds the whole set.
* ``@pytest.mark.flipcheck(max_states=..., budget=...)`` overrides the profile for one test.
* ``--flipcheck-out DIR`` (default ``.flipcheck`` under pytest's rootdir) is where a failing
  check leaves its picture, its graph and its replay command (``TEST.svg``, ``TEST.json``,
  ``TEST.replay``): not pytest's temporary folder, which pytest deletes after three runs.
* Strict by default: ``explore`` also fails a test whose protocol overrides a switch that made no
  difference in any state searched (the exploration says nothing about that change; the report
  names a configuration where it does). ``@pytest.mark.flipcheck(strict=False)`` accepts it.

Example (a test file of yours)::

    from flipcheck import Protocol, job_graph

    class MyProtocol(Protocol):
        name = "my-protocol"

    def test_my_protocol_keeps_every_property(flipcheck_checker):
        flipcheck_checker.explore(protocol=MyProtocol)          # the first configuration set

    def test_my_protocol_on_my_job(flipcheck_checker):
        graph = job_graph([("src", 1), ("sink", 1)], [("src", "sink", "all-to-all")])
        flipcheck_checker.explore(graph, MyProtocol, records=1)  # aligned and unaligned
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest

__all__ = ["PROFILES", "Profile", "Checker"]


class Profile(NamedTuple):
    max_states: int        # explore: states searched at most
    budget: float          # verify: seconds
    examples: int          # the hypothesis profile's max_examples
    strict: bool = True    # explore: a switch override that changed no step fails the test


PROFILES = {"ci": Profile(200_000, 20.0, 100), "nightly": Profile(5_000_000, 600.0, 2_000)}


def pytest_addoption(parser) -> None:
    group = parser.getgroup("flipcheck", "flipcheck: check checkpoint and recovery designs")
    group.addoption("--flipcheck-profile", choices=sorted(PROFILES), default=None,
                    help="bounds of flipcheck_checker: ci (default; 200,000 states, 20 s) or nightly "
                         "(5,000,000 states, 10 min); also loads the hypothesis profile flipcheck-<name>")
    group.addoption("--flipcheck-out", metavar="DIR", default=None,
                    help="where a failing check saves its picture, graph and replay command "
                         "(default: .flipcheck under the rootdir; kept across runs)")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "flipcheck(max_states=None, budget=None, strict=True): bounds of "
                                       "flipcheck_checker for this test, instead of the profile's; strict=False "
                                       "accepts a protocol change that made no difference in the states searched")
    chosen = config.getoption("--flipcheck-profile")
    if chosen is not None:
        from hypothesis import settings

        for name, profile in PROFILES.items():
            settings.register_profile(f"flipcheck-{name}", max_examples=profile.examples, deadline=None,
                                      derandomize=name == "ci")
        settings.load_profile(f"flipcheck-{chosen}")


class Checker:
    """What the ``flipcheck_checker`` fixture gives a test: each method runs one flipcheck check
    (the same arguments as :mod:`flipcheck`'s function of that name), returns its
    :class:`~flipcheck.Result` when no property is violated, and fails the test otherwise."""

    def __init__(self, profile: Profile, name: str, folder: Path):
        self.profile, self.name, self.folder = profile, name, folder

    def explore(self, graph=None, protocol=None, **options):
        """:func:`flipcheck.explore` within the profile's ``max_states`` (for the whole set of
        configurations it searches): ``graph`` in both modes unless ``mode`` is given, or with no
        graph flipcheck's first configuration set."""
        import flipcheck

        import warnings

        from flipcheck.api import cut_message
        from flipcheck.errors import SearchCut

        options.setdefault("max_states", self.profile.max_states)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SearchCut)   # said once below, with how to search further
            result = self._checked(flipcheck.explore, graph, protocol, **options)
        if result.counterexample is not None:
            self._fail(result, self._explore_replay(result.detail["graph"], result))
        if result.warnings and self.profile.strict:
            pytest.fail("\n".join([f"flipcheck: {result.check}: vacuous, nothing was checked about your change"]
                                   + [f"  {warning}" for warning in result.warnings]
                                   + ["  (@pytest.mark.flipcheck(strict=False) accepts it)"]), pytrace=False)
        if not result.counts["complete"]:
            warnings.warn(f"flipcheck: {cut_message(result.check, result.counts['states'], options['max_states'])}; "
                          f"--flipcheck-profile nightly or @pytest.mark.flipcheck(max_states=...) searches further",
                          SearchCut, stacklevel=2)
        return result

    def plan(self, graph, algorithm="flink"):
        import flipcheck

        return self._settled(self._checked(flipcheck.plan, graph, algorithm))

    def replay_barriers(self, events, channels, **options):
        import flipcheck

        return self._settled(self._checked(flipcheck.replay_barriers, events, channels, **options))

    def verify(self, suite, variant=None, budget=None):
        import flipcheck

        return self._settled(self._checked(flipcheck.verify, suite, variant,
                                           budget if budget is not None else self.profile.budget))

    @staticmethod
    def _checked(check, *args, **options):
        """``check(*args, **options)``; a bad argument (a misspelt attribute of your class, say)
        fails the test with flipcheck's one line instead of a traceback into flipcheck."""
        from flipcheck.errors import InputError, UsageError

        try:
            return check(*args, **options)
        except (UsageError, InputError) as error:
            pytest.fail(f"flipcheck: {check.__name__}: {error}", pytrace=False)

    def _settled(self, result):
        """``result`` when nothing is violated; otherwise the test fails with its report."""
        if not result.ok:
            self._fail(result, result.counterexample.replay if result.counterexample else "")
        return result

    def _explore_replay(self, graph, result) -> str:
        """The command that replays the exploration, with the graph saved next to the picture."""
        import flipcheck

        self.folder.mkdir(parents=True, exist_ok=True)
        saved = flipcheck.save_job_graph(graph, self.folder / f"{self.name}.json")
        command = result.counterexample.replay.replace("GRAPH.json", str(saved), 1)
        # the command next to the graph it names: still there when the terminal's output is gone
        (self.folder / f"{self.name}.replay").write_text(command + "\n")
        return command

    def _fail(self, result, replay: str) -> None:
        lines = [f"flipcheck: {result.check}: {result.counterexample.property} violated"
                 if result.counterexample else f"flipcheck: {result.check} failed"]
        if result.counterexample is not None:
            example = result.counterexample
            lines.append(f"  {example.message}")
            if example.steps:
                lines.append(f"  shortest counterexample ({len(example.steps)} steps):")
                lines += [f"    {number:3d}. {step}" for number, step in enumerate(example.steps, 1)]
        for prop, message in result.violations[1:]:
            lines.append(f"  also violated: {prop}: {message}")
        if isinstance(result.detail, dict) and "configurations" in result.detail:
            from flipcheck.api import configuration_line

            lines += [f"  {configuration_line(entry)}" for entry in result.detail["configurations"]]
        lines.append(f"  picture: {self._picture(result)}")
        if replay:
            lines.append(f"  replay:  {replay}")
        pytest.fail("\n".join(lines), pytrace=False)

    def _picture(self, result) -> str:
        from flipcheck.errors import UsageError

        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            return result.render(self.folder / f"{self.name}.svg")
        except (UsageError, OSError) as error:  # no dot on PATH, say: the verdict stands without it
            return f"not drawn ({error})"


@pytest.fixture
def flipcheck_checker(request) -> Checker:
    """Run flipcheck checks within the profile's bounds; a violation fails the test with the
    shortest counterexample, its picture and the command that replays it."""
    chosen = request.config.getoption("--flipcheck-profile") or "ci"
    profile = PROFILES[chosen]
    marker = request.node.get_closest_marker("flipcheck")
    if marker is not None:
        profile = profile._replace(**{key: value for key, value in marker.kwargs.items() if key in Profile._fields})
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)[:100]
    out = request.config.getoption("--flipcheck-out")
    folder = Path(out).resolve() if out else request.config.rootpath / ".flipcheck"
    return Checker(profile, name, folder)
