"""torch.hal.HALGraph, torch.hal.graph, graph pools and
make_graphed_callables: a replay computes what eager computes, bit for bit;
what cannot be captured is refused with an error naming it; memory the
capture used is the graph's."""

import copy

import pytest
import torch
from torch import nn


def _chain(x, w):
    return torch.relu(x @ w).sum(dim=1, keepdim=True) * 0.5 + x


def test_replay_equals_eager_bit_for_bit_with_new_inputs():
    x = torch.randn(32, 16, device="hal")
    w = torch.randn(16, 16, device="hal")
    graph = torch.hal.HALGraph()
    with torch.hal.graph(graph):
        static_out = _chain(x, w)
    for seed in range(3):
        x.copy_(torch.randn(32, 16, generator=torch.Generator().manual_seed(seed)))
        graph.replay()
        assert torch.equal(static_out.cpu(), _chain(x, w).cpu())


def test_capture_runs_nothing_until_replay():
    x = torch.zeros(8, device="hal")
    graph = torch.hal.HALGraph()
    with torch.hal.graph(graph):
        x.add_(1)
    assert torch.equal(x.cpu(), torch.zeros(8))
    for _ in range(3):
        graph.replay()
    assert torch.equal(x.cpu(), torch.full((8,), 3.0))


@pytest.mark.parametrize("work, error, says", [
    (lambda x: x.sum().item(), RuntimeError, "host memory cannot be captured"),
    (lambda x: x.cpu(), RuntimeError, "host memory cannot be captured"),
    (lambda x: torch.rand(4, device="hal"), RuntimeError,
     "random numbers cannot be captured"),
    # INVALID_ARGUMENT is a ValueError.
    (lambda x: torch.hal.synchronize(), ValueError, "capturing a graph"),
])
def test_uncapturable_work_is_refused_and_the_stream_recovers(work, error, says):
    x = torch.ones(4, device="hal")
    graph = torch.hal.HALGraph()
    with pytest.raises(error, match=says):
        with torch.hal.graph(graph):
            work(x)
    assert not torch.hal.is_current_stream_capturing()
    assert torch.equal((x + 1).cpu(), torch.full((4,), 2.0))


def test_misuse_gets_clear_errors():
    graph = torch.hal.HALGraph()
    with pytest.raises(RuntimeError, match="holds no graph"):
        graph.replay()
    with pytest.raises(RuntimeError, match="default stream"):
        graph.capture_begin()
    with torch.hal.graph(graph):
        pass
    with pytest.raises(RuntimeError, match="reset"):
        graph.capture_begin()
    graph.reset()
    with torch.hal.graph(graph):
        pass
    graph.replay()


def test_memory_the_capture_freed_is_not_handed_to_eager_work():
    x = torch.randn(1024, device="hal")
    graph = torch.hal.HALGraph()
    with torch.hal.graph(graph):
        scratch = x * 2
        scratch_address = scratch.data_ptr()
        del scratch
        out = x + 1
    eager = [torch.empty(1024, device="hal") for _ in range(8)]
    assert scratch_address not in [t.data_ptr() for t in eager]
    graph.replay()
    assert torch.equal(out.cpu(), (x + 1).cpu())


def test_graphs_share_a_pool_and_replay_in_capture_order():
    pool = torch.hal.graph_pool_handle()
    x = torch.arange(6.0, device="hal")
    first, second = torch.hal.HALGraph(), torch.hal.HALGraph()
    with torch.hal.graph(first, pool=pool):
        y = x * 3
    with torch.hal.graph(second, pool=first.pool()):
        z = y + 1
    assert first.pool() == second.pool() == pool
    first.replay()
    second.replay()
    assert torch.equal(z.cpu(), torch.arange(6.0) * 3 + 1)


def test_make_graphed_callables_trains_like_eager():
    torch.manual_seed(0)
    reference = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    model = copy.deepcopy(reference).to("hal")
    sample = torch.randn(8, 16, device="hal")
    graphed = torch.hal.make_graphed_callables(model, (sample,))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    for step in range(4):
        batch = torch.randn(8, 16, generator=torch.Generator().manual_seed(step))
        optimizer.zero_grad()
        reference_optimizer.zero_grad()
        graphed(batch.to("hal")).square().mean().backward()
        reference(batch).square().mean().backward()
        optimizer.step()
        reference_optimizer.step()
    for mine, theirs in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(mine.cpu(), theirs, rtol=1e-6, atol=1e-6)


def test_make_graphed_callables_of_two_modules_in_one_pool():
    torch.manual_seed(0)
    first_ref, second_ref = nn.Linear(6, 8), nn.Linear(8, 2)
    first, second = copy.deepcopy(first_ref).to("hal"), copy.deepcopy(second_ref).to("hal")
    sample = torch.randn(4, 6, device="hal", requires_grad=True)
    hidden = torch.randn(4, 8, device="hal", requires_grad=True)
    first, second = torch.hal.make_graphed_callables((first, second),
                                                     ((sample,), (hidden,)))
    for step in range(3):
        batch = torch.randn(4, 6, generator=torch.Generator().manual_seed(step))
        for module in (first, second, first_ref, second_ref):
            module.zero_grad()
        second(torch.tanh(first(batch.to("hal")))).square().sum().backward()
        second_ref(torch.tanh(first_ref(batch))).square().sum().backward()
        for mine, theirs in zip([*first.parameters(), *second.parameters()],
                                [*first_ref.parameters(), *second_ref.parameters()]):
            torch.testing.assert_close(mine.grad.cpu(), theirs.grad, rtol=1e-5,
                                       atol=1e-6)
