// Unit tests of the bridge pieces that need no plugin: the address map, the
// compile-cache key (a LaunchSignature from lowering's describe_launch) and
// the cache's bound, the hand-written CompileOptionsProto, the launch checks,
// the data checks of the programs (which launches read a status back, and
// its message), and what a wait that times out leaves behind: the bridge
// stops waiting, but the device may still use that work's host memory. A
// PJRT table here stands in for a plugin whose events become ready only
// when the test says so; those waits run with HAL_PJRT_TIMEOUT_S=0.05.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "address_map.hpp"
#include "client.hpp"
#include "kit/error.hpp"
#include "launch_checks.hpp"
#include "lowering/lowering.hpp"
#include "plugin.hpp"
#include "program_cache.hpp"
#include "stream.hpp"

namespace pjrt_bridge {
namespace {

// A buffer that is only an identity (never handed to a plugin).
BufferPtr fake_buffer(int tag) {
  static std::vector<int> storage(16);
  return BufferPtr(reinterpret_cast<c::Buffer*>(&storage.at(tag)),
                   [](c::Buffer*) {});
}

hal_status_code code_of(auto&& call) {
  try {
    call();
  } catch (const driver_kit::Error& error) {
    return error.code;
  }
  return HAL_STATUS_OK;
}

TEST(AddressMap, AllocationsAreAlignedDisjointAndNeverReused) {
  AddressMap map;
  const hal_devptr a = map.insert(100, 0);
  const hal_devptr b = map.insert(1, 4096);
  EXPECT_NE(a, HAL_DEVPTR_NULL);
  EXPECT_EQ(a % AddressMap::kGranule, 0u);
  EXPECT_EQ(b % 4096, 0u);
  EXPECT_GE(b, a + 100);
  map.erase(a);
  const hal_devptr c = map.insert(100, 0);
  EXPECT_NE(c, a) << "a freed address must not name a new allocation";
  EXPECT_EQ(map.size(), 2u);
  EXPECT_EQ(map.live_bytes(), 101u);
}

TEST(AddressMap, FindsRangesInsideOneAllocationOnly) {
  AddressMap map;
  const hal_devptr a = map.insert(100, 0);
  const hal_devptr b = map.insert(50, 0);
  const Placement inside = map.find(a + 10, 90, "test");
  EXPECT_EQ(inside.start, a);
  EXPECT_EQ(inside.offset, 10u);
  EXPECT_EQ(inside.allocation_bytes, 100u);
  EXPECT_EQ(map.find(b + 49, 0, "test").start, b);
  EXPECT_TRUE(map.contains(a, 100));
  EXPECT_FALSE(map.contains(a + 10, 91)) << "runs past the end";
  EXPECT_FALSE(map.contains(a + 100, 0)) << "one past the end";
  EXPECT_FALSE(map.contains(a - 1, 1)) << "before the start";
  EXPECT_FALSE(map.contains(b + 50, 1));
  EXPECT_EQ(code_of([&] { map.find(a + 100, 1, "test"); }),
            HAL_STATUS_INVALID_ARGUMENT);
  map.erase(b);
  EXPECT_FALSE(map.contains(b, 1)) << "freed";
}

TEST(AddressMap, EraseNeedsAStartAddress) {
  AddressMap map;
  const hal_devptr a = map.insert(100, 0);
  EXPECT_EQ(code_of([&] { map.erase(a + 1); }), HAL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { map.erase(a); }), HAL_STATUS_OK);
  EXPECT_EQ(code_of([&] { map.erase(a); }), HAL_STATUS_INVALID_ARGUMENT);
}

TEST(AddressMap, ContentsAreSwappedPerAllocation) {
  AddressMap map;
  const hal_devptr a = map.insert(8, 0);
  const hal_devptr b = map.insert(8, 0);
  EXPECT_EQ(map.contents(a), nullptr) << "never written";
  map.set_contents(a, fake_buffer(1));
  map.set_contents(b, fake_buffer(2));
  map.set_contents(a, fake_buffer(3));
  EXPECT_EQ(map.contents(a).get(), fake_buffer(3).get());
  EXPECT_EQ(map.contents(b).get(), fake_buffer(2).get());
  map.erase(a);
  map.set_contents(a, fake_buffer(4));  // freed meanwhile: ignored
  EXPECT_EQ(code_of([&] { map.contents(a); }), HAL_STATUS_INVALID_ARGUMENT);
}

// The compile-cache key of a launch: everything static about it, nothing
// that changes from launch to launch (where the data lies, scalar values).
class CacheKey : public ::testing::Test {
 protected:
  hal_arg tensor(hal_devptr data, std::vector<int64_t> sizes,
                 std::vector<int64_t> strides,
                 hal_dtype dtype = HAL_DTYPE_F32) {
    hal_arg arg{};
    arg.kind = HAL_ARG_TENSOR;
    arg.value.tensor.data = data;
    arg.value.tensor.dtype = dtype;
    arg.value.tensor.rank = static_cast<int32_t>(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) {
      arg.value.tensor.sizes[d] = sizes[d];
      arg.value.tensor.strides[d] = strides[d];
    }
    return arg;
  }
  static hal_arg scalar(double value) {
    hal_arg arg{};
    arg.kind = HAL_ARG_F64;
    arg.value.f64 = value;
    return arg;
  }
  LaunchDescription describe(const std::vector<hal_arg>& args) {
    return describe_launch("add", args, [&](hal_devptr address) {
      const Placement p = map_.find(address, 0, "tensor");
      return Location{p.start, p.allocation_bytes, p.offset};
    });
  }

