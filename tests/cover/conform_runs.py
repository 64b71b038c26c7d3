"""Stored real runs as the protocol search sees them: :func:`searches_of` reads a run directory
the way ``flipcheck conform`` does and returns what it would hand
:func:`~flipcheck.properties.protocol_trace_validation.validate`, without searching, so a test can
search it other ways (tests/cover/test_conform_lazy_stop.py)."""

from pathlib import Path

from flipcheck.flink import conform as conform_module
from flipcheck.flink.conform import conform_files

__all__ = ["RUNS", "searches_of"]

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "flink_runs"


class _Read(Exception):
    """Raised in place of the search: conform read the run and built the model job."""


def searches_of(folder: Path) -> list:
    """``[(job, observations, options)]``: the protocol search conform would run on ``folder``
    (none when the logs hold no protocol lines for it to search)."""
    found: list = []

    def capture(job, observations, **options):
        found.append((job, observations, options))
        raise _Read

    real = conform_module.validate
    conform_module.validate = capture
    try:
        conform_files(str(folder / "plan.json"), [str(folder / "flink.log")], design="protocol")
    except _Read:
        pass
    finally:
        conform_module.validate = real
    return found
