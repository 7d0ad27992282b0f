// render_html (html.hpp).
//
// The page is for a person deciding whether to trust a driver: the verdict
// and its reasons first, then who was certified (identity), then what fell
// short, then the detail. Numbers carry units and are rounded to what a
// noisy measurement can tell; report.json keeps the full precision.
#include "html.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace certify {
namespace {

using json = nlohmann::json;

// The results, in the order the tables show them: good, neutral, bad.
constexpr std::array<std::string_view, 7> kResults = {
    "PASS", "SKIP", "XFAIL", "FAIL", "CRASH", "TIMEOUT", "XPASS"};

bool is_bad(std::string_view result) {
  return result == "FAIL" || result == "CRASH" || result == "TIMEOUT" ||
         result == "XPASS";
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A JSON value as cell text: strings bare, arrays joined, null as a dash.
std::string text(const json& value) {
  if (value.is_string()) return escape(value.get<std::string>());
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_array()) {
    std::string joined;
    for (const json& item : value) {
      if (!joined.empty()) joined += ", ";
      joined += text(item);
    }
    return joined.empty() ? "none" : joined;
  }
  if (value.is_null()) return "&ndash;";
  return escape(value.dump());
}

// The field `key` of `object`, or null when either is missing.
const json& field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// A number from a JSON number or a numeric string (test properties are
// strings); NaN when it is neither.
double number(const json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    try {
      return std::stod(value.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return std::nan("");
}

// Three significant digits without an exponent in the range people read
// (0.01 to 10^6), scientific outside it.
std::string rounded(double value) {
  if (std::isnan(value)) return "&ndash;";
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return "0";
  if (magnitude < 0.01 || magnitude >= 1e6) return fmt::format("{:.2e}", value);
  if (magnitude >= 100) return fmt::format("{:.0f}", value);
  if (magnitude >= 10) return fmt::format("{:.1f}", value);
  return fmt::format("{:.2f}", value);
}

std::string bytes(const json& value) {
  const double count = number(value);
  if (std::isnan(count)) return "&ndash;";
  constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB",
                                                 "TiB"};
  double scaled = count;
  size_t unit = 0;
  while (scaled >= 1024 && unit + 1 < kUnits.size()) {
    scaled /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", count)
                   : fmt::format("{} {}", rounded(scaled), kUnits[unit]);
}

std::string result_cell(const json& result) {
  const std::string name = result.is_string() ? result.get<std::string>() : "";
  return fmt::format("<td class=\"r {}\">{}</td>", escape(name), escape(name));
}

void row(std::string& out, std::string_view label, const std::string& value) {
  out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", label, value);
}

// A row of a test that did not pass: its name, result and message.
std::string outcome_row(const json& name, const json& result,
                        const json& message) {
  return fmt::format("<tr><td>{}</td>{}<td class=\"msg\">{}</td></tr>\n",
                     text(name), result_cell(result), text(message));
}

// The header cells of the per-result columns (summary and areas).
std::string result_headers() {
  std::string out;
  for (std::string_view result : kResults) {
    out += fmt::format("<th>{}</th>", result);
  }
  return out;
}

// The cells of the per-result columns for `counts` (result -> count),
// shaded where a result that fails certification occurs. `zero` is what
// a zero count shows.
std::string result_counts(const json& counts, std::string_view zero) {
  std::string out;
  for (std::string_view result : kResults) {
    const int count = counts.value(std::string(result), 0);
    out += fmt::format("<td class=\"n{}\">{}</td>",
                       is_bad(result) && count > 0 ? " bad" : "",
                       count ? std::to_string(count) : std::string(zero));
  }
  return out;
}

void verdict(std::string& out, const json& report) {
  const json& verdict = report["verdict"];
  const bool certified = verdict.value("certified", false);
  out += fmt::format(
      "<div id=\"verdict\" class=\"verdict {}\">{}</div>\n"
      "<p class=\"scope\">Scope: {}. Generated {}.</p>\n<ul id=\"reasons\">\n",
      certified ? "yes" : "no", certified ? "CERTIFIED" : "NOT CERTIFIED",
      text(field(verdict, "scope")), text(field(report, "generated")));
  for (const json& reason : verdict["reasons"]) {
    out += "<li>" + text(reason) + "</li>\n";
  }
  out += "</ul>\n";
}

void summary(std::string& out, const json& report) {
  int total = 0;
  for (const auto& [result, count] : report["summary"].items()) {
    total += count.get<int>();
  }
  out += fmt::format(
      "<h2>Results</h2>\n<table id=\"summary\"><tr>{}<th>tests</th></tr>\n"
      "<tr>{}<td class=\"n\">{}</td></tr>\n</table>\n",
      result_headers(), result_counts(report["summary"], "0"), total);
}

void identity(std::string& out, const json& report) {
  const json& id = report["identity"];
  const json& driver = field(id, "driver");
  const json& suite = field(id, "suite");
  const json& host = field(id, "host");
  const json& device = field(id, "device");
  out += "<h2>Identity</h2>\n<table id=\"identity\">\n";
  row(out, "Driver",
      fmt::format("{} {} (ABI {})", text(field(driver, "name")),
                  text(field(driver, "version")),
                  text(field(driver, "abi_version"))));
  row(out, "Driver file", text(field(driver, "file")));
  row(out, "Driver SHA-256",
      "<code>" + text(field(driver, "sha256")) + "</code>");
  row(out, "HAL",
      fmt::format("{} (host ABI {})", text(field(id, "hal_version")),
                  text(field(id, "host_abi_version"))));
  const bool frozen = field(suite, "test_list_frozen") == true;
  row(out, "Suite",
      fmt::format("{}, kernel set {}; {} of {} tests selected",
                  text(field(suite, "version")),
                  text(field(suite, "kernel_set_version")),
                  text(field(suite, "selected")), text(field(suite, "tests"))));
  row(out, "Test list",
      fmt::format("<code>{}</code> {}", text(field(suite, "test_list_sha256")),
                  frozen ? "(the frozen list)"
                         : "<span class=\"bad\">(not the frozen list)</span>"));
  row(out, "Device",
      fmt::format("{} from {} (device {} of {}), driver version {}",
                  text(field(device, "name")), text(field(device, "vendor")),
                  text(field(device, "ordinal")),
                  text(field(id, "device_count")),
                  text(field(device, "driver_version"))));
  row(out, "Device memory",
      fmt::format("{}, largest allocation {}, alignment {}",
                  bytes(field(device, "total_memory")),
                  bytes(field(device, "max_allocation_size")),
                  bytes(field(device, "min_alignment"))));
  row(out, "Compute units", text(field(device, "compute_units")));
  row(out, "Host",
      fmt::format("{} {}, {} ({} CPUs)", text(field(host, "os")),
                  text(field(host, "machine")), text(field(host, "cpu")),
                  text(field(host, "cpu_count"))));
  row(out, "Host kernel", text(field(host, "kernel")));
  out += "</table>\n";
}

void capabilities(std::string& out, const json& report) {
  const json& caps = report["capabilities"];
  const json& missing = field(caps, "missing_kernels");
  out += "<h2>Capabilities</h2>\n<table id=\"capabilities\">\n";
  row(out, "Data types", text(field(caps, "dtypes")));
  row(out, "Capability flags", text(field(caps, "capabilities")));
  row(out, "Kernel set version", text(field(caps, "kernel_set_version")));
  row(out, "Missing kernels",
      fmt::format("{}: {}", missing.is_array() ? missing.size() : 0,
                  text(missing)));
  out += "</table>\n";
}

// One measurement row: a value with its unit, or the error that stopped it.
void measurement(std::string& out, std::string_view what, const json& group,
                 const char* key, std::string_view unit,
                 const std::string& setup) {
  if (group.contains("error")) {
    out += fmt::format(
        "<tr><th>{}</th><td class=\"bad\" colspan=\"2\">{}</td></tr>\n", what,
        text(group["error"]));
    return;
  }
  out +=
      fmt::format("<tr><th>{}</th><td class=\"n\">{} {}</td><td>{}</td></tr>\n",
                  what, rounded(number(field(group, key))), unit, setup);
}

void performance(std::string& out, const json& report) {
  const json& perf = report["performance"];
  const json& copy = field(perf, "copy");
  const json& launch = field(perf, "launch");
  const json& matmul = field(perf, "matmul");
  out +=
      "<h2>Performance</h2>\n<p>Measured once by the profile; a guide, not a "
      "benchmark.</p>\n<table id=\"performance\"><tr><th>measurement</th>"
      "<th>value</th><th>setup</th></tr>\n";
  const std::string copy_setup =
      fmt::format("{} per copy", bytes(field(copy, "bytes")));
  measurement(out, "copy host &rarr; device", copy, "host_to_device_gbps",
              "GB/s", copy_setup);
  measurement(out, "copy device &rarr; host", copy, "device_to_host_gbps",
              "GB/s", copy_setup);
  measurement(out, "copy device &rarr; device", copy, "device_to_device_gbps",
              "GB/s", copy_setup);
  const std::string launch_setup =
      fmt::format("{} launches of {}", text(field(launch, "launches")),
                  text(field(launch, "kernel")));
  measurement(out, "launch, queued", launch, "queued_us", "&micro;s",
              launch_setup);
  measurement(out, "launch, round trip", launch, "round_trip_us", "&micro;s",
              launch_setup);
  measurement(
      out, "matmul", matmul, "gflops", "GFLOP/s",
      fmt::format("{} {}&times;{}&times;{}", text(field(matmul, "dtype")),
                  text(field(matmul, "m")), text(field(matmul, "n")),
                  text(field(matmul, "k"))));
  out += "</table>\n";
}

// The tests that keep the driver from certification, on top so that
// nobody has to search the full list for them.
void failures(std::string& out, const json& report) {
  std::string rows;
  for (const json& test : report["tests"]) {
    if (!is_bad(test.value("result", ""))) continue;
    rows += outcome_row(test["name"], test["result"], test["message"]);
  }
  if (rows.empty()) return;
  out +=
      "<h2>What failed</h2>\n<table id=\"failures\"><tr><th>test</th>"
      "<th>result</th><th>message</th></tr>\n" +
      rows + "</table>\n";
}

void areas(std::string& out, const json& report) {
  out += "<h2>Areas</h2>\n<table id=\"areas\"><tr><th>area</th>" +
         result_headers() + "<th>tests</th><th>time</th></tr>\n";
  for (const json& area : report["areas"]) {
    out += fmt::format(
        "<tr><td><a href=\"#area-{0}\">{0}</a></td>{1}<td class=\"n\">{2}</td>"
        "<td class=\"n\">{3} s</td></tr>\n",
        text(area["name"]), result_counts(area["results"], ""),
        text(area["tests"]), rounded(number(area["seconds"])));
  }
  out += "</table>\n";
}

// Each kernel's worst error against what its tolerance allows, as a
// percentage with a bar: how close a passing kernel came to failing.
void kernels(std::string& out, const json& report) {
  if (report["kernels"].empty()) return;
  out +=
      "<h2>Kernels: error against tolerance</h2>\n<p>The largest error over "
      "the test's inputs as a share of what the kernel table allows there "
      "(atol + rtol &middot; |expected|); 100 % fails.</p>\n"
      "<table id=\"kernels\"><tr><th>kernel</th><th>dtype</th><th>result</th>"
      "<th>max abs error</th><th>atol</th><th>rtol</th>"
      "<th colspan=\"2\">share of allowed</th></tr>\n";
  for (const json& kernel : report["kernels"]) {
    const double ratio = number(field(kernel, "max_error_ratio"));
    std::string share = "<td class=\"n\">&ndash;</td><td></td>";
    if (!std::isnan(ratio)) {
      const double percent = ratio * 100;
      share = fmt::format(
          "<td class=\"n{}\">{} %</td><td><div class=\"bar\" "
          "style=\"width:{:.0f}px\"></div></td>",
          percent >= 100 ? " bad" : "", rounded(percent),
          std::min(percent, 100.0));
    }
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td>{}<td class=\"n\">{}</td>"
        "<td class=\"n\">{}</td><td class=\"n\">{}</td>{}</tr>\n",
        text(kernel["kernel"]), text(kernel["dtype"]),
        result_cell(kernel["result"]),
        rounded(number(field(kernel, "max_abs_error"))),
        rounded(number(field(kernel, "atol"))),
        rounded(number(field(kernel, "rtol"))), share);
  }
  out += "</table>\n";
}

void waivers(std::string& out, const json& report) {
  out += "<h2>Waivers</h2>\n";
  if (report["waivers"].empty()) {
    out += "<p>None.</p>\n";
    return;
  }
  out +=
      "<table id=\"waivers\"><tr><th>test</th><th>reason</th>"
      "<th>matched</th></tr>\n";
  for (const json& waiver : report["waivers"]) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       text(waiver["test"]), text(waiver["reason"]),
                       text(waiver["matched"]));
  }
  out += "</table>\n";
}

