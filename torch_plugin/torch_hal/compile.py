"""torch.compile on hal: the ``"hal"`` Dynamo backend, and the route that
sends ``torch.compile(model)`` (the default backend, Inductor, which has no
code generator for hal) there for graphs on hal.

Dynamo hands over each FX graph of the program, parameters lifted to inputs.
A ``GraphRunner`` runs it through HAL graphs (docs/graphs.md), with the ATen
ops and autograd formulas of eager hal, so the numbers are eager's:

- the first call with a new signature (shapes, strides, dtypes, numbers,
  grad mode) runs eagerly, as a warm-up; the next one captures the graph,
  and every later call replays it;
- with gradients, the capture runs the graph under autograd and then
  captures its backward (``torch.autograd.grad``) into a second HAL graph;
  a replay is one ``autograd.Function`` whose backward replays the second
  graph. AOTAutograd is not used: its runtime wrappers cost more per step
  than a replay saves on a small model;
- parameters and buffers (the inputs Dynamo marks static) are read, and
  mutated, in place; the others are copied into captured buffers before
  each replay (and copied back when the graph mutates them). A static input
  that moves is captured again, and after two moves copied as well;
- outputs and gradients are handed out as views of the captured ones. If a
  view of an earlier replay is still held at the next one (a loss still
  bound, gradients kept as ``.grad``), the graph is captured again into new
  memory, left to whoever holds the old, and those results are cloned from
  then on: a replay never overwrites a tensor someone holds. A forward whose
  previous backward may still come (its autograd graph is alive and has not
  run) runs eagerly, for the same reason;
- a graph that cannot be captured (random numbers, a CPU fallback, a host
  copy, ``.item()``) runs eagerly for that signature, with the reason
  counted;
- up to ``MAX_GRAPHS`` signatures per graph are kept, least recently used
  first out.

``compile_stats()`` (``torch.hal.compile_stats``) counts all of it.
"""

import collections
import functools
import logging
import weakref

import torch

from . import device_module
from .graphs import HALGraph

_log = logging.getLogger(__name__)
_ops = torch.ops.hal

MAX_GRAPHS = 8

_stats = collections.Counter()
_eager_reasons = collections.Counter()


def compile_stats() -> dict:
    """What torch.compile on hal did: ``compiles`` (graphs Dynamo handed to
    the backend: a recompile adds one), ``captures``, ``replays``,
    ``warmups``, ``eager_runs`` and ``eager_reasons`` (reason -> calls run
    eagerly), ``recaptures`` (an input read in place moved, or a result of
    an earlier replay was still held) and ``evictions``."""
    stats = {key: _stats[key] for key in (
        "compiles", "captures", "replays", "warmups", "eager_runs",
        "recaptures", "evictions")}
    stats["eager_reasons"] = dict(_eager_reasons)
    return stats


def reset_compile_stats() -> None:
    _stats.clear()
    _eager_reasons.clear()


def _count_eager(reason):
    _stats["eager_runs"] += 1
    if reason not in _eager_reasons:
        _log.info("torch_hal.compile: running a graph eagerly: %s", reason)
    _eager_reasons[reason] += 1


def _is_tensor(value):
    return isinstance(value, torch.Tensor)


def _signature(args, training):
    key = [training]
    for arg in args:
        if _is_tensor(arg):
            key.append((arg.device, arg.dtype, tuple(arg.shape), arg.stride(),
                        arg.requires_grad))
        else:
            key.append((type(arg), arg))
    return tuple(key)


def _storage_users(storage):
    return torch._C._storage_Use_Count(storage._cdata)


def _storage_address(value):
    """Where a tensor's storage lives; None for other values and for empty
    storages, which all share address 0."""
    if not _is_tensor(value):
        return None
    storage = value.untyped_storage()
    return storage.data_ptr() if storage.nbytes() > 0 else None


def _is_static(tensor):
    """Parameters and buffers: Dynamo marks those it lifts to inputs."""
    return isinstance(tensor, torch.nn.Parameter) or hasattr(
        tensor, "_dynamo_static_input_type")


