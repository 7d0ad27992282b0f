// A device's compile cache: compiled programs by key, at most `capacity` of
// them; inserting one more drops the least recently used.
//
// A compile is slow (milliseconds to seconds), so a launch whose program is
// cached is the fast path. But every compiled program holds executable code
// (XLA's CPU compiler maps several regions per program, and one process ran
// out of Linux's 65,530 mappings after about 240 programs), so a long run
// with many shapes must not keep all of them. Entries are shared: a program
// dropped from the cache lives on while a launch still holds it, and the
// device holds it until the execution's completion event is ready.
//
// Not thread-safe: the device guards each cache with its cache mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <unordered_map>
#include <utility>

#include "client.hpp"
#include "lowering/lowering.hpp"

namespace pjrt_bridge {

// A compiled program and the layout it was lowered with.
struct CompiledProgram {
  Program program;
  Executable executable;
};

template <typename Key, typename Hash = std::hash<Key>>
class ProgramCache {
 public:
  using Entry = std::shared_ptr<const CompiledProgram>;

  // A capacity of 0 is taken as 1: the program just compiled stays.
  explicit ProgramCache(size_t capacity)
      : capacity_(capacity > 0 ? capacity : 1) {}

  // The program cached under `key`, now the most recently used; null if
  // there is none.
  Entry find(const Key& key) {
    auto found = index_.find(key);
    if (found == index_.end()) {
      return nullptr;
    }
    order_.splice(order_.begin(), order_, found->second);
    return found->second->second;
  }

  // Caches `program` under `key`, unless a program is cached there already
  // (another thread compiled the same key meanwhile); returns the cached
  // one. Drops the least recently used programs beyond the capacity.
  Entry insert(const Key& key, Entry program) {
    if (Entry cached = find(key)) {
      return cached;
    }
    order_.emplace_front(key, std::move(program));
    index_.emplace(key, order_.begin());
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
      ++evictions_;
    }
    return order_.front().second;
  }

  size_t size() const { return order_.size(); }
  // How many programs were dropped to make room, since creation.
  uint64_t evictions() const { return evictions_; }

 private:
  using Order = std::list<std::pair<Key, Entry>>;  // most recent first

  const size_t capacity_;
  Order order_;
  std::unordered_map<Key, typename Order::iterator, Hash> index_;
  uint64_t evictions_ = 0;
};

}  // namespace pjrt_bridge
