// The indexing family: index_select, index_add, gather, scatter and
// scatter_add (table/indexing.json), i64 indices along one dim.
//
// Index values are only known on execution. Each operation first reads its
// whole index tensor and checks every value against the indexed dim; an
// index outside [0, size) fails the operation with INVALID_ARGUMENT (which
// stream_synchronize reports) before anything is written, so memory is
// never touched out of bounds. A rank-0 tensor is handled as one of shape
// [1], so dim 0 and index 0 address its element.
//
// Writes happen in a fixed order: scatter/scatter_add follow the row-major
// order of `index` (so duplicate destinations see ascending source
// positions; the last scatter write wins), index_add ascending positions of
// `index`; accumulation rounds to the dtype after each addition, as torch
// does. Where an output overlaps a data input, the input (or the gathered
// result) is staged first, so the result is as if every input were read
// before any output is written.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <variant>
#include <vector>

#include "common.hpp"
#include "hal/standard_kernels.h"
#include "kernels/args.hpp"
#include "kernels/kernel.hpp"
#include "kit/indexing_checks.hpp"

namespace cpu_ref {

using driver_kit::check_gather;
using driver_kit::check_index_add;
using driver_kit::check_index_select;
using driver_kit::check_scatter;
using driver_kit::check_scatter_add;
using driver_kit::GatherPlan;
using driver_kit::IndexAddPlan;
using driver_kit::IndexSelectPlan;
using driver_kit::ScatterPlan;
namespace {

// A tensor's shape and byte strides, with rank 0 seen as shape [1].
struct View {
  Shape shape;
  StridedOperand operand;
};

View view_of(const TensorArg& tensor) {
  View view{tensor.shape(), strided_operand(tensor)};
  if (view.shape.rank == 0) {
    view.shape.rank = 1;
    view.shape.sizes[0] = 1;
    view.operand.byte_strides[0] = 0;
  }
  return view;
}

// `shape` with `dim` set to `size`.
Shape with_size(Shape shape, int dim, int64_t size) {
  shape.sizes[dim] = size;
  return shape;
}

// `operand` moved `steps` along `dim`, or pinned to index 0 of `dim`.
StridedOperand advance(StridedOperand operand, int dim, int64_t steps) {
  operand.base += steps * operand.byte_strides[dim];
  return operand;
}
StridedOperand pinned(StridedOperand operand, int dim) {
  operand.byte_strides[dim] = 0;
  return operand;
}

// Every index value in row-major order, checked against [0, bound).
std::vector<int64_t> load_indices(const char* kernel, const TensorArg& index,
                                  int dim, int64_t bound) {
  std::vector<int64_t> values;
  values.reserve(index.num_elements);
  for_each_element<1>(
      index.shape(), {strided_operand(index)},
      [&](ElementPointers<1> p) { values.push_back(load<int64_t>(p[0])); });
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= bound) {
      fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: index {} (element {} of index) is out of range for dim {} of "
           "size {}",
           kernel, values[i], i, dim, bound);
    }
  }
  return values;
}

// Copies `shape`'s elements from `source` to `destination`: a whole
// innermost row at a time where both are contiguous along it (an embedding
// row, a staged slice), else element by element.
void copy_elements(const Shape& shape, const StridedOperand& destination,
                   const StridedOperand& source, int64_t element_size) {
  const int last = shape.rank - 1;
  if (shape.num_elements() == 0) {
    return;
  }
  if (last >= 0 && destination.byte_strides[last] == element_size &&
      source.byte_strides[last] == element_size) {
    const auto row_bytes =
        static_cast<size_t>(shape.sizes[last] * element_size);
    if (shape.num_elements() == shape.sizes[last]) {
      std::memcpy(destination.base, source.base, row_bytes);
      return;
    }
    for_each_element<2>(with_size(shape, last, 1), {destination, source},
                        [row_bytes](ElementPointers<2> p) {
                          std::memcpy(p[0], p[1], row_bytes);
                        });
    return;
  }
  for_each_element<2>(shape, {destination, source},
                      [element_size](ElementPointers<2> p) {
                        std::memcpy(p[0], p[1], element_size);
                      });
}

