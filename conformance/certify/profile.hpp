// The profile of a driver: what hal-certify learns by opening it rather
// than by running the suite. Identity as the driver reports it, the
// capability profile it declares, the standard kernels it lacks, and a
// performance profile (copy bandwidth, launch latency, matmul throughput).
//
// hal-certify runs this in a child of its own (hal-certify --profile), like
// every other use of the driver, and reads the JSON it prints.
#pragma once

#include <string>

namespace certify {

// Opens `driver` and prints the profile of device `ordinal` as one JSON
// object on stdout. Returns the process exit status.
int print_profile(const std::string& driver, int ordinal, bool quick);

}  // namespace certify
