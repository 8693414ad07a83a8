#include "exact.h"

#include <cmath>

namespace psygym {

Wide gcd_wide(Wide a, Wide b) {
  while (b != 0) {
    Wide t = a % b;
    a = b;
    b = t;
  }
  return a;
}

double exact_ratio(Wide num, Wide den) {
  if (num == 0 || den == 0) return 0.0;
  // Long division: 55 significant quotient bits (53 kept, one to round, the rest sticky),
  // scaled by 2^-shift; the probabilities of
  // a chance table are far from the ends of the double range, so the result stays normal.
  int shift = 0;
  Wide rem = num;
  // Bring rem into [den, 2 den) so the first quotient bit is 1.
  while (rem / 2 >= den) {
    den <<= 1;
    --shift;
  }
  while (rem < den) {
    rem <<= 1;
    ++shift;
  }
  uint64_t q = 0;
  for (int i = 0; i < 54; ++i) {  // 1 leading bit + 52 fraction bits + 1 rounding bit
    q <<= 1;
    if (rem >= den) {
      q |= 1;
      rem -= den;
    }
    rem <<= 1;
  }
  const bool sticky = rem != 0;
  const bool round_bit = q & 1;
  q >>= 1;  // 53 bits
  if (round_bit && (sticky || (q & 1))) ++q;
  return std::ldexp(static_cast<double>(q), -(52 + shift));
}

}  // namespace psygym
