"""Elementwise ops on `hal` against the CPU: unary math and activations, binary
arithmetic with torch's type promotion, comparisons, logical and bitwise ops,
where/masked_fill, clamp, addcmul/addcdiv, lerp, and the backward ops autograd
reaches through them. Every op runs in its functional, in-place and out= form,
on contiguous and non-contiguous (transposed) inputs and with broadcasting.

Every test runs with HAL_STRICT=1 (the `strict` fixture), so a CPU fallback of
any op it reaches is an error naming the op; the gradcheck tests also use ops
of other families (reductions), so they run without it and assert instead that
none of this family's ops fell back.
"""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("strict")

HAL = "hal"
F32, F64, I64, BOOL = torch.float32, torch.float64, torch.int64, torch.bool


def make(shape, dtype, low=-3.0, high=3.0, seed=0, transposed=False):
    """A CPU tensor of `dtype`; transposed=True gives a non-contiguous one of `shape`."""
    g = torch.Generator().manual_seed(seed)
    full = shape[::-1] if transposed else shape
    if dtype == BOOL:
        t = torch.rand(full, generator=g) > 0.5
    elif dtype.is_floating_point:
        t = (torch.rand(full, generator=g, dtype=F64) * (high - low) + low).to(dtype)
    else:
        t = torch.randint(int(low), int(high) + 1, full, generator=g, dtype=dtype)
    return t.t() if transposed else t


def hal(t):
    """`t` on hal with the same strides (a transposed CPU tensor stays transposed)."""
    if t.dim() == 2 and not t.is_contiguous():
        return t.t().contiguous().to(HAL).t()
    return t.to(HAL)


def on_hal(arg):
    """A test argument as the hal call takes it: tensors of rank > 0 on hal, the rest as is
    (0-dim CPU tensors are valid operands of hal ops)."""
    return hal(arg) if isinstance(arg, torch.Tensor) and arg.dim() > 0 else arg


def assert_same(actual, expected, rtol=None, atol=None):
    assert actual.device.type == HAL
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, rtol=rtol, atol=atol, equal_nan=True)


# torch.<name> without an out= keyword: their out= form is called through torch.ops.aten.
NO_PYTHON_OUT = {"relu", "silu", "isnan"}


def check_forms(name, cpu_args, kwargs=None, rtol=None, atol=None, in_place=True):
    """Compares torch.<name> on hal with CPU in its functional, out= and in-place forms."""
    kwargs = kwargs or {}
    fn = getattr(torch, name, None) or getattr(torch.ops.aten, name)
    expected = fn(*cpu_args, **kwargs)
    hal_args = [on_hal(a) for a in cpu_args]
    kwargs_cpu, kwargs = kwargs, {k: on_hal(v) for k, v in kwargs.items()}
    assert_same(fn(*hal_args, **kwargs), expected, rtol, atol)

    out = torch.empty(0, dtype=expected.dtype, device=HAL)
    out_fn = getattr(torch.ops.aten, name) if name in NO_PYTHON_OUT else fn
    assert out_fn(*hal_args, **kwargs, out=out) is out
    assert_same(out, expected, rtol, atol)

    self_cpu = cpu_args[0]
    in_place = in_place and hasattr(self_cpu, name + "_")
    if in_place and self_cpu.shape == expected.shape and torch.can_cast(expected.dtype, self_cpu.dtype):
        expected_in_place = getattr(self_cpu.clone(), name + "_")(*cpu_args[1:], **kwargs_cpu)
        self_hal = hal(self_cpu)
        result = getattr(self_hal, name + "_")(*hal_args[1:], **kwargs)
        assert result is self_hal
        assert_same(self_hal, expected_in_place, rtol, atol)


