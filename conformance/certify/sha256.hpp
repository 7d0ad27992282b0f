// SHA-256 of a file, for the identity of a certified driver. Self-contained
// (FIPS 180-4), so that hal-certify needs no crypto library.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace certify {

// Lowercase hex digest of `bytes`.
std::string sha256_hex(std::string_view bytes);
// Lowercase hex digest of the file's contents; throws std::runtime_error if
// it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace certify
