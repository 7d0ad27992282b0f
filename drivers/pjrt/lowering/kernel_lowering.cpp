#include "kernel_lowering.hpp"

#include "kit/error.hpp"

namespace pjrt_bridge {

const hal_kernel_signature& kernel_signature(std::string_view name) {
  const hal_kernel_signature* table = hal_standard_kernel_signatures();
  for (int i = 0; i < HAL_STANDARD_KERNEL_COUNT; ++i) {
    if (name == table[i].name) {
      return table[i];
    }
  }
  driver_kit::fail(HAL_STATUS_UNSUPPORTED, "{} is no standard kernel", name);
}

bool is_runtime_scalar(const hal_kernel_arg_signature& arg, int32_t given) {
  if (given != HAL_ARG_I64 && given != HAL_ARG_F64) {
    return false;
  }
  const uint32_t scalars =
      HAL_KERNEL_ACCEPTS(HAL_ARG_I64) | HAL_KERNEL_ACCEPTS(HAL_ARG_F64);
  return (arg.kinds & scalars) == scalars;
}

Value outside_range(ProgramBuilder& b, const Value& values, int64_t bound) {
  const std::vector<int64_t>& dims = values.type.dims;
  return b.bitwise_or(
      b.compare(values, b.constant_int("i64", 0, dims), "LT"),
      b.compare(values, b.constant_int("i64", bound, dims), "GE"));
}

KernelLowering::KernelLowering(const LaunchSignature& signature,
                               hal_dtype primary, hal_dtype scalar_type)
    : signature_(signature), primary_(primary) {
  compute_ = compute_element(primary);
  const hal_kernel_signature& table = kernel_signature(signature.kernel);
  for (uint64_t bytes : signature.buffer_bytes) {
    buffers_.push_back(b_.param({"ui8", {static_cast<int64_t>(bytes)}}));
  }
  int offsets = 0;
  for (const ArgShape& a : signature.args) {
    offset_slot_.push_back(a.kind == HAL_ARG_TENSOR && a.buffer >= 0 ? offsets++
                                                                     : -1);
  }
  if (offsets > 0) {
    offsets_ = b_.param({"i64", {offsets}});
  }
  if (scalar_type == HAL_DTYPE_COUNT) {
    scalar_type = !is_float_element(compute_) ? HAL_DTYPE_I64
                  : primary == HAL_DTYPE_F64  ? HAL_DTYPE_F64
                                              : HAL_DTYPE_F32;
  }
  for (size_t i = 0; i < signature.args.size(); ++i) {
    const bool runtime =
        i < table.num_args &&
        is_runtime_scalar(table.args[i], signature.args[i].kind);
    scalar_param_.push_back(runtime ? static_cast<int>(scalars_.size()) : -1);
    if (runtime) {
      scalars_.push_back(b_.param({storage_element(scalar_type), {}}));
      scalar_types_.push_back(scalar_type);
    }
  }
}

Value KernelLowering::offset_of(int index) {
  const int slot = offset_slot_[index];
  return b_.reshape(b_.slice(offsets_, {slot}, {slot + 1}, {1}), {});
}

Value KernelLowering::read(int index) {
  const ArgShape& a = arg(index);
  const ViewShape view{a.dtype, a.sizes, a.strides};
  if (a.buffer < 0) {
    return read_view(b_, Value{}, Value{}, view);
  }
  return read_view(b_, buffers_[a.buffer], offset_of(index), view);
}

Value KernelLowering::read(int index, std::string_view element) {
  return b_.convert(read(index), element);
}

Value KernelLowering::scalar(int index, std::string_view element) {
  const int param = scalar_param_[index];
  if (param < 0) {
    driver_kit::fail(HAL_STATUS_INTERNAL, "{}: argument {} is no scalar",
                     signature_.kernel, index);
  }
  return b_.convert(scalars_[param], element);
}

Value KernelLowering::strided_operand(int index, std::string_view element,
                                      const std::vector<int64_t>& dims) {
  if (is_tensor(index)) {
    return read(index, element);
  }
  return b_.splat(scalar(index, element), dims);
}

void KernelLowering::write(int index, const Value& value) {
  const ArgShape& a = arg(index);
  if (a.buffer < 0) {
    return;  // empty: nothing to write
  }
  auto [it, first] = written_.emplace(a.buffer, buffers_[a.buffer]);
  if (first) {
    write_order_.push_back(a.buffer);
  }
  it->second = write_view(b_, it->second, offset_of(index),
                          {a.dtype, a.sizes, a.strides}, value);
}

void KernelLowering::check_data(const Value& values, const Value& bad,
                                StatusCheck report) {
  if (report_) {
    driver_kit::fail(HAL_STATUS_INTERNAL, "{}: a second data check",
                     signature_.kernel);
  }
  const int64_t n = values.type.num_elements();
  if (n == 0) {
    return;
  }
  const Value flat = b_.reshape(values, {n});
  // The first bad position: the least position whose element is bad, n
  // when there is none.
  const Value none = b_.constant_int("i64", n);
  const Value position =
      b_.reduce_with(b_.select(b_.reshape(bad, {n}), b_.iota({"i64", {n}}, 0),
                               b_.splat(none, {n})),
                     none, {0}, "minimum");
  valid_ = b_.compare(position, none, "EQ");
  // dynamic_slice clamps its start, so `n` reads a valid (unused) element.
  const Value value = b_.reshape(b_.dynamic_slice(flat, {position}, {1}), {});
  const Value zero = b_.constant_int("i64", 0);
  const auto word = [&](const Value& bad_word) {
    return b_.reshape(b_.select(valid_, zero, bad_word), {1});
  };
  status_ = b_.concatenate(
      {word(b_.add(position, b_.constant_int("i64", 1))), word(value)}, 0);
  report_ = std::move(report);
}

Program KernelLowering::finish() {
  Program program;
  std::vector<Value> results;
  for (int buffer : write_order_) {
    // A launch that fails its data check writes nothing.
    const Value& written = written_.at(buffer);
    results.push_back(report_ ? b_.select(valid_, written, buffers_[buffer])
                              : written);
    program.result_buffers.push_back(buffer);
  }
  if (report_) {
    results.push_back(status_);
    program.check_status = std::move(report_);
  }
  for (size_t i = 0; i < buffers_.size(); ++i) {
    program.param_buffers.push_back(static_cast<int>(i));
  }
  program.num_offsets =
      offsets_.name.empty() ? 0 : static_cast<int>(offsets_.type.dims[0]);
  program.scalar_params = scalar_types_;
  program.mlir = b_.finish(results);
  return program;
}

}  // namespace pjrt_bridge
