// Reading a scenario's flat numbers (ScenarioData) in order, as every twin's read_scenario does:
// each number checked against its allowed range before it is used, each refusal one
// EngineError(kScenario) that names the number and what is allowed. The codec validated the
// scenario already; these checks keep the core safe from numbers that did not come from it.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "game.h"

namespace psygym {

class ScenarioReader {
 public:
  // `label` begins every message, e.g. the twin's "<id> scenario data".
  ScenarioReader(const ScenarioData& data, std::string label)
      : data_(data), label_(std::move(label)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw EngineError(ErrorCode::kScenario, label_ + ": " + what);
  }

  int64_t next(const char* what, int64_t lo, int64_t hi) {
    if (at_ >= data_.ints.size())
      throw EngineError(ErrorCode::kScenario, label_ + " ends before " + what);
    const int64_t v = data_.ints[at_++];
    if (v < lo || v > hi)
      fail(std::string(what) + " is " + std::to_string(v) + ", allowed " + std::to_string(lo) +
           " to " + std::to_string(hi));
    return v;
  }
  int small(const char* what, int lo, int hi) { return static_cast<int>(next(what, lo, hi)); }
  bool flag(const char* what) { return small(what, 0, 1) != 0; }

  // A list of `max_len` items at most, each in [lo, hi], strictly increasing if `ascending`.
  std::vector<int> list(const char* what, int max_len, int lo, int hi, bool ascending) {
    const int len = small(what, 0, max_len);
    std::vector<int> out;
    for (int i = 0; i < len; ++i) {
      const int v = small(what, lo, hi);
      if (ascending && !out.empty() && v <= out.back())
        fail(std::string(what) + " are not in increasing order");
      out.push_back(v);
    }
    return out;
  }

  // A dice expression count D sides + modifier within psygym.scenario's MAX_DICE (20),
  // MAX_DIE_SIDES (20) and MAX_DICE_MODIFIER (20); with `paired`, dice need sides and sides
  // need dice. D is the twin's own dice struct (count, sides, modifier).
  template <class D>
  D dice(const char* what, bool paired) {
    D d;
    d.count = small(what, 0, 20);
    d.sides = small(what, 0, 20);
    d.modifier = small(what, -20, 20);
    if (paired && (d.sides == 0) != (d.count == 0))
      fail(std::string(what) + " has dice without sides or sides without dice");
    return d;
  }

  // A real within [lo, hi] (psygym.scenario keeps values and distances far inside 1e6).
  double real(const char* what, double lo = -1e6, double hi = 1e6) {
    if (real_at_ >= data_.reals.size())
      throw EngineError(ErrorCode::kScenario, label_ + " ends before " + what);
    const double v = data_.reals[real_at_++];
    if (!std::isfinite(v) || v < lo || v > hi)
      fail(std::string(what) + " is not a finite value from " + std::to_string(lo) + " to " +
           std::to_string(hi));
    return v;
  }

  // Every number read: none left over.
  void finish() const {
    if (at_ != data_.ints.size() || real_at_ != data_.reals.size())
      fail("numbers are left over");
  }

 private:
  const ScenarioData& data_;
  std::string label_;
  std::size_t at_ = 0;
  std::size_t real_at_ = 0;
};

}  // namespace psygym
