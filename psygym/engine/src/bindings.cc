// The Python module psygym.engine._core: one binding of the Game interface and the solver for
// every edition. States cross as bytes; every state handed in is checked (size, then the
// edition's check_state) and every action is checked against the node's legal actions or
// chance outcomes before the rules see it, so no input from Python can crash the process.
// EngineError becomes one Python exception per code (ValueError, ScenarioError, StateLimit).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exact.h"
#include "game.h"
#include "random.h"
#include "solver.h"

namespace py = pybind11;

namespace psygym {
namespace {

// Checked view of a state handed in from Python.
std::string checked(const Game& game, const py::bytes& state) {
  std::string s = state;
  if (s.size() != game.state_size())
    throw EngineError(ErrorCode::kValue, "a state of this game has " +
                                             std::to_string(game.state_size()) +
                                             " bytes, not " + std::to_string(s.size()));
  std::string problem = game.check_state(reinterpret_cast<const uint8_t*>(s.data()));
  if (!problem.empty()) throw EngineError(ErrorCode::kValue, "not a state of this game: " + problem);
  return s;
}

const uint8_t* bytes_of(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

py::bytes as_bytes(const std::vector<uint8_t>& v) {
  return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

// The game and the scenario data it was made from (kept for pickling and repr).
struct PyGame {
  std::string id;
  std::unique_ptr<Game> game;
};

// A solver and the game it searches (kept alive by the binding).
struct PySolver {
  const PyGame* game;
  std::unique_ptr<Solver> solver;
};

py::bytes apply_checked(const PyGame& g, const py::bytes& state, int64_t action) {
  const Game& game = *g.game;
  std::string s = checked(game, state);
  const int player = game.current_player(bytes_of(s));
  bool ok = false;
  if (player == kChance) {
    std::vector<Outcome> outcomes;
    game.chance_outcomes(bytes_of(s), &outcomes);
    ok = std::any_of(outcomes.begin(), outcomes.end(),
                     [&](const Outcome& o) { return o.action == action; });
  } else if (player >= 0) {
    std::vector<int32_t> legal;
    game.legal_actions(bytes_of(s), &legal);
    ok = std::find(legal.begin(), legal.end(), action) != legal.end();
  }
  if (!ok)
    throw EngineError(ErrorCode::kValue,
                      player == kTerminal
                          ? "the game is over: no action applies"
                          : "action " + std::to_string(action) + " is not legal in this state");
  std::vector<uint8_t> out(game.state_size());
  game.apply(bytes_of(s), static_cast<int32_t>(action), out.data());
  return as_bytes(out);
}

}  // namespace
}  // namespace psygym

PYBIND11_MODULE(_core, m) {
  using namespace psygym;
  m.doc() = "psygym's compiled engine: every edition's rules and the exact solver.";

  static py::exception<EngineError> state_limit(m, "StateLimitError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const EngineError& e) {
      switch (e.code()) {
        case ErrorCode::kStateLimit:
          py::set_error(state_limit, e.what());
          return;
        case ErrorCode::kScenario: {
          py::object error = py::module_::import("psygym.scenario").attr("ScenarioError");
          py::set_error(error, error("compiled engine", "", e.what()));
          return;
        }
        case ErrorCode::kValue:
        default:
          py::set_error(PyExc_ValueError, e.what());
          return;
      }
    }
  });

  m.def("registered_games", &registered_games, "Ids of the compiled games, sorted.");
  m.def(
      "pcg64_doubles",
      [](uint64_t state_hi, uint64_t state_lo, uint64_t inc_hi, uint64_t inc_lo, int n) {
        if (n < 0 || n > 1000000) throw EngineError(ErrorCode::kValue, "n must be 0 to 1,000,000");
        Pcg64 rng((static_cast<Pcg64::u128>(state_hi) << 64) | state_lo,
                  (static_cast<Pcg64::u128>(inc_hi) << 64) | inc_lo);
        std::vector<double> out(static_cast<std::size_t>(n));
        for (double& x : out) x = rng.next_double();
        return out;
      },
      py::arg("state_hi"), py::arg("state_lo"), py::arg("inc_hi"), py::arg("inc_lo"), py::arg("n"),
      "n draws of numpy's Generator.random() from a PCG64 state (a check of the core's draws).");
  m.def(
      "exact_ratio",
      [](uint64_t num, uint64_t den) {
        if (den == 0 || num > den)
          throw EngineError(ErrorCode::kValue, "exact_ratio needs 0 <= num <= den and den > 0");
        return exact_ratio(num, den);
      },
      py::arg("num"), py::arg("den"),
      "num / den correctly rounded, as the chance tables compute probabilities.");

