// hal-kernel-gen: reads the standard kernel table (table/*.json and
// tolerances.json, see ../README.md), validates it, and writes what the
// build derives from it:
//   --header FILE  hal/standard_kernels.h: set version, name macros and the
//                  C signature table;
//   --cpp FILE     the conformance suite's C++ table (kernel_table.cpp);
//   --docs FILE    docs/kernels.md.
//
//   hal-kernel-gen --version N --tolerances tolerances.json
//                  [--header F] [--cpp F] [--docs F] table/a.json ...
//
// Any defect of the table (unknown kind, dtype or tolerance, duplicate name,
// missing field) is reported with its file and kernel, and nothing is
// written. Output files are rewritten only when their contents change, so
// an unchanged table rebuilds nothing.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

// In hal_dtype order (driver.h).
const std::vector<std::string> kDtypes = {"f32", "f16", "bf16", "f64", "i64",
                                          "i32", "i16", "i8",   "u8",  "bool"};
const std::vector<std::string> kFloatDtypes = {"f32", "f16", "bf16", "f64"};

struct TableError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Arg {
  std::string name;
  std::string kind;        // as in the table
  std::string io;          // in, out, inout
  uint32_t dtypes = 0;     // HAL_DTYPE_BIT mask; 0: the primary dtype
  std::string dtype_text;  // as written, for the docs ("" = primary)
  std::optional<double> default_value;
  std::string default_text;
};

struct Kernel {
  std::string name, family, summary, semantics, tolerance;
  std::vector<Arg> args;
  uint32_t required = 0, optional = 0;
};

struct Tolerance {
  std::string description;
  std::map<std::string, std::pair<double, double>> by_dtype;  // rtol, atol
};

uint32_t dtype_bit(const std::string& name, const std::string& where) {
  for (size_t i = 0; i < kDtypes.size(); ++i) {
    if (kDtypes[i] == name) return 1u << i;
  }
  throw TableError(where + ": unknown dtype \"" + name + "\"");
}

std::string get_string(const json& object, const char* key,
                       const std::string& where) {
  if (!object.contains(key) || !object[key].is_string()) {
    throw TableError(where + ": \"" + key + "\" must be a string");
  }
  return object[key].get<std::string>();
}

void check_keys(const json& object, const std::set<std::string>& allowed,
                const std::string& where) {
  if (!object.is_object()) throw TableError(where + ": must be an object");
  for (const auto& [key, value] : object.items()) {
    if (!allowed.count(key)) {
      throw TableError(where + ": unknown field \"" + key + "\"");
    }
  }
}

bool is_identifier(const std::string& name) {
  if (name.empty() || !(std::islower(name[0]))) return false;
  for (char c : name) {
    if (!(std::islower(c) || std::isdigit(c) || c == '_')) return false;
  }
  return true;
}

Arg parse_arg(const json& entry, const std::string& where) {
  check_keys(entry, {"name", "kind", "io", "dtype", "default", "description"},
             where);
  Arg arg;
  arg.name = get_string(entry, "name", where);
  const std::string at = where + " argument " + arg.name;
  if (!is_identifier(arg.name)) throw TableError(at + ": bad name");
  arg.kind = get_string(entry, "kind", at);
  static const std::set<std::string> kKinds = {
      "tensor",        "scalar",  "int",    "float",
      "tensor|scalar", "tensor?", "scalar?"};
  if (!kKinds.count(arg.kind)) {
    throw TableError(at + ": unknown kind \"" + arg.kind + "\"");
  }
  arg.io = entry.contains("io") ? get_string(entry, "io", at) : "in";
  if (arg.io != "in" && arg.io != "out" && arg.io != "inout") {
    throw TableError(at + ": io must be in, out or inout");
  }
  const bool is_tensor = arg.kind.find("tensor") != std::string::npos;
  if (arg.io != "in" && arg.kind != "tensor" && arg.kind != "tensor?") {
    throw TableError(at + ": only tensors can be outputs");
  }
  if (entry.contains("dtype")) {
    if (!is_tensor) throw TableError(at + ": a scalar has no dtype");
    const json& dtype = entry["dtype"];
    std::vector<std::string> names;
    if (dtype.is_string()) {
      names.push_back(dtype.get<std::string>());
    } else if (dtype.is_array()) {
      for (const json& name : dtype) {
        if (!name.is_string()) throw TableError(at + ": dtype names");
        names.push_back(name.get<std::string>());
      }
    } else {
      throw TableError(at + ": dtype must be a name or a list of names");
    }
    for (const std::string& name : names) {
      if (name == "any") {
        arg.dtypes |= (1u << kDtypes.size()) - 1;
      } else {
        arg.dtypes |= dtype_bit(name, at);
      }
      arg.dtype_text += (arg.dtype_text.empty() ? "" : ", ") + name;
    }
  }
  if (entry.contains("default")) {
    const json& value = entry["default"];
    if (!value.is_number() && !value.is_boolean()) {
      throw TableError(at + ": default must be a number");
    }
    arg.default_value = value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0)
                                           : value.get<double>();
    arg.default_text = value.dump();
  }
  return arg;
}

