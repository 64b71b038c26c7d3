"""Fixtures shared by the CLI tests."""

import json

import pytest


@pytest.fixture
def graph_file(tmp_path):
    """``write(document, name)``: a JSON document (or raw text) in a temporary file; its path."""
    def write(document, name="g.json"):
        path = tmp_path / name
        path.write_text(document if isinstance(document, str) else json.dumps(document))
        return str(path)
    return write
