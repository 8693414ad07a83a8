#include "lookahead.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "game.h"

namespace psygym {
namespace {

#if defined(__GNUC__)
typedef double Quad __attribute__((vector_size(32)));    // four doubles, one per lane
typedef int64_t Quad64 __attribute__((vector_size(32)));  // their bits
#endif

void refuse(const std::string& what) {
  throw EngineError(ErrorCode::kValue, "board value: " + what);
}

void check_finite(const std::vector<double>& v, const std::string& name) {
  for (double x : v)
    if (!std::isfinite(x)) refuse(name + " holds NaN or infinite values (allowed: finite numbers)");
}

// The two hot loops below are also built for AVX2, chosen at load time where the CPU has it:
// each vector lane is one output, so both builds give the same bits (and no fused
// multiply-add: -ffp-contract=off).
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
#define PSYGYM_ALSO_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define PSYGYM_ALSO_AVX2
#endif

// y = base + sum over k of x[k] * (row rows[k] of w), for w row-major with `out` columns. A
// dense layer is every row in order from a base of zeros.
#if defined(__GNUC__)
// sum_rows for outputs [j0, j0 + 4 * kQuads): their sums held in registers over all the rows,
// kQuads independent chains of additions (so each waits less on the one before).
template <int kQuads>
inline void sum_block(const double* base, const double* x, const int* rows, std::size_t m,
                      const double* w, std::size_t out, std::size_t j0, double* y) {
  Quad acc[kQuads];
  std::memcpy(acc, base + j0, sizeof acc);
  for (std::size_t k = 0; k < m; ++k) {
    const Quad xk = {x[k], x[k], x[k], x[k]};
    const double* row = w + static_cast<std::size_t>(rows[k]) * out + j0;
    for (int q = 0; q < kQuads; ++q) {
      Quad wq;
      std::memcpy(&wq, row + 4 * q, sizeof wq);
      acc[q] += xk * wq;
    }
  }
  std::memcpy(y + j0, acc, sizeof acc);
}
#endif

PSYGYM_ALSO_AVX2
void sum_rows(const double* base, const double* x, const int* rows, std::size_t m,
              const double* w, std::size_t out, double* y) {
  std::size_t j0 = 0;
#if defined(__GNUC__)
  for (; j0 + 32 <= out; j0 += 32) sum_block<8>(base, x, rows, m, w, out, j0, y);
  for (; j0 + 8 <= out; j0 += 8) sum_block<2>(base, x, rows, m, w, out, j0, y);
#endif
  for (std::size_t j = j0; j < out; ++j) {
    // Four partial sums (the value's last layer is one such output, a long chain otherwise).
    double acc[4] = {base[j], 0.0, 0.0, 0.0};
    std::size_t k = 0;
    for (; k + 4 <= m; k += 4)
      for (std::size_t q = 0; q < 4; ++q)
        acc[q] += x[k + q] * w[static_cast<std::size_t>(rows[k + q]) * out + j];
    for (; k < m; ++k) acc[0] += x[k] * w[static_cast<std::size_t>(rows[k]) * out + j];
    y[j] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  }
}

// y = tanh(y) as (1 - t) / (1 + t) with t = exp(-2|y|), within about 3e-16 of std::tanh (an
// absolute error, which is what the next layer's sums see) at a fraction of its cost.
#if defined(__GNUC__)
// exp(z) for z in [-40, 0], within a few ulp of std::exp: z = k ln2 + r with |r| <= ln2 / 2
// (ln2 in two parts, so r is exact to about 1e-20), e^r by its Taylor series to r^13 (the
// rest is below 1e-17), times 2^k put in the exponent bits. Four at a time, in place (a
// vector passed by value would change the ABI between builds with and without AVX).
inline void exp_quad(Quad* io) {
  const Quad z = *io;
  const double kMagic = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const Quad kd = z * 1.4426950408889634 + kMagic;  // kMagic + round(z / ln2)
  const Quad k = kd - kMagic;
  const Quad r = (z - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
  Quad p = Quad{} + 1.0 / 6227020800.0;  // 1/13!, then Horner down to 1/0!
  const double inv[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                        1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,      1.0 / 120.0,
                        1.0 / 24.0,        1.0 / 6.0,        0.5,              1.0,
                        1.0};
  for (double c : inv) p = p * r + c;
  Quad64 bits;
  std::memcpy(&bits, &kd, sizeof bits);  // the mantissa of kd holds 2^51 + k
  bits = ((bits & 0xFFFFFFFFFFFFFLL) - 0x8000000000000LL + 1023) << 52;  // 2^k, k >= -58
  Quad scale;
  std::memcpy(&scale, &bits, sizeof scale);
  *io = p * scale;
}
#endif

PSYGYM_ALSO_AVX2
void tanh_all(double* y, std::size_t n) {
  std::size_t j = 0;
#if defined(__GNUC__)
  for (; j + 4 <= n; j += 4) {
    Quad v;
    std::memcpy(&v, y + j, sizeof v);
    Quad z;
    for (int q = 0; q < 4; ++q) z[q] = std::max(-2.0 * std::fabs(v[q]), -40.0);
    exp_quad(&z);
    const Quad u = (1.0 - z) / (1.0 + z);
    for (int q = 0; q < 4; ++q) y[j + q] = v[q] < 0 ? -u[q] : u[q];
  }
#endif
  for (; j < n; ++j) {
    const double t = std::exp(-2.0 * std::fabs(y[j]));
    const double u = (1.0 - t) / (1.0 + t);
    y[j] = y[j] < 0 ? -u : u;
  }
}

}  // namespace

ValueNet::ValueNet(std::vector<double> mean, std::vector<double> scale,
                   std::vector<DenseLayer> layers)
    : mean_(std::move(mean)), scale_(std::move(scale)), layers_(std::move(layers)) {
  if (mean_.empty()) refuse("mean is empty (one entry per observation entry)");
  if (scale_.size() != mean_.size())
    refuse("scale has " + std::to_string(scale_.size()) + " entries, mean " +
           std::to_string(mean_.size()) + " (one each per observation entry)");
  check_finite(mean_, "mean");
  check_finite(scale_, "scale");
  if (std::find(scale_.begin(), scale_.end(), 0.0) != scale_.end())
    refuse("scale holds 0 (the input is divided by it)");
  if (layers_.empty()) refuse("no layers (at least one, the last with one output)");
  std::size_t rows = mean_.size();
  widest_ = rows;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const DenseLayer& l = layers_[i];
    const std::string name = "layer " + std::to_string(i);
    if (l.inputs < 1 || static_cast<std::size_t>(l.inputs) != rows)
      refuse(name + " reads " + std::to_string(l.inputs) + " entries, the one before gives " +
             std::to_string(rows));
    if (l.outputs < 1) refuse(name + " has no outputs");
    if (l.w.size() != static_cast<std::size_t>(l.inputs) * static_cast<std::size_t>(l.outputs))
      refuse(name + "'s weights are not " + std::to_string(l.inputs) + " by " +
             std::to_string(l.outputs));
    if (l.b.size() != static_cast<std::size_t>(l.outputs))
      refuse(name + "'s bias has " + std::to_string(l.b.size()) + " entries, not " +
             std::to_string(l.outputs));
    check_finite(l.w, name + "'s weights");
    check_finite(l.b, name + "'s bias");
    rows = static_cast<std::size_t>(l.outputs);
    widest_ = std::max(widest_, rows);
  }
  if (rows != 1) refuse("the last layer has " + std::to_string(rows) + " outputs, not 1");
  // The first layer's sums over an observation of zeros, which most entries are.
  const std::size_t n = mean_.size(), out = static_cast<std::size_t>(layers_[0].outputs);
  zero_input_.resize(n);
  inverse_scale_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    inverse_scale_[i] = 1.0 / scale_[i];
    zero_input_[i] = (0.0 - mean_[i]) * inverse_scale_[i];
  }
  zero_sums_.assign(out, 0.0);
  all_rows_.resize(widest_);
  for (std::size_t i = 0; i < widest_; ++i) all_rows_[i] = static_cast<int>(i);
  zeros_.assign(widest_, 0.0);
  sum_rows(zeros_.data(), zero_input_.data(), all_rows_.data(), n, layers_[0].w.data(), out,
           zero_sums_.data());
}