Kernel parse_kernel(const json& entry, const std::string& family,
                    const std::string& file,
                    const std::map<std::string, Tolerance>& tolerances) {
  check_keys(entry,
             {"name", "summary", "args", "dtypes", "tolerance", "semantics"},
             file);
  Kernel kernel;
  kernel.family = family;
  kernel.name = get_string(entry, "name", file);
  const std::string where = file + ": kernel " + kernel.name;
  if (!is_identifier(kernel.name)) throw TableError(where + ": bad name");
  kernel.summary = get_string(entry, "summary", where);
  kernel.semantics = get_string(entry, "semantics", where);
  kernel.tolerance = get_string(entry, "tolerance", where);
  if (!tolerances.count(kernel.tolerance)) {
    throw TableError(where + ": tolerance \"" + kernel.tolerance +
                     "\" is not in tolerances.json");
  }
  if (!entry.contains("args") || !entry["args"].is_array()) {
    throw TableError(where + ": \"args\" must be a list");
  }
  std::set<std::string> names;
  for (const json& arg_entry : entry["args"]) {
    Arg arg = parse_arg(arg_entry, where);
    if (!names.insert(arg.name).second) {
      throw TableError(where + ": argument " + arg.name + " appears twice");
    }
    kernel.args.push_back(std::move(arg));
  }
  if (kernel.args.size() > 64) throw TableError(where + ": too many args");
  const json& dtypes = entry.contains("dtypes") ? entry["dtypes"] : json();
  check_keys(dtypes, {"required", "optional"}, where + " dtypes");
  for (const auto& [key, mask] :
       {std::pair<const char*, uint32_t*>{"required", &kernel.required},
        {"optional", &kernel.optional}}) {
    if (!dtypes.contains(key)) continue;
    if (!dtypes[key].is_array()) {
      throw TableError(where + ": dtypes." + key + " must be a list");
    }
    for (const json& name : dtypes[key]) {
      if (!name.is_string()) throw TableError(where + ": dtype names");
      *mask |= dtype_bit(name.get<std::string>(), where);
    }
  }
  if (kernel.required & kernel.optional) {
    throw TableError(where + ": a dtype is both required and optional");
  }
  if ((kernel.required | kernel.optional) == 0) {
    throw TableError(where + ": no dtypes");
  }
  return kernel;
}

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw TableError(path.string() + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::parse_error& error) {
    throw TableError(path.string() + ": " + error.what());
  }
}

std::map<std::string, Tolerance> parse_tolerances(
    const std::filesystem::path& path) {
  const json root = read_json(path);
  if (!root.is_object()) throw TableError(path.string() + ": not an object");
  std::map<std::string, Tolerance> tolerances;
  for (const auto& [name, entry] : root.items()) {
    const std::string where = path.string() + ": " + name;
    Tolerance tolerance;
    tolerance.description = get_string(entry, "description", where);
    for (const std::string& dtype : kFloatDtypes) {
      if (!entry.contains(dtype)) {
        throw TableError(where + ": no entry for " + dtype);
      }
      const json& pair = entry[dtype];
      check_keys(pair, {"rtol", "atol"}, where + "." + dtype);
      if (!pair.contains("rtol") || !pair.contains("atol") ||
          !pair["rtol"].is_number() || !pair["atol"].is_number()) {
        throw TableError(where + "." + dtype + ": needs rtol and atol");
      }
      tolerance.by_dtype[dtype] = {pair["rtol"].get<double>(),
                                   pair["atol"].get<double>()};
    }
    tolerances[name] = std::move(tolerance);
  }
  return tolerances;
}