  AddressMap map_;
  hal_devptr x_ = map_.insert(4096, 0);
  hal_devptr y_ = map_.insert(4096, 0);
};

TEST_F(CacheKey, SameShapesElsewhereShareTheKey) {
  const auto first =
      describe({tensor(x_, {4, 8}, {8, 1}), tensor(x_ + 512, {4, 8}, {8, 1}),
                tensor(y_, {4, 8}, {8, 1}), scalar(1.0)});
  // The same sharing (out and a in one allocation, b in another), other
  // allocations and offsets, another alpha.
  const auto second =
      describe({tensor(y_ + 64, {4, 8}, {8, 1}), tensor(y_ + 4, {4, 8}, {8, 1}),
                tensor(x_, {4, 8}, {8, 1}), scalar(-3.5)});
  EXPECT_EQ(first.signature, second.signature);
  EXPECT_EQ(LaunchSignatureHash{}(first.signature),
            LaunchSignatureHash{}(second.signature));
  EXPECT_NE(first.offsets, second.offsets) << "offsets are runtime values";
}

TEST_F(CacheKey, StridesDtypesAndAliasingChangeTheKey) {
  const auto base =
      describe({tensor(x_, {4, 8}, {8, 1}), tensor(y_, {4, 8}, {8, 1}),
                tensor(y_, {4, 8}, {8, 1}), scalar(1.0)});
  const auto transposed =
      describe({tensor(x_, {4, 8}, {8, 1}), tensor(y_, {4, 8}, {1, 4}),
                tensor(y_, {4, 8}, {8, 1}), scalar(1.0)});
  const auto other_dtype =
      describe({tensor(x_, {4, 8}, {8, 1}, HAL_DTYPE_I32),
                tensor(y_, {4, 8}, {8, 1}, HAL_DTYPE_I32),
                tensor(y_, {4, 8}, {8, 1}, HAL_DTYPE_I32), scalar(1.0)});
  const auto in_place =
      describe({tensor(x_, {4, 8}, {8, 1}), tensor(x_, {4, 8}, {8, 1}),
                tensor(y_, {4, 8}, {8, 1}), scalar(1.0)});
  EXPECT_NE(base.signature, transposed.signature);
  EXPECT_NE(base.signature, other_dtype.signature);
  EXPECT_NE(base.signature, in_place.signature)
      << "which buffers a launch shares decides the program";
}

// A program that is only its number of outputs (never compiled).
std::shared_ptr<const CompiledProgram> fake_program(size_t tag) {
  auto program = std::make_shared<CompiledProgram>();
  program->executable.num_outputs = tag;
  return program;
}

TEST(ProgramCache, DropsTheLeastRecentlyUsedBeyondItsCapacity) {
  ProgramCache<std::string> cache(2);
  const auto a = cache.insert("a", fake_program(1));
  cache.insert("b", fake_program(2));
  ASSERT_EQ(cache.find("a"), a);  // "a" is now the most recently used
  cache.insert("c", fake_program(3));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.evictions(), 1u);
  EXPECT_EQ(cache.find("b"), nullptr) << "b was the least recently used";
  EXPECT_EQ(cache.find("a"), a);
  ASSERT_NE(cache.find("c"), nullptr);
  EXPECT_EQ(cache.find("c")->executable.num_outputs, 3u);
}

