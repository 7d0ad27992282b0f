"""The three reference models of HAL, their synthetic data, and a training loop
that runs them on any PyTorch device and compares two runs.

Version 1 of the standard kernel set must train these models on `hal` with zero
CPU fallbacks (docs/architecture.md, section 3):

  mlp          Linear, ReLU, CrossEntropyLoss               default optimizer: sgd (momentum)
  cnn          Conv2d, BatchNorm2d, ReLU, MaxPool2d, Linear default optimizer: adam
  transformer  Embedding, learned positional embedding, pre-LayerNorm blocks with
               MultiheadAttention (batch_first, causal mask), GELU MLP, Dropout;
               next-token CrossEntropy                      default optimizer: adamw

Any model trains with any of sgd, adam, adamw.

Everything comes from one seed and nothing is downloaded, so two devices start
from the same state: the data is generated on the CPU from a torch.Generator and
then moved to the device; the model is built on the CPU under
torch.manual_seed(seed) and then moved; torch.manual_seed(seed) is called again
before the first step, which seeds every device's generator for dropout.

Dropout and parity: dropout draws its masks from the device's own generator.
HAL's generator is Philox-based and does not reproduce the numbers of the CPU
generator, so a Transformer trained with dropout on `hal` follows a different
(equally valid) trajectory than on `cpu`. Parity comparisons therefore train with
dropout_p=0.0; training and demos keep the default DROPOUT_P, so dropout really
runs there.

Used by examples/train.py (command line) and torch_plugin/tests/test_parity.py.
"""
import dataclasses
import importlib
import math
import time
from typing import Callable

import torch
from torch import nn

MODELS = ("mlp", "cnn", "transformer")
OPTIMIZERS = ("sgd", "adam", "adamw")
# How torch.optim runs the update: its own choice for the device, or forced.
OPTIMIZER_IMPLS = {
    "default": {},
    "foreach": {"foreach": True},
    "fused": {"fused": True},
    "loop": {"foreach": False},
}
DROPOUT_P = 0.1

# Devices whose backend is an out-of-tree package; imported when autoload is off.
BACKEND_PACKAGES = {"hal": "torch_hal"}


class DeviceUnavailable(RuntimeError):
    """The requested device cannot be used in this Python; the message says why."""


def resolve_device(name: str) -> torch.device:
    """Returns torch.device(name) after checking that tensors can live there."""
    device_type = name.split(":")[0]
    package = BACKEND_PACKAGES.get(device_type)
    if package is not None and not hasattr(torch, device_type):
        try:
            importlib.import_module(package)
        except ImportError as error:
            raise DeviceUnavailable(
                f"device '{name}' is not available: the backend package {package} "
                f"cannot be imported ({error}). Run scripts/bootstrap to build and "
                f"install it into this Python environment.") from error
    try:
        device = torch.device(name)
    except RuntimeError as error:
        raise DeviceUnavailable(
            f"device '{name}' is not a known PyTorch device: {error}") from error
    if device.type == "cpu":
        return device
    module = getattr(torch, device.type, None)
    if module is None or not module.is_available():
        hint = ""
        if device.type == "hal":
            hint = " (check HAL_DRIVER and run build/default/bin/hal-info)"
        raise DeviceUnavailable(
            f"device '{name}' is not available: "
            f"torch.{device.type}.is_available() is False{hint}")
    if device.index is not None and device.index >= module.device_count():
        raise DeviceUnavailable(
            f"device '{name}': index {device.index} out of range, "
            f"{module.device_count()} device(s) available")
    return device


def synchronize(device: torch.device) -> None:
    """Waits for the device's queued work, so wall times measure finished work."""
    if device.type == "cpu":
        return
    accelerator = torch.accelerator.current_accelerator()
    if accelerator is not None and accelerator.type == device.type:
        torch.accelerator.synchronize(device)


def fallback_counts(device: torch.device) -> dict[str, int] | None:
    """Per-op CPU fallback counts of the device's backend; None when it does not count them."""
    counter = getattr(getattr(torch, device.type, None), "fallback_stats", None)
    return None if counter is None else dict(counter())


# ---------------------------------------------------------------- models

