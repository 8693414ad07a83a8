// A hash table from fixed-size state bytes to a value, with the keys in one arena: the
// solver's transposition table (no allocation per state, byte equality, a hash of the bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace psygym {

// A hash of the bytes, eight at a time (states are tens to hundreds of bytes that differ in a
// few of them), with a final mix so the low bits the table uses depend on every word.
inline uint64_t hash_bytes(const uint8_t* p, std::size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, n - i);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
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

  uint64_t hash(const uint8_t* key) const { return hash_bytes(key, key_size_); }

  // The value of `key`, or nullptr.
  const double* find(const uint8_t* key) const { return find(key, hash(key)); }

  // The same with the key's hash() given (a search hashes each state once).
  const double* find(const uint8_t* key, uint64_t hash) const {
    std::size_t i = hash & mask_;
    while (true) {
      uint32_t slot = slots_[i];
      if (slot == kEmpty) return nullptr;
      if (std::memcmp(&keys_[static_cast<std::size_t>(slot) * key_size_], key, key_size_) == 0)
        return &values_[slot];
      i = (i + 1) & mask_;
    }
  }

  // Stores `value` for `key` (which must not be present yet), whose hash() is `hash`.
  void insert(const uint8_t* key, double value, uint64_t hash) {
    if ((count_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    place(hash, static_cast<uint32_t>(count_));
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

  void place(uint64_t hash, uint32_t index) {
    std::size_t i = hash & mask_;
    while (slots_[i] != kEmpty) i = (i + 1) & mask_;
    slots_[i] = index;
  }

  void rehash(std::size_t n) {
    slots_.assign(n, kEmpty);
    mask_ = n - 1;
    for (std::size_t k = 0; k < count_; ++k)
      place(hash(&keys_[k * key_size_]), static_cast<uint32_t>(k));
  }

  std::size_t key_size_;
  std::size_t count_ = 0;
  std::size_t mask_ = 0;
  std::vector<uint8_t> keys_;
  std::vector<double> values_;
  std::vector<uint32_t> slots_;
};

}  // namespace psygym
