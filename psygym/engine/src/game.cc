#include "game.h"

#include <algorithm>
#include <map>

#include "random.h"

namespace psygym {
namespace {

std::map<std::string, GameFactory>& registry() {
  static std::map<std::string, GameFactory> games;
  return games;
}

}  // namespace

void Game::observe(const uint8_t*, int, float*) const {
  throw EngineError(ErrorCode::kValue, "this game has no compiled observation");
}

int32_t Game::sample_chance(const uint8_t* s, Pcg64& rng, std::vector<Outcome>& outcomes) const {
  chance_outcomes(s, &outcomes);
  if (outcomes.empty()) throw EngineError(ErrorCode::kValue, "not a chance node");
  return outcomes[weighted_index(outcomes, rng)].action;
}

GameRegistrar::GameRegistrar(const char* id, GameFactory factory) { registry()[id] = factory; }

std::unique_ptr<Game> make_game(const std::string& id, const ScenarioData& data) {
  auto it = registry().find(id);
  if (it == registry().end()) {
    std::string known;
    for (const auto& name : registered_games()) known += (known.empty() ? "" : ", ") + name;
    throw EngineError(ErrorCode::kValue,
                      "no compiled game '" + id + "' (compiled: " + known + ")");
  }
  return it->second(data);
}

std::vector<std::string> registered_games() {
  std::vector<std::string> out;
  for (const auto& kv : registry()) out.push_back(kv.first);
  return out;
}

}  // namespace psygym