class TinyTransformer(nn.Module):
    """A causal language model: token + learned positional embedding, pre-LN blocks,
    vocabulary head."""

    def __init__(self, vocab: int, context: int, dim: int, heads: int, layers: int,
                 dropout_p: float):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, dim)
        # A parameter added to every sequence, so positions need no index tensor on the device.
        self.position_embedding = nn.Parameter(torch.randn(1, context, dim) * 0.02)
        self.dropout = nn.Dropout(dropout_p)
        self.blocks = nn.ModuleList(Block(dim, heads, dropout_p) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        # Built on the CPU and moved with the model; True marks a masked (future) position.
        self.register_buffer("causal_mask", torch.ones(context, context, dtype=torch.bool).triu(1),
                             persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        length = tokens.shape[1]
        x = self.dropout(self.token_embedding(tokens) + self.position_embedding[:, :length])
        mask = self.causal_mask[:length, :length]
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.norm(x))


class Block(nn.Module):
    """One pre-LayerNorm Transformer block, as
    nn.TransformerEncoderLayer(norm_first=True, activation="gelu") with bias-free attention
    (the key bias has no gradient: softmax ignores it)."""

    def __init__(self, dim: int, heads: int, dropout_p: float):
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.attention = nn.MultiheadAttention(dim, heads, dropout=dropout_p, bias=False,
                                               batch_first=True)
        self.attention_dropout = nn.Dropout(dropout_p)
        self.mlp_norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
                                 nn.Dropout(dropout_p))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.attention_norm(x)
        attended, _ = self.attention(h, h, h, attn_mask=mask, need_weights=False)
        x = x + self.attention_dropout(attended)
        return x + self.mlp(self.mlp_norm(x))


# ---------------------------------------------------------------- data

def _clusters(generator: torch.Generator, samples: int, features: int, classes: int):
    """Points scattered around one random centre per class."""
    centres = torch.randn(classes, features, generator=generator)
    labels = torch.randint(classes, (samples,), generator=generator)
    points = centres[labels] + 0.8 * torch.randn(samples, features, generator=generator)
    return points, labels


def _images(generator: torch.Generator, samples: int, classes: int):
    """3x16x16 images: one random template per class plus noise."""
    templates = torch.randn(classes, 3, 16, 16, generator=generator)
    labels = torch.randint(classes, (samples,), generator=generator)
    images = 1.0 * templates[labels] + torch.randn(samples, 3, 16, 16, generator=generator)
    return images, labels


def _token_sequences(generator: torch.Generator, samples: int, length: int, vocab: int):
    """Sequences of a random Markov chain (each token has one likely successor, 10% noise);
    inputs are tokens 0..length-1, targets the tokens that follow them."""
    successor = torch.randint(vocab, (vocab,), generator=generator)
    tokens = torch.empty(samples, length + 1, dtype=torch.long)
    tokens[:, 0] = torch.randint(vocab, (samples,), generator=generator)
    for t in range(length):
        noise = torch.rand(samples, generator=generator) < 0.1
        random_tokens = torch.randint(vocab, (samples,), generator=generator)
        tokens[:, t + 1] = torch.where(noise, random_tokens, successor[tokens[:, t]])
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


# ---------------------------------------------------------------- registry

@dataclasses.dataclass(frozen=True)
class ReferenceModel:
    build: Callable[[float], nn.Module]  # argument: dropout probability, ignored unless has_dropout
    # All samples (inputs, targets), on the CPU.
    make_data: Callable[[torch.Generator], tuple[torch.Tensor, torch.Tensor]]
    batch_size: int
    default_optimizer: str
    # Per optimizer; chosen so that 50 steps learn yet stay clear of chaotic training, where
    # rounding-level differences between devices grow beyond any parity tolerance.
    learning_rates: dict[str, float]
    has_dropout: bool = False


_VOCAB, _CONTEXT = 32, 16

