"""HAL graphs from PyTorch: ``torch.hal.HALGraph``, ``torch.hal.graph``,
``torch.hal.graph_pool_handle`` and ``torch.hal.make_graphed_callables``,
which mirror their ``torch.cuda`` namesakes.

A capture records the hal work the block enqueues on a side stream into one
HAL graph (docs/graphs.md), and ``replay()`` runs it again on the current
stream: same kernels, same memory. Tensors the capture allocated come from a
graph pool of the caching allocator, which no other work reuses while the
graph lives. What cannot be captured fails the capture with an error naming
it: copies between host and device (a CPU fallback, ``.item()``,
``.cpu()``), random numbers, synchronizing the device.
"""

import gc

import torch

from . import device_module

_ops = torch.ops.hal


def graph_pool_handle() -> int:
    """A handle to a new graph pool, for graphs that share memory: pass it
    as ``pool`` to each capture. Graphs sharing a pool must be replayed in
    the order they were captured."""
    return _ops.new_graph_pool(device_module.current_device())


def is_current_stream_capturing() -> bool:
    """Whether the current stream of the current hal device captures."""
    return _ops.is_capturing(device_module.current_device())


class HALGraph:
    """A HAL graph captured from the current hal stream
    (``torch.cuda.CUDAGraph``)."""

    def __init__(self, keep_graph=False):
        self._graph = torch.classes.hal.Graph()

    def capture_begin(self, pool=None, capture_error_mode="global"):
        """Starts capturing the current stream (not a default stream);
        allocations come from ``pool`` (a graph_pool_handle() or another
        graph's pool()), else a new pool. ``capture_error_mode`` is accepted
        for CUDA compatibility: hal refuses uncapturable work on every
        thread."""
        self._graph.capture_begin(0 if pool is None else int(pool))

    def capture_end(self):
        self._graph.capture_end()

    def instantiate(self):
        """Nothing to do: a HAL graph is ready when capture_end returns."""

    def replay(self):
        """Runs the graph on the current stream of its device."""
        self._graph.replay()

    def reset(self):
        """Drops the graph, after its last replay has run, and its pool."""
        self._graph.reset()

    def pool(self) -> int:
        """The graph pool this graph allocated from, to share with others."""
        return self._graph.pool()


class graph:
    """Captures the block into ``hal_graph`` on a side stream
    (``torch.cuda.graph``): the device is synchronized and the cache
    emptied first, so the capture starts from settled memory."""

    default_capture_stream = None

    def __init__(self, hal_graph, pool=None, stream=None,
                 capture_error_mode="global"):
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = device_module.Stream()
            stream = graph.default_capture_stream
        self.hal_graph = hal_graph
        self.pool = pool
        self.capture_error_mode = capture_error_mode
        self.stream_context = device_module.stream(stream)

    def __enter__(self):
        device_module.synchronize()
        gc.collect()
        device_module.empty_cache()
        self.stream_context.__enter__()
        try:
            self.hal_graph.capture_begin(
                self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_context.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        try:
            if exc[0] is None:
                self.hal_graph.capture_end()
            else:
                # The block failed: what it captured is dropped.
                self.hal_graph.reset()
        finally:
            self.stream_context.__exit__(*exc)


def _flat_tensors(args, what):
    flat, _ = torch.utils._pytree.tree_flatten(args)
    for value in flat:
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"make_graphed_callables: {what} must all be tensors, found "
                f"{type(value).__name__}")
    return tuple(flat)