// --- Writers
// ------------------------------------------------------------------

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(c));
  return text;
}

// A C/C++ string literal.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string hex(uint32_t mask) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "0x%03xu", mask);
  return buffer;
}

// Shortest text that reads back as `value`.
std::string number(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string dtype_list(uint32_t mask) {
  std::string out;
  for (size_t i = 0; i < kDtypes.size(); ++i) {
    if (mask & (1u << i)) out += (out.empty() ? "" : ", ") + kDtypes[i];
  }
  return out;
}

std::string signature(const Kernel& kernel) {
  std::string out = kernel.name + "(";
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const Arg& arg = kernel.args[i];
    out += (i ? ", " : "") + arg.name + ": " + arg.kind;
    if (arg.io != "in") out += " " + arg.io;
  }
  return out + ")";
}

// Comment text: no "*/" can end the comment early.
std::string comment_safe(std::string text) {
  for (size_t at; (at = text.find("*/")) != std::string::npos;) {
    text.replace(at, 2, "* /");
  }
  return text;
}

std::string c_header(const std::vector<Kernel>& kernels, int version) {
  std::ostringstream out;
  out << R"(/* The standard kernel set: kernels every driver provides under these names
 * through kernel_lookup(device, NULL, name), with their argument signatures.
 *
 * GENERATED by hal-kernel-gen from the JSON files of hal/kernels/table;
 * do not edit.
 * Semantics, dtypes and tolerances: docs/kernels.md; conventions:
 * hal/kernels/README.md.
 *
 * Conventions for every kernel:
 *  - Arguments are positional; outputs come first, then inputs, then scalars.
 *  - Inputs have the output's rank and sizes unless a kernel says otherwise;
 *    broadcasting is expressed by the caller with stride 0.
 *  - Results are deterministic: the same inputs give the same bits, whatever
 *    the number of threads.
 *  - A wrong argument count, kind, rank, shape or a NULL pointer with a
 *    non-empty tensor is INVALID_ARGUMENT; a dtype the device lacks, or one
 *    the kernel does not define, is UNSUPPORTED.
 */
#ifndef HAL_STANDARD_KERNELS_H_
#define HAL_STANDARD_KERNELS_H_

#include <stdint.h>
#include <string.h>

#include "hal/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

)";
  out << "#define HAL_KERNEL_SET_VERSION " << version << "\n";
  out << "#define HAL_STANDARD_KERNEL_COUNT " << kernels.size() << "\n\n";
  for (const Kernel& kernel : kernels) {
    out << "/* " << comment_safe(signature(kernel)) << "\n *   "
        << comment_safe(kernel.summary) << " */\n";
    out << "#define HAL_KERNEL_" << upper(kernel.name) << " "
        << quoted(kernel.name) << "\n";
  }
  out << "\n/* Every kernel's name macro, in table order: X(HAL_KERNEL_<NAME>) "
         "each,\n"
         " * for code that checks or lists names at compile time. */\n"
         "#define HAL_STANDARD_KERNELS(X)";
  for (const Kernel& kernel : kernels) {
    out << " \\\n  X(HAL_KERNEL_" << upper(kernel.name) << ")";
  }
  out << "\n";
  out << R"(
/* Which hal_arg kinds an argument accepts (bits of 1 << hal_arg_kind). */
#define HAL_KERNEL_ACCEPTS(kind) (1u << (uint32_t)(kind))

typedef enum hal_kernel_arg_io {
  HAL_KERNEL_ARG_IN = 0,
  HAL_KERNEL_ARG_OUT = 1,
  HAL_KERNEL_ARG_INOUT = 2 /* read, then written (e.g. optimizer state) */
} hal_kernel_arg_io;

