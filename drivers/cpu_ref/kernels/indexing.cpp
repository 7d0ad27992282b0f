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

#include "common.h"
#include "hal/standard_kernels.h"
#include "kernels/args.h"
#include "kernels/kernel.h"
#include "kit/indexing_checks.h"

namespace cpu_ref {
namespace {

// A tensor's shape and byte strides, with rank 0 seen as shape [1].
struct View {
  Shape shape;
  StridedOperand operand;
};

View ViewOf(const TensorArg& tensor) {
  View view{tensor.shape(), Operand(tensor)};
  if (view.shape.rank == 0) {
    view.shape.rank = 1;
    view.shape.sizes[0] = 1;
    view.operand.byte_strides[0] = 0;
  }
  return view;
}

// `shape` with `dim` set to `size`.
Shape WithSize(Shape shape, int dim, int64_t size) {
  shape.sizes[dim] = size;
  return shape;
}

// `operand` moved `steps` along `dim`, or pinned to index 0 of `dim`.
StridedOperand Advance(StridedOperand operand, int dim, int64_t steps) {
  operand.base += steps * operand.byte_strides[dim];
  return operand;
}
StridedOperand Pinned(StridedOperand operand, int dim) {
  operand.byte_strides[dim] = 0;
  return operand;
}

// Every index value in row-major order, checked against [0, bound).
std::vector<int64_t> LoadIndices(const char* kernel, const TensorArg& index,
                                 int dim, int64_t bound) {
  std::vector<int64_t> values;
  values.reserve(index.num_elements);
  ForEachElement<1>(index.shape(), {Operand(index)}, [&](ElementPointers<1> p) {
    values.push_back(Load<int64_t>(p[0]));
  });
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= bound) {
      Fail(HAL_STATUS_INVALID_ARGUMENT,
           "{}: index {} (element {} of index) is out of range for dim {} of "
           "size {}",
           kernel, values[i], i, dim, bound);
    }
  }
  return values;
}

// A row-major copy of `operand` over `shape`, and the operand reading it.
struct Staged {
  std::vector<char> bytes;
  StridedOperand operand;
};
Staged Stage(const Shape& shape, const StridedOperand& operand,
             int64_t element_size) {
  Staged staged;
  staged.bytes.resize(shape.NumElements() * element_size);
  staged.operand = ContiguousOperand(staged.bytes.data(), shape, element_size);
  ForEachElement<2>(shape, {staged.operand, operand},
                    [element_size](ElementPointers<2> p) {
                      std::memcpy(p[0], p[1], element_size);
                    });
  return staged;
}

// `out` over `shape` filled by `produce(destination)`, which writes to a
// staging buffer first when `out` overlaps an input.
template <typename Produce>
void WriteThroughStaging(const TensorArg& out, bool overlaps,
                         const Shape& shape, const StridedOperand& out_operand,
                         Produce produce) {
  if (!overlaps) {
    produce(out_operand);
    return;
  }
  std::vector<char> bytes(shape.NumElements() * out.element_size);
  const StridedOperand staging =
      ContiguousOperand(bytes.data(), shape, out.element_size);
  produce(staging);
  const int64_t element_size = out.element_size;
  ForEachElement<2>(shape, {out_operand, staging},
                    [element_size](ElementPointers<2> p) {
                      std::memcpy(p[0], p[1], element_size);
                    });
}

// --- index_select(out, in, dim, index) -------------------------------------

void RunIndexSelect(const IndexSelectPlan& plan) {
  const View out = ViewOf(plan.out);
  const View in = ViewOf(plan.in);
  const int dim = plan.dim;
  const std::vector<int64_t> indices = LoadIndices(
      HAL_KERNEL_INDEX_SELECT, plan.index, dim, in.shape.sizes[dim]);
  const Shape slice = WithSize(out.shape, dim, 1);
  const int64_t element_size = plan.out.element_size;
  WriteThroughStaging(plan.out, plan.out.Overlaps(plan.in), out.shape,
                      out.operand, [&](const StridedOperand& destination) {
                        for (size_t j = 0; j < indices.size(); ++j) {
                          ForEachElement<2>(
                              slice,
                              {Advance(destination, dim, j),
                               Advance(in.operand, dim, indices[j])},
                              [element_size](ElementPointers<2> p) {
                                std::memcpy(p[0], p[1], element_size);
                              });
                        }
                      });
}

Stream::Operation PrepareIndexSelect(const Device& device, const hal_arg* args,
                                     uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_INDEX_SELECT, device, args, num_args, 4);
  const IndexSelectPlan plan = CheckIndexSelect(check);
  return [plan] { RunIndexSelect(plan); };
}

// --- Accumulation shared by index_add and scatter_add -----------------------

// destination += alpha * source, rounded to T; integers wrap.
template <typename T>
struct AddScaled {
  explicit AddScaled(const ScalarArg& alpha) {
    if constexpr (kIsFloating<T>) {
      scale = alpha.As<ComputeType<T>>();
    } else {
      scale = static_cast<uint64_t>(alpha.As<int64_t>());
    }
  }
  void operator()(char* destination, const char* source) const {
    const T a = Load<T>(destination);
    const T b = Load<T>(source);
    if constexpr (kIsFloating<T>) {
      Store(destination, ConvertTo<T>(Widen(a) + scale * Widen(b)));
    } else {
      Store(destination, ConvertTo<T>(static_cast<uint64_t>(a) +
                                      scale * static_cast<uint64_t>(b)));
    }
  }
  std::conditional_t<kIsFloating<T>, ComputeType<T>, uint64_t> scale;
};

// --- index_add(self, dim, index, source, alpha) -----------------------------