class _Results:
    """Captured tensors handed out as views, and how many users their
    storages have when only the runner holds them."""

    def __init__(self, tensors):
        self.tensors = list(tensors)
        self.storages = [t.untyped_storage() if _is_tensor(t) else None
                         for t in self.tensors]
        self.users = [_storage_users(s) if s is not None else None
                      for s in self.storages]
        self.clone = [False] * len(self.tensors)

    def held(self):
        """Indices of results a view handed out earlier still holds."""
        return [i for i, s in enumerate(self.storages)
                if s is not None and _storage_users(s) > self.users[i]]

    def hand_out(self, i):
        t = self.tensors[i]
        if not _is_tensor(t):
            return t
        if self.clone[i]:
            return t.clone()
        # A tensor of its own (not a view, to autograd), so that holding
        # it shows in the storage's count of users.
        return t.detach()


class _Captured:
    """One signature: its warm-up, then its graphs and captured tensors."""

    def __init__(self):
        self.moves = 0  # static inputs that moved
        self.clone_outputs = set()
        self.clone_grads = set()
        self.forward = None       # HALGraph
        self.backward = None      # HALGraph, with gradients
        self.inputs = None        # what the graphs read, per argument
        self.copied = None        # per argument: copied in before a replay
        self.pointers = None      # per argument: its address at capture
        self.mutated = None       # per argument: written by the graph
        self.outputs = None       # _Results
        self.output_input = None  # per output: the input it is a view of
        self.differentiable = None  # per output: it has a gradient
        self.grad_outputs = None  # the backward's incoming gradients
        self.grads = None         # _Results: gradients per input needing one
        self.generation = 0       # forward replays so far
        self.last_call = None     # weakref to the last replay's autograd node
        self.backward_ran = False

    def reset(self):
        for graph in (self.forward, self.backward):
            if graph is not None:
                graph.reset()
        self.forward = self.backward = None
        # A backward still to come for an earlier replay finds its
        # activations gone, and says so.
        self.generation += 1

    def backward_pending(self):
        return (self.last_call is not None and self.last_call() is not None
                and not self.backward_ran)