TEST(ProgramCache, KeepsTheFirstProgramOfAKeyAndHeldProgramsOutliveIt) {
  ProgramCache<std::string> cache(1);
  const auto first = cache.insert("k", fake_program(1));
  // A second compile of the same key (another thread) gets the first.
  EXPECT_EQ(cache.insert("k", fake_program(2)), first);
  EXPECT_EQ(cache.evictions(), 0u);
  // Dropped from the cache, a program a launch holds stays valid.
  cache.insert("other", fake_program(3));
  EXPECT_EQ(cache.find("k"), nullptr);
  EXPECT_EQ(first->executable.num_outputs, 1u);
  EXPECT_EQ(first.use_count(), 1) << "the cache no longer holds it";
}

TEST(CompileOptions, OneReplicaOnePartition) {
  // CompileOptionsProto{executable_build_options(3): {num_replicas(4): 1,
  // num_partitions(5): 1}}, then compile_portable_executable(4): true.
  const std::string single = single_device_compile_options(false);
  EXPECT_EQ(single, std::string("\x1a\x04\x20\x01\x28\x01", 6));
  EXPECT_EQ(single_device_compile_options(true), single + "\x20\x01");
}

// Every address counts as allocated: the launch-check tests are about shapes.
class AnyMemory final : public driver_kit::DeviceMemory {
 public:
  bool contains(uint64_t, uint64_t) const override { return true; }
  int32_t ordinal() const override { return 0; }
  uint32_t dtypes() const override { return ~0u; }
};

// A contiguous tensor.
hal_arg tensor_at(hal_devptr data, hal_dtype dtype,
                  std::vector<int64_t> sizes) {
  hal_arg arg{};
  arg.kind = HAL_ARG_TENSOR;
  hal_tensor& tensor = arg.value.tensor;
  tensor.data = data;
  tensor.dtype = dtype;
  tensor.rank = static_cast<int32_t>(sizes.size());
  int64_t stride = 1;
  for (int d = tensor.rank - 1; d >= 0; --d) {
    tensor.sizes[d] = sizes[d];
    tensor.strides[d] = stride;
    stride *= sizes[d];
  }
  return arg;
}

hal_arg f32_tensor(std::vector<int64_t> sizes) {
  return tensor_at(0x1000, HAL_DTYPE_F32, std::move(sizes));
}

hal_arg i64_arg(int64_t value) {
  hal_arg arg{};
  arg.kind = HAL_ARG_I64;
  arg.value.i64 = value;
  return arg;
}

hal_status_code validate_code(const char* kernel, std::vector<hal_arg> args) {
  const hal_kernel_signature* signature = hal_find_kernel_signature(kernel);
  if (signature == nullptr) return HAL_STATUS_NOT_FOUND;
  return code_of([&] {
    validate_launch(AnyMemory(), *signature, args.data(),
                    static_cast<uint32_t>(args.size()));
  });
}

// The shape rules of the non-elementwise families reach the bridge: a
// mismatch the lowering would trust is refused before anything is compiled
// (on a GPU, such launches once came back INTERNAL from the compiler).
TEST(LaunchChecks, ShapeRulesOfEachFamilyAreEnforced) {
  constexpr hal_status_code kOk = HAL_STATUS_OK;
  constexpr hal_status_code kInvalid = HAL_STATUS_INVALID_ARGUMENT;
  EXPECT_EQ(kOk,
            validate_code("sum", {f32_tensor({3, 1}), f32_tensor({3, 4})}));
  EXPECT_EQ(kInvalid,
            validate_code("sum", {f32_tensor({2, 1}), f32_tensor({3, 4})}));
  EXPECT_EQ(kInvalid,
            validate_code("amax", {f32_tensor({1, 3}), f32_tensor({0, 3})}))
      << "amax has no identity for an empty reduced dim";
  EXPECT_EQ(kOk, validate_code("softmax", {f32_tensor({3, 4}),
                                           f32_tensor({3, 4}), i64_arg(1)}));
  EXPECT_EQ(kInvalid,
            validate_code("softmax", {f32_tensor({3, 4}), f32_tensor({3, 5}),
                                      i64_arg(1)}));
  EXPECT_EQ(kInvalid,
            validate_code("softmax", {f32_tensor({3, 4}), f32_tensor({3, 4}),
                                      i64_arg(2)}));
  EXPECT_EQ(kOk,
            validate_code("matmul", {f32_tensor({2, 2}), f32_tensor({2, 3}),
                                     f32_tensor({3, 2})}));
  EXPECT_EQ(kInvalid,
            validate_code("matmul", {f32_tensor({2, 2}), f32_tensor({2, 3}),
                                     f32_tensor({4, 2})}));
}