# ---- unary ops: (name, dtypes, input range)
FLOAT_ONLY = (F32, F64)
UNARY = [
    ("neg", (F32, F64, I64), (-3, 3)),
    ("abs", (F32, F64, I64), (-3, 3)),
    ("exp", FLOAT_ONLY + (I64,), (-3, 3)),
    ("log", FLOAT_ONLY, (0.1, 5)),
    ("log1p", FLOAT_ONLY, (-0.9, 3)),
    ("expm1", FLOAT_ONLY, (-3, 3)),
    ("sqrt", FLOAT_ONLY + (I64,), (0, 9)),
    ("rsqrt", FLOAT_ONLY, (0.1, 9)),
    ("sin", FLOAT_ONLY, (-3, 3)),
    ("cos", FLOAT_ONLY, (-3, 3)),
    ("tanh", FLOAT_ONLY, (-3, 3)),
    ("sigmoid", FLOAT_ONLY + (I64,), (-3, 3)),
    ("relu", (F32, F64, I64), (-3, 3)),
    ("erf", FLOAT_ONLY, (-3, 3)),
    ("reciprocal", FLOAT_ONLY + (I64,), (0.5, 3)),
    ("sign", (F32, F64, I64), (-3, 3)),
    ("floor", (F32, F64, I64), (-3, 3)),
    ("ceil", (F32, F64, I64), (-3, 3)),
    ("round", (F32, F64, I64), (-3, 3)),
    ("trunc", (F32, F64, I64), (-3, 3)),
    ("logical_not", (F32, I64, BOOL), (-1, 1)),
]


@pytest.mark.parametrize("name,dtypes,bounds", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, dtypes, bounds):
    for dtype in dtypes:
        for transposed in (False, True):
            x = make((4, 5), dtype, *bounds, transposed=transposed)
            check_forms(name, [x])


def test_unary_on_integers_promotes_to_float():
    x = torch.tensor([1, 4, 9], device=HAL)
    assert torch.sqrt(x).dtype == torch.get_default_dtype()
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.sqrt_()


def test_round_keeps_halves_to_even():
    x = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
    assert_same(torch.round(hal(x)), torch.round(x))


@pytest.mark.parametrize("name", ["isposinf", "isneginf", "isnan"])
def test_float_classes(name):
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([[inf, -inf, nan, 0.0], [1.0, -inf, inf, nan]])
    for t in (x, x.t(), x.double()):
        check_forms(name, [t], in_place=False)
    check_forms(name, [make((3, 4), I64)], in_place=False)  # all false


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_and_silu(approximate):
    x = make((4, 5), F32, transposed=True)
    check_forms("silu", [x], in_place=False)
    fn = torch.nn.functional
    assert_same(fn.gelu(hal(x), approximate=approximate), fn.gelu(x, approximate=approximate))
    out = torch.empty(0, device=HAL)
    torch._C._nn.gelu(hal(x), approximate=approximate, out=out)
    assert_same(out, fn.gelu(x, approximate=approximate))
    y = hal(x)
    torch._C._nn.gelu_(y, approximate=approximate)
    assert_same(y, fn.gelu(x, approximate=approximate))
    with pytest.raises(RuntimeError, match="approximate"):
        fn.gelu(hal(x), approximate="fast")


# ---- binary ops
ARITH = [("add", (F32, F64, I64)), ("sub", (F32, F64, I64)), ("mul", (F32, F64, I64, BOOL)),
         ("maximum", (F32, F64, I64, BOOL)), ("minimum", (F32, F64, I64, BOOL)),
         ("pow", FLOAT_ONLY)]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]


@pytest.mark.parametrize("name,dtypes", ARITH, ids=[a[0] for a in ARITH])
def test_arithmetic(name, dtypes):
    for dtype in dtypes:
        low = 0.5 if name == "pow" else -3
        a = make((4, 5), dtype, low, 3, seed=1, transposed=True)
        b = make((4, 5), dtype, low, 3, seed=2)
        check_forms(name, [a, b])
        # broadcasting both ways
        check_forms(name, [a, make((1, 5), dtype, low, 3, seed=3)])
        check_forms(name, [make((4, 1), dtype, low, 3, seed=4), make((5,), dtype, low, 3)],
                    in_place=False)