typedef struct hal_kernel_arg_signature {
  const char* name;
  uint32_t kinds;  /* HAL_KERNEL_ACCEPTS mask */
  uint32_t io;     /* hal_kernel_arg_io */
  uint32_t dtypes; /* HAL_DTYPE_BIT mask; 0: the kernel's primary dtype */
} hal_kernel_arg_signature;

typedef struct hal_kernel_signature {
  const char* name;
  uint32_t num_args;
  const hal_kernel_arg_signature* args;
  uint32_t required_dtypes; /* HAL_DTYPE_BIT masks of the primary dtype */
  uint32_t optional_dtypes;
} hal_kernel_signature;

/* All HAL_STANDARD_KERNEL_COUNT signatures, in table order. */
static inline const hal_kernel_signature* hal_standard_kernel_signatures(void) {
#define HAL_K_T HAL_KERNEL_ACCEPTS(HAL_ARG_TENSOR)
#define HAL_K_I HAL_KERNEL_ACCEPTS(HAL_ARG_I64)
#define HAL_K_F HAL_KERNEL_ACCEPTS(HAL_ARG_F64)
#define HAL_K_N HAL_KERNEL_ACCEPTS(HAL_ARG_NONE)
)";
  const std::map<std::string, std::string> kinds = {
      {"tensor", "HAL_K_T"},
      {"scalar", "HAL_K_I | HAL_K_F"},
      {"int", "HAL_K_I"},
      {"float", "HAL_K_F"},
      {"tensor|scalar", "HAL_K_T | HAL_K_I | HAL_K_F"},
      {"tensor?", "HAL_K_T | HAL_K_N"},
      {"scalar?", "HAL_K_I | HAL_K_F | HAL_K_N"}};
  const std::map<std::string, std::string> ios = {
      {"in", "HAL_KERNEL_ARG_IN"},
      {"out", "HAL_KERNEL_ARG_OUT"},
      {"inout", "HAL_KERNEL_ARG_INOUT"}};
  for (const Kernel& kernel : kernels) {
    out << "  static const hal_kernel_arg_signature " << kernel.name
        << "_args[] = {\n";
    for (const Arg& arg : kernel.args) {
      out << "      {" << quoted(arg.name) << ", " << kinds.at(arg.kind) << ", "
          << ios.at(arg.io) << ", " << hex(arg.dtypes) << "},\n";
    }
    out << "  };\n";
  }
  out << "  static const hal_kernel_signature signatures[] = {\n";
  for (const Kernel& kernel : kernels) {
    out << "      {HAL_KERNEL_" << upper(kernel.name) << ", "
        << kernel.args.size() << ", " << kernel.name << "_args, "
        << hex(kernel.required) << ", " << hex(kernel.optional) << "},\n";
  }
  out << R"(  };
#undef HAL_K_T
#undef HAL_K_I
#undef HAL_K_F
#undef HAL_K_N
  return signatures;
}

/* The signature of the standard kernel `name`, or NULL. */
static inline const hal_kernel_signature* hal_find_kernel_signature(
    const char* name) {
  const hal_kernel_signature* signatures = hal_standard_kernel_signatures();
  uint32_t i;
  for (i = 0; i < HAL_STANDARD_KERNEL_COUNT; ++i) {
    if (strcmp(signatures[i].name, name) == 0) return &signatures[i];
  }
  return NULL; /* NOLINT(modernize-use-nullptr): a C header */
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HAL_STANDARD_KERNELS_H_ */
)";
  return out.str();
}

