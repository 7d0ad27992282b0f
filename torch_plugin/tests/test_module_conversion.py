"""Moving modules to and from hal keeps Parameter identity, as CUDA does:
tied weights stay tied, a module used twice stays one module, and an
optimizer built before the move keeps training the model's parameters."""

import torch
from torch import nn

from hal_testing import HAL


def tied_lm():
    torch.manual_seed(0)
    emb = nn.Embedding(11, 4)
    head = nn.Linear(4, 11, bias=False)
    head.weight = emb.weight
    return nn.ModuleDict(dict(emb=emb, head=head))


def lm_loss(model, device):
    tokens = torch.tensor([1, 4, 7, 2], device=device)
    return model["head"](model["emb"](tokens)).logsumexp(-1).sum()


def test_to_hal_keeps_tied_weights_one_parameter(strict):
    model = tied_lm()
    weight = model["emb"].weight
    model.to(HAL)
    assert model["head"].weight is model["emb"].weight
    assert model["emb"].weight is weight and weight.is_hal
    assert len(list(model.parameters())) == 1


def test_hal_and_cpu_methods_keep_identity(strict):
    model = tied_lm()
    weight = model["emb"].weight
    assert model.hal()["head"].weight is weight and weight.is_hal
    assert model.cpu()["head"].weight is weight and weight.device.type == "cpu"


def test_tied_weights_train_as_on_cpu(strict):
    cpu, on_hal = tied_lm(), tied_lm().to(HAL)
    for model, device in ((cpu, "cpu"), (on_hal, HAL)):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            lm_loss(model, device).backward()
            optimizer.step()
    torch.testing.assert_close(on_hal["emb"].weight.cpu(), cpu["emb"].weight,
                               rtol=1e-5, atol=1e-6)
    assert on_hal["head"].weight is on_hal["emb"].weight


def test_a_module_used_twice_moves_once(strict):
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, nn.ReLU(), shared).to(HAL)
    assert model[0] is model[2] and model[0].weight is shared.weight
    assert shared.weight.is_hal and shared.bias.is_hal


def test_optimizer_built_before_the_move_trains_the_moved_parameters(strict):
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model.to(HAL)
    before = model.weight.detach().cpu().clone()
    model(torch.ones(3, 4, device=HAL)).sum().backward()
    optimizer.step()
    assert optimizer.param_groups[0]["params"][0] is model.weight
    assert not torch.equal(model.weight.detach().cpu(), before)


def test_gradients_move_with_their_parameters(strict):
    model = nn.Linear(2, 2)
    model(torch.ones(1, 2)).sum().backward()
    grad = model.weight.grad.clone()
    model.to(HAL)
    assert model.weight.grad.is_hal
    torch.testing.assert_close(model.weight.grad.cpu(), grad)


def test_load_state_dict_and_to_empty_keep_identity(strict):
    source = tied_lm()
    target = tied_lm().to(HAL)
    with torch.no_grad():
        source["emb"].weight.mul_(2)
    weight = target["emb"].weight
    target.load_state_dict(source.state_dict())
    assert target["emb"].weight is weight and weight.is_hal
    torch.testing.assert_close(weight.cpu(), source["emb"].weight.detach())
    emptied = tied_lm().to_empty(device=HAL)
    assert emptied["head"].weight is emptied["emb"].weight
    assert emptied["emb"].weight.is_hal