@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha(name):
    a, b = make((3, 4), F32, seed=1), make((3, 4), F32, seed=2, transposed=True)
    check_forms(name, [a, b], {"alpha": 2.5})
    ai, bi = make((3, 4), I64, seed=1), make((3, 4), I64, seed=2)
    check_forms(name, [ai, bi], {"alpha": -3})
    with pytest.raises(RuntimeError, match="alpha"):
        getattr(torch, name)(hal(ai), hal(bi), alpha=0.5)


def test_scalars_and_type_promotion():
    x = make((3, 4), F32)
    i = make((3, 4), I64)
    d = make((3, 4), F64, seed=5)
    cases = [
        lambda t, u, v: t * 2 + 1,
        lambda t, u, v: 2 - t,            # rsub with a wrapped number
        lambda t, u, v: u + 1.5,          # int tensor + float scalar -> float
        lambda t, u, v: u * 3,            # stays int64
        lambda t, u, v: u / 2,            # true division of ints -> float
        lambda t, u, v: u / u.clamp(min=1),
        lambda t, u, v: t + v,            # f32 + f64 -> f64
        lambda t, u, v: t + torch.tensor(2.0, dtype=F64),  # 0-dim CPU tensor: f32 wins
        lambda t, u, v: torch.tensor(3.0) * t,             # 0-dim CPU tensor first
        lambda t, u, v: torch.tensor(3.0) - t,
        lambda t, u, v: t ** 2,
        lambda t, u, v: 2 ** t,           # pow.Scalar
        lambda t, u, v: t.abs() ** u.abs().to(F32),
        lambda t, u, v: (t > 0) * t,      # bool * float
        lambda t, u, v: u > 0.5,          # int compared with a float scalar
        lambda t, u, v: t == u,
        lambda t, u, v: torch.rsub(t, v, alpha=2),
    ]
    for case in cases:
        expected = case(x, i, d)
        assert_same(case(hal(x), hal(i), hal(d)), expected)


@pytest.mark.parametrize("dtype", [I64, torch.int32, torch.int8, torch.uint8, BOOL])
def test_integer_pow_by_a_scalar(dtype):
    x = make((4, 5), dtype, 0 if dtype == torch.uint8 else -9, 9, transposed=True)
    for exponent in (0, 1, 2, 3, 7, 13):  # 13 wraps int8/uint8 and overflows int64 too
        check_forms("pow", [x, exponent], in_place=dtype != BOOL)
    assert_same(hal(x) ** 0.5, x ** 0.5)  # a float exponent makes it float
    if dtype != BOOL:
        with pytest.raises(RuntimeError, match="negative integer powers"):
            hal(x) ** -1


def test_in_place_type_rules():
    x = hal(make((3, 4), F32))
    x.add_(hal(make((3, 4), F64)))  # computes in f64, stores f32
    assert x.dtype == F32
    i = hal(make((3, 4), I64))
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        hal(make((1, 4), F32)).add_(hal(make((3, 4), F32)))
    with pytest.raises(RuntimeError, match="bool tensor"):
        torch.sub(hal(make((3,), BOOL)), hal(make((3,), F32)))


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div(mode):
    for dtype in (F32, F64, I64):
        a = make((4, 5), dtype, -9, 9, seed=1, transposed=True)
        b = make((4, 5), dtype, 1, 4, seed=2) * torch.where(make((4, 5), BOOL), 1, -1).to(dtype)
        check_forms("div", [a, b], {"rounding_mode": mode})
        check_forms("div", [a, torch.tensor(3).to(dtype)], {"rounding_mode": mode})
    expected = torch.div(make((4,), F32), -2.5, rounding_mode=mode)
    assert_same(torch.div(hal(make((4,), F32)), -2.5, rounding_mode=mode), expected)
    with pytest.raises(RuntimeError, match="rounding_mode"):
        torch.div(hal(a), hal(b), rounding_mode="ceil")