  py::class_<PyGame>(m, "Game", "The compiled rules of one scenario (states are bytes).")
      .def(py::init([](const std::string& id, std::vector<int64_t> ints,
                       std::vector<double> reals) {
             ScenarioData d{std::move(ints), std::move(reals)};
             return PyGame{id, make_game(id, d)};
           }),
           py::arg("id"), py::arg("ints"), py::arg("reals"))
      .def_property_readonly("id", [](const PyGame& g) { return g.id; })
      .def_property_readonly("state_size", [](const PyGame& g) { return g.game->state_size(); })
      .def("check_state",
           [](const PyGame& g, const py::bytes& state) {
             std::string s = state;
             if (s.size() != g.game->state_size()) return std::string("wrong size");
             return g.game->check_state(bytes_of(s));
           },
           "Empty if the bytes are a state of this game, else what is wrong.")
      .def("initial_state",
           [](const PyGame& g) {
             std::vector<uint8_t> out(g.game->state_size());
             g.game->initial_state(out.data());
             return as_bytes(out);
           })
      .def("current_player",
           [](const PyGame& g, const py::bytes& state) {
             return g.game->current_player(bytes_of(checked(*g.game, state)));
           })
      .def("legal_actions",
           [](const PyGame& g, const py::bytes& state) {
             std::vector<int32_t> out;
             g.game->legal_actions(bytes_of(checked(*g.game, state)), &out);
             return out;
           })
      .def("chance_outcomes",
           [](const PyGame& g, const py::bytes& state) {
             std::vector<Outcome> out;
             g.game->chance_outcomes(bytes_of(checked(*g.game, state)), &out);
             std::vector<std::pair<int32_t, double>> pairs;
             pairs.reserve(out.size());
             for (const Outcome& o : out) pairs.emplace_back(o.action, o.probability);
             return pairs;
           })
      .def("apply", &apply_checked, py::arg("state"), py::arg("action"),
           "The next state; ValueError unless the action is legal (or a chance outcome).")
      .def("returns", [](const PyGame& g, const py::bytes& state) {
        double r[2];
        g.game->returns(bytes_of(checked(*g.game, state)), r);
        return std::make_pair(r[0], r[1]);
      });

  py::class_<PySolver>(m, "Solver", "Exact expectiminimax over a compiled game, memoised.")
      .def(py::init([](const PyGame& g, int64_t max_states) {
             return PySolver{&g, std::make_unique<Solver>(*g.game, max_states)};
           }),
           py::arg("game"), py::arg("max_states") = -1, py::keep_alive<1, 2>())
      .def_property_readonly("states", [](const PySolver& s) { return s.solver->states(); })
      .def_property_readonly("memory_bytes",
                             [](const PySolver& s) { return s.solver->memory_bytes(); })
      .def("set_progress",
           [](PySolver& s, py::object progress) {
             if (progress.is_none()) {
               s.solver->set_progress(nullptr);
               return;
             }
             s.solver->set_progress([progress](std::size_t n) {
               py::gil_scoped_acquire gil;
               progress(n);
             });
           },
           "Call progress(states) every 10,000 new states (None: no calls).")
      .def("value",
           [](PySolver& s, const py::bytes& state) {
             std::string st = checked(*s.game->game, state);
             py::gil_scoped_release release;
             return s.solver->value(bytes_of(st));
           },
           py::arg("state"), "Expected final score of player 0 with both players optimal.")
      .def("child_values",
           [](PySolver& s, const py::bytes& state) {
             std::string st = checked(*s.game->game, state);
             std::vector<int32_t> actions;
             std::vector<double> values;
             {
               py::gil_scoped_release release;
               s.solver->child_values(bytes_of(st), &actions, &values);
             }
             std::vector<std::pair<int32_t, double>> out;
             for (std::size_t i = 0; i < actions.size(); ++i)
               out.emplace_back(actions[i], values[i]);
             return out;
           },
           py::arg("state"), "Each legal action with its child's value for player 0.");
}
