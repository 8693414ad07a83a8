// A hash table from fixed-size state bytes to a value, with the keys in one arena: the
// solver's transposition table (no allocation per state, byte equality, a hash of the bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace psygym {

// FNV-1a over the bytes, then a final mix (states differ in few bytes).
inline uint64_t hash_bytes(const uint8_t* p, std::size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

class StateTable {
 public:
  explicit StateTable(std::size_t key_size) : key_size_(key_size) { rehash(1024); }

  std::size_t size() const { return count_; }
  std::size_t key_size() const { return key_size_; }
  // Bytes held, for memory budgets.
  std::size_t bytes() const {
    return keys_.capacity() + values_.capacity() * sizeof(double) +
           slots_.capacity() * sizeof(uint32_t);
  }

  // The value of `key`, or nullptr.
  const double* find(const uint8_t* key) const {
    std::size_t i = hash_bytes(key, key_size_) & mask_;
    while (true) {
      uint32_t slot = slots_[i];
      if (slot == kEmpty) return nullptr;
      if (std::memcmp(&keys_[static_cast<std::size_t>(slot) * key_size_], key, key_size_) == 0)
        return &values_[slot];
      i = (i + 1) & mask_;
    }
  }

  // Stores `value` for `key` (which must not be present yet).
  void insert(const uint8_t* key, double value) {
    if ((count_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    place(key, static_cast<uint32_t>(count_));
    keys_.insert(keys_.end(), key, key + key_size_);
    values_.push_back(value);
    ++count_;
  }

  void clear() {
    keys_.clear();
    values_.clear();
    count_ = 0;
    rehash(1024);
  }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;

  void place(const uint8_t* key, uint32_t index) {
    std::size_t i = hash_bytes(key, key_size_) & mask_;
    while (slots_[i] != kEmpty) i = (i + 1) & mask_;
    slots_[i] = index;
  }

  void rehash(std::size_t n) {
    slots_.assign(n, kEmpty);
    mask_ = n - 1;
    for (std::size_t k = 0; k < count_; ++k)
      place(&keys_[k * key_size_], static_cast<uint32_t>(k));
  }

  std::size_t key_size_;
  std::size_t count_ = 0;
  std::size_t mask_ = 0;
  std::vector<uint8_t> keys_;
  std::vector<double> values_;
  std::vector<uint32_t> slots_;
};

}  // namespace psygym
