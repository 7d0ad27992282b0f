#!/usr/bin/env python3
"""Trains HAL's reference models (examples/reference_models.py) on a PyTorch
device, or on two devices side by side to check that they agree.

  python examples/train.py --model all --device cpu --steps 50
  DEVICE=hal python examples/train.py --model transformer
  python examples/train.py --model all --compare cpu hal

Training prints every step's loss and elapsed time; the exit status is 1 when a
loss is not finite.

--compare A B trains each model on A, then on B, from the same seed and data,
and prints the losses side by side, then:
  relative difference  max|a - b| / max(max|a|, max|b|), over a whole tensor
  losses               max |loss_a - loss_b| over the steps, and the relative
                       difference of the two loss curves
  parameters           the largest relative difference over the state_dict
                       entries (parameters and BatchNorm running statistics)
  time b/a             wall time on B / wall time on A, first step excluded
The exit status is 1 when a loss or parameter relative difference exceeds
--rtol. Comparisons train the Transformer without dropout unless --dropout is
given, because two devices' generators draw different dropout masks.

Exit status 2: bad arguments, or a device that is not available.
"""
import argparse
import dataclasses
import math
import os
import sys
from pathlib import Path

import torch

import reference_models as rm


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=(*rm.MODELS, "all"), default="all")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--device", default=os.environ.get("DEVICE", "cpu"),
                       help="device to train on (default: $DEVICE, else cpu)")
    where.add_argument("--compare", nargs=2, metavar=("DEVICE_A", "DEVICE_B"),
                       help="train on both devices and compare")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--optimizer", choices=rm.OPTIMIZERS,
                        help="default: the model's own (mlp sgd, cnn adam, transformer adamw)")
    parser.add_argument("--optim-impl", choices=tuple(rm.OPTIMIZER_IMPLS), default="default",
                        help="how torch.optim runs the update (default: torch's choice)")
    parser.add_argument("--dropout", type=float,
                        help=f"Transformer dropout probability "
                             f"(default {rm.DROPOUT_P}, 0 with --compare)")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="parity tolerance for --compare (default 1e-4)")
    parser.add_argument("--save", type=Path,
                        help="write the results to this file "
                             "(torch.save of {model: TrainResult fields})")
    parser.add_argument("--quiet", action="store_true", help="no per-step output")
    arguments = parser.parse_args(argv)
    if arguments.steps < 1:
        parser.error("--steps must be at least 1")
    if not arguments.rtol >= 0.0:
        parser.error("--rtol must be a number >= 0")
    if arguments.dropout is not None and not 0.0 <= arguments.dropout < 1.0:
        parser.error("--dropout must be in [0, 1)")
    if arguments.compare and arguments.save:
        parser.error("--save records a single-device run; it cannot be combined with --compare")
    return arguments


def header(model, devices, arguments, dropout_p):
    reference = rm.REFERENCE_MODELS[model]
    details = [f"optimizer {arguments.optimizer or reference.default_optimizer}",
               f"seed {arguments.seed}", f"{arguments.steps} steps"]
    if reference.has_dropout:
        details.insert(1, f"dropout {dropout_p:g}")
    if arguments.optim_impl != "default":
        details.insert(1, f"optimizer impl {arguments.optim_impl}")
    return f"{model} on {' vs '.join(devices)} ({', '.join(details)})"


def run(model, device, arguments, dropout_p, label=""):
    def progress(step, loss, elapsed):
        print(f"  {label}step {step + 1:4d}/{arguments.steps}  loss {loss:.6f}  "
              f"elapsed {elapsed:.3f}s", flush=True)

    result = rm.train(model, device, arguments.steps, arguments.seed, optimizer=arguments.optimizer,
                      dropout_p=dropout_p, optimizer_impl=arguments.optim_impl,
                      on_step=None if arguments.quiet else progress)
    if result.fallbacks is None:
        fallbacks = "not counted by this backend"
    else:
        fallbacks = ", ".join(f"{op} x{count}"
                              for op, count in sorted(result.fallbacks.items())) or "none"
    print(f"  {label}{arguments.steps} steps in {result.seconds:.3f}s "
          f"(first step {result.first_step_seconds:.3f}s), final loss {result.losses[-1]:.6f}, "
          f"CPU fallbacks: {fallbacks}", flush=True)
    return result


def train_one_device(models, arguments):
    dropout_p = rm.DROPOUT_P if arguments.dropout is None else arguments.dropout
    results = {}
    for model in models:
        print(header(model, [arguments.device], arguments, dropout_p), flush=True)
        results[model] = run(model, arguments.device, arguments, dropout_p)
    if arguments.save:
        torch.save({model: dataclasses.asdict(result) for model, result in results.items()},
                   arguments.save)
    diverged = [model for model, result in results.items()
                if not all(map(math.isfinite, result.losses))]
    if diverged:
        print(f"error: a loss is not finite for {', '.join(diverged)}", file=sys.stderr)
        return 1
    return 0


def compare_devices(models, arguments):
    device_a, device_b = arguments.compare
    dropout_p = 0.0 if arguments.dropout is None else arguments.dropout
    verdicts = {}
    for model in models:
        print(header(model, [device_a, device_b], arguments, dropout_p), flush=True)
        a = run(model, device_a, arguments, dropout_p, label=f"[{device_a}] ")
        b = run(model, device_b, arguments, dropout_p, label=f"[{device_b}] ")
        print(f"  {'step':>5}  {'loss ' + device_a:>14}  {'loss ' + device_b:>14}  {'|a-b|':>9}")
        for step, (loss_a, loss_b) in enumerate(zip(a.losses, b.losses)):
            print(f"  {step + 1:5d}  {loss_a:14.8f}  {loss_b:14.8f}  {abs(loss_a - loss_b):9.2e}")
        verdicts[model] = rm.compare(a, b, arguments.rtol)
        print(f"  {verdicts[model].describe()}\n", flush=True)
    print(f"parity {device_a} vs {device_b}: relative difference = max|a-b| / max(max|a|, max|b|) "
          f"per tensor; parameters = worst state_dict entry; time = {device_b}/{device_a} "
          f"without the first step")
    for model, parity in verdicts.items():
        print(f"  {model:12s} {parity.describe()}")
    return 0 if all(parity.ok for parity in verdicts.values()) else 1


def main(argv=None):
    """Runs the command line argv (default: sys.argv[1:]) and returns the exit status."""
    arguments = parse_arguments(argv)
    models = rm.MODELS if arguments.model == "all" else (arguments.model,)
    try:
        for device in arguments.compare or [arguments.device]:
            rm.resolve_device(device)
    except rm.DeviceUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if arguments.compare:
        return compare_devices(models, arguments)
    return train_one_device(models, arguments)


if __name__ == "__main__":
    sys.exit(main())