// A row-major copy of `operand` over `shape`, and the operand reading it.
struct Staged {
  std::vector<char> bytes;
  StridedOperand operand;
};
Staged stage(const Shape& shape, const StridedOperand& operand,
             int64_t element_size) {
  Staged staged;
  staged.bytes.resize(shape.num_elements() * element_size);
  staged.operand = contiguous_operand(staged.bytes.data(), shape, element_size);
  copy_elements(shape, staged.operand, operand, element_size);
  return staged;
}

// `out` over `shape` filled by `produce(destination)`, which writes to a
// staging buffer first when `out` overlaps an input.
template <typename Produce>
void write_through_staging(const TensorArg& out, bool overlaps,
                           const Shape& shape,
                           const StridedOperand& out_operand, Produce produce) {
  if (!overlaps) {
    produce(out_operand);
    return;
  }
  std::vector<char> bytes(shape.num_elements() * out.element_size);
  const StridedOperand staging =
      contiguous_operand(bytes.data(), shape, out.element_size);
  produce(staging);
  copy_elements(shape, out_operand, staging, out.element_size);
}

// --- index_select(out, in, dim, index) -------------------------------------

void run_index_select(const IndexSelectPlan& plan) {
  const View out = view_of(plan.out);
  const View in = view_of(plan.in);
  const int dim = plan.dim;
  const std::vector<int64_t> indices = load_indices(
      HAL_KERNEL_INDEX_SELECT, plan.index, dim, in.shape.sizes[dim]);
  const Shape slice = with_size(out.shape, dim, 1);
  const int64_t element_size = plan.out.element_size;
  write_through_staging(
      plan.out, plan.out.overlaps(plan.in), out.shape, out.operand,
      [&](const StridedOperand& destination) {
        for (size_t j = 0; j < indices.size(); ++j) {
          copy_elements(slice,
                        advance(destination, dim, static_cast<int64_t>(j)),
                        advance(in.operand, dim, indices[j]), element_size);
        }
      });
}

Stream::Operation prepare_index_select(const Device& device,
                                       const hal_arg* args, uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_INDEX_SELECT, device, args, num_args, 4);
  const IndexSelectPlan plan = check_index_select(check);
  return [plan] { run_index_select(plan); };
}

// --- Accumulation shared by index_add and scatter_add -----------------------

// destination += alpha * source, rounded to T; integers wrap.
template <typename T>
struct AddScaled {
  explicit AddScaled(const ScalarArg& alpha) {
    if constexpr (kIsFloating<T>) {
      scale = alpha.as<ComputeType<T>>();
    } else {
      scale = static_cast<uint64_t>(alpha.as<int64_t>());
    }
  }
  void operator()(char* destination, const char* source) const {
    const T a = load<T>(destination);
    const T b = load<T>(source);
    if constexpr (kIsFloating<T>) {
      store(destination, convert_to<T>(widen(a) + scale * widen(b)));
    } else {
      store(destination, convert_to<T>(static_cast<uint64_t>(a) +
                                       scale * static_cast<uint64_t>(b)));
    }
  }
  std::conditional_t<kIsFloating<T>, ComputeType<T>, uint64_t> scale;
};

// --- index_add(self, dim, index, source, alpha) -----------------------------

template <typename T>
void run_index_add(const IndexAddPlan& plan) {
  const View self = view_of(plan.self);
  View source = view_of(plan.source);
  const int dim = plan.dim;
  const std::vector<int64_t> indices = load_indices(
      HAL_KERNEL_INDEX_ADD, plan.index, dim, self.shape.sizes[dim]);
  Staged staged;
  if (plan.source.overlaps(plan.self)) {
    staged = stage(source.shape, source.operand, plan.source.element_size);
    source.operand = staged.operand;
  }
  const AddScaled<T> add(plan.alpha);
  const Shape slice = with_size(source.shape, dim, 1);
  for (size_t j = 0; j < indices.size(); ++j) {
    for_each_element<2>(slice,
                        {advance(self.operand, dim, indices[j]),
                         advance(source.operand, dim, static_cast<int64_t>(j))},
                        [&add](ElementPointers<2> p) { add(p[0], p[1]); });
  }
}

Stream::Operation prepare_index_add(const Device& device, const hal_arg* args,
                                    uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_INDEX_ADD, device, args, num_args, 5);
  const IndexAddPlan plan = check_index_add(check);
  return [plan] {
    visit_dtype(plan.self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, Bool8>) {
        run_index_add<T>(plan);
      }
    });
  };
}

