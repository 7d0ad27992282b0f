"""torch.hal as a device runtime: loading and driver errors, devices,
streams and events, memory accounting and OOM, RNG state, serialization and
pinned memory."""

import io
import os
import subprocess
import sys

import pytest
import torch

HAL = torch.device("hal")


def run_python(code, **env):
    """Runs `code` in a fresh interpreter (no torch_hal import: autoload)."""
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], env=full_env,
                          capture_output=True, text=True, timeout=120)


def test_autoload_needs_no_import():
    result = run_python("import torch; print(torch.ones(2, device='hal') * 2)")
    assert result.returncode == 0, result.stderr
    assert "tensor([2., 2.], device='hal:0')" in result.stdout


def test_importing_torch_hal_before_torch():
    # `import torch` inside torch_hal autoloads torch_hal again, while the
    # package is still half imported: its entry point must already exist.
    result = run_python(
        "import torch_hal, torch; print(torch.ones(2, device='hal') * 2)")
    assert result.returncode == 0, result.stderr
    assert "tensor([2., 2.], device='hal:0')" in result.stdout


@pytest.mark.needs_no_device
def test_missing_driver_is_a_clear_error():
    code = ("import torch\n"
            "assert not torch.hal.is_available()\n"
            "try:\n"
            "    torch.ones(1, device='hal')\n"
            "except RuntimeError as e:\n"
            "    print(e)\n")
    result = run_python(code, HAL_DRIVER="no_such_driver")
    assert result.returncode == 0, result.stderr
    assert "no driver named 'no_such_driver'" in result.stdout
    assert "libhal_driver_no_such_driver.so" in result.stdout  # the path tried


@pytest.mark.needs_no_device
def test_broken_driver_is_a_clear_error():
    not_a_library = os.path.abspath(__file__)
    code = ("import torch\n"
            "try:\n"
            "    torch.hal.init()\n"
            "except RuntimeError as e:\n"
            "    print(e)\n")
    result = run_python(code, HAL_DRIVER=not_a_library)
    assert result.returncode == 0, result.stderr
    assert not_a_library in result.stdout


@pytest.mark.needs_no_device
def test_manual_seed_does_not_load_a_driver():
    # torch.manual_seed seeds every backend; with a missing driver it must
    # still work (the seed is kept for later).
    result = run_python("import torch; torch.manual_seed(1); print('ok')",
                        HAL_DRIVER="no_such_driver")
    assert result.returncode == 0, result.stderr


def test_device_queries():
    assert torch.hal.is_available()
    assert torch.hal.device_count() >= 1
    assert torch.hal.current_device() == 0
    props = torch.hal.get_device_properties(0)
    assert props.name == torch.hal.get_device_name()
    assert props.total_memory > 0
    assert torch.float32 in props.supported_dtypes
    assert torch.accelerator.current_accelerator() == torch.device("hal")
    assert torch.accelerator.device_count() == torch.hal.device_count()


def test_invalid_device_index_raises():
    with pytest.raises((IndexError, RuntimeError), match="out of range"):
        torch.empty(1, device=f"hal:{torch.hal.device_count()}")


def test_two_devices():
    code = ("import torch\n"
            "assert torch.hal.device_count() == 2\n"
            "a = torch.arange(4.).to('hal:1')\n"
            "assert a.device == torch.device('hal:1')\n"
            "with torch.hal.device(1):\n"
            "    assert torch.hal.current_device() == 1\n"
            "    b = torch.empty(2, device='hal')\n"
            "assert b.device.index == 1 and torch.hal.current_device() == 0\n"
            "c = a.to('hal:0')\n"
            "assert torch.equal(c.cpu(), torch.arange(4.))\n"
            "print('ok')\n")
    result = run_python(code, HAL_CPU_REF_DEVICES="2")
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout


def test_tensor_and_module_methods():
    x = torch.ones(3).hal()
    assert x.is_hal and x.device.type == "hal"
    m = torch.nn.Linear(2, 2).hal()
    assert all(p.is_hal for p in m.parameters())


def test_streams():
    default = torch.hal.current_stream()
    assert default == torch.hal.default_stream()
    side = torch.hal.Stream()
    assert side != default
    urgent = torch.hal.Stream(priority=-1)
    assert urgent.device == torch.device('hal', 0)
    with torch.hal.stream(side):
        assert torch.hal.current_stream() == side
    assert torch.hal.current_stream() == default
    generic = torch.Stream(device="hal")
    assert generic.device.type == "hal"


def test_copies_on_a_side_stream_are_ordered_by_events():
    source = torch.arange(1 << 16, dtype=torch.float32)
    side = torch.hal.Stream()
    with torch.hal.stream(side):
        on_device = source.to(HAL)
        done = torch.hal.Event()
        done.record()
    torch.hal.current_stream().wait_event(done)
    on_device.record_stream(torch.hal.current_stream())
    assert torch.equal(on_device.cpu(), source)
    side.synchronize()
    assert side.query()


def test_event_timing():
    start = torch.hal.Event(enable_timing=True)
    end = torch.hal.Event(enable_timing=True)
    start.record()
    torch.zeros(1 << 20, device=HAL)
    end.record()
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) >= 0.0


