// The readable form of a certification report: one self-contained HTML
// page (inline style, no script, nothing fetched), rendered from the same
// JSON object that report.json holds.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace certify {

std::string render_html(const nlohmann::json& report);

}  // namespace certify