template <typename T>
void RunIndexAdd(const IndexAddPlan& plan) {
  const View self = ViewOf(plan.self);
  View source = ViewOf(plan.source);
  const int dim = plan.dim;
  const std::vector<int64_t> indices =
      LoadIndices(HAL_KERNEL_INDEX_ADD, plan.index, dim, self.shape.sizes[dim]);
  Staged staged;
  if (plan.source.Overlaps(plan.self)) {
    staged = Stage(source.shape, source.operand, plan.source.element_size);
    source.operand = staged.operand;
  }
  const AddScaled<T> add(plan.alpha);
  const Shape slice = WithSize(source.shape, dim, 1);
  for (size_t j = 0; j < indices.size(); ++j) {
    ForEachElement<2>(slice,
                      {Advance(self.operand, dim, indices[j]),
                       Advance(source.operand, dim, j)},
                      [&add](ElementPointers<2> p) { add(p[0], p[1]); });
  }
}

Stream::Operation PrepareIndexAdd(const Device& device, const hal_arg* args,
                                  uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_INDEX_ADD, device, args, num_args, 5);
  const IndexAddPlan plan = CheckIndexAdd(check);
  return [plan] {
    VisitDtype(plan.self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, Bool8>) {
        RunIndexAdd<T>(plan);
      }
    });
  };
}

// --- gather(out, in, dim, index) ---------------------------------------------

void RunGather(const GatherPlan& plan) {
  const View out = ViewOf(plan.out);
  const View in = ViewOf(plan.in);
  const int dim = plan.dim;
  const std::vector<int64_t> indices =
      LoadIndices(HAL_KERNEL_GATHER, plan.index, dim, in.shape.sizes[dim]);
  const int64_t element_size = plan.out.element_size;
  const int64_t step = in.operand.byte_strides[dim];
  WriteThroughStaging(plan.out, plan.out.Overlaps(plan.in), out.shape,
                      out.operand, [&](const StridedOperand& destination) {
                        size_t next = 0;
                        ForEachElement<2>(
                            out.shape, {destination, Pinned(in.operand, dim)},
                            [&](ElementPointers<2> p) {
                              std::memcpy(p[0], p[1] + indices[next++] * step,
                                          element_size);
                            });
                      });
}

Stream::Operation PrepareGather(const Device& device, const hal_arg* args,
                                uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_GATHER, device, args, num_args, 4);
  const GatherPlan plan = CheckGather(check);
  return [plan] { RunGather(plan); };
}

// --- scatter(self, dim, index, src) and scatter_add(self, dim, index, src) --

// Calls write(destination, source) for each element of index in row-major
// order; source is the matching src element (or the scalar, converted).
template <typename T, typename Write>
void RunScatter(const char* kernel, const ScatterPlan& plan, Write write) {
  const View self = ViewOf(plan.self);
  const View index = ViewOf(plan.index);
  const int dim = plan.dim;
  const std::vector<int64_t> indices =
      LoadIndices(kernel, plan.index, dim, self.shape.sizes[dim]);
  StridedOperand source;
  Staged staged;
  T scalar{};
  if (const TensorArg* src = std::get_if<TensorArg>(&plan.src)) {
    source = ViewOf(*src).operand;
    if (src->Overlaps(plan.self)) {
      staged = Stage(index.shape, source, src->element_size);
      source = staged.operand;
    }
  } else {
    scalar = std::get<ScalarArg>(plan.src).As<T>();
    source.base = reinterpret_cast<char*>(&scalar);  // strides stay 0
  }
  const int64_t step = self.operand.byte_strides[dim];
  size_t next = 0;
  ForEachElement<2>(index.shape, {Pinned(self.operand, dim), source},
                    [&](ElementPointers<2> p) {
                      write(p[0] + indices[next++] * step, p[1]);
                    });
}

Stream::Operation PrepareScatter(const Device& device, const hal_arg* args,
                                 uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SCATTER, device, args, num_args, 4);
  const ScatterPlan plan = CheckScatter(check);
  return [plan] {
    VisitDtype(plan.self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      RunScatter<T>(HAL_KERNEL_SCATTER, plan,
                    [](char* destination, const char* source) {
                      std::memcpy(destination, source, sizeof(T));
                    });
    });
  };
}

Stream::Operation PrepareScatterAdd(const Device& device, const hal_arg* args,
                                    uint32_t num_args) {
  ArgChecker check(HAL_KERNEL_SCATTER_ADD, device, args, num_args, 4);
  const ScatterPlan plan = CheckScatterAdd(check);
  return [plan] {
    VisitDtype(plan.self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, Bool8>) {
        const AddScaled<T> add(ScalarArg{true, 1, 0});
        RunScatter<T>(HAL_KERNEL_SCATTER_ADD, plan,
                      [&add](char* destination, const char* source) {
                        add(destination, source);
                      });
      }
    });
  };
}

const KernelDef kIndexSelectKernel{HAL_KERNEL_INDEX_SELECT, PrepareIndexSelect};
const KernelDef kIndexAddKernel{HAL_KERNEL_INDEX_ADD, PrepareIndexAdd};
const KernelDef kGatherKernel{HAL_KERNEL_GATHER, PrepareGather};
const KernelDef kScatterKernel{HAL_KERNEL_SCATTER, PrepareScatter};
const KernelDef kScatterAddKernel{HAL_KERNEL_SCATTER_ADD, PrepareScatterAdd};

}  // namespace

KernelList IndexingKernels() {
  static const KernelDef* const kKernels[] = {
      &kIndexSelectKernel, &kIndexAddKernel, &kGatherKernel, &kScatterKernel,
      &kScatterAddKernel};
  return kKernels;
}

}  // namespace cpu_ref
