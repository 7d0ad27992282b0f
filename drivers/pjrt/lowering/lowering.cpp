#include "lowering.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "kernels.hpp"
#include "kit/error.hpp"

namespace pjrt_bridge {
namespace {

const std::unordered_map<std::string_view, const KernelEntry*>& lowerings() {
  static const auto* table = [] {
    auto* map = new std::unordered_map<std::string_view, const KernelEntry*>;
    for (auto family : {elementwise_kernels(), reduction_kernels(),
                        linalg_kernels(), indexing_kernels(), optim_kernels(),
                        random_kernels(), nn_kernels(), conv_kernels()}) {
      for (const KernelEntry& entry : family) {
        map->emplace(entry.name, &entry);
      }
    }
    return map;
  }();
  return *table;
}

// The dtype of the first tensor whose table dtype is the kernel's primary.
hal_dtype primary_dtype(const LaunchSignature& signature,
                        const hal_kernel_signature& table) {
  for (size_t i = 0; i < signature.args.size() && i < table.num_args; ++i) {
    if (signature.args[i].kind == HAL_ARG_TENSOR && table.args[i].dtypes == 0) {
      return signature.args[i].dtype;
    }
  }
  return HAL_DTYPE_F32;
}

void hash_combine(size_t& seed, size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

}  // namespace

size_t LaunchSignatureHash::operator()(const LaunchSignature& signature) const {
  size_t seed = std::hash<std::string>()(signature.kernel);
  for (const ArgShape& a : signature.args) {
    hash_combine(seed, static_cast<size_t>(a.kind));
    hash_combine(seed, static_cast<size_t>(a.buffer));
    hash_combine(seed, static_cast<size_t>(a.dtype));
    for (int64_t v : a.sizes) hash_combine(seed, static_cast<size_t>(v));
    for (int64_t v : a.strides) hash_combine(seed, static_cast<size_t>(v));
    hash_combine(seed, static_cast<size_t>(a.i64));
    hash_combine(seed, std::hash<double>()(a.f64));
  }
  for (uint64_t bytes : signature.buffer_bytes) {
    hash_combine(seed, static_cast<size_t>(bytes));
  }
  return seed;
}

Program lower_standard_kernel(const LaunchSignature& signature) {
  const hal_kernel_signature& table = kernel_signature(signature.kernel);
  const auto it = lowerings().find(signature.kernel);
  if (it == lowerings().end()) {
    driver_kit::fail(HAL_STATUS_UNSUPPORTED, "{}: no lowering",
                     signature.kernel);
  }
  KernelLowering lowering(signature, primary_dtype(signature, table),
                          it->second->scalar_type);
  // A launch whose outputs are all empty (or left out) writes nothing; its
  // program returns no buffer (and gathers over empty inputs, which XLA
  // rejects, never get built).
  bool writes = false;
  for (size_t i = 0; i < signature.args.size() && i < table.num_args; ++i) {
    writes = writes || (table.args[i].io != HAL_KERNEL_ARG_IN &&
                        signature.args[i].buffer >= 0);
  }
  if (writes) {
    it->second->lower(lowering);
  }
  return lowering.finish();
}

LaunchDescription describe_launch(
    std::string_view kernel, std::span<const hal_arg> args,
    const std::function<Location(hal_devptr)>& locate) {
  const hal_kernel_signature& table = kernel_signature(kernel);
  LaunchDescription launch;
  launch.signature.kernel = std::string(kernel);
  for (size_t i = 0; i < args.size(); ++i) {
    const hal_arg& given = args[i];
    ArgShape shape;
    shape.kind = static_cast<hal_arg_kind>(given.kind);
    if (given.kind == HAL_ARG_TENSOR) {
      const hal_tensor& t = given.value.tensor;
      shape.dtype = static_cast<hal_dtype>(t.dtype);
      shape.sizes.assign(t.sizes, t.sizes + t.rank);
      shape.strides.assign(t.strides, t.strides + t.rank);
      int64_t elements = 1;
      for (int64_t size : shape.sizes) elements *= size;
      if (elements > 0) {
        const Location where = locate(t.data);
        size_t buffer = 0;
        while (buffer < launch.allocations.size() &&
               launch.allocations[buffer] != where.allocation) {
          ++buffer;
        }
        if (buffer == launch.allocations.size()) {
          launch.allocations.push_back(where.allocation);
          launch.signature.buffer_bytes.push_back(where.allocation_bytes);
        }
        shape.buffer = static_cast<int>(buffer);
        launch.offsets.push_back(static_cast<int64_t>(where.offset));
      }
    } else if (i < table.num_args &&
               is_runtime_scalar(table.args[i], given.kind)) {
      launch.scalars.push_back(given);
    } else if (given.kind == HAL_ARG_I64) {
      shape.i64 = given.value.i64;
    } else if (given.kind == HAL_ARG_F64) {
      shape.f64 = given.value.f64;
    }
    launch.signature.args.push_back(std::move(shape));
  }
  return launch;
}

std::vector<std::byte> encode_scalar(const hal_arg& value, hal_dtype type) {
  const bool integer = value.kind == HAL_ARG_I64;
  std::vector<std::byte> bytes;
  const auto put = [&](const auto v) {
    bytes.resize(sizeof(v));
    std::memcpy(bytes.data(), &v, sizeof(v));
  };
  switch (type) {
    case HAL_DTYPE_F32:
      put(integer ? static_cast<float>(value.value.i64)
                  : static_cast<float>(value.value.f64));
      break;
    case HAL_DTYPE_F64:
      put(integer ? static_cast<double>(value.value.i64) : value.value.f64);
      break;
    case HAL_DTYPE_I64: {
      if (integer) {
        put(value.value.i64);
        break;
      }
      // Truncation toward zero, saturating; NaN is 0.
      const double f = value.value.f64;
      constexpr double kLimit = 9223372036854775808.0;  // 2^63
      put(std::isnan(f) ? int64_t{0}
          : f >= kLimit ? std::numeric_limits<int64_t>::max()
          : f < -kLimit ? std::numeric_limits<int64_t>::min()
                        : static_cast<int64_t>(f));
      break;
    }
    default:
      driver_kit::fail(HAL_STATUS_INTERNAL, "no scalar parameter of dtype {}",
                       static_cast<int>(type));
  }
  return bytes;
}

// --- Transfers ---------------------------------------------------------------

namespace {

Value buffer_param(ProgramBuilder& b, uint64_t bytes) {
  return b.param({"ui8", {static_cast<int64_t>(bytes)}});
}

Value offset_at(ProgramBuilder& b, const Value& offsets, int slot) {
  return b.reshape(b.slice(offsets, {slot}, {slot + 1}, {1}), {});
}

}  // namespace

Program lower_copy_range(uint64_t source_bytes, uint64_t destination_bytes,
                         bool same_buffer, uint64_t bytes) {
  ProgramBuilder b;
  const Value source = buffer_param(b, source_bytes);
  const Value destination =
      same_buffer ? source : buffer_param(b, destination_bytes);
  const Value offsets = b.param({"i64", {2}});
  Program program;
  program.param_buffers =
      same_buffer ? std::vector<int>{0} : std::vector<int>{0, 1};
  program.num_offsets = 2;
  program.result_buffers = {same_buffer ? 0 : 1};
  Value result = destination;
  if (bytes > 0) {
    const Value data = b.dynamic_slice(source, {offset_at(b, offsets, 0)},
                                       {static_cast<int64_t>(bytes)});
    result =
        b.dynamic_update_slice(destination, data, {offset_at(b, offsets, 1)});
  }
  program.mlir = b.finish({result});
  return program;
}

Program lower_fill(uint64_t buffer_bytes, uint64_t pattern_bytes,
                   uint64_t bytes) {
  if (pattern_bytes == 0 || bytes % pattern_bytes != 0) {
    driver_kit::fail(HAL_STATUS_INVALID_ARGUMENT,
                     "fill of {} bytes with a {}-byte pattern", bytes,
                     pattern_bytes);
  }
  ProgramBuilder b;
  const Value buffer = buffer_param(b, buffer_bytes);
  const Value pattern = buffer_param(b, pattern_bytes);
  const Value offsets = b.param({"i64", {1}});
  Value result = buffer;
  if (bytes > 0) {
    const auto p = static_cast<int64_t>(pattern_bytes);
    const auto n = static_cast<int64_t>(bytes);
    const Value repeated =
        b.reshape(b.broadcast_in_dim(pattern, {n / p, p}, {1}), {n});
    result =
        b.dynamic_update_slice(buffer, repeated, {offset_at(b, offsets, 0)});
  }
  return {.mlir = b.finish({result}),
          .param_buffers = {0, 1},
          .num_offsets = 1,
          .scalar_params = {},
          .result_buffers = {0},
          .check_status = {}};
}

Program lower_write_range(uint64_t buffer_bytes, uint64_t bytes) {
  ProgramBuilder b;
  const Value buffer = buffer_param(b, buffer_bytes);
  const Value data = buffer_param(b, bytes);
  const Value offsets = b.param({"i64", {1}});
  const Value result = bytes > 0 ? b.dynamic_update_slice(
                                       buffer, data, {offset_at(b, offsets, 0)})
                                 : buffer;
  return {.mlir = b.finish({result}),
          .param_buffers = {0, 1},
          .num_offsets = 1,
          .scalar_params = {},
          .result_buffers = {0},
          .check_status = {}};
}

Program lower_read_range(uint64_t buffer_bytes, uint64_t bytes) {
  ProgramBuilder b;
  const Value buffer = buffer_param(b, buffer_bytes);
  const Value offsets = b.param({"i64", {1}});
  const Value data = b.dynamic_slice(buffer, {offset_at(b, offsets, 0)},
                                     {static_cast<int64_t>(bytes)});
  return {.mlir = b.finish({data}),
          .param_buffers = {0},
          .num_offsets = 1,
          .scalar_params = {},
          .result_buffers = {},
          .check_status = {}};
}

}  // namespace pjrt_bridge
