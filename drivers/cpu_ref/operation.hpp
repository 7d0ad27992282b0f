// One unit of stream work: a type-erased `void()` callable stored in place.
//
// A kernel's prepare step captures its launch state (tensor descriptors,
// scalars) in a lambda and hands it to the stream as an Operation; the
// stream moves it into a slot of its ring, and the worker runs and destroys
// it there. The callable lives inside the Operation rather than on the heap
// because the two ends are different threads: a heap block allocated by the
// launching thread and freed by the worker makes both contend for malloc's
// arena lock on every launch (measured: the largest source of futex calls in
// a training step). A callable larger than kInlineBytes, or over-aligned,
// still works, through one heap block.
//
// Ownership: an Operation owns its callable; moving transfers it, reset()
// destroys it. Not copyable.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace cpu_ref {

class Operation {
 public:
  // Enough for every standard kernel's captures (a few tensor descriptors
  // and scalars); the slot size of a stream's ring follows from it.
  static constexpr size_t kInlineBytes = 1024 - sizeof(void*);

  Operation() = default;
  template <typename F, typename = std::enable_if_t<
                            !std::is_same_v<std::decay_t<F>, Operation>>>
  Operation(
      F&& callable) {  // NOLINT(google-explicit-constructor): lambdas convert
    using Callable = std::decay_t<F>;
    if constexpr (kFitsInline<Callable>) {
      new (storage_) Callable(std::forward<F>(callable));
      vtable_ = &kInlineVtable<Callable>;
    } else {
      new (storage_) Callable*(new Callable(std::forward<F>(callable)));
      vtable_ = &kHeapVtable<Callable>;
    }
  }
  Operation(Operation&& other) noexcept { take_from(other); }
  Operation& operator=(Operation&& other) noexcept {
    if (this != &other) {
      reset();
      take_from(other);
    }
    return *this;
  }
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
  ~Operation() { reset(); }

  // Runs the callable; what it throws propagates.
  void operator()() { vtable_->invoke(storage_); }
  // Destroys the callable (and with it its captures); empty afterwards.
  void reset() {
    if (vtable_ != nullptr) {
      vtable_->destroy(storage_);
      vtable_ = nullptr;
    }
  }

 private:
  struct Vtable {
    void (*invoke)(void* storage);
    // Move-constructs into `to` and destroys what `from` held.
    void (*relocate)(void* to, void* from);
    void (*destroy)(void* storage);
  };

  template <typename C>
  static constexpr bool kFitsInline = sizeof(C) <= kInlineBytes &&
                                      alignof(C) <= alignof(std::max_align_t) &&
                                      std::is_nothrow_move_constructible_v<C>;

  template <typename C>
  static constexpr Vtable kInlineVtable = {
      [](void* storage) { (*std::launder(static_cast<C*>(storage)))(); },
      [](void* to, void* from) {
        C* source = std::launder(static_cast<C*>(from));
        new (to) C(std::move(*source));
        source->~C();
      },
      [](void* storage) { std::launder(static_cast<C*>(storage))->~C(); }};

  template <typename C>
  static constexpr Vtable kHeapVtable = {
      [](void* storage) { (**std::launder(static_cast<C**>(storage)))(); },
      [](void* to, void* from) {
        new (to) C*(*std::launder(static_cast<C**>(from)));
      },
      [](void* storage) { delete *std::launder(static_cast<C**>(storage)); }};

  void take_from(Operation& other) noexcept {
    if (other.vtable_ != nullptr) {
      other.vtable_->relocate(storage_, other.storage_);
      vtable_ = other.vtable_;
      other.vtable_ = nullptr;
    }
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Vtable* vtable_ = nullptr;
};

}  // namespace cpu_ref
