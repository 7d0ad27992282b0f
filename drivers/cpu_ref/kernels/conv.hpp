// The conv family (conv2d and its gradients, max_pool2d, batch_norm): the
// prepare functions pool.cpp and batch_norm.cpp define for conv_kernels()
// (conv.cpp), which registers the family through the kit's list, and the
// dense staging every one of them uses.
//
// These kernels read their inputs whole into dense row-major buffers
// (converted from any dtype and strides: to the accumulate type for the
// convolutions, to double for pooling and batch norm) before computing,
// and store results only at the end, so an output may overlap an input in
// any way and every result is computed in a fixed order. Their argument
// checks are the kit's (kit/conv_checks.hpp), shared with the other
// drivers.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "common.hpp"
#include "kernels/args.hpp"
#include "kernels/kernel.hpp"
#include "kit/conv_checks.hpp"

namespace cpu_ref {

// The family's kernels that live outside conv.cpp (pool.cpp,
// batch_norm.cpp), for conv_kernels().
Stream::Operation prepare_max_pool2d(const Device& device, const hal_arg* args,
                                     uint32_t num_args);
Stream::Operation prepare_max_pool2d_backward(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args);
Stream::Operation prepare_batch_norm(const Device& device, const hal_arg* args,
                                     uint32_t num_args);
Stream::Operation prepare_batch_norm_backward(const Device& device,
                                              const hal_arg* args,
                                              uint32_t num_args);

// `tensor`'s elements in row-major order, converted to V (double or the
// accumulate type). A dense tensor (the usual case) is read by index, which
// vectorizes; the values are the same.
template <typename V = double>
std::vector<V> read_dense(const TensorArg& tensor) {
  std::vector<V> values;
  visit_dtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const StridedOperand operand = strided_operand(tensor);
    const Shape shape = tensor.shape();
    if (is_dense(operand, shape, sizeof(T))) {
      values.resize(static_cast<size_t>(tensor.num_elements));
      const char* base = operand.base;
      for (int64_t i = 0; i < tensor.num_elements; ++i) {
        values[i] = static_cast<V>(
            widen(load<T>(base + i * static_cast<int64_t>(sizeof(T)))));
      }
      return;
    }
    values.reserve(static_cast<size_t>(tensor.num_elements));
    for_each_element<1>(shape, {operand}, [&](ElementPointers<1> p) {
      values.push_back(static_cast<V>(widen(load<T>(p[0]))));
    });
  });
  return values;
}

// Stores `values` (row-major) into `tensor`, rounding once to its dtype.
template <typename V>
void write_dense(const TensorArg& tensor, const std::vector<V>& values) {
  visit_dtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const StridedOperand operand = strided_operand(tensor);
    const Shape shape = tensor.shape();
    if (is_dense(operand, shape, sizeof(T))) {
      char* const base = operand.base;
      const V* source = values.data();
      for (int64_t i = 0; i < tensor.num_elements; ++i) {
        store(base + i * static_cast<int64_t>(sizeof(T)),
              convert_to<T>(source[i]));
      }
      return;
    }
    size_t next = 0;
    for_each_element<1>(shape, {operand}, [&](ElementPointers<1> p) {
      store(p[0], convert_to<T>(values[next++]));
    });
  });
}

// `tensor`'s elements as a dense row-major array of V: the tensor's own
// memory when it already is one (dense, of dtype V), else a converted copy
// (read_dense). In place is safe wherever the kernel's outputs are staged
// or overlap no input (DenseOutput).
template <typename V>
class DenseInput {
 public:
  explicit DenseInput(const TensorArg& tensor) {
    if (tensor.dtype() == kDtypeOf<V> &&
        is_dense(strided_operand(tensor), tensor.shape(), sizeof(V))) {
      data_ = reinterpret_cast<const V*>(tensor.tensor.data);
    } else {
      copy_ = read_dense<V>(tensor);
      data_ = copy_.data();
    }
  }
  const V* data() const { return data_; }

 private:
  std::vector<V> copy_;
  const V* data_ = nullptr;
};

// Where a kernel computes `tensor`'s results, a zero-filled dense
// row-major array of V: the tensor's own memory when it is dense, of dtype
// V and overlaps none of `inputs` (nullptr entries are skipped), else a
// buffer that finish() stores, rounding once to the tensor's dtype, after
// the kernel has read everything.
template <typename V>
class DenseOutput {
 public:
  DenseOutput(const TensorArg& tensor,
              std::initializer_list<const TensorArg*> inputs)
      : tensor_(tensor) {
    const auto count = static_cast<size_t>(tensor.num_elements);
    bool direct = tensor.dtype() == kDtypeOf<V> &&
                  is_dense(strided_operand(tensor), tensor.shape(), sizeof(V));
    for (const TensorArg* input : inputs) {
      direct = direct && (input == nullptr || !tensor.overlaps(*input));
    }
    if (direct) {
      data_ = reinterpret_cast<V*>(tensor.tensor.data);
      std::fill_n(data_, count, V{0});
    } else {
      buffer_.resize(count);
      data_ = buffer_.data();
    }
    staged_ = !direct;
  }
  V* data() { return data_; }
  void finish() {
    if (staged_) {
      write_dense(tensor_, buffer_);
    }
  }

 private:
  const TensorArg& tensor_;
  std::vector<V> buffer_;
  V* data_ = nullptr;
  bool staged_ = false;
};

}  // namespace cpu_ref
