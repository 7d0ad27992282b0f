// render_html (html.hpp).
#include "html.hpp"

#include <string_view>

#include <fmt/format.h>

namespace certify {
namespace {

using json = nlohmann::json;

std::string escape(std::string_view text) {
  std::string out;
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

// A JSON value as table text: strings bare, arrays joined, the rest dumped.
std::string text(const json& value) {
  if (value.is_string()) return escape(value.get<std::string>());
  if (value.is_array()) {
    std::string joined;
    for (const json& item : value) {
      if (!joined.empty()) joined += ", ";
      joined += text(item);
    }
    return joined;
  }
  if (value.is_null()) return "";
  return escape(value.dump());
}

// Key/value rows of an object, nested objects flattened with dots.
void rows(std::string& out, const json& object, const std::string& prefix) {
  for (const auto& [key, value] : object.items()) {
    if (value.is_object()) {
      rows(out, value, prefix + key + ".");
      continue;
    }
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n",
                       escape(prefix + key), text(value));
  }
}

std::string result_cell(const std::string& result) {
  return fmt::format("<td class=\"r {}\">{}</td>", escape(result),
                     escape(result));
}

constexpr std::string_view kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left;
         vertical-align: top; }
th { background: #f3f3f3; }
td.msg { font-family: monospace; white-space: pre-wrap; max-width: 60em; }
.verdict { font-size: 1.4em; padding: 0.4em 0.8em; display: inline-block; }
.yes { background: #cfc; } .no { background: #fcc; }
.PASS { background: #dfd; } .FAIL, .CRASH, .TIMEOUT, .XPASS { background: #fcc; }
.SKIP { background: #eee; } .XFAIL { background: #ffd; }
)";

}  // namespace

std::string render_html(const json& report) {
  const bool certified = report["verdict"].value("certified", false);
  const json& driver = report["identity"]["driver"];
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
      "<title>HAL certification: {}</title><style>{}</style></head><body>\n"
      "<h1>HAL certification report: {} {}</h1>\n"
      "<div class=\"verdict {}\">{}</div>\n",
      text(driver.value("name", json("?"))), kStyle,
      text(driver.value("name", json("?"))),
      text(driver.value("version", json(""))), certified ? "yes" : "no",
      certified ? "CERTIFIED" : "NOT CERTIFIED");
  out += "<ul>\n";
  for (const json& reason : report["verdict"]["reasons"]) {
    out += "<li>" + text(reason) + "</li>\n";
  }
  out += "</ul>\n";

  out += "<h2>Summary</h2><table>\n";
  rows(out, report["summary"], "");
  out += "</table>\n";

  out += "<h2>Identity</h2><table>\n";
  rows(out, report["identity"], "");
  out += "</table>\n";

  out += "<h2>Capability profile</h2><table>\n";
  rows(out, report["capabilities"], "");
  out += "</table>\n";

  out += "<h2>Performance profile</h2><table>\n";
  rows(out, report["performance"], "");
  out += "</table>\n";

  out +=
      "<h2>Areas</h2><table><tr><th>area</th><th>tests</th>"
      "<th>seconds</th><th>results</th></tr>\n";
  for (const json& area : report["areas"]) {
    std::string counts;
    for (const auto& [result, count] : area["results"].items()) {
      counts += fmt::format("{} {} ", escape(result), count.get<int>());
    }
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.2f}</td><td>{}</td>"
        "</tr>\n",
        text(area["name"]), area["tests"].get<int>(),
        area["seconds"].get<double>(), counts);
  }
  out += "</table>\n";

  out += "<h2>Waivers</h2>\n";
  if (report["waivers"].empty())
    out += "<p>None.</p>\n";
  else {
    out += "<table><tr><th>test</th><th>reason</th><th>matched</th></tr>\n";
    for (const json& waiver : report["waivers"]) {
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                         text(waiver["test"]), text(waiver["reason"]),
                         text(waiver["matched"]));
    }
    out += "</table>\n";
  }

  const json& validation = report["validation"];
  out += "<h2>Validation layer and leaks</h2><table>\n";
  for (const char* key : {"ran", "level", "error"}) {
    if (validation.contains(key)) {
      out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", key,
                         text(validation[key]));
    }
  }
  out += "</table>\n";
  if (!validation["leaks"].empty()) {
    out +=
        "<table><tr><th>test</th><th>kind</th><th>bytes</th>"
        "<th>leak</th></tr>\n";
    for (const json& leak : validation["leaks"]) {
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"msg\">{}</td>"
          "</tr>\n",
          text(leak["test"]), text(leak["kind"]), text(leak["bytes"]),
          text(leak["message"]));
    }
    out += "</table>\n";
  }
  if (!validation["failures"].empty()) {
    out +=
        "<p>Tests that fail only under the validation layer:</p>"
        "<table><tr><th>test</th><th>result</th><th>message</th></tr>\n";
    for (const json& failure : validation["failures"]) {
      out += fmt::format("<tr><td>{}</td>{}<td class=\"msg\">{}</td></tr>\n",
                         text(failure["name"]), result_cell(failure["result"]),
                         text(failure["message"]));
    }
    out += "</table>\n";
  }

  out +=
      "<h2>Kernels: max error against tolerance</h2>\n"
      "<table><tr><th>kernel</th><th>dtype</th><th>result</th>"
      "<th>max abs error</th><th>error / allowed</th><th>atol</th>"
      "<th>rtol</th></tr>\n";
  for (const json& kernel : report["kernels"]) {
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        text(kernel["kernel"]), text(kernel["dtype"]),
        result_cell(kernel["result"]), text(kernel["max_abs_error"]),
        text(kernel["max_error_ratio"]), text(kernel["atol"]),
        text(kernel["rtol"]));
  }
  out += "</table>\n";

  out +=
      "<h2>Every test</h2><table><tr><th>test</th><th>result</th>"
      "<th>seconds</th><th>message</th></tr>\n";
  for (const json& test : report["tests"]) {
    out += fmt::format(
        "<tr><td>{}</td>{}<td>{:.3f}</td><td class=\"msg\">{}</td></tr>\n",
        text(test["name"]), result_cell(test["result"]),
        test["seconds"].get<double>(), text(test["message"]));
  }
  out += "</table>\n</body></html>\n";
  return out;
}

}  // namespace certify
