#include "odds.h"

#include <algorithm>
#include <cmath>

namespace psygym {
namespace seventh {

// ----------------------------------------------------------------------------- BigUInt
BigUInt::BigUInt(uint64_t v) {
  while (v != 0) {
    limbs_.push_back(static_cast<uint32_t>(v));
    v >>= 32;
  }
}

void BigUInt::trim() {
  while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
}

int BigUInt::bit_length() const {
  if (limbs_.empty()) return 0;
  int top = 0;
  for (uint32_t x = limbs_.back(); x != 0; x >>= 1) ++top;
  return static_cast<int>(limbs_.size() - 1) * 32 + top;
}

int BigUInt::compare(const BigUInt& other) const {
  if (limbs_.size() != other.limbs_.size()) return limbs_.size() < other.limbs_.size() ? -1 : 1;
  for (std::size_t i = limbs_.size(); i-- > 0;) {
    if (limbs_[i] != other.limbs_[i]) return limbs_[i] < other.limbs_[i] ? -1 : 1;
  }
  return 0;
}

BigUInt& BigUInt::operator+=(const BigUInt& other) {
  if (limbs_.size() < other.limbs_.size()) limbs_.resize(other.limbs_.size(), 0);
  uint64_t carry = 0;
  for (std::size_t i = 0; i < limbs_.size(); ++i) {
    uint64_t sum = carry + limbs_[i] + (i < other.limbs_.size() ? other.limbs_[i] : 0);
    limbs_[i] = static_cast<uint32_t>(sum);
    carry = sum >> 32;
  }
  if (carry != 0) limbs_.push_back(static_cast<uint32_t>(carry));
  return *this;
}

BigUInt& BigUInt::operator-=(const BigUInt& other) {
  int64_t borrow = 0;
  for (std::size_t i = 0; i < limbs_.size(); ++i) {
    int64_t diff = static_cast<int64_t>(limbs_[i]) - borrow -
                   static_cast<int64_t>(i < other.limbs_.size() ? other.limbs_[i] : 0);
    borrow = diff < 0 ? 1 : 0;
    limbs_[i] = static_cast<uint32_t>(diff + (borrow << 32));
  }
  trim();
  return *this;
}

BigUInt BigUInt::operator*(const BigUInt& other) const {
  BigUInt out;
  if (is_zero() || other.is_zero()) return out;
  out.limbs_.assign(limbs_.size() + other.limbs_.size(), 0);
  for (std::size_t i = 0; i < limbs_.size(); ++i) {
    uint64_t carry = 0;
    for (std::size_t j = 0; j < other.limbs_.size(); ++j) {
      uint64_t cur = static_cast<uint64_t>(limbs_[i]) * other.limbs_[j] + out.limbs_[i + j] + carry;
      out.limbs_[i + j] = static_cast<uint32_t>(cur);
      carry = cur >> 32;
    }
    std::size_t k = i + other.limbs_.size();
    while (carry != 0) {
      uint64_t cur = static_cast<uint64_t>(out.limbs_[k]) + carry;
      out.limbs_[k] = static_cast<uint32_t>(cur);
      carry = cur >> 32;
      ++k;
    }
  }
  out.trim();
  return out;
}

BigUInt BigUInt::shifted_left(int bits) const {
  BigUInt out;
  if (is_zero()) return out;
  const int whole = bits / 32, part = bits % 32;
  out.limbs_.assign(limbs_.size() + whole + 1, 0);
  for (std::size_t i = 0; i < limbs_.size(); ++i) {
    uint64_t v = static_cast<uint64_t>(limbs_[i]) << part;
    out.limbs_[i + whole] |= static_cast<uint32_t>(v);
    out.limbs_[i + whole + 1] |= static_cast<uint32_t>(v >> 32);
  }
  out.trim();
  return out;
}

bool BigUInt::bit(int i) const {
  const std::size_t limb = static_cast<std::size_t>(i) / 32;
  return limb < limbs_.size() && ((limbs_[limb] >> (i % 32)) & 1U) != 0;
}

BigUInt BigUInt::power(uint64_t base, int exponent) {
  BigUInt out(1), b(base);
  for (int i = 0; i < exponent; ++i) out = out * b;
  return out;
}

double big_ratio(const BigUInt& num, const BigUInt& den) {
  if (num.is_zero() || den.is_zero()) return 0.0;
  // q = floor(num * 2^k / den) with 55 or 56 bits (num <= den, so the quotient's leading
  // bit is at 2^(e-1) or 2^e, e = bitlen(num) - bitlen(den) <= 0).
  const int e = num.bit_length() - den.bit_length();
  const int k = 55 - e;
  BigUInt rem = num.shifted_left(k);
  uint64_t q = 0;
  for (int i = 56; i >= 0; --i) {
    BigUInt part = den.shifted_left(i);
    if (part.compare(rem) <= 0) {
      rem -= part;
      q |= uint64_t{1} << i;
    }
  }
  int length = 0;
  for (uint64_t x = q; x != 0; x >>= 1) ++length;
  // The value is q * 2^-k (plus a remainder below one unit of q): keep 53 bits, or fewer
  // where the result is subnormal (its last bit no lower than 2^-1074).
  const int lead = length - 1 - k;
  const int ulp = std::max(lead - 52, -1074);
  const int drop = ulp + k;  // >= 2
  if (drop >= 64) return 0.0;
  uint64_t m = q >> drop;
  const bool half = ((q >> (drop - 1)) & 1U) != 0;
  const bool sticky = (q & ((uint64_t{1} << (drop - 1)) - 1)) != 0 || !rem.is_zero();
  if (half && (sticky || (m & 1U))) ++m;
  return std::ldexp(static_cast<double>(m), ulp);
}

// ----------------------------------------------------------------------------- distributions
WeightedDist dice_distribution(const Dice& dice) {
  WeightedDist out;
  if (dice.sides == 0) {
    out.weights[dice.modifier] = BigUInt(1);
    return out;
  }
  std::map<int, BigUInt> dist{{0, BigUInt(1)}};
  for (int i = 0; i < dice.count; ++i) {
    std::map<int, BigUInt> next;
    for (const auto& [total, w] : dist)
      for (int face = 1; face <= dice.sides; ++face) next[total + face] += w;
    dist.swap(next);
  }
  for (const auto& [total, w] : dist) out.weights[total + dice.modifier] = w;
  out.total = BigUInt::power(static_cast<uint64_t>(dice.sides), dice.count);
  return out;
}

WeightedDist capped(const WeightedDist& dist, int cap) {
  WeightedDist out;
  out.total = dist.total;
  for (const auto& [v, w] : dist.weights) out.weights[std::max(0, std::min(v, cap))] += w;
  return out;
}

std::vector<Outcome> outcomes_of(const WeightedDist& dist) {
  std::vector<Outcome> out;
  for (const auto& [v, w] : dist.weights)
    if (!w.is_zero()) out.push_back(Outcome{v, big_ratio(w, dist.total)});
  return out;
}

std::vector<Outcome> binary_outcomes(const BigUInt& num, const BigUInt& den) {
  std::vector<Outcome> out;
  BigUInt fail = den;
  fail -= num;
  if (!fail.is_zero()) out.push_back(Outcome{0, big_ratio(fail, den)});
  if (!num.is_zero()) out.push_back(Outcome{1, big_ratio(num, den)});
  return out;
}

std::vector<Outcome> binary_outcomes(uint64_t num, uint64_t den) {
  return binary_outcomes(BigUInt(num), BigUInt(den));
}

namespace {

// Row n of Pascal's triangle.
std::vector<BigUInt> binomial_row(int n) {
  std::vector<BigUInt> row{BigUInt(1)};
  for (int i = 1; i <= n; ++i) {
    std::vector<BigUInt> next(static_cast<std::size_t>(i) + 1);
    next[0] = BigUInt(1);
    next[static_cast<std::size_t>(i)] = BigUInt(1);
    for (int k = 1; k < i; ++k) {
      next[static_cast<std::size_t>(k)] = row[static_cast<std::size_t>(k) - 1];
      next[static_cast<std::size_t>(k)] += row[static_cast<std::size_t>(k)];
    }
    row.swap(next);
  }
  return row;
}

// Weights C(n, k) a^k (b - a)^(n - k) of binomial(n, a / b), over b^n.
std::vector<BigUInt> binomial_weights(int n, uint64_t a, uint64_t b) {
  const std::vector<BigUInt> row = binomial_row(n);
  std::vector<BigUInt> out(static_cast<std::size_t>(n) + 1);
  for (int k = 0; k <= n; ++k)
    out[static_cast<std::size_t>(k)] =
        row[static_cast<std::size_t>(k)] * BigUInt::power(a, k) * BigUInt::power(b - a, n - k);
  return out;
}

uint64_t factorial(int n) {
  uint64_t out = 1;
  for (int i = 2; i <= n; ++i) out *= static_cast<uint64_t>(i);
  return out;
}

uint64_t small_comb(int n, int k) {
  if (k < 0 || k > n) return 0;
  return factorial(n) / (factorial(k) * factorial(n - k));
}

}  // namespace

std::vector<Outcome> cast_outcomes(int dice, bool doubles_peril) {
  WeightedDist dist;
  dist.total = BigUInt::power(6, dice);
  if (doubles_peril) {
    // pool_any_double(dice, 4): successes k with or without some face shown twice.
    const std::vector<BigUInt> by_successes = binomial_weights(dice, 3, 6);
    for (int k = 0; k <= dice; ++k) {
      BigUInt distinct;
      if (dice <= 6 && k <= 3 && dice - k <= 3)
        distinct = BigUInt(small_comb(3, k) * small_comb(3, dice - k) * factorial(dice));
      BigUInt rest = by_successes[static_cast<std::size_t>(k)];
      rest -= distinct;
      dist.weights[2 * k] += distinct;
      dist.weights[2 * k + 1] += rest;
    }
    return outcomes_of(dist);
  }
  // pool(dice, 4): each die fails (1-3), succeeds (4, 5) or rolls a 6; Perils on two 6s.
  std::vector<BigUInt> ways(static_cast<std::size_t>(dice + 1) * 3);
  auto at = [](int k, int sixes) { return static_cast<std::size_t>(k) * 3 + sixes; };
  ways[at(0, 0)] = BigUInt(1);
  for (int i = 0; i < dice; ++i) {
    std::vector<BigUInt> next(ways.size());
    for (int k = 0; k <= i; ++k)
      for (int s = 0; s < 3; ++s) {
        const BigUInt& w = ways[at(k, s)];
        if (w.is_zero()) continue;
        next[at(k, s)] += w * BigUInt(3);
        next[at(k + 1, s)] += w * BigUInt(2);
        next[at(k + 1, std::min(s + 1, 2))] += w;
      }
    ways.swap(next);
  }
  for (int k = 0; k <= dice; ++k)
    for (int s = 0; s < 3; ++s) dist.weights[2 * k + (s >= 2 ? 1 : 0)] += ways[at(k, s)];
  return outcomes_of(dist);
}

int roll_sixths(int needed) {
  if (needed <= 0 || needed > 6) return 0;
  return 7 - std::max(needed, 2);
}

std::vector<Outcome> deny_outcomes(int dice, int threshold, int successes) {
  const uint64_t q = static_cast<uint64_t>(roll_sixths(threshold));
  const std::vector<BigUInt> w = binomial_weights(dice, q, 6);
  BigUInt denied;
  for (int k = std::max(successes, 0); k <= dice; ++k) denied += w[static_cast<std::size_t>(k)];
  return binary_outcomes(denied, BigUInt::power(6, dice));
}

std::vector<Outcome> leadership_outcomes(int leadership) {
  uint64_t pass = 0;
  for (int a = 1; a <= 6; ++a)
    for (int b = 1; b <= 6; ++b)
      if (a + b <= leadership) ++pass;
  return binary_outcomes(pass, 36);
}

int rolloff_wins(int ld_a, int ld_b) {
  int wins = 0;
  for (int a = 1; a <= 6; ++a)
    for (int b = 1; b <= 6; ++b)
      if (a + ld_a > b + ld_b) ++wins;
  return wins;
}

int to_wound_7th(int strength, int toughness) {
  const int diff = strength - toughness;
  if (diff >= 2) return 2;
  if (diff <= -4) return 0;
  static const int kRoll[] = {6, 6, 5, 4, 3};  // diff -3 .. 1
  return kRoll[diff + 3];
}

int unsaved_sixths(int save, int invulnerable, bool ap_none, int ap) {
  // armour = None if AP <= save value; a save of 7+ (or none) does not count.
  const int armour = (!ap_none && ap <= save) ? 0 : save;
  int best = 0;
  for (int n : {armour, invulnerable})
    if (n != 0 && n <= 6 && (best == 0 || n < best)) best = n;
  return 6 - (best == 0 ? 0 : roll_sixths(best));
}

WeightedDist attack_wounds(const WeightedDist& hits, uint64_t p_num, uint64_t p_den,
                           const WeightedDist& damage, int wounds_left, int per_model,
                           bool instant) {
  // Unsaved wounds first (binomial of each number of hits; a negative number lists none),
  // over hits.total * p_den^most.
  int most = 0;
  for (const auto& [h, w] : hits.weights) most = std::max(most, h);
  std::vector<BigUInt> unsaved(static_cast<std::size_t>(most) + 1);
  for (const auto& [h, w] : hits.weights) {
    if (h < 0 || w.is_zero()) continue;
    const std::vector<BigUInt> b = binomial_weights(h, p_num, p_den);
    const BigUInt scale = w * BigUInt::power(p_den, most - h);
    for (int k = 0; k <= h; ++k)
      unsaved[static_cast<std::size_t>(k)] += b[static_cast<std::size_t>(k)] * scale;
  }
  const BigUInt unsaved_total = hits.total * BigUInt::power(p_den, most);
  // allocate_wounds, one unsaved wound at a time: after k of them, wounds left over td^k.
  const BigUInt td = instant ? BigUInt(1) : damage.total;
  WeightedDist out;
  std::map<int, BigUInt> left{{wounds_left, BigUInt(1)}};
  std::vector<BigUInt> td_powers{BigUInt(1)};
  for (int k = 1; k <= most; ++k) td_powers.push_back(td_powers.back() * td);
  out.total = unsaved_total * td_powers[static_cast<std::size_t>(most)];
  for (int k = 0; k <= most; ++k) {
    if (k > 0) {
      std::map<int, BigUInt> next;
      for (const auto& [w, p] : left) {
        if (w <= 0) {
          next[0] += p * td;
          continue;
        }
        const int model = w % per_model != 0 ? w % per_model : per_model;
        if (instant) {
          next[w - model] += p;
          continue;
        }
        for (const auto& [d, pd] : damage.weights)
          next[w - std::min(std::max(d, 0), model)] += p * pd;
      }
      left.swap(next);
    }
    const BigUInt& u = unsaved[static_cast<std::size_t>(k)];
    if (u.is_zero()) continue;
    const BigUInt scale = u * td_powers[static_cast<std::size_t>(most - k)];
    for (const auto& [w, p] : left) out.weights[wounds_left - w] += p * scale;
  }
  return out;
}

}  // namespace seventh
}  // namespace psygym
