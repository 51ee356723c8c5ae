import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    # Tests compare runs bitwise; fix the thread count so reductions split the same way.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
