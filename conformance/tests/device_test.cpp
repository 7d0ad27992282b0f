// Device area: the driver's identity, its devices' properties and memory
// figures are present, consistent and stable.
#include <bit>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace conformance {
namespace {

TEST(Device, DriverIdentity) {
  const auto& info = runtime().driver();
  EXPECT_FALSE(info.name.empty());
  EXPECT_FALSE(info.version.empty());
  EXPECT_FALSE(info.path.empty());
  EXPECT_EQ(info.abi_major, static_cast<uint32_t>(HAL_ABI_MAJOR));
  EXPECT_GE(runtime().device_count(), 1);
}

TEST(Device, ApiTableIsVersionedAndComplete) {
  const hal_driver_api& api = device().api();
  EXPECT_EQ(api.abi_major, static_cast<uint32_t>(HAL_ABI_MAJOR));
  // Version 1.0 is the first table: a v1 driver covers all of it.
  EXPECT_GE(api.struct_size, sizeof(hal_driver_api));
  EXPECT_STREQ(api.name, runtime().driver().name.c_str());
  int32_t count = 0;
  EXPECT_STATUS(hal::StatusCode::kOk, api.device_count(&count));
  EXPECT_EQ(count, runtime().device_count());
}

TEST(Device, PropertiesAreSane) {
  const auto& props = properties();
  EXPECT_FALSE(props.name.empty());
  EXPECT_FALSE(props.vendor.empty());
  EXPECT_FALSE(props.driver_version.empty());
  EXPECT_GT(props.total_memory, 0u);
  EXPECT_GT(props.max_allocation_size, 0u);
  EXPECT_GE(props.compute_units, 1u);
  EXPECT_EQ(props.dtypes & HAL_DTYPES_REQUIRED,
            static_cast<uint32_t>(HAL_DTYPES_REQUIRED))
      << "f32, i64, i32 and bool are required";
  EXPECT_EQ(props.dtypes >> HAL_DTYPE_COUNT, 0u)
      << "bits of unknown dtypes set";
  EXPECT_GE(props.kernel_set_version,
            static_cast<uint32_t>(HAL_KERNEL_SET_VERSION));
  EXPECT_GE(props.min_alignment, 1u);
  EXPECT_TRUE(std::has_single_bit(props.min_alignment))
      << "min_alignment " << props.min_alignment << " is not a power of two";
  EXPECT_LE(props.stream_priority_high, props.stream_priority_low);
  EXPECT_LE(props.stream_priority_high, 0);
  EXPECT_GE(props.stream_priority_low, 0);
}

TEST(Device, HandleAndPropertiesAreStable) {
  const hal::Device again = runtime().device(device().ordinal());
  EXPECT_EQ(again, device());
  EXPECT_EQ(again.properties().name, properties().name);
  EXPECT_EQ(again.properties().total_memory, properties().total_memory);
  EXPECT_EQ(again.properties().capabilities, properties().capabilities);
}

TEST(Device, EveryOrdinalOpens) {
  for (int ordinal = 0; ordinal < runtime().device_count(); ++ordinal) {
    const hal::Device other = runtime().device(ordinal);
    EXPECT_EQ(other.ordinal(), ordinal);
    EXPECT_FALSE(other.properties().name.empty());
  }
}

TEST(Device, OrdinalOutOfRangeIsInvalidArgument) {
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument,
                   runtime().device(runtime().device_count()));
  EXPECT_HAL_ERROR(hal::StatusCode::kInvalidArgument, runtime().device(-1));
}

TEST(Device, MemoryInfoIsConsistent) {
  const hal::MemoryInfo info = device().memory_info();
  EXPECT_GT(info.total, 0u);
  EXPECT_LE(info.free, info.total);
  EXPECT_EQ(info.total, properties().total_memory);
}

// A caller that knows only the first fields of the properties struct (an
// older core) must get exactly those: nothing is written past struct_size.
TEST(Device, PropertiesRespectCallerStructSize) {
  hal_device_properties props;
  std::memset(&props, 0xAB, sizeof(props));
  props.struct_size = offsetof(hal_device_properties, driver_version);
  EXPECT_STATUS(hal::StatusCode::kOk,
                device().api().device_properties(device().handle(), &props));
  EXPECT_EQ(std::string(props.name), properties().name);
  const auto* tail = reinterpret_cast<const unsigned char*>(&props) +
                     offsetof(hal_device_properties, driver_version);
  for (size_t i = 0;
       i < sizeof(props) - offsetof(hal_device_properties, driver_version);
       ++i) {
    ASSERT_EQ(tail[i], 0xAB) << "byte " << i << " past struct_size written";
  }
}

// Every kernel of the generated table (hal/standard_kernels.h).
TEST(Device, StandardKernelSetIsComplete) {
  const hal_kernel_signature* signatures = hal_standard_kernel_signatures();
  for (uint32_t i = 0; i < HAL_STANDARD_KERNEL_COUNT; ++i) {
    const char* name = signatures[i].name;
    EXPECT_HAL_ERROR(hal::StatusCode::kOk, device().kernel(name));
    // Looking a kernel up again finds the same kernel.
    if (!HasFailure()) {
      EXPECT_EQ(device().kernel(name).handle(), device().kernel(name).handle())
          << name;
    }
  }
}

// Devices of one driver are independent: each has its own default stream
// and memory, and work on one does not show on the other.
TEST(Device, MultiDeviceWorkIsIndependent) {
  HAL_REQUIRE_DEVICES(2);
  const hal::Device other =
      runtime().device((device().ordinal() + 1) % runtime().device_count());
  EXPECT_NE(other, device());
  EXPECT_NE(other.default_stream(), device().default_stream());
  const hal::Buffer here = device().allocate(64);
  const hal::Buffer there = other.allocate(64);
  const uint8_t one = 1, two = 2;
  device().default_stream().fill(here.ptr(), &one, 1, 64);
  other.default_stream().fill(there.ptr(), &two, 1, 64);
  std::vector<uint8_t> back(64);
  device().default_stream().copy_to_host(back.data(), here.ptr(), 64);
  EXPECT_EQ(back, std::vector<uint8_t>(64, 1));
  other.default_stream().copy_to_host(back.data(), there.ptr(), 64);
  EXPECT_EQ(back, std::vector<uint8_t>(64, 2));
}

}  // namespace
}  // namespace conformance
