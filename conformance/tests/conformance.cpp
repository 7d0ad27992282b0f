// The shared pieces declared in conformance.hpp: the device under test,
// status checks and host data helpers.
#include "conformance.hpp"

#include <random>
#include <utility>

namespace conformance {
namespace {

std::optional<hal::Runtime> g_runtime;
std::optional<hal::Device> g_device;

}  // namespace

// --- The device under test ------------------------------------------------

void set_device_under_test(hal::Runtime runtime, int ordinal) {
  g_device.emplace(runtime.device(ordinal));
  g_runtime.emplace(std::move(runtime));
}

const hal::Runtime& runtime() { return g_runtime.value(); }
const hal::Device& device() { return g_device.value(); }
const hal::DeviceProperties& properties() { return device().properties(); }
std::string fixture_dir() { return HAL_CONFORMANCE_FIXTURE_DIR; }

// --- Status checks ----------------------------------------------------------

std::optional<hal::Error> error_of(const std::function<void()>& statement) {
  try {
    statement();
  } catch (const hal::Error& error) {
    return error;
  }
  return std::nullopt;
}

std::string code_name(const std::optional<hal::Error>& error) {
  return error ? hal::to_string(error->code()) : "OK";
}

std::string describe(const std::optional<hal::Error>& error) {
  return error ? error->what() : std::string("returned normally");
}

void launch(const hal::Stream& stream, std::string_view name,
            std::vector<hal_arg> args) {
  stream.launch(stream.device().kernel(name), args);
}

// --- Host data --------------------------------------------------------------

std::vector<hal_dtype> all_dtypes() {
  std::vector<hal_dtype> dtypes;
  dtypes.reserve(HAL_DTYPE_COUNT);
  for (int d = 0; d < HAL_DTYPE_COUNT; ++d) {
    dtypes.push_back(static_cast<hal_dtype>(d));
  }
  return dtypes;
}

std::string dtype_param_name(const ::testing::TestParamInfo<hal_dtype>& info) {
  return hal::dtype_name(info.param);
}

std::vector<uint8_t> byte_pattern(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(size);
  for (auto& byte : bytes) byte = static_cast<uint8_t>(rng());
  return bytes;
}

}  // namespace conformance