double ValueNet::operator()(const float* obs) const {
  // Scratch per thread, so no allocation per leaf: two layers' values, the rows of the
  // observation that are not zero and their inputs' changes.
  thread_local std::vector<double> a, b, change;
  thread_local std::vector<int> rows;
  if (a.size() < widest_) {
    a.resize(widest_);
    b.resize(widest_);
    change.resize(widest_);
    rows.resize(widest_);
  }
  // The first layer from its sums over zeros: each entry that is not zero adds its row of
  // weights times the change in its input (its input less its input at zero).
  const std::size_t n = mean_.size();
  std::size_t m = 0;
  for (std::size_t i0 = 0; i0 < n; i0 += 8) {
    const std::size_t end = std::min(n, i0 + 8);
    if (end == i0 + 8) {  // eight zeros (of either sign) at once, as most are
      uint32_t bits[8];
      std::memcpy(bits, obs + i0, sizeof bits);
      uint32_t any = 0;
      for (uint32_t word : bits) any |= word << 1;  // the sign bit shifted out
      if (any == 0) continue;
    }
    for (std::size_t i = i0; i < end; ++i) {
      rows[m] = static_cast<int>(i);
      m += obs[i] != 0.0f;
    }
  }
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t i = static_cast<std::size_t>(rows[k]);
    change[k] = (static_cast<double>(obs[i]) - mean_[i]) * inverse_scale_[i] - zero_input_[i];
  }
  const std::size_t last = layers_.size() - 1;
  for (std::size_t k = 0; k < layers_.size(); ++k) {
    const DenseLayer& l = layers_[k];
    const std::size_t out = static_cast<std::size_t>(l.outputs);
    if (k == 0) {
      sum_rows(zero_sums_.data(), change.data(), rows.data(), m, l.w.data(), out, b.data());
    } else {
      sum_rows(zeros_.data(), a.data(), all_rows_.data(), static_cast<std::size_t>(l.inputs),
               l.w.data(), out, b.data());
    }
    for (std::size_t j = 0; j < out; ++j) b[j] += l.b[j];
    if (k < last) tanh_all(b.data(), out);
    std::swap(a, b);
  }
  return a[0];
}

}  // namespace psygym
