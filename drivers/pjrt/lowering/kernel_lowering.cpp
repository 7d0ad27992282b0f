#include "kernel_lowering.h"

#include "kit/error.h"

namespace pjrt_bridge {

const hal_kernel_signature& KernelSignature(std::string_view name) {
  const hal_kernel_signature* table = hal_standard_kernel_signatures();
  for (int i = 0; i < HAL_STANDARD_KERNEL_COUNT; ++i) {
    if (name == table[i].name) {
      return table[i];
    }
  }
  driver_kit::Fail(HAL_STATUS_UNSUPPORTED, "{} is no standard kernel", name);
}

bool IsRuntimeScalar(const hal_kernel_arg_signature& arg, int32_t given) {
  if (given != HAL_ARG_I64 && given != HAL_ARG_F64) {
    return false;
  }
  const uint32_t scalars =
      HAL_KERNEL_ACCEPTS(HAL_ARG_I64) | HAL_KERNEL_ACCEPTS(HAL_ARG_F64);
  return (arg.kinds & scalars) == scalars;
}

Value OutsideRange(ProgramBuilder& b, const Value& values, int64_t bound) {
  const std::vector<int64_t>& dims = values.type.dims;
  return b.Or(b.Compare(values, b.ConstantInt("i64", 0, dims), "LT"),
              b.Compare(values, b.ConstantInt("i64", bound, dims), "GE"));
}

KernelLowering::KernelLowering(const LaunchSignature& signature,
                               hal_dtype primary, hal_dtype scalar_type)
    : signature_(signature), primary_(primary) {
  compute_ = ComputeElement(primary);
  const hal_kernel_signature& table = KernelSignature(signature.kernel);
  for (uint64_t bytes : signature.buffer_bytes) {
    buffers_.push_back(b_.Param({"ui8", {static_cast<int64_t>(bytes)}}));
  }
  int offsets = 0;
  for (const ArgShape& a : signature.args) {
    offset_slot_.push_back(a.kind == HAL_ARG_TENSOR && a.buffer >= 0 ? offsets++
                                                                     : -1);
  }
  if (offsets > 0) {
    offsets_ = b_.Param({"i64", {offsets}});
  }
  if (scalar_type == HAL_DTYPE_COUNT) {
    scalar_type = !IsFloatElement(compute_)  ? HAL_DTYPE_I64
                  : primary == HAL_DTYPE_F64 ? HAL_DTYPE_F64
                                             : HAL_DTYPE_F32;
  }
  for (size_t i = 0; i < signature.args.size(); ++i) {
    const bool runtime = i < table.num_args &&
                         IsRuntimeScalar(table.args[i], signature.args[i].kind);
    scalar_param_.push_back(runtime ? static_cast<int>(scalars_.size()) : -1);
    if (runtime) {
      scalars_.push_back(b_.Param({StorageElement(scalar_type), {}}));
      scalar_types_.push_back(scalar_type);
    }
  }
}

Value KernelLowering::OffsetOf(int index) {
  const int slot = offset_slot_[index];
  return b_.Reshape(b_.Slice(offsets_, {slot}, {slot + 1}, {1}), {});
}

Value KernelLowering::Read(int index) {
  const ArgShape& a = arg(index);
  const ViewShape view{a.dtype, a.sizes, a.strides};
  if (a.buffer < 0) {
    return ReadView(b_, Value{}, Value{}, view);
  }
  return ReadView(b_, buffers_[a.buffer], OffsetOf(index), view);
}

Value KernelLowering::Read(int index, std::string_view element) {
  return b_.Convert(Read(index), element);
}

Value KernelLowering::Scalar(int index, std::string_view element) {
  const int param = scalar_param_[index];
  if (param < 0) {
    driver_kit::Fail(HAL_STATUS_INTERNAL, "{}: argument {} is no scalar",
                     signature_.kernel, index);
  }
  return b_.Convert(scalars_[param], element);
}

Value KernelLowering::Operand(int index, std::string_view element,
                              const std::vector<int64_t>& dims) {
  if (IsTensor(index)) {
    return Read(index, element);
  }
  return b_.Splat(Scalar(index, element), dims);
}

void KernelLowering::Write(int index, const Value& value) {
  const ArgShape& a = arg(index);
  if (a.buffer < 0) {
    return;  // empty: nothing to write
  }
  auto [it, first] = written_.emplace(a.buffer, buffers_[a.buffer]);
  if (first) {
    write_order_.push_back(a.buffer);
  }
  it->second = WriteView(b_, it->second, OffsetOf(index),
                         {a.dtype, a.sizes, a.strides}, value);
}

void KernelLowering::CheckData(const Value& values, const Value& bad,
                               StatusCheck report) {
  if (report_) {
    driver_kit::Fail(HAL_STATUS_INTERNAL, "{}: a second data check",
                     signature_.kernel);
  }
  const int64_t n = values.type.NumElements();
  if (n == 0) {
    return;
  }
  const Value flat = b_.Reshape(values, {n});
  // The first bad position: the least position whose element is bad, n
  // when there is none.
  const Value none = b_.ConstantInt("i64", n);
  const Value position =
      b_.ReduceWith(b_.Select(b_.Reshape(bad, {n}), b_.Iota({"i64", {n}}, 0),
                              b_.Splat(none, {n})),
                    none, {0}, "minimum");
  valid_ = b_.Compare(position, none, "EQ");
  // dynamic_slice clamps its start, so `n` reads a valid (unused) element.
  const Value value = b_.Reshape(b_.DynamicSlice(flat, {position}, {1}), {});
  const Value zero = b_.ConstantInt("i64", 0);
  const auto word = [&](const Value& bad_word) {
    return b_.Reshape(b_.Select(valid_, zero, bad_word), {1});
  };
  status_ = b_.Concatenate(
      {word(b_.Add(position, b_.ConstantInt("i64", 1))), word(value)}, 0);
  report_ = std::move(report);
}

Program KernelLowering::Finish() {
  Program program;
  std::vector<Value> results;
  for (int buffer : write_order_) {
    // A launch that fails its data check writes nothing.
    const Value& written = written_.at(buffer);
    results.push_back(report_ ? b_.Select(valid_, written, buffers_[buffer])
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
  program.mlir = b_.Finish(results);
  return program;
}

}  // namespace pjrt_bridge