class GraphRunner:
    """One FX graph from Dynamo, run through HAL graphs (the module
    docstring says how)."""

    def __init__(self, gm, example_inputs):
        self.gm = gm
        self.captured = collections.OrderedDict()
        self.stream = None
        # Dynamo's guards hold shapes, strides, dtypes and requires_grad of
        # a graph without symbolic sizes fixed; only grad mode can vary.
        self.dynamic = any(
            isinstance(e, torch.SymInt) or (_is_tensor(e) and any(
                isinstance(d, torch.SymInt) for d in (*e.shape, *e.stride())))
            for e in example_inputs)
        self.device = next((e.device.index or 0 for e in example_inputs
                            if _is_tensor(e) and e.device.type == "hal"), None)
        # Work on another device (a CPU scalar input, CPU ops) would run once
        # at capture and never again at a replay.
        self.reason = None
        if self.device is None:
            self.reason = "no hal tensor among the inputs"
        else:
            here = torch.device("hal", self.device)
            values = [e for e in example_inputs if _is_tensor(e)] + [
                node.meta.get("example_value") for node in gm.graph.nodes]
            elsewhere = next((v.device for v in values
                              if _is_tensor(v) and v.device != here), None)
            if elsewhere is not None:
                self.reason = f"a tensor on {elsewhere}, not {here}"

    def __call__(self, *args):
        if self.reason is not None:
            _count_eager(self.reason)
            return self.gm(*args)
        if _ops.is_capturing(self.device):
            # Inside a torch.hal.graph: eager work is what gets captured.
            return self.gm(*args)
        training = torch.is_grad_enabled() and any(
            _is_tensor(a) and a.requires_grad for a in args)
        key = _signature(args, training) if self.dynamic else training
        entry = self.captured.get(key)
        if entry is None:
            return self._warm_up(key, args)
        self.captured.move_to_end(key)
        if isinstance(entry, str):
            _count_eager(entry)
            return self.gm(*args)
        if entry.forward is None:
            return self._capture(key, entry, args, training)
        if training and entry.backward_pending():
            _count_eager("the backward of the previous call may still come")
            return self.gm(*args)
        moved = any(not copied and _is_tensor(a) and a.data_ptr() != pointer
                    for a, copied, pointer in zip(args, entry.copied,
                                                  entry.pointers))
        held_outputs = entry.outputs.held()
        held_grads = entry.grads.held() if entry.grads else []
        if moved or held_outputs or held_grads:
            # A tensor read in place moved, or a replay would overwrite what
            # someone holds.
            _stats["recaptures"] += 1
            entry.reset()
            entry.moves += moved
            entry.clone_outputs.update(held_outputs)
            entry.clone_grads.update(held_grads)
            return self._capture(key, entry, args, training)
        return self._replay(entry, args, training)

    def _warm_up(self, key, args):
        _stats["warmups"] += 1
        self.captured[key] = _Captured()
        while len(self.captured) > MAX_GRAPHS:
            _, evicted = self.captured.popitem(last=False)
            if isinstance(evicted, _Captured):
                evicted.reset()
            _stats["evictions"] += 1
        return self.gm(*args)

    def _give_up(self, key, entry, reason, args):
        entry.reset()
        self.captured[key] = reason
        _count_eager(reason)
        return self.gm(*args)

    def _capture(self, key, entry, args, training):
        entry.copied = [_is_tensor(a) and (entry.moves > 1 or not _is_static(a))
                        for a in args]
        with torch.no_grad():
            entry.inputs = [
                torch.empty_strided(a.shape, a.stride(), dtype=a.dtype,
                                    device=a.device).copy_(a) if copied else a
                for a, copied in zip(args, entry.copied)]
        entry.inputs = [i.requires_grad_(a.requires_grad) if copied else i
                        for i, a, copied in zip(entry.inputs, args,
                                                entry.copied)]
        entry.pointers = [i.data_ptr() if _is_tensor(i) else None
                          for i in entry.inputs]
        versions = [i._version if _is_tensor(i) else None for i in entry.inputs]
        if self.stream is None:
            self.stream = device_module.Stream(device=self.device)
        current = device_module.current_stream(self.device)
        self.stream.wait_stream(current)
        entry.forward = HALGraph()
        try:
            with device_module.stream(self.stream):
                entry.forward.capture_begin()
                try:
                    outputs = self.gm(*entry.inputs)
                finally:
                    entry.forward.capture_end()
                if training:
                    grads = self._capture_backward(entry, outputs)
        except Exception as error:  # noqa: BLE001: any failure means eager
            reason = (str(error).strip().splitlines() or
                      [type(error).__name__])[0]
            return self._give_up(key, entry, reason, args)
        current.wait_stream(self.stream)  # the backward's zeroed buffers
        entry.mutated = [_is_tensor(i) and i._version != v
                         for i, v in zip(entry.inputs, versions)]
        storages = [_storage_address(i) for i in entry.inputs]
        entry.output_input = [
            storages.index(_storage_address(o))
            if _storage_address(o) in storages else None for o in outputs]
        if any(source is not None and (
                training or o.dtype != entry.inputs[source].dtype)
               for o, source in zip(outputs, entry.output_input)):
            return self._give_up(key, entry, "an output is a view of an input",
                                 args)
        entry.differentiable = [_is_tensor(o) and o.requires_grad
                                for o in outputs]
        # The capture's autograd graph is spent: keep the tensors only, and
        # count their storages' users once the originals are gone.
        detached = [o.detach() if _is_tensor(o) else o for o in outputs]
        del outputs
        entry.outputs = _Results(detached)
        entry.outputs.clone = [i in entry.clone_outputs
                               for i in range(len(entry.outputs.tensors))]
        if training:
            entry.grads = _Results(grads)
            # A gradient in memory another one, an incoming gradient or an
            # input also uses is cloned: autograd would otherwise take two
            # tensors over one buffer for two .grad.
            shared = [_storage_address(t)
                      for t in (*entry.grad_outputs, *entry.inputs)]
            addresses = [_storage_address(g) for g in grads]
            entry.grads.clone = [
                i in entry.clone_grads or (a is not None and (
                    addresses.count(a) > 1 or a in shared))
                for i, a in enumerate(addresses)]
        _stats["captures"] += 1
        return self._replay(entry, args, training)

    def _capture_backward(self, entry, outputs):
        differentiable = [o for o in outputs if _is_tensor(o) and o.requires_grad]
        needing = [i for i in entry.inputs if _is_tensor(i) and i.requires_grad]
        entry.grad_outputs = [torch.zeros_like(o) for o in differentiable]
        entry.backward = HALGraph()
        entry.backward.capture_begin(pool=entry.forward.pool())
        try:
            grads = torch.autograd.grad(differentiable, needing,
                                        grad_outputs=entry.grad_outputs,
                                        allow_unused=True)
        finally:
            entry.backward.capture_end()
        return grads

    def _replay(self, entry, args, training):
        with torch.no_grad():
            for static, given, copied in zip(entry.inputs, args, entry.copied):
                if copied and static.data_ptr() != given.data_ptr():
                    static.copy_(given)
        if training:
            outputs = _Replay.apply(self, entry, *args)
        else:
            outputs = self._run_forward(entry, args)
        _stats["replays"] += 1
        return outputs

    def _run_forward(self, entry, args):
        entry.forward.replay()
        with torch.no_grad():
            for static, given, mutated, copied in zip(
                    entry.inputs, args, entry.mutated, entry.copied):
                if mutated and copied:
                    given.copy_(static)
        handed = []
        for i, source in enumerate(entry.output_input):
            if source is None:
                handed.append(entry.outputs.hand_out(i))
                continue
            output = entry.outputs.tensors[i]
            given, captured = args[source], entry.inputs[source]
            handed.append(given.as_strided(
                output.shape, output.stride(),
                given.storage_offset() + output.storage_offset() -
                captured.storage_offset()))
        return handed