@pytest.mark.parametrize("name", COMPARE + LOGICAL)
def test_compare_and_logical(name):
    for dtype in (F32, F64, I64, BOOL):
        a = make((4, 5), dtype, -2, 2, seed=1, transposed=True)
        b = make((4, 5), dtype, -2, 2, seed=2)
        check_forms(name, [a, b])
        check_forms(name, [a, make((5,), dtype, -2, 2, seed=3)])
    x = make((4, 5), F32, -2, 2)
    assert_same(getattr(torch, name)(hal(x), hal(make((4, 5), I64, -2, 2))),
                getattr(torch, name)(x, make((4, 5), I64, -2, 2)))
    if name in COMPARE:  # the Scalar overloads
        check_forms(name, [x, 0.5])
        check_forms(name, [make((4, 5), I64, -2, 2), 1])


def test_comparison_with_nan():
    x = torch.tensor([float("nan"), 1.0, 2.0])
    for name in COMPARE:
        assert_same(getattr(torch, name)(hal(x), 1.0), getattr(torch, name)(x, 1.0))


@pytest.mark.parametrize("name", BITWISE)
def test_bitwise(name):
    for dtype in (I64, torch.int32, BOOL):
        a = make((4, 5), dtype, -100, 100, seed=1, transposed=True)
        b = make((4, 5), dtype, -100, 100, seed=2)
        check_forms(name, [a, b])
    assert_same(getattr(torch, name)(hal(a), True), getattr(torch, name)(a, True))


# ---- where, masked_fill, clamp
def test_where():
    cond = make((4, 5), BOOL, seed=7)
    a, b = make((4, 5), F32, seed=1, transposed=True), make((5,), F32, seed=2)
    check_forms("where", [cond, a, b], in_place=False)
    assert_same(torch.where(hal(cond), hal(a), 0.5), torch.where(cond, a, 0.5))
    assert_same(torch.where(hal(cond), 2, hal(b)), torch.where(cond, 2, b))
    assert_same(torch.where(hal(cond), 1.0, 0.0), torch.where(cond, 1.0, 0.0))
    i = make((4, 5), I64)
    assert_same(torch.where(hal(cond), hal(i), hal(a)), torch.where(cond, i, a))
    with pytest.raises(RuntimeError, match="bool"):
        torch.where(hal(a), hal(a), hal(b))


@pytest.mark.parametrize("dtype", [F32, F64, I64, BOOL])
def test_masked_fill(dtype):
    x = make((4, 5), dtype, transposed=True)
    mask = make((5,), BOOL, seed=3)  # broadcast over rows
    for value in (2, torch.tensor(1), hal(torch.tensor(1)).to(dtype)):
        expected = x.masked_fill(mask, value.cpu() if isinstance(value, torch.Tensor) else value)
        y = hal(x)
        assert y.masked_fill_(hal(mask), value) is y
        assert_same(y, expected)
        assert_same(hal(x).masked_fill(hal(mask), value), expected)
    with pytest.raises(RuntimeError, match="0-dimensional"):
        hal(x).masked_fill_(hal(mask), hal(torch.ones(2)))


def test_masked_fill_casts_the_value_to_self():
    x = make((3, 4), I64)
    mask = make((3, 4), BOOL)
    assert_same(hal(x).masked_fill_(hal(mask), 2.7), x.clone().masked_fill_(mask, 2.7))


def test_clamp():
    x = make((4, 5), F32, transposed=True)
    check_forms("clamp", [x], {"min": -1.0, "max": 0.5})
    check_forms("clamp", [x], {"min": -1.0})
    check_forms("clamp", [x], {"max": 0.5})
    check_forms("clamp", [x], {"min": 1.0, "max": -1.0})  # min > max gives max
    check_forms("clamp_min", [x, 0.25])
    check_forms("clamp_max", [x, 0.25])
    i = make((4, 5), I64)
    check_forms("clamp", [i], {"min": -1, "max": 2})
    assert_same(torch.clamp(hal(i), min=0.5), torch.clamp(i, min=0.5))  # promotes to float
    lo, hi = make((5,), F32, -2, 0, seed=1), make((4, 1), F32, 0, 2, seed=2)
    check_forms("clamp", [x, lo, hi])
    check_forms("clamp", [x], {"min": lo})
    check_forms("clamp", [x], {"max": hi}, in_place=False)
    with pytest.raises(RuntimeError, match="At least one"):
        torch.clamp(hal(x))