class _Callable:
    """One callable of make_graphed_callables: its captured inputs (the
    sample arguments, then a module's parameters), graphs and results."""

    def __init__(self, func, sample_args, allow_unused_input):
        self.params = (tuple(func.parameters())
                       if isinstance(func, torch.nn.Module) else ())
        self.func, self.sample_args = func, sample_args
        self.inputs = _flat_tensors(sample_args, "sample_args") + self.params
        self.pointers = [t.data_ptr() for t in self.inputs]
        self.requiring = tuple(t for t in self.inputs if t.requires_grad)
        self.allow_unused_input = allow_unused_input
        self.forward_graph, self.backward_graph = HALGraph(), HALGraph()
        self.outputs = self.grad_outputs = None
        self.grads = ()

    def differentiable(self, outputs):
        return tuple(o for o in outputs if o.requires_grad)

    def grad(self, outputs, grad_outputs):
        return torch.autograd.grad(
            self.differentiable(outputs), self.requiring,
            grad_outputs=grad_outputs, allow_unused=self.allow_unused_input)

    def warm_up(self, iterations):
        for _ in range(iterations):
            outputs = _flat_tensors(self.func(*self.sample_args), "outputs")
            if self.differentiable(outputs) and self.requiring:
                self.grad(outputs, tuple(torch.empty_like(o) for o in
                                         self.differentiable(outputs)))

    def capture_forward(self, pool):
        with graph(self.forward_graph, pool=pool):
            self.outputs = _flat_tensors(self.func(*self.sample_args), "outputs")

    def capture_backward(self, pool):
        differentiable = self.differentiable(self.outputs)
        self.grad_outputs = tuple(torch.empty_like(o) for o in differentiable)
        if differentiable and self.requiring:
            with graph(self.backward_graph, pool=pool):
                self.grads = self.grad(self.outputs, self.grad_outputs)

    def function(self):
        """The autograd.Function replaying both graphs."""
        captured = self
        num_user_inputs = len(self.inputs) - len(self.params)
        grads = iter(self.grads)
        grad_per_input = tuple(next(grads) if t.requires_grad else None
                               for t in self.inputs)

        class Graphed(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *inputs):
                for static, given in zip(captured.inputs[:num_user_inputs],
                                         inputs):
                    if static.data_ptr() != given.data_ptr():
                        static.copy_(given)
                for param, pointer in zip(
                        captured.params,
                        captured.pointers[num_user_inputs:]):
                    if param.data_ptr() != pointer:
                        raise RuntimeError(
                            "make_graphed_callables: a parameter moved since "
                            "the capture (its .data was replaced); graph the "
                            "module again")
                captured.forward_graph.replay()
                return tuple(o.detach() for o in captured.outputs)

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *grads):
                grads = [g for g, o in zip(grads, captured.outputs)
                         if o.requires_grad]
                for static, given in zip(captured.grad_outputs, grads):
                    if given is None:
                        static.zero_()
                    elif static.data_ptr() != given.data_ptr():
                        static.copy_(given)
                if captured.grads:
                    captured.backward_graph.replay()
                return tuple(g.detach() if g is not None else None
                             for g in grad_per_input)

        return Graphed


def make_graphed_callables(callables, sample_args, num_warmup_iters=3,
                           allow_unused_input=False, pool=None):
    """Graphed versions of callables (``torch.cuda.make_graphed_callables``):
    each one's forward and backward are captured once from ``sample_args``
    and replayed at every call. Inputs are copied into the captured ones;
    outputs are the captured tensors, overwritten by the next call, as with
    CUDA. A module's parameters are read in place."""
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    for func in callables:
        if isinstance(func, torch.nn.Module) and (
                func._backward_hooks or func._forward_hooks
                or func._forward_pre_hooks):
            raise RuntimeError(
                "make_graphed_callables: modules must have no hooks "
                "registered when they are graphed")
    pool = graph_pool_handle() if pool is None else pool
    captured = [_Callable(func, args, allow_unused_input)
                for func, args in zip(callables, sample_args)]
    # Lazy state settles before the captures, on a side stream as theirs.
    device_module.synchronize()
    side = device_module.Stream()
    side.wait_stream(device_module.current_stream())
    with device_module.stream(side):
        for one in captured:
            one.warm_up(num_warmup_iters)
    device_module.synchronize()
    # Forwards in call order, backwards in the reverse: the order a training
    # step replays them in, which graphs sharing a pool must keep.
    for one in captured:
        one.capture_forward(pool)
    for one in reversed(captured):
        one.capture_backward(pool)
    graphed = []
    for func, one in zip(callables, captured):
        function = one.function()
        params = one.params

        def run(*inputs, _function=function, _params=params):
            outputs = _function.apply(*_flat_tensors(inputs, "inputs"), *_params)
            return outputs[0] if len(outputs) == 1 else outputs

        if isinstance(func, torch.nn.Module):
            eager_forward = func.forward

            def forward(*inputs, _run=run, _module=func, _eager=eager_forward):
                # As with CUDA, the graphs hold training-mode work.
                if _module.training:
                    return _run(*inputs)
                return _eager(*inputs)

            func.forward = forward
            graphed.append(func)
        else:
            graphed.append(run)
    return graphed[0] if just_one else tuple(graphed)