def test_non_blocking_copies_through_pinned_memory():
    host = torch.arange(1 << 18, dtype=torch.float32).pin_memory()
    assert host.is_pinned()
    device = host.to(HAL, non_blocking=True)
    back = torch.empty_like(host).pin_memory()
    back.copy_(device, non_blocking=True)
    torch.hal.synchronize()
    assert torch.equal(back, host)


def test_dataloader_pin_memory():
    data = torch.utils.data.TensorDataset(torch.arange(64.).reshape(16, 4))
    loader = torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True)
    seen = []
    for (batch,) in loader:
        assert batch.is_pinned()
        seen.append(batch.to(HAL, non_blocking=True))
    assert torch.equal(torch.cat([b.cpu() for b in seen]), data.tensors[0])


def test_memory_stats_follow_allocations():
    torch.hal.synchronize()
    before = torch.hal.memory_allocated()
    x = torch.empty(1 << 20, dtype=torch.float32, device=HAL)
    assert torch.hal.memory_allocated() >= before + x.nbytes
    assert torch.hal.max_memory_allocated() >= torch.hal.memory_allocated()
    assert torch.hal.memory_reserved() >= torch.hal.memory_allocated()
    stats = torch.hal.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.hal.memory_allocated()
    del x
    assert torch.hal.memory_allocated() == before
    torch.hal.empty_cache()
    assert torch.hal.memory_reserved() <= torch.hal.max_memory_reserved()
    torch.hal.reset_peak_memory_stats()
    assert torch.hal.max_memory_allocated() == torch.hal.memory_allocated()
    free, total = torch.hal.mem_get_info()
    assert 0 < free <= total


def test_empty_cache_returns_memory_to_the_driver():
    x = torch.empty(1 << 22, dtype=torch.float32, device=HAL)
    reserved = torch.hal.memory_reserved()
    del x
    assert torch.hal.memory_reserved() == reserved  # cached, not freed
    torch.hal.empty_cache()
    assert torch.hal.memory_reserved() < reserved


def test_oversized_allocation_is_out_of_memory_and_recoverable():
    total = torch.hal.get_device_properties().total_memory
    with pytest.raises(torch.OutOfMemoryError):
        torch.empty(total * 2, dtype=torch.uint8, device=HAL)
    x = torch.ones(8, device=HAL)
    assert x.cpu().sum().item() == 8


def test_out_of_memory_within_budget_is_recoverable():
    code = ("import torch\n"
            "keep = [torch.empty(8 << 20, dtype=torch.uint8, device='hal') for _ in range(3)]\n"
            "try:\n"
            "    torch.empty(48 << 20, dtype=torch.uint8, device='hal')\n"
            "    print('no error')\n"
            "except torch.OutOfMemoryError as e:\n"
            "    print('oom:', e)\n"
            "del keep\n"
            "y = torch.empty(48 << 20, dtype=torch.uint8, device='hal')\n"
            "print('recovered', y.numel())\n")
    result = run_python(code, HAL_CPU_REF_MEMORY=str(64 << 20))
    assert result.returncode == 0, result.stderr
    assert "oom:" in result.stdout and "recovered" in result.stdout


def test_rng_state_round_trip():
    torch.hal.manual_seed(1234)
    assert torch.hal.initial_seed() == 1234
    state = torch.hal.get_rng_state()
    assert state.dtype == torch.uint8 and state.numel() == 16
    torch.hal.manual_seed(99)
    torch.hal.set_rng_state(state)
    assert torch.hal.initial_seed() == 1234
    assert torch.equal(torch.hal.get_rng_state(), state)
    with pytest.raises(RuntimeError, match="16 bytes"):
        torch.hal.set_rng_state(torch.zeros(3, dtype=torch.uint8))


def test_torch_manual_seed_seeds_hal():
    torch.manual_seed(77)
    assert torch.hal.initial_seed() == 77
    generator = torch.Generator(device="hal")
    generator.manual_seed(5)
    assert generator.initial_seed() == 5 and generator.device.type == "hal"


def test_save_and_load():
    tensor = torch.arange(6.).reshape(2, 3).to(HAL)
    state = torch.nn.Linear(3, 2).hal().state_dict()
    buffer = io.BytesIO()
    torch.save({"t": tensor, "state": state}, buffer)

    buffer.seek(0)
    loaded = torch.load(buffer)
    assert loaded["t"].device.type == "hal"
    assert torch.equal(loaded["t"].cpu(), tensor.cpu())
    assert all(v.is_hal for v in loaded["state"].values())

    buffer.seek(0)
    on_cpu = torch.load(buffer, map_location="cpu")
    assert on_cpu["t"].device.type == "cpu"
    assert torch.equal(on_cpu["t"], tensor.cpu())

    cpu_buffer = io.BytesIO()
    torch.save(torch.arange(4), cpu_buffer)
    cpu_buffer.seek(0)
    moved = torch.load(cpu_buffer, map_location="hal")
    assert moved.is_hal and torch.equal(moved.cpu(), torch.arange(4))