std::string cpp_table(const std::vector<Kernel>& kernels,
                      const std::map<std::string, Tolerance>& tolerances) {
  std::ostringstream out;
  out << R"(// The standard kernel table for the conformance suite.
// GENERATED by hal-kernel-gen from the JSON files of hal/kernels/table;
// do not edit.
#include "kernels/table.hpp"

namespace conformance::kernels {

const std::vector<KernelSpec>& kernel_table() {
  static const std::vector<KernelSpec> table = {
)";
  const std::map<std::string, std::string> kinds = {
      {"tensor", "kTensor"},
      {"scalar", "kScalar"},
      {"int", "kInt"},
      {"float", "kFloat"},
      {"tensor|scalar", "kTensorOrScalar"},
      {"tensor?", "kOptionalTensor"},
      {"scalar?", "kOptionalScalar"}};
  const std::map<std::string, std::string> ios = {
      {"in", "kIn"}, {"out", "kOut"}, {"inout", "kInOut"}};
  for (const Kernel& kernel : kernels) {
    out << "      {" << quoted(kernel.name) << ",\n       "
        << quoted(kernel.family) << ",\n       " << quoted(kernel.summary)
        << ",\n       {\n";
    for (const Arg& arg : kernel.args) {
      out << "           {" << quoted(arg.name)
          << ", ArgKind::" << kinds.at(arg.kind)
          << ", ArgIo::" << ios.at(arg.io) << ", " << hex(arg.dtypes) << ", "
          << (arg.default_value ? number(*arg.default_value) : "std::nullopt")
          << "},\n";
    }
    out << "       },\n       " << hex(kernel.required) << ",\n       "
        << hex(kernel.optional) << ",\n       " << quoted(kernel.tolerance)
        << ",\n       {{";
    const Tolerance& tolerance = tolerances.at(kernel.tolerance);
    for (size_t d = 0; d < kDtypes.size(); ++d) {
      const auto it = tolerance.by_dtype.find(kDtypes[d]);
      // Integer and bool results are exact.
      const auto [rtol, atol] =
          it == tolerance.by_dtype.end() ? std::pair{0.0, 0.0} : it->second;
      out << (d ? ", " : "") << "{" << number(atol) << ", " << number(rtol)
          << "}";
    }
    out << "}}},\n";
  }
  out << R"(  };
  return table;
}

}  // namespace conformance::kernels
)";
  return out.str();
}

// Markdown table cells: no raw "|" or line breaks.
std::string cell(std::string text) {
  for (size_t at = 0; (at = text.find('|', at)) != std::string::npos; at += 2) {
    text.replace(at, 1, "\\|");
  }
  return text;
}

std::string docs(const std::vector<Kernel>& kernels,
                 const std::map<std::string, Tolerance>& tolerances,
                 int version) {
  std::ostringstream out;
  out << "# The standard kernel set, version " << version << "\n\n"
      << "<!-- GENERATED by hal-kernel-gen from hal/kernels/table/*.json and "
         "tolerances.json; do not edit. Rewrite with `cmake --build <dir> "
         "--target update-kernel-docs`. -->\n\n"
      << "Every HAL driver provides these " << kernels.size()
      << " kernels under these names (`kernel_lookup(device, NULL, name)`, "
         "`HAL_KERNEL_<NAME>` in `hal/standard_kernels.h`). The conventions "
         "every kernel follows (argument order, strides and broadcasting, "
         "aliasing, determinism, errors) are in "
         "[hal/kernels/README.md](../hal/kernels/README.md).\n\n"
      << "Argument kinds: `tensor`; `scalar` (i64 or f64); `int` (i64 only); "
         "`float` (f64 only); `tensor|scalar`; `tensor?` (a tensor, or "
         "`HAL_ARG_NONE` when absent); `scalar?` (a scalar, or "
         "`HAL_ARG_NONE`). Dtype \"primary\" is the dtype the "
         "kernel is instantiated for (one of its listed dtypes).\n\n";
  std::vector<std::string> families;
  for (const Kernel& kernel : kernels) {
    if (families.empty() || families.back() != kernel.family) {
      families.push_back(kernel.family);
    }
  }
  out << "| Family | Kernels |\n|---|---|\n";
  for (const std::string& family : families) {
    out << "| [" << family << "](#" << family << ") | ";
    bool first = true;
    for (const Kernel& kernel : kernels) {
      if (kernel.family != family) continue;
      out << (first ? "" : ", ") << "[`" << kernel.name << "`](#" << kernel.name
          << ")";
      first = false;
    }
    out << " |\n";
  }
  for (const std::string& family : families) {
    out << "\n## " << family << "\n";
    for (const Kernel& kernel : kernels) {
      if (kernel.family != family) continue;
      out << "\n### " << kernel.name << "\n\n"
          << "`" << signature(kernel) << "`: " << kernel.summary << "\n\n"
          << "| # | Argument | Kind | I/O | Dtype | Default |\n"
          << "|---|---|---|---|---|---|\n";
      for (size_t i = 0; i < kernel.args.size(); ++i) {
        const Arg& arg = kernel.args[i];
        const bool is_tensor = arg.kind.find("tensor") != std::string::npos;
        out << "| " << i << " | `" << arg.name << "` | `" << cell(arg.kind)
            << "` | " << arg.io << " | "
            << (!is_tensor               ? ""
                : arg.dtype_text.empty() ? "primary"
                                         : cell(arg.dtype_text))
            << " | " << arg.default_text << " |\n";
      }
      out << "\nDtypes: required " << dtype_list(kernel.required);
      if (kernel.optional) {
        out << "; optional " << dtype_list(kernel.optional);
      }
      out << ". Tolerance: [" << kernel.tolerance << "](#tolerances).\n\n"
          << kernel.semantics << "\n";
    }
  }
  out << "\n## Tolerances\n\n"
      << "A result passes when |actual − expected| ≤ atol + rtol · "
         "|expected| against the conformance suite's double-precision host "
         "reference. Integer and bool results are always exact.\n\n"
      << "| Name | f64 rtol / atol | f32 rtol / atol | f16 rtol / atol | "
         "bf16 rtol / atol | Meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& [name, tolerance] : tolerances) {
    out << "| " << name;
    for (const char* dtype : {"f64", "f32", "f16", "bf16"}) {
      const auto [rtol, atol] = tolerance.by_dtype.at(dtype);
      out << " | " << number(rtol) << " / " << number(atol);
    }
    out << " | " << cell(tolerance.description) << " |\n";
  }
  return out.str();
}

