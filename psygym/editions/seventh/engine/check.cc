// check_state: which bytes are a state of this scenario, and the game's registration.
//
// Every index, count, enum and flag is range-checked against the scenario, and each stage's
// preconditions hold (a cast to resolve, a target, a pool to cast from, a power to purge), so
// every method is memory-safe on an accepted state and every decision has a legal action and
// every chance node an outcome. The accepted set is closed under apply: every state reached
// from an accepted one is accepted too.
#include <cmath>
#include <memory>
#include <string>

#include "rules.h"

namespace psygym {
namespace seventh {

std::string SeventhGame::check_state(const uint8_t* bytes) const {
  ConstState s(bytes, layout_);
  const double score = s.score();
  if (!std::isfinite(score)) return "the score is not a finite number";
  if (score == 0.0 && std::signbit(score)) return "the score is -0.0 (states hold 0.0)";
  if ((bytes[kFlags] & 0x80) != 0) return "bit 7 of the flags byte is set";
  const int stage = s.stage();  // 4 bits: every value is a stage (0 to 15)
  if (stage != kOver && s.phase() >= n_.total_phases)
    return "phase " + std::to_string(s.phase()) + " is past the game's phases";
  for (int side = 0; side < 2; ++side)
    if (s.pool(side) > n_.max_dice) return "a pool is larger than the largest possible pool";
  if (!s.has_cast()) {
    if (s.perils()) return "a perils flag without a cast";
    for (int f = kCaster; f <= kDenyDice; ++f)
      if (bytes[f] != 0) return "cast fields are set without a cast";
  } else {
    if (s.caster() >= n_.units || s.target() >= n_.units) return "the cast's unit is out of range";
    if (!n_.unit[static_cast<std::size_t>(s.caster())].psyker)
      return "the cast's caster has no psyker profile";
    if (s.power() >= n_.powers) return "the cast's power is out of range";
    if (s.dice() > n_.max_dice || s.successes() > n_.max_dice || s.deny_dice() > n_.max_dice)
      return "the cast's dice are out of range";
  }
  if (s.perils_roll() > 6) return "the perils roll is out of range";
  if (s.gen_unit() >= n_.units || s.gen_disc() >= n_.disciplines || s.gen_power() >= n_.powers)
    return "a generation field is out of range";
  if (s.gen_pick() > kMaxGenerated) return "gen_pick is out of range";
  for (int u = 0; u < n_.units; ++u) {
    const UnitData& spec = n_.unit[static_cast<std::size_t>(u)];
    if (s.wounds(u) > spec.max_wounds) return "a unit has more than its wounds";
    if (s.psyker(u) && !spec.psyker) return "a unit without a psyker profile is a psyker";
    if (!spec.psyker || !layout_.generate) continue;
    const int count = s.generated_count(u);
    if (count > kMaxGenerated) return "a unit generated more than 4 powers";
    for (int k = 0; k < kMaxGenerated; ++k) {
      if (k < count && s.generated(u, k) >= n_.disciplines)
        return "a generated discipline is out of range";
      if (k >= count && s.generated(u, k) != 0) return "generated entries past the count";
    }
  }
  // Every bit of the bitset means something (state.h); the bits after it and the padding are 0.
  const int used = layout_.bits * 8 + layout_.bit_count;
  for (int i = used / 8; i < layout_.size; ++i)
    if ((i == used / 8 ? bytes[i] >> (used % 8) : bytes[i]) != 0)
      return "bits past the state's sets are set";

  // Each stage's preconditions.
  const bool needs_cast = stage == kDice || (stage >= kCastRoll && stage <= kEffect);
  if (needs_cast && !s.has_cast()) return "no cast at a casting stage";
  switch (stage) {
    case kDiscipline:
    case kGenRoll:
    case kSwap: {
      const int u = s.gen_unit();
      if (u < 0 || !n_.unit[u].psyker || n_.unit[u].disciplines.empty())
        return "no psyker generating powers at a generation stage";
      if (s.gen_pick() >= n_.unit[u].mastery || s.generated_count(u) != s.gen_pick())
        return "the generation count does not match the pick";
      for (int v = u + 1; v < n_.units; ++v)
        if (s.generated_count(v) != 0) return "a later psyker has generated powers already";
      if (stage == kDiscipline && open_disciplines(s, u, nullptr) == 0)
        return "no discipline left to generate from";
      if (stage != kDiscipline && s.gen_disc() < 0) return "no discipline chosen";
      if (stage == kGenRoll) {
        bool left = false;
        for (int p : n_.numbered[static_cast<std::size_t>(s.gen_disc())])
          left = left || !s.knows(u, p);
        if (!left) return "no power left to roll";
      }
      if (stage == kSwap &&
          (s.gen_power() < 0 || n_.primaris[static_cast<std::size_t>(s.gen_disc())] < 0))
        return "nothing to keep or swap";
      break;
    }
    case kSelect:
      if (s.pool(s.active()) < 1) return "the casting decision with an empty pool";
      break;
    case kDice:
      if (s.pool(s.active()) < 1) return "choosing dice with an empty pool";
      break;
    case kCastRoll:
      if (s.dice() < 1 || s.dice() > s.pool(s.active())) return "casting dice out of the pool";
      break;
    case kLdTest:
      if (s.perils_roll() < 1) return "a Leadership test without a perils roll";
      break;
    case kPurge: {
      if (s.known_count(s.caster()) == 0) return "Mental Purge with no power to take";
      break;
    }
    case kDenyRoll:
      if (s.deny_dice() < 1) return "a deny roll without deny dice";
      break;
    case kEffect:
      if (s.first_target() < 0) return "a power's effect without a target";
      if (n_.power[static_cast<std::size_t>(s.power())].effect == kValue)
        return "a value power rolling for wounds";
      break;
    default:
      break;
  }
  return "";
}

namespace {

std::unique_ptr<Game> make(const ScenarioData& data) {
  return std::make_unique<SeventhGame>(read_scenario(data));
}

const GameRegistrar registrar("7th", &make);

}  // namespace
}  // namespace seventh
}  // namespace psygym
