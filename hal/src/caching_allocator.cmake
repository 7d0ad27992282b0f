# The caching allocator's sources, added to the core library by
# hal/CMakeLists.txt (include(src/caching_allocator.cmake)).
target_sources(hal PRIVATE ${CMAKE_CURRENT_LIST_DIR}/caching_allocator.cpp)