void write_if_changed(const std::filesystem::path& path,
                      const std::string& text) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == text) return;
    }
  }
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> options;
  std::vector<std::filesystem::path> tables;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0) {
      if (i + 1 >= argc) {
        std::cerr << "hal-kernel-gen: " << arg << " needs a value\n";
        return 2;
      }
      options[arg.substr(2)] = argv[++i];
    } else {
      tables.emplace_back(arg);
    }
  }
  for (const auto& [name, value] : options) {
    if (name != "version" && name != "tolerances" && name != "header" &&
        name != "cpp" && name != "docs") {
      std::cerr << "hal-kernel-gen: unknown option --" << name << "\n";
      return 2;
    }
  }
  if (!options.count("version") || !options.count("tolerances") ||
      tables.empty()) {
    std::cerr << "usage: hal-kernel-gen --version N --tolerances FILE "
                 "[--header F] [--cpp F] [--docs F] TABLE.json...\n";
    return 2;
  }
  try {
    const int version = std::stoi(options["version"]);
    const auto tolerances = parse_tolerances(options["tolerances"]);
    std::sort(tables.begin(), tables.end());
    std::vector<Kernel> kernels;
    std::set<std::string> names;
    for (const auto& path : tables) {
      const json root = read_json(path);
      check_keys(root, {"family", "kernels"}, path.string());
      const std::string family = get_string(root, "family", path.string());
      if (family != path.stem().string()) {
        throw TableError(path.string() + ": family \"" + family +
                         "\" differs from the file name");
      }
      if (!root.contains("kernels") || !root["kernels"].is_array()) {
        throw TableError(path.string() + ": \"kernels\" must be a list");
      }
      for (const json& entry : root["kernels"]) {
        Kernel kernel = parse_kernel(entry, family, path.string(), tolerances);
        if (!names.insert(kernel.name).second) {
          throw TableError(path.string() + ": kernel " + kernel.name +
                           " is defined twice");
        }
        kernels.push_back(std::move(kernel));
      }
    }
    if (options.count("header")) {
      write_if_changed(options["header"], c_header(kernels, version));
    }
    if (options.count("cpp")) {
      write_if_changed(options["cpp"], cpp_table(kernels, tolerances));
    }
    if (options.count("docs")) {
      write_if_changed(options["docs"], docs(kernels, tolerances, version));
    }
  } catch (const std::exception& error) {
    std::cerr << "hal-kernel-gen: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
