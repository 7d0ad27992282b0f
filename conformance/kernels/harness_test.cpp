// The generated kernel tests: for every kernel × dtype of the table, its
// cases against its host reference (KernelNumerics), UNSUPPORTED for the
// dtypes it does not define (KernelDtypes), and the malformed calls every
// kernel must refuse with INVALID_ARGUMENT (KernelMalformed).
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "kernels/harness.hpp"

namespace conformance::kernels {
namespace {

struct KernelDtype {
  const KernelSpec* spec;
  hal_dtype dtype;
};

std::vector<KernelDtype> kernel_dtypes(bool defined) {
  std::vector<KernelDtype> pairs;
  for (const KernelSpec& spec : kernel_table()) {
    for (hal_dtype dtype : all_dtypes()) {
      if (spec.defines(dtype) == defined) pairs.push_back({&spec, dtype});
    }
  }
  return pairs;
}

void PrintTo(const KernelDtype& pair, std::ostream* out) {
  *out << pair.spec->name << " " << hal::dtype_name(pair.dtype);
}

std::string pair_name(const ::testing::TestParamInfo<KernelDtype>& info) {
  return std::string(info.param.spec->name) + "_" +
         hal::dtype_name(info.param.dtype);
}

// The kernel's test, or nullptr after failing the current test.
const KernelTest* registered(const KernelSpec& spec) {
  const KernelTest* test = find_kernel_test(spec.name);
  if (test == nullptr) {
    ADD_FAILURE() << "kernel " << spec.name
                  << " has no host reference registered "
                     "(conformance/kernels/README.md)";
  }
  return test;
}

std::vector<Case> cases_of(const KernelSpec& spec, const KernelTest& test,
                           hal_dtype dtype) {
  CaseContext context(spec, dtype);
  return test.cases ? test.cases(context) : elementwise_cases(context);
}

// The first dtype the kernel defines that the device has; the malformed-call
// and unsupported-dtype tests start from its first case.
std::optional<hal_dtype> base_dtype(const KernelSpec& spec) {
  for (uint32_t mask : {spec.required_dtypes, spec.optional_dtypes}) {
    for (hal_dtype dtype : all_dtypes()) {
      if ((mask & HAL_DTYPE_BIT(dtype)) && properties().supports(dtype)) {
        return dtype;
      }
    }
  }
  return std::nullopt;
}

class KernelNumerics : public ::testing::TestWithParam<KernelDtype> {};

TEST_P(KernelNumerics, Matches) {
  const auto [spec, dtype] = GetParam();
  HAL_REQUIRE_DTYPE(dtype);
  const KernelTest* test = registered(*spec);
  if (test == nullptr) return;
  const std::vector<Case> cases = cases_of(*spec, *test, dtype);
  ASSERT_FALSE(cases.empty()) << "the generator made no case";
  for (const Case& c : cases) run_case(*spec, *test, c);
}

INSTANTIATE_TEST_SUITE_P(, KernelNumerics,
                         ::testing::ValuesIn(kernel_dtypes(true)), pair_name);

// Launches that must be refused.
class Refusals {
 public:
  explicit Refusals(const KernelSpec& spec)
      : spec_(spec), kernel_(device().kernel(spec.name)) {}

  void expect(hal::StatusCode code, const std::vector<hal_arg>& args,
              const std::string& what) {
    SCOPED_TRACE(std::string(spec_.name) + ": " + what);
    EXPECT_HAL_ERROR(code, stream_.launch(kernel_, args));
  }