def test_clamp_keeps_nan():
    x = torch.tensor([float("nan"), -5.0, 5.0])
    assert_same(torch.clamp(hal(x), -1, 1), torch.clamp(x, -1, 1))


# ---- addcmul, addcdiv, lerp
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(name):
    dtypes = (F32, F64, I64) if name == "addcmul" else (F32, F64)
    for dtype in dtypes:
        s = make((4, 5), dtype, seed=1, transposed=True)
        t1, t2 = make((4, 5), dtype, seed=2), make((5,), dtype, 1, 3, seed=3)
        value = 2 if dtype == I64 else 0.5
        check_forms(name, [s, t1, t2], {"value": value})
    if name == "addcdiv":
        i = hal(make((3,), I64))
        with pytest.raises(RuntimeError, match="Integer division"):
            torch.addcdiv(i, i, i)


def test_lerp():
    for dtype in (F32, F64):
        start = make((4, 5), dtype, seed=1, transposed=True)
        end = make((4, 5), dtype, seed=2)
        check_forms("lerp", [start, end, 0.3])
        check_forms("lerp", [start, end, 0.7])
        check_forms("lerp", [start, end, make((5,), dtype, 0, 1, seed=4)])
    with pytest.raises(RuntimeError, match="expected dtype"):
        torch.lerp(hal(start), hal(end).float(), 0.5)


# ---- backward ops, through autograd
def grads(fn, *cpu_inputs):
    """Gradients of fn at cpu_inputs on the CPU and on hal, for an all-ones upstream gradient."""
    results = []
    for device in ("cpu", HAL):
        inputs = [t.detach().to(device).requires_grad_() for t in cpu_inputs]
        out = fn(*inputs)
        out.backward(torch.ones_like(out))
        results.append([t.grad for t in inputs])
    return results


BACKWARD = {
    "relu": lambda x: torch.relu(x),
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "silu": torch.nn.functional.silu,
    "exp_log_sqrt": lambda x: torch.exp(x) + torch.log(x.abs() + 1) + torch.sqrt(x * x + 1),
    "arith": lambda x: (x * 3 - 1) / (x * x + 2) + x ** 3,
    "clamp_where": lambda x: torch.clamp(x, -1, 1) + torch.where(x > 0, x, 2 * x),
}


@pytest.mark.parametrize("name", list(BACKWARD))
def test_backward_matches_cpu(name):
    x = make((4, 5), F32, seed=9)
    x = torch.where(x.abs() < 0.05, 0.1, x)  # away from relu's and clamp's kinks
    (cpu_grad,), (hal_grad,) = grads(BACKWARD[name], x)
    assert_same(hal_grad, cpu_grad, rtol=1e-5, atol=1e-6)


def test_backward_of_the_optimizer_ops():
    a, b, c = make((3, 4), F32, seed=1), make((3, 4), F32, seed=2), make((3, 4), F32, 1, 2, seed=3)
    cpu, on_hal = grads(lambda a, b, c: torch.addcmul(a, b, c, value=0.5)
                        + torch.addcdiv(a, b, c, value=2) + torch.lerp(a, b, 0.3), a, b, c)
    for expected, actual in zip(cpu, on_hal):
        assert_same(actual, expected, rtol=1e-5, atol=1e-6)