REFERENCE_MODELS = {
    "mlp": ReferenceModel(
        build=lambda p: nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                      nn.Linear(64, 10)),
        make_data=lambda g: _clusters(g, samples=1024, features=32, classes=10),
        batch_size=64,
        default_optimizer="sgd",
        learning_rates={"sgd": 0.05, "adam": 3e-3, "adamw": 3e-3}),
    "cnn": ReferenceModel(
        # No convolution bias: BatchNorm cancels it, so its gradient is rounding noise
        # that Adam would amplify into parameter differences between devices.
        build=lambda p: nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(16 * 4 * 4, 10)),
        make_data=lambda g: _images(g, samples=512, classes=10),
        batch_size=32,
        default_optimizer="adam",
        learning_rates={"sgd": 0.01, "adam": 2e-3, "adamw": 2e-3}),
    "transformer": ReferenceModel(
        build=lambda p: TinyTransformer(_VOCAB, _CONTEXT, dim=32, heads=4, layers=2, dropout_p=p),
        make_data=lambda g: _token_sequences(g, samples=256, length=_CONTEXT, vocab=_VOCAB),
        batch_size=16,
        default_optimizer="adamw",
        learning_rates={"sgd": 0.05, "adam": 3e-3, "adamw": 3e-3},
        has_dropout=True),
}


def make_optimizer(name: str, parameters, lr: float,
                   impl: str = "default") -> torch.optim.Optimizer:
    if impl not in OPTIMIZER_IMPLS:
        raise ValueError(f"unknown optimizer implementation '{impl}', "
                         f"expected one of {', '.join(OPTIMIZER_IMPLS)}")
    options = OPTIMIZER_IMPLS[impl]
    if name == "sgd":
        return torch.optim.SGD(parameters, lr=lr, momentum=0.9, **options)
    if name == "adam":
        return torch.optim.Adam(parameters, lr=lr, **options)
    if name == "adamw":
        return torch.optim.AdamW(parameters, lr=lr, weight_decay=0.01, **options)
    raise ValueError(f"unknown optimizer '{name}', expected one of {', '.join(OPTIMIZERS)}")


# ---------------------------------------------------------------- training

@dataclasses.dataclass
class TrainResult:
    model: str
    device: str
    optimizer: str
    steps: int
    seed: int
    dropout_p: float
    losses: list[float]  # one per step, before that step's update
    # Final state_dict on the CPU: parameters and BatchNorm running statistics.
    state: dict[str, torch.Tensor]
    seconds: float  # wall time of all steps, device work included
    # Wall time of step 0 alone: one-time costs (lazy init, kernel compiles) land here.
    first_step_seconds: float
    # CPU fallbacks per op during training; None if the backend does not count them.
    fallbacks: dict[str, int] | None