// --- gather(out, in, dim, index) ---------------------------------------------

void run_gather(const GatherPlan& plan) {
  const View out = view_of(plan.out);
  const View in = view_of(plan.in);
  const int dim = plan.dim;
  const std::vector<int64_t> indices =
      load_indices(HAL_KERNEL_GATHER, plan.index, dim, in.shape.sizes[dim]);
  const int64_t element_size = plan.out.element_size;
  const int64_t step = in.operand.byte_strides[dim];
  write_through_staging(plan.out, plan.out.overlaps(plan.in), out.shape,
                        out.operand, [&](const StridedOperand& destination) {
                          size_t next = 0;
                          for_each_element<2>(
                              out.shape, {destination, pinned(in.operand, dim)},
                              [&](ElementPointers<2> p) {
                                std::memcpy(p[0], p[1] + indices[next++] * step,
                                            element_size);
                              });
                        });
}

Stream::Operation prepare_gather(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_GATHER, device, args, num_args, 4);
  const GatherPlan plan = check_gather(check);
  return [plan] { run_gather(plan); };
}

// --- scatter(self, dim, index, src) and scatter_add(self, dim, index, src) --

// Calls write(destination, source) for each element of index in row-major
// order; source is the matching src element (or the scalar, converted).
template <typename T, typename Write>
void run_scatter(const char* kernel, const ScatterPlan& plan, Write write) {
  const View self = view_of(plan.self);
  const View index = view_of(plan.index);
  const int dim = plan.dim;
  const std::vector<int64_t> indices =
      load_indices(kernel, plan.index, dim, self.shape.sizes[dim]);
  StridedOperand source;
  Staged staged;
  T scalar{};
  if (const TensorArg* src = std::get_if<TensorArg>(&plan.src)) {
    source = view_of(*src).operand;
    if (src->overlaps(plan.self)) {
      staged = stage(index.shape, source, src->element_size);
      source = staged.operand;
    }
  } else {
    scalar = std::get<ScalarArg>(plan.src).as<T>();
    source.base = reinterpret_cast<char*>(&scalar);  // strides stay 0
  }
  const int64_t step = self.operand.byte_strides[dim];
  size_t next = 0;
  for_each_element<2>(index.shape, {pinned(self.operand, dim), source},
                      [&](ElementPointers<2> p) {
                        write(p[0] + indices[next++] * step, p[1]);
                      });
}

Stream::Operation prepare_scatter(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SCATTER, device, args, num_args, 4);
  const ScatterPlan plan = check_scatter(check);
  return [plan] {
    visit_dtype(plan.self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_scatter<T>(HAL_KERNEL_SCATTER, plan,
                     [](char* destination, const char* source) {
                       std::memcpy(destination, source, sizeof(T));
                     });
    });
  };
}

Stream::Operation prepare_scatter_add(const Device& device, const hal_arg* args,
                                      uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SCATTER_ADD, device, args, num_args, 4);
  const ScatterPlan plan = check_scatter_add(check);
  return [plan] {
    visit_dtype(plan.self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, Bool8>) {
        const AddScaled<T> add(ScalarArg{true, 1, 0});
        run_scatter<T>(HAL_KERNEL_SCATTER_ADD, plan,
                       [&add](char* destination, const char* source) {
                         add(destination, source);
                       });
      }
    });
  };
}

const KernelDef kIndexSelectKernel{HAL_KERNEL_INDEX_SELECT,
                                   prepare_index_select};
const KernelDef kIndexAddKernel{HAL_KERNEL_INDEX_ADD, prepare_index_add};
const KernelDef kGatherKernel{HAL_KERNEL_GATHER, prepare_gather};
const KernelDef kScatterKernel{HAL_KERNEL_SCATTER, prepare_scatter};
const KernelDef kScatterAddKernel{HAL_KERNEL_SCATTER_ADD, prepare_scatter_add};

}  // namespace

KernelList indexing_kernels() {
  static const KernelDef* const kKernels[] = {
      &kIndexSelectKernel, &kIndexAddKernel, &kGatherKernel, &kScatterKernel,
      &kScatterAddKernel};
  return kKernels;
}

}  // namespace cpu_ref