// The program of a launch whose tensors each lie at the start of an
// allocation of their own.
Program lower(const char* kernel, const std::vector<hal_arg>& args) {
  const LaunchDescription launch =
      describe_launch(kernel, args, [](hal_devptr address) {
        return Location{address, 1 << 16, 0};
      });
  return lower_standard_kernel(launch.signature);
}

// What the program's check says of a status: its INVALID_ARGUMENT message,
// or "" when it accepts the status.
std::string reported(const Program& program, int64_t position_plus_one,
                     int64_t value) {
  const int64_t status[kStatusWords] = {position_plus_one, value};
  try {
    program.check_status(status);
  } catch (const driver_kit::Error& error) {
    EXPECT_EQ(error.code, HAL_STATUS_INVALID_ARGUMENT);
    return error.message;
  }
  return "";
}

// Kernels that fail on index values check them in their program: it
// returns the status after its buffers, and the runtime's check words a bad
// one as cpu_ref does. Other launches read nothing back.
TEST(DataChecks, IndexValuesAreCheckedInTheProgram) {
  const Program gather =
      lower("gather", {tensor_at(0x10000, HAL_DTYPE_F32, {2, 3}),
                       tensor_at(0x20000, HAL_DTYPE_F32, {4, 3}), i64_arg(0),
                       tensor_at(0x30000, HAL_DTYPE_I64, {2, 3})});
  ASSERT_TRUE(gather.check_status);
  EXPECT_EQ(gather.result_buffers.size(), 1u);
  EXPECT_NE(gather.mlir.find("tensor<2xi64>"), std::string::npos);
  EXPECT_EQ(reported(gather, 0, 0), "");
  EXPECT_EQ(reported(gather, 5, -7),
            "gather: index -7 (element 4 of index) is out of range for dim 0 "
            "of size 4");

  const Program nll =
      lower("nll_loss", {tensor_at(0x10000, HAL_DTYPE_F32, {}),
                         tensor_at(0x20000, HAL_DTYPE_F32, {}),
                         tensor_at(0x30000, HAL_DTYPE_F32, {3, 5}),
                         tensor_at(0x40000, HAL_DTYPE_I64, {3}), hal_arg{},
                         i64_arg(1), i64_arg(-100)});
  ASSERT_TRUE(nll.check_status);
  EXPECT_EQ(reported(nll, 2, 9),
            "nll_loss: target 9 (sample 1) is out of bounds for 5 classes");

  const Program pool = lower("max_pool2d_backward",
                             {tensor_at(0x10000, HAL_DTYPE_F32, {1, 2, 4, 4}),
                              tensor_at(0x20000, HAL_DTYPE_F32, {1, 2, 2, 2}),
                              tensor_at(0x30000, HAL_DTYPE_I64, {1, 2, 2, 2})});
  ASSERT_TRUE(pool.check_status);
  EXPECT_EQ(reported(pool, 8, 16),
            "max_pool2d_backward: index 16 at position 7 is outside its "
            "plane of 16 elements");

  EXPECT_FALSE(
      lower("gather", {tensor_at(0x10000, HAL_DTYPE_F32, {2, 0}),
                       tensor_at(0x20000, HAL_DTYPE_F32, {4, 3}), i64_arg(1),
                       tensor_at(0x30000, HAL_DTYPE_I64, {2, 0})})
          .check_status)
      << "no index value, nothing to check";
  EXPECT_FALSE(lower("add", {f32_tensor({4}), f32_tensor({4}), f32_tensor({4}),
                             i64_arg(1)})
                   .check_status)
      << "a launch without a data check reads nothing back";
}

// --- waits that time out ----------------------------------------------------

// An event of the stand-in plugin: ready when the test makes it so; its
// ready callbacks run then (or at once, registered on a ready event).
struct StandInEvent {
  bool ready = false;
  bool destroyed = false;
  std::vector<std::pair<c::EventOnReadyCallback, void*>> callbacks;

  c::Event* handle() { return reinterpret_cast<c::Event*>(this); }
  static StandInEvent& of(c::Event* event) {
    return *reinterpret_cast<StandInEvent*>(event);
  }
  void make_ready() {
    ready = true;
    for (const auto& [callback, user_arg] : std::exchange(callbacks, {})) {
      callback(nullptr, user_arg);
    }
  }
};