def train(model_name: str, device: str | torch.device, steps: int, seed: int, *,
          optimizer: str | None = None, dropout_p: float = DROPOUT_P,
          optimizer_impl: str = "default",
          on_step: Callable[[int, float, float], None] | None = None) -> TrainResult:
    """Trains a reference model for `steps` mini-batches (cycling through the data set in order).

    on_step(step, loss, elapsed_seconds) is called after every step when given; reading the loss
    waits for the device each step, so leave it out to time an unobserved run.
    """
    if model_name not in REFERENCE_MODELS:
        raise ValueError(f"unknown model '{model_name}', expected one of {', '.join(MODELS)}")
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    reference = REFERENCE_MODELS[model_name]
    device = resolve_device(str(device))
    optimizer = optimizer or reference.default_optimizer
    fallbacks_before = fallback_counts(device)

    inputs, targets = reference.make_data(torch.Generator().manual_seed(seed))
    torch.manual_seed(seed)
    model = reference.build(dropout_p)
    inputs, targets, model = inputs.to(device), targets.to(device), model.to(device)
    model.train()
    if optimizer not in reference.learning_rates:
        raise ValueError(
            f"unknown optimizer '{optimizer}', expected one of {', '.join(OPTIMIZERS)}")
    update = make_optimizer(optimizer, model.parameters(), reference.learning_rates[optimizer],
                            optimizer_impl)
    loss_function = nn.CrossEntropyLoss()
    torch.manual_seed(seed)

    batch = reference.batch_size
    batches_per_epoch = inputs.shape[0] // batch
    loss_tensors = []  # read after the loop, so that unobserved steps do not wait for the device
    synchronize(device)
    start = time.perf_counter()
    for step in range(steps):
        offset = (step % batches_per_epoch) * batch
        x, y = inputs[offset:offset + batch], targets[offset:offset + batch]
        update.zero_grad()
        logits = model(x)
        loss = loss_function(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        update.step()
        loss_tensors.append(loss.detach())
        if step == 0:
            synchronize(device)
            first_step_seconds = time.perf_counter() - start
        if on_step is not None:
            on_step(step, loss.item(), time.perf_counter() - start)
    synchronize(device)
    seconds = time.perf_counter() - start
    losses = [loss.item() for loss in loss_tensors]
    state = {name: value.detach().cpu().clone() for name, value in model.state_dict().items()}

    fallbacks_after = fallback_counts(device)
    fallbacks = None
    if fallbacks_after is not None:
        fallbacks = {op: count - fallbacks_before.get(op, 0)
                     for op, count in fallbacks_after.items()
                     if count != fallbacks_before.get(op, 0)}
    return TrainResult(
        model=model_name, device=str(device), optimizer=optimizer, steps=steps, seed=seed,
        dropout_p=dropout_p, losses=losses, state=state,
        seconds=seconds, first_step_seconds=first_step_seconds, fallbacks=fallbacks)


# ---------------------------------------------------------------- comparison

def relative_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """max|a - b| / max(max|a|, max|b|), in float64; 0 when a equals b (all zero included),
    NaN when either holds a NaN."""
    a, b = a.double(), b.double()
    if a.numel() == 0:
        return 0.0
    scale = torch.maximum(a.abs().max(), b.abs().max()).item()
    difference = (a - b).abs().max().item()
    if math.isnan(scale) or math.isnan(difference):
        return math.nan
    return 0.0 if difference == 0.0 else difference / scale


def _steady_seconds(result: TrainResult) -> float:
    """Wall time without the first step's one-time costs (all of it for a one-step run)."""
    return result.seconds - result.first_step_seconds if result.steps > 1 else result.seconds


@dataclasses.dataclass
class Parity:
    loss_max_abs: float  # max over steps of |loss_a - loss_b|
    loss_rel: float  # relative_difference of the two loss curves
    state_rel: float  # max over state_dict entries of relative_difference
    worst_entry: str  # the state_dict entry with the largest relative difference
    time_ratio: float  # seconds of b / seconds of a, first step excluded when there are more
    rtol: float

    @property
    def ok(self) -> bool:
        # Written so that NaN fails.
        return self.loss_rel <= self.rtol and self.state_rel <= self.rtol

    def describe(self) -> str:
        verdict = "PASS" if self.ok else "FAIL"
        return (f"{verdict} (rtol {self.rtol:g}): losses max|a-b| {self.loss_max_abs:.3e}, "
                f"relative {self.loss_rel:.3e}; parameters relative {self.state_rel:.3e} "
                f"(worst: {self.worst_entry}); time b/a {self.time_ratio:.2f}")


def compare(a: TrainResult, b: TrainResult, rtol: float) -> Parity:
    """Compares two runs of the same model (relative differences: see relative_difference)."""
    if len(a.losses) != len(b.losses):
        raise ValueError(f"runs have {len(a.losses)} and {len(b.losses)} steps")
    if a.state.keys() != b.state.keys():
        raise ValueError(
            f"runs have different state entries: {sorted(a.state.keys() ^ b.state.keys())}")
    losses_a = torch.tensor(a.losses, dtype=torch.float64)
    losses_b = torch.tensor(b.losses, dtype=torch.float64)
    entry_differences = {name: relative_difference(a.state[name], b.state[name])
                         for name in a.state}
    # NaN sorts as the worst entry.
    worst = max(entry_differences, key=lambda name: math.inf if math.isnan(entry_differences[name])
                else entry_differences[name])
    return Parity(
        loss_max_abs=(losses_a - losses_b).abs().max().item(),
        loss_rel=relative_difference(losses_a, losses_b),
        state_rel=entry_differences[worst],
        worst_entry=worst,
        time_ratio=_steady_seconds(b) / _steady_seconds(a) if _steady_seconds(a) > 0 else math.inf,
        rtol=rtol)