class _Replay(torch.autograd.Function):
    """A training replay: the forward graph now, the backward graph when
    autograd asks for the gradients."""

    @staticmethod
    def forward(ctx, runner, entry, *args):
        outputs = runner._run_forward(entry, args)
        entry.generation += 1
        entry.backward_ran = False
        entry.last_call = weakref.ref(ctx)
        ctx.entry = entry
        ctx.generation = entry.generation
        ctx.needs = [_is_tensor(a) and a.requires_grad for a in args]
        ctx.mark_non_differentiable(*[
            o for o, differentiable in zip(outputs, entry.differentiable)
            if _is_tensor(o) and not differentiable])
        return tuple(outputs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        entry = ctx.entry
        if ctx.generation != entry.generation or entry.backward is None:
            raise RuntimeError(
                "torch_hal.compile: backward through a replay whose saved "
                "activations a later call of the same compiled graph has "
                "overwritten, or whose graph was evicted (a retained graph "
                "used after another forward)")
        with torch.no_grad():
            differentiable = [g for g, has_grad in
                              zip(grads, entry.differentiable) if has_grad]
            for static, given in zip(entry.grad_outputs, differentiable):
                if given is None:
                    static.zero_()
                elif static.data_ptr() != given.data_ptr():
                    static.copy_(given)
        entry.backward.replay()
        entry.backward_ran = True
        computed = iter(range(len(entry.grads.tensors)))
        return (None, None) + tuple(
            entry.grads.hand_out(next(computed)) if needs else None
            for needs in ctx.needs)


def hal_backend(gm, example_inputs, **kwargs):
    """The ``"hal"`` Dynamo backend (``torch.compile(model, backend="hal")``,
    registered through the ``torch_dynamo_backends`` entry point)."""
    _stats["compiles"] += 1
    _log.info("torch_hal.compile: compiling graph %d (%d inputs)",
              _stats["compiles"], len(example_inputs))
    return GraphRunner(gm, example_inputs)


def _on_hal(model, inputs):
    def is_hal(value):
        return _is_tensor(value) and value.device.type == "hal"
    if any(is_hal(i) for i in inputs):
        return True
    tensors = list(model.parameters()) + list(model.buffers()) \
        if isinstance(model, torch.nn.Module) else []
    return any(is_hal(t) for t in tensors)


def _route_default_backend():
    """``torch.compile(model)`` uses Inductor, which has no code generator
    for hal: graphs on hal go to the hal backend instead, all others stay
    with Inductor."""
    wrapper = torch._TorchCompileInductorWrapper
    inductor_call = wrapper.__call__
    if getattr(inductor_call, "_torch_hal_route", False):
        return

    @functools.wraps(inductor_call)
    def call(self, model_, inputs_, *args, **kwargs):
        if _on_hal(model_, inputs_):
            return hal_backend(model_, inputs_)
        return inductor_call(self, model_, inputs_, *args, **kwargs)

    call._torch_hal_route = True
    wrapper.__call__ = call


_route_default_backend()