c::Error* initialize(c::PluginInitializeArgs*) { return nullptr; }

c::Error* is_ready(c::EventIsReadyArgs* args) {
  args->is_ready = StandInEvent::of(args->event).ready;
  return nullptr;
}

c::Error* on_ready(c::EventOnReadyArgs* args) {
  StandInEvent& event = StandInEvent::of(args->event);
  if (event.ready) {
    args->callback(nullptr, args->user_arg);
  } else {
    event.callbacks.emplace_back(args->callback, args->user_arg);
  }
  return nullptr;
}

c::Error* destroy(c::EventDestroyArgs* args) {
  StandInEvent::of(args->event).destroyed = true;
  return nullptr;
}

const c::Api* stand_in_api() {
  static const c::Api api = [] {
    c::Api table{};
    table.struct_size = sizeof(c::Api);
    table.version = {sizeof(c::ApiVersion), nullptr, c::kApiMajor,
                     c::kApiMinor};
    table.Plugin_Initialize = initialize;
    table.Event_IsReady = is_ready;
    table.Event_OnReady = on_ready;
    table.Event_Destroy = destroy;
    return table;
  }();
  return &api;
}

class TimedOutWork : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Plugin::wait_limit reads the variable once per process.
    setenv("HAL_PJRT_TIMEOUT_S", "0.05", 1);
    ASSERT_EQ(Plugin::wait_limit().count(), 50);
  }

  void TearDown() override {
    for (StandInEvent& event : events_) {
      event.make_ready();  // runs the callbacks the waits left registered
    }
    EXPECT_EQ(plugin_->held_until_ready(), 0u);
  }

  StandInEvent& new_event() { return events_.emplace_back(); }

  std::shared_ptr<Plugin> plugin_ =
      Plugin::from_api("stand-in plugin", stand_in_api());
  std::deque<StandInEvent> events_;
};

TEST_F(TimedOutWork, ATransferHoldsItsHostMemoryUntilTheDeviceIsDone) {
  StandInEvent& transfer = new_event();
  auto host = std::make_shared<std::array<int64_t, 4>>();
  const std::weak_ptr<std::array<int64_t, 4>> watch = host;
  EXPECT_EQ(code_of([&] {
              plugin_->await(plugin_->own(transfer.handle()), "transfer",
                             std::move(host));
            }),
            HAL_STATUS_UNAVAILABLE);
  EXPECT_FALSE(watch.expired()) << "freed while the device may write it";
  EXPECT_EQ(plugin_->held_until_ready(), 1u);
  EXPECT_FALSE(transfer.destroyed);

  transfer.make_ready();
  EXPECT_EQ(plugin_->held_until_ready(), 0u);
  EXPECT_TRUE(watch.expired());
  EXPECT_TRUE(transfer.destroyed);
}

// A stream destroyed after its synchronize timed out (stream_destroy waits,
// and gives up the same way): the status buffer its check reads and what
// the work keeps alive outlive the stream until the work is done.
TEST_F(TimedOutWork, AStreamDestroyedMeanwhileHandsItsWorkOn) {
  StandInEvent& launch = new_event();
  StandInEvent& finished = new_event();
  finished.make_ready();
  auto status = std::make_shared<std::array<int64_t, 4>>();
  auto program = std::make_shared<int>(1);
  const std::weak_ptr<std::array<int64_t, 4>> watch_status = status;
  const std::weak_ptr<int> watch_program = program;
  bool checked = false;
  {
    Completion completion(*plugin_);
    completion.add(plugin_->own(finished.handle()));
    completion.add(
        plugin_->own(launch.handle()), [status, &checked] { checked = true; },
        std::move(program));
    status.reset();
    EXPECT_EQ(code_of([&] { completion.wait("synchronize"); }),
              HAL_STATUS_UNAVAILABLE);
    EXPECT_FALSE(completion.idle());
  }
  EXPECT_FALSE(watch_status.expired());
  EXPECT_FALSE(watch_program.expired());
  EXPECT_TRUE(finished.destroyed) << "ready work is not held";

  launch.make_ready();
  EXPECT_EQ(plugin_->held_until_ready(), 0u);
  EXPECT_TRUE(watch_status.expired());
  EXPECT_TRUE(watch_program.expired());
  EXPECT_FALSE(checked) << "a destroyed stream reports nothing";
}

}  // namespace
}  // namespace pjrt_bridge