void validation(std::string& out, const json& report) {
  const json& validation = report["validation"];
  out += "<h2>Validation layer and leaks</h2>\n<table id=\"validation\">\n";
  row(out, "Ran", text(field(validation, "ran")));
  row(out, "Level", text(field(validation, "level")));
  row(out, "Leaks", std::to_string(field(validation, "leaks").size()));
  if (validation.contains("error")) {
    row(out, "Error",
        "<span class=\"bad\">" + text(validation["error"]) + "</span>");
  }
  out += "</table>\n";
  if (!field(validation, "leaks").empty()) {
    out +=
        "<table id=\"leaks\"><tr><th>test</th><th>kind</th><th>size</th>"
        "<th>leak</th></tr>\n";
    for (const json& leak : validation["leaks"]) {
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td>"
          "<td class=\"msg\">{}</td></tr>\n",
          text(leak["test"]), text(leak["kind"]), bytes(leak["bytes"]),
          text(leak["message"]));
    }
    out += "</table>\n";
  }
  if (!field(validation, "failures").empty()) {
    out +=
        "<p>Tests that fail only under the validation layer:</p>"
        "<table><tr><th>test</th><th>result</th><th>message</th></tr>\n";
    for (const json& failure : validation["failures"]) {
      out +=
          outcome_row(failure["name"], failure["result"], failure["message"]);
    }
    out += "</table>\n";
  }
}