 private:
  const KernelSpec& spec_;
  hal::Kernel kernel_;
  hal::Stream stream_ = device().create_stream();
};

// The first case of the base dtype, with every primary-dtype tensor
// replaced by one of `dtype`.
Case retyped_base_case(const KernelSpec& spec, const KernelTest& test,
                       hal_dtype from, hal_dtype to) {
  Case c = cases_of(spec, test, from).front();
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (!c.args[i].is_tensor() || !spec.args[i].has_primary_dtype()) continue;
    HostTensor retyped(to, c.args[i].t().layout());
    retyped.fill_random(static_cast<uint32_t>(i) + 1);
    c.args[i] = Arg::of(std::move(retyped));
  }
  return c;
}

class KernelDtypes : public ::testing::TestWithParam<KernelDtype> {};

TEST_P(KernelDtypes, Unsupported) {
  const auto [spec, dtype] = GetParam();
  const KernelTest* test = registered(*spec);
  if (test == nullptr) return;
  const std::optional<hal_dtype> from = base_dtype(*spec);
  if (!from) GTEST_SKIP() << "the device has none of the kernel's dtypes";
  Case c = retyped_base_case(*spec, *test, *from, dtype);
  c.name = std::string("retyped to ") + hal::dtype_name(dtype);
  c.expected_error = hal::StatusCode::kUnsupported;
  run_case(*spec, *test, c);
}

INSTANTIATE_TEST_SUITE_P(, KernelDtypes,
                         ::testing::ValuesIn(kernel_dtypes(false)), pair_name);

class KernelMalformed : public ::testing::TestWithParam<const KernelSpec*> {};

// One launch per defect, each refused with INVALID_ARGUMENT before anything
// is enqueued, so the storages stay as they were.
TEST_P(KernelMalformed, Calls) {
  const KernelSpec& spec = *GetParam();
  const KernelTest* test = registered(spec);
  if (test == nullptr) return;
  const std::optional<hal_dtype> dtype = base_dtype(spec);
  if (!dtype) GTEST_SKIP() << "the device has none of the kernel's dtypes";
  const Case base = cases_of(spec, *test, *dtype).front();
  constexpr auto kInvalid = hal::StatusCode::kInvalidArgument;

  // The refusals come before the intact case runs on the same storages, so
  // its result also shows that they enqueued and corrupted nothing.
  Refusals refusals(spec);
  Case probe = base;
  probe.name = "after the malformed calls";
  run_case(spec, *test, probe, [&](std::span<const hal_arg> good) {
    // A size only mismatches another tensor's.
    const bool shapes_relate =
        std::count_if(good.begin(), good.end(), [](const hal_arg& a) {
          return a.kind == HAL_ARG_TENSOR;
        }) >= 2;
    std::vector<hal_arg> fewer(good.begin(), good.end() - 1);
    refusals.expect(kInvalid, fewer, "one argument too few");
    std::vector<hal_arg> more(good.begin(), good.end());
    more.push_back(hal::scalar_arg(int64_t{0}));
    refusals.expect(kInvalid, more, "one argument too many");
    for (size_t i = 0; i < good.size(); ++i) {
      const ArgSpec& arg = spec.args[i];
      const std::string name = "argument " + std::string(arg.name);
      std::vector<hal_arg> bad(good.begin(), good.end());
      bad[i].kind = static_cast<hal_arg_kind>(99);
      refusals.expect(kInvalid, bad, name + " of kind 99");
      if (arg.kind != ArgKind::kOptionalTensor &&
          arg.kind != ArgKind::kOptionalScalar) {
        bad[i] = hal::none_arg();
        refusals.expect(kInvalid, bad, name + " NONE");
      }
      switch (arg.kind) {
        case ArgKind::kTensor:
        case ArgKind::kOptionalTensor:
          bad[i] = hal::scalar_arg(int64_t{1});
          refusals.expect(kInvalid, bad, name + " as an i64 scalar");
          break;
        case ArgKind::kScalar:
        case ArgKind::kOptionalScalar:
        case ArgKind::kInt:
        case ArgKind::kFloat:
          for (const hal_arg& tensor : good) {
            if (tensor.kind != HAL_ARG_TENSOR) continue;
            bad[i] = tensor;
            refusals.expect(kInvalid, bad, name + " as a tensor");
            break;
          }
          if (arg.kind == ArgKind::kInt) {
            bad[i] = hal::scalar_arg(1.0);
            refusals.expect(kInvalid, bad, name + " as an f64");
          } else if (arg.kind == ArgKind::kFloat) {
            bad[i] = hal::scalar_arg(int64_t{1});
            refusals.expect(kInvalid, bad, name + " as an i64");
          }
          break;
        case ArgKind::kTensorOrScalar:
          break;
      }
      if (good[i].kind != HAL_ARG_TENSOR) continue;
      bad.assign(good.begin(), good.end());
      bad[i].value.tensor.rank = HAL_MAX_RANK + 1;
      refusals.expect(kInvalid, bad, name + " of rank 9");
      bad.assign(good.begin(), good.end());
      bad[i].value.tensor.data = HAL_DEVPTR_NULL;
      refusals.expect(kInvalid, bad, name + " with NULL data");
      if (!shapes_relate ||
          std::find(test->shape_free_args.begin(), test->shape_free_args.end(),
                    arg.name) != test->shape_free_args.end()) {
        continue;
      }
      bad.assign(good.begin(), good.end());
      hal_tensor& tensor = bad[i].value.tensor;
      for (int d = 0; d < tensor.rank; ++d) {
        if (tensor.sizes[d] >= 2) {
          --tensor.sizes[d];
          refusals.expect(kInvalid, bad,
                          name + " one smaller in dim " + std::to_string(d));
          break;
        }
      }
    }
  });
}

std::vector<const KernelSpec*> all_kernels() {
  std::vector<const KernelSpec*> specs;
  for (const KernelSpec& spec : kernel_table()) specs.push_back(&spec);
  return specs;
}

INSTANTIATE_TEST_SUITE_P(
    , KernelMalformed, ::testing::ValuesIn(all_kernels()),
    [](const ::testing::TestParamInfo<const KernelSpec*>& info) {
      return std::string(info.param->name);
    });

}  // namespace
}  // namespace conformance::kernels
