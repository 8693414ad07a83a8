// Exact arithmetic for chance tables: a probability is the correctly rounded quotient of two
// exact integers, the value Python's float(Fraction(num, den)) gives (STYLE.md section 7.4).
#pragma once

#include <cstdint>

namespace psygym {

using Wide = unsigned __int128;

// num / den rounded to the nearest double (ties to even); den > 0, num <= den.
double exact_ratio(Wide num, Wide den);

// Greatest common divisor, for keeping weights small while tables are built.
Wide gcd_wide(Wide a, Wide b);

}  // namespace psygym
