// HAL_API marks the symbols libhal.so exports. The build hides everything
// else (-fvisibility=hidden), so only the public C++ API below this macro is
// part of the library's ABI; exported classes also export their type info,
// which lets callers catch hal::Error across the library boundary.
#pragma once

#if defined(_WIN32)
#define HAL_API __declspec(dllexport)
#else
#define HAL_API __attribute__((visibility("default")))
#endif