// Every test, one table per area, in the suite's order.
void tests_by_area(std::string& out, const json& report) {
  std::map<std::string, std::string> tables;
  std::vector<std::string> order;
  for (const json& test : report["tests"]) {
    const std::string area = test.value("area", "");
    auto [it, inserted] = tables.try_emplace(area);
    if (inserted) order.push_back(area);
    it->second += fmt::format(
        "<tr><td>{}</td>{}<td class=\"n\">{} s</td><td class=\"msg\">{}</td>"
        "</tr>\n",
        text(test["name"]), result_cell(test["result"]),
        rounded(number(test["seconds"])), text(test["message"]));
  }
  out += "<h2>Every test</h2>\n";
  for (const std::string& area : order) {
    out += fmt::format(
        "<h3 id=\"area-{0}\">{0}</h3>\n<table><tr><th>test</th><th>result</th>"
        "<th>time</th><th>message</th></tr>\n{1}</table>\n",
        escape(area), tables[area]);
  }
}

constexpr std::string_view kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { margin-bottom: 0.2em; }
p.scope { overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left;
         vertical-align: top; }
th { background: #f3f3f3; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.msg { font-family: monospace; white-space: pre-wrap; max-width: 60em; }
.verdict { font-size: 1.6em; font-weight: bold; padding: 0.3em 0.8em;
           display: inline-block; }
.yes { background: #cfc; } .no { background: #fcc; }
.bad { background: #fcc; }
.bar { height: 0.8em; background: #69c; }
.PASS { background: #dfd; } .FAIL, .CRASH, .TIMEOUT, .XPASS { background: #fcc; }
.SKIP { background: #eee; } .XFAIL { background: #ffd; }
)";

}  // namespace

std::string render_html(const json& report) {
  const json& driver = report["identity"]["driver"];
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
      "<title>HAL certification: {0}</title><style>{1}</style></head><body>\n"
      "<h1>HAL certification report: {0} {2}</h1>\n",
      text(field(driver, "name")), kStyle, text(field(driver, "version")));
  verdict(out, report);
  summary(out, report);
  identity(out, report);
  failures(out, report);
  capabilities(out, report);
  performance(out, report);
  areas(out, report);
  kernels(out, report);
  waivers(out, report);
  validation(out, report);
  tests_by_area(out, report);
  out += "</body></html>\n";
  return out;
}

}  // namespace certify
