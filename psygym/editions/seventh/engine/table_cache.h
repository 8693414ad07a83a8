// Chance tables built once per key and then read without a lock: the memo of rules.py's
// ChanceCache, safe for the Game's const methods on many threads at once (STYLE.md 7.4).
//
// Readers probe an open-addressing index of atomic slots. A miss takes the mutex, builds the
// table and publishes it, the table pointer first and its key after it (release order), so a
// reader that sees a key sees its table. A full index is copied into one twice as large and
// published the same way; the old ones stay alive (a reader may still probe one: it misses at
// worst, and looks again under the mutex) until the cache is destroyed, as the tables do.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "game.h"

namespace psygym {
namespace seventh {

// One chance table (outcomes in the reference's order, exact probabilities).
struct Table {
  std::vector<Outcome> outcomes;
};

class TableCache {
 public:
  TableCache() { grow(64); }
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;

  // The table of `key` (never 0), built with build() the first time only.
  template <typename Build>
  const Table& get(uint64_t key, Build&& build) const {
    if (const Table* t = find(*index_.load(std::memory_order_acquire), key)) return *t;
    std::lock_guard<std::mutex> lock(mutex_);
    Index* index = index_.load(std::memory_order_relaxed);
    if (const Table* t = find(*index, key)) return *t;
    tables_.push_back(std::make_unique<Table>(build()));
    const Table* made = tables_.back().get();
    if ((index->count + 1) * 2 > index->mask + 1) index = grow((index->mask + 1) * 2);
    place(index, key, made);
    return *made;
  }

 private:
  struct Index {
    explicit Index(std::size_t capacity)
        : mask(capacity - 1),
          keys(new std::atomic<uint64_t>[capacity]),
          tables(new std::atomic<const Table*>[capacity]) {
      for (std::size_t i = 0; i < capacity; ++i) {
        keys[i].store(0, std::memory_order_relaxed);
        tables[i].store(nullptr, std::memory_order_relaxed);
      }
    }
    std::size_t mask;
    std::size_t count = 0;  // written under the mutex only
    std::unique_ptr<std::atomic<uint64_t>[]> keys;
    std::unique_ptr<std::atomic<const Table*>[]> tables;
  };

  static std::size_t slot_of(uint64_t key, std::size_t mask) {
    key ^= key >> 33;  // murmur3's finaliser: every key bit reaches the low bits
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<std::size_t>(key) & mask;
  }

  static const Table* find(const Index& index, uint64_t key) {
    for (std::size_t i = slot_of(key, index.mask);; i = (i + 1) & index.mask) {
      const uint64_t k = index.keys[i].load(std::memory_order_acquire);
      if (k == key) return index.tables[i].load(std::memory_order_relaxed);
      if (k == 0) return nullptr;
    }
  }

  static void place(Index* index, uint64_t key, const Table* table) {
    std::size_t i = slot_of(key, index->mask);
    while (index->keys[i].load(std::memory_order_relaxed) != 0) i = (i + 1) & index->mask;
    index->tables[i].store(table, std::memory_order_relaxed);
    index->keys[i].store(key, std::memory_order_release);
    ++index->count;
  }

  // A new index of `capacity` slots holding every entry of the current one (under the mutex,
  // or in the constructor), made the current one.
  Index* grow(std::size_t capacity) const {
    auto made = std::make_unique<Index>(capacity);
    if (!indexes_.empty()) {
      const Index& old = *indexes_.back();
      for (std::size_t i = 0; i <= old.mask; ++i) {
        const uint64_t k = old.keys[i].load(std::memory_order_relaxed);
        if (k != 0) place(made.get(), k, old.tables[i].load(std::memory_order_relaxed));
      }
    }
    indexes_.push_back(std::move(made));
    index_.store(indexes_.back().get(), std::memory_order_release);
    return indexes_.back().get();
  }

  mutable std::atomic<Index*> index_{nullptr};
  mutable std::mutex mutex_;                              // builds and growth
  mutable std::vector<std::unique_ptr<Index>> indexes_;  // every index made, the current last
  mutable std::vector<std::unique_ptr<Table>> tables_;
};

}  // namespace seventh
}  // namespace psygym
