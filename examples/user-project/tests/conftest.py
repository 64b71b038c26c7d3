import pytest
from flipcheck import job_graph


@pytest.fixture
def pipelines():
    """Two parallel pipelines: sink[i] reads src[i] only (a POINTWISE edge), the smallest job in
    which a subtask's upstream can finish while the rest of its upstream vertex still runs."""
    return job_graph([("src", 2), ("sink", 2)], [("src", "sink", "pointwise")])
