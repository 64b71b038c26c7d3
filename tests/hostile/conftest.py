"""Fixtures of the hostile-input suite: one forked-CLI server per worker, and a sandbox holding
the bad paths the tests point commands at."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from forked_cli import ForkedCli  # noqa: E402


@pytest.fixture(scope="session")
def cli():
    server = ForkedCli()
    yield server
    server.close()


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory):
    """A working directory with a directory ``dir``, a file ``file`` and nothing at ``missing``."""
    root = tmp_path_factory.mktemp("hostile")
    (root / "dir").mkdir()
    (root / "file").write_text("not a directory\n")
    return str(root)
