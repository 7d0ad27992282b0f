// The binary kernels that write bool: the comparisons (eq, ne, lt, le, gt,
// ge) and the logical ops (logical_and, logical_or, logical_xor)
// (binary.hpp).
#include "kernels/binary.hpp"

namespace cpu_ref {

using driver_kit::kAllDtypes;
namespace {

using binary::Extra;
using binary::Param;
using binary::prepare_binary;

#define CPU_REF_BOOL_BINARY(Op, name, dtypes, expr) \
  struct Op {                                       \
    static constexpr const char* kName = name;      \
    static constexpr uint32_t kDtypes = dtypes;     \
    static constexpr Extra kExtra = Extra::kNone;   \
    static constexpr bool kBoolOut = true;          \
    template <typename M>                           \
    static bool apply(M a, M b, const Param<M>&) {  \
      return expr;                                  \
    }                                               \
  }
CPU_REF_BOOL_BINARY(Eq, "eq", kAllDtypes, a == b);
CPU_REF_BOOL_BINARY(Ne, "ne", kAllDtypes, a != b);
CPU_REF_BOOL_BINARY(Lt, "lt", kAllDtypes, a < b);
CPU_REF_BOOL_BINARY(Le, "le", kAllDtypes, a <= b);
CPU_REF_BOOL_BINARY(Gt, "gt", kAllDtypes, a > b);
CPU_REF_BOOL_BINARY(Ge, "ge", kAllDtypes, a >= b);
CPU_REF_BOOL_BINARY(LogicalAnd, "logical_and", kAllDtypes, a != 0 && b != 0);
CPU_REF_BOOL_BINARY(LogicalOr, "logical_or", kAllDtypes, a != 0 || b != 0);
CPU_REF_BOOL_BINARY(LogicalXor, "logical_xor", kAllDtypes,
                    (a != 0) != (b != 0));
#undef CPU_REF_BOOL_BINARY

const KernelDef kEq{Eq::kName, prepare_binary<Eq>};
const KernelDef kNe{Ne::kName, prepare_binary<Ne>};
const KernelDef kLt{Lt::kName, prepare_binary<Lt>};
const KernelDef kLe{Le::kName, prepare_binary<Le>};
const KernelDef kGt{Gt::kName, prepare_binary<Gt>};
const KernelDef kGe{Ge::kName, prepare_binary<Ge>};
const KernelDef kLogicalAnd{LogicalAnd::kName, prepare_binary<LogicalAnd>};
const KernelDef kLogicalOr{LogicalOr::kName, prepare_binary<LogicalOr>};
const KernelDef kLogicalXor{LogicalXor::kName, prepare_binary<LogicalXor>};

}  // namespace

KernelList binary_predicate_kernels() {
  static const KernelDef* const kKernels[] = {
      &kEq, &kNe,         &kLt,        &kLe,        &kGt,
      &kGe, &kLogicalAnd, &kLogicalOr, &kLogicalXor};
  return kKernels;
}

}  // namespace cpu_ref
