// Little fields in a twin's state bytes: 16-bit numbers and bitsets at byte offsets, read and
// written through memcpy (state bytes carry no alignment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace psygym {

inline int get_u16(const uint8_t* s, std::size_t at) {
  uint16_t v;
  std::memcpy(&v, s + at, sizeof v);
  return v;
}

inline void set_u16(uint8_t* s, std::size_t at, int value) {
  const uint16_t v = static_cast<uint16_t>(value);
  std::memcpy(s + at, &v, sizeof v);
}

// Bit i of the bitset that starts at byte `at`.
inline bool get_bit(const uint8_t* s, std::size_t at, int i) {
  return (s[at + static_cast<std::size_t>(i) / 8] >> (i % 8)) & 1;
}

inline void set_bit(uint8_t* s, std::size_t at, int i) {
  s[at + static_cast<std::size_t>(i) / 8] |= static_cast<uint8_t>(1u << (i % 8));
}

inline void clear_bit(uint8_t* s, std::size_t at, int i) {
  s[at + static_cast<std::size_t>(i) / 8] &= static_cast<uint8_t>(~(1u << (i % 8)));
}

}  // namespace psygym
