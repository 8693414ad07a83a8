// The game interface every edition's compiled twin implements, and the registry that finds them.
//
// A state is a fixed number of bytes: each edition keeps one trivially copyable struct of
// fixed-width integers (zero-initialised, so equal states are equal bytes) and casts the bytes
// to it. The shared code (solver, bindings) never looks inside a state: it copies, hashes and
// compares the bytes. An edition registers itself with a static GameRegistrar, so nothing here
// names an edition (STYLE.md section 7).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace psygym {

class Pcg64;  // random.h

// current_player() values, as in psygym/core.py.
constexpr int kChance = -1;
constexpr int kTerminal = -2;

// What went wrong, mapped to one Python exception each by the bindings.
enum class ErrorCode : int {
  kValue = 1,        // ValueError: a malformed state, an action that is not legal here
  kScenario = 2,     // psygym.scenario.ScenarioError: scenario data the game cannot take
  kStateLimit = 3,   // the solver's state limit (NotSolvable in Python)
};

// The one error type that crosses the boundary. Nothing on a path Python can reach aborts.
class EngineError : public std::exception {
 public:
  EngineError(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
  std::string message_;
};

// One outcome of a chance node: the action that picks it and its exact probability (the
// correctly rounded quotient of exact integers, bit-identical to Python's float(Fraction)).
struct Outcome {
  int32_t action;
  double probability;
};

// A scenario as flat numbers, encoded and validated by the edition's Python codec.
struct ScenarioData {
  std::vector<int64_t> ints;
  std::vector<double> reals;
};

// The rules of one scenario of one edition. All methods are const and thread-compatible.
// `s` always points at state_size() bytes that check_state() accepted; `action` is legal
// (a legal action at a decision node, one of chance_outcomes() at a chance node).
class Game {
 public:
  virtual ~Game() = default;

  virtual std::size_t state_size() const = 0;
  // Empty if the bytes are a state this game can hold, else what is wrong (in one line).
  // Everything else may assume a checked state: the bindings call this on every state they
  // are handed, so no bytes from Python reach the rules unchecked.
  virtual std::string check_state(const uint8_t* s) const = 0;
  virtual void initial_state(uint8_t* out) const = 0;
  virtual int current_player(const uint8_t* s) const = 0;
  // Sorted legal actions of the player to move (empty at chance and terminal nodes).
  virtual void legal_actions(const uint8_t* s, std::vector<int32_t>* out) const = 0;
  // Exact outcomes in the reference's order (empty at decision and terminal nodes).
  virtual void chance_outcomes(const uint8_t* s, std::vector<Outcome>* out) const = 0;
  // The next state after a decision or a chance outcome, into `out`: either other bytes or `s`
  // itself (the state then changes in place; an episode steps its state so).
  virtual void apply(const uint8_t* s, int32_t action, uint8_t* out) const = 0;
  // Scores of players 0 and 1 so far.
  virtual void returns(const uint8_t* s, double out[2]) const = 0;
  // Where `s` stands in the game, (battle round, step within the round), as the reference's
  // rules.horizon: the unit of the search agent's lookahead ends where the pair changes. The
  // default makes the whole game one unit, as psygym/core.py's RulesBase.horizon.
  virtual void horizon(const uint8_t* s, int32_t out[2]) const {
    (void)s;
    out[0] = 0;
    out[1] = 0;
  }
  // The Psychic phase `s` is in, as the reference's rules.phase_horizon: the unit of the
  // search agent's whole-phase search ends where the pair changes. The default is horizon()
  // (an edition whose unit of lookahead is already a phase, such as a Rogue Trader turn).
  virtual void phase_horizon(const uint8_t* s, int32_t out[2]) const { horizon(s, out); }
  // Whether horizon() is the twin of the edition's own rules.horizon. The differential check
  // compares it and the core's lookahead searches on it only then: an edition whose reference
  // has a horizon but whose twin keeps the default is searched in Python.
  virtual bool has_horizon() const { return false; }
  // A secret pair of decisions at `s`, as the reference's rules.simultaneous_info: true with
  // the row player's (the player to move's) actions and the column player's, who decides next
  // without seeing the row; false where `s` is no such node (the default: no secret moves).
  virtual bool simultaneous(const uint8_t* s, std::vector<int32_t>* rows,
                            std::vector<int32_t>* cols) const {
    (void)s;
    (void)rows;
    (void)cols;
    return false;
  }
  // Whether simultaneous() is the twin of the edition's rules.simultaneous_info: the core's
  // solver then plays the secret pairs as matrix games; otherwise they are searched in Python.
  virtual bool has_simultaneous() const { return false; }
  // Bounds on what the rest of the game from `s` adds to player 0's score, into out[0] (low)
  // and out[1] (high), as the reference's rules.rest_bounds: the search agent's board value is
  // clamped to them at a leaf. The default is the reference's: unbounded.
  virtual void rest_bounds(const uint8_t* s, double out[2]) const {
    (void)s;
    out[0] = -std::numeric_limits<double>::infinity();
    out[1] = std::numeric_limits<double>::infinity();
  }

  // Length of observe()'s vector; 0 where the game has no compiled observation.
  virtual std::size_t observation_size() const { return 0; }
  // What `player` (0 or 1) may see, bit-identical to the reference's float32 `observe`.
  virtual void observe(const uint8_t* s, int player, float* out) const;
  // One chance outcome drawn with `rng` as the reference env draws it at a chance node. The
  // default is psygym.core.RulesBase.sample_chance (kernel.weighted_choice over
  // chance_outcomes(): no draw for a single outcome); an edition whose env walks chance with
  // other draws (its fast walk) overrides it. `s` is a chance node; `scratch` is the caller's
  // buffer for the outcomes (no allocation per node, and no thread-local storage to reach).
  virtual int32_t sample_chance(const uint8_t* s, Pcg64& rng,
                                std::vector<Outcome>& scratch) const;
};

using GameFactory = std::unique_ptr<Game> (*)(const ScenarioData& data);

// Registers an edition's factory under its id (one static GameRegistrar per edition).
struct GameRegistrar {
  GameRegistrar(const char* id, GameFactory factory);
};

// The game of edition `id` for `data`; EngineError(kValue) for an unknown id.
std::unique_ptr<Game> make_game(const std::string& id, const ScenarioData& data);
// The ids registered, sorted.
std::vector<std::string> registered_games();

}  // namespace psygym