GRADCHECK = {
    "sigmoid_tanh": lambda x: torch.sigmoid(x) * torch.tanh(x),
    "gelu": lambda x: torch.nn.functional.gelu(x) + torch.nn.functional.gelu(x, approximate="tanh"),
    "silu_exp": lambda x: torch.nn.functional.silu(x) + torch.exp(x),
    "div_pow": lambda x: x / (x * x + 1) + (x * x + 1) ** 1.5,
}


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_gradcheck_f64(name, monkeypatch):
    # gradcheck itself reduces (allclose, sum): those ops belong to another family.
    monkeypatch.delenv("HAL_STRICT")
    torch.hal.reset_fallback_stats()
    x = hal(make((2, 3), F64, seed=11)).requires_grad_()
    assert torch.autograd.gradcheck(GRADCHECK[name], (x,))
    fell_back = [op for op in torch.hal.fallback_stats() if op_of_this_family(op)]
    assert not fell_back, f"elementwise ops fell back to the CPU: {fell_back}"


FAMILY = {u[0] for u in UNARY} | {a[0] for a in ARITH} | set(COMPARE + LOGICAL + BITWISE) | {
    "gelu", "silu", "div", "rsub", "where", "masked_fill", "masked_fill_", "clamp", "clamp_min",
    "clamp_max", "addcmul", "addcdiv", "lerp", "threshold_backward", "sigmoid_backward",
    "tanh_backward", "gelu_backward", "silu_backward"}


def op_of_this_family(qualified):
    """Whether a fallback_stats key ('aten::add.out', 'add_.Tensor', ...) names one of our ops."""
    name = qualified.split("::")[-1].split(".")[0]
    return name in FAMILY or name.rstrip("_") in FAMILY


def test_cpu_tensor_operand_is_rejected():
    with pytest.raises(RuntimeError, match="hal device"):
        hal(make((3,), F32)) + make((3,), F32)


def test_layouts_and_edge_shapes():
    x, y = make((4, 5), F32, seed=1), make((4, 5), F32, seed=2)
    # a transposed out= tensor keeps its strides
    out = hal(torch.empty(4, 5).t().contiguous().t())
    torch.mul(hal(x), hal(y), out=out)
    assert out.stride() == (1, 4)
    assert_same(out, x * y)
    # a 0-dim hal tensor broadcasts like any other tensor
    s = torch.tensor(1.5, dtype=F64)
    assert_same(hal(x) * s.to(HAL), x * s)
    # empty tensors
    e = torch.empty(0, 3)
    assert_same(torch.add(hal(e), hal(torch.ones(3))), e + torch.ones(3))
    assert_same(torch.exp(hal(e)), torch.exp(e))



@pytest.mark.parametrize("dtype", [BOOL, I64, torch.int32, torch.int8, torch.uint8])
def test_bitwise_not(dtype):
    check_forms("bitwise_not", [make((3, 5), dtype, low=0, high=100)])
    check_forms("bitwise_not", [make((3, 5), dtype, low=0, high=100, transposed=True)])


def test_bitwise_not_rejects_floats():
    with pytest.raises(NotImplementedError, match="bitwise_not"):
        torch.bitwise_not(hal(make((3,), F32)))


def test_hardtanh_and_backward():
    x = torch.tensor([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, float("nan")])
    check_forms("clamp", [x, -1.0, 1.0])
    assert_same(torch.nn.functional.hardtanh(hal(x)), torch.nn.functional.hardtanh(x))
    assert_same(torch.nn.functional.relu6(hal(x * 4)), torch.nn.functional.relu6(x * 4))
    grad = make((8,), F32, seed=2)
    expected = torch.ops.aten.hardtanh_backward(grad, x, -1.0, 1.0)
    assert_same(torch.ops.aten.hardtanh_backward(hal(grad), hal(x), -1.0, 1.0), expected)


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_prefer_numbers_to_nan(name):
    nan = float("nan")
    a = torch.tensor([1.0, nan, nan, -2.0, 0.5])
    b = torch.tensor([2.0, 3.0, nan, nan, -0.5])
    check_forms(name, [a, b])
    check_forms(name, [make((3, 4), I64), make((3, 4), I64, seed=1)])
    check_forms(name, [make((3, 4), F32), make((4,), F64, seed=1)])
