// The Python module psygym.engine._core: one binding of the Game interface and the solver for
// every edition. States cross as bytes; every state handed in is checked (size, then the
// edition's check_state) and every action is checked against the node's legal actions or
// chance outcomes before the rules see it, so no input from Python can crash the process.
// EngineError becomes one Python exception per code (ValueError, ScenarioError, StateLimit).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "batch.h"
#include "episode.h"
#include "exact.h"
#include "game.h"
#include "lookahead.h"
#include "matrix_game.h"
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

// A solver and the game it searches (kept alive by the binding). `busy` is taken with the
// GIL released around every call, so threads sharing a solver (the server's) take turns.
struct PySolver {
  const PyGame* game;
  std::unique_ptr<Solver> solver;
  std::shared_ptr<std::mutex> busy = std::make_shared<std::mutex>();
};

// A float64 numpy array of `ndim` dimensions (a copy), or ValueError naming `name`.
py::array_t<double> float_array(const py::object& value, int ndim, const std::string& name) {
  const std::string want =
      name + " must be a numpy array of " + std::to_string(ndim) + " dimension" +
      (ndim == 1 ? "" : "s") + " of real numbers";
  if (!py::isinstance<py::array>(value)) throw EngineError(ErrorCode::kValue, want);
  py::array arr = py::reinterpret_borrow<py::array>(value);
  const char kind = arr.dtype().kind();
  if ((kind != 'f' && kind != 'i' && kind != 'u') || arr.ndim() != ndim)
    throw EngineError(ErrorCode::kValue, want);
  return py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(arr);
}

std::vector<double> values_of(const py::array_t<double>& a) {
  return std::vector<double>(a.data(), a.data() + a.size());
}

// The ValueNet of BoardValue's arrays (agents/value/model.py), every one checked.
std::shared_ptr<ValueNet> value_net(const py::object& mean, const py::object& scale,
                                    const py::list& weights, const py::list& biases) {
  if (weights.size() != biases.size())
    throw EngineError(ErrorCode::kValue, "one bias per weight matrix: " +
                                             std::to_string(weights.size()) + " weights, " +
                                             std::to_string(biases.size()) + " biases");
  std::vector<DenseLayer> layers;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const std::string name = "layer " + std::to_string(i);
    py::array_t<double> w = float_array(weights[i], 2, name + "'s weights");
    py::array_t<double> b = float_array(biases[i], 1, name + "'s bias");
    constexpr py::ssize_t kMost = 1 << 20;  // entries per side, far past any board value
    if (w.shape(0) > kMost || w.shape(1) > kMost)
      throw EngineError(ErrorCode::kValue, name + "'s weights are too large");
    DenseLayer l;
    l.inputs = static_cast<int>(w.shape(0));
    l.outputs = static_cast<int>(w.shape(1));
    l.w = values_of(w);
    l.b = values_of(b);
    layers.push_back(std::move(l));
  }
  return std::make_shared<ValueNet>(values_of(float_array(mean, 1, "mean")),
                                    values_of(float_array(scale, 1, "scale")), std::move(layers));
}

// The Horizon of Solver(within=, steps=): within a pair of integers.
Horizon horizon_of(const py::object& within, int64_t steps, bool phases) {
  Horizon h;
  h.phases = phases;
  if (steps < 1 || steps > (int64_t{1} << 30))
    throw EngineError(ErrorCode::kValue,
                      "steps must be a whole number from 1 to 2**30, got " + std::to_string(steps));
  h.steps = static_cast<int32_t>(steps);
  const std::string want = "within must be a (round, step) pair of integers, as Game.horizon gives";
  if (!py::isinstance<py::tuple>(within) || py::len(within) != 2)
    throw EngineError(ErrorCode::kValue, want);
  py::tuple pair = py::reinterpret_borrow<py::tuple>(within);
  for (int i = 0; i < 2; ++i) {
    py::object item = pair[i];
    if (!py::isinstance<py::int_>(item) || py::isinstance<py::bool_>(item))
      throw EngineError(ErrorCode::kValue, want);
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
    if (overflow != 0 || v < INT32_MIN || v > INT32_MAX)
      throw EngineError(ErrorCode::kValue, want + " (each from -2**31 to 2**31 - 1)");
    h.within[i] = static_cast<int32_t>(v);
  }
  return h;
}

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

void check_player(int player) {
  if (player != 0 && player != 1)
    throw EngineError(ErrorCode::kValue,
                      "player must be 0 or 1, not " + std::to_string(player));
}

Pcg64::u128 join(uint64_t hi, uint64_t lo) { return (static_cast<Pcg64::u128>(hi) << 64) | lo; }

// A generator's state as four 64-bit words: state high, state low, increment high, low.
py::tuple words_of(const Pcg64& rng) {
  return py::make_tuple(static_cast<uint64_t>(rng.state() >> 64),
                        static_cast<uint64_t>(rng.state()), static_cast<uint64_t>(rng.inc() >> 64),
                        static_cast<uint64_t>(rng.inc()));
}

// A batch and the game it steps (kept alive by the binding).
struct PyBatch {
  const PyGame* game;
  std::unique_ptr<BatchEnv> env;
  std::vector<float> final_rows;  // step's scratch rows for the ended games' last observations
};

template <typename T>
py::array_t<T> rows(std::size_t n, std::size_t width) {
  if (width == 0) return py::array_t<T>(static_cast<py::ssize_t>(n));
  return py::array_t<T>({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(width)});
}

// A single env's game and the game it steps (kept alive by the binding).
struct PyEpisode {
  const PyGame* game;
  Episode episode;
};

// The learner's view after a reset or step: (obs [obs], mask [actions]).
py::tuple episode_view(const PyEpisode& e) {
  const Game& game = *e.game->game;
  py::array_t<float> obs(static_cast<py::ssize_t>(game.observation_size()));
  game.observe(e.episode.state().data(), e.episode.seat(), obs.mutable_data());
  const std::size_t n = static_cast<std::size_t>(e.episode.num_actions());
  py::array_t<bool> mask(static_cast<py::ssize_t>(n));
  bool* m = mask.mutable_data();
  std::fill(m, m + n, false);
  for (int32_t a : e.episode.legal()) m[a] = true;
  return py::make_tuple(obs, mask);
}

// The actions handed to BatchEnv.step as int64, or ValueError: a numpy integer array of shape
// (N,) whose every entry is a legal action of its game.
py::array_t<int64_t> checked_actions(const BatchEnv& env, const py::object& actions) {
  const std::size_t n = env.size();
  const std::string want = "actions must be a numpy integer array of shape (" +
                           std::to_string(n) + ",)";
  if (!py::isinstance<py::array>(actions)) throw EngineError(ErrorCode::kValue, want);
  py::array arr = py::reinterpret_borrow<py::array>(actions);
  const char kind = arr.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw EngineError(ErrorCode::kValue,
                      want + ", not of dtype " + py::str(arr.dtype()).cast<std::string>());
  if (arr.ndim() != 1 || static_cast<std::size_t>(arr.shape(0)) != n)
    throw EngineError(ErrorCode::kValue,
                      want + ", not of shape " +
                          py::str(actions.attr("shape")).cast<std::string>());
  auto out = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(arr);
  if (!out) throw EngineError(ErrorCode::kValue, want);
  const std::string problem = env.check_actions(out.data());
  if (!problem.empty()) throw EngineError(ErrorCode::kValue, problem);
  return out;
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
      "matrix_game_value",
      [](const std::vector<std::vector<double>>& payoff) {
        constexpr std::size_t kMost = 256;  // rows and columns: a tableau of about 1 MB
        const std::size_t rows = payoff.size(), cols = rows ? payoff[0].size() : 0;
        if (rows == 0 || cols == 0 || rows > kMost || cols > kMost)
          throw EngineError(ErrorCode::kValue, "a matrix game needs 1 to 256 rows and columns");
        std::vector<double> flat;
        flat.reserve(rows * cols);
        for (const std::vector<double>& row : payoff) {
          if (row.size() != cols)
            throw EngineError(ErrorCode::kValue,
                              "every row of a matrix game has one entry a column");
          for (double x : row) {
            if (!std::isfinite(x)) throw EngineError(ErrorCode::kValue, "a payoff must be finite");
            flat.push_back(x);
          }
        }
        return matrix_game_value(flat, static_cast<int>(rows), static_cast<int>(cols));
      },
      py::arg("payoff"),
      "The value to the row player (who maximises) of the zero-sum game payoff[row][col].");
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
      .def("returns",
           [](const PyGame& g, const py::bytes& state) {
             double r[2];
             g.game->returns(bytes_of(checked(*g.game, state)), r);
             return std::make_pair(r[0], r[1]);
           })
      .def("horizon",
           [](const PyGame& g, const py::bytes& state) {
             int32_t h[2];
             g.game->horizon(bytes_of(checked(*g.game, state)), h);
             return std::make_pair(h[0], h[1]);
           },
           py::arg("state"), "(battle round, step): the reference's rules.horizon.")
      .def("phase_horizon",
           [](const PyGame& g, const py::bytes& state) {
             int32_t h[2];
             g.game->phase_horizon(bytes_of(checked(*g.game, state)), h);
             return std::make_pair(h[0], h[1]);
           },
           py::arg("state"), "(battle round, phase): the reference's rules.phase_horizon.")
      .def("rest_bounds",
           [](const PyGame& g, const py::bytes& state) {
             double b[2];
             g.game->rest_bounds(bytes_of(checked(*g.game, state)), b);
             return std::make_pair(b[0], b[1]);
           },
           py::arg("state"), "(low, high): the reference's rules.rest_bounds.")
      .def_property_readonly("has_horizon", [](const PyGame& g) { return g.game->has_horizon(); },
                             "Whether horizon() is the edition's own (else the default (0, 0)).")
      .def_property_readonly(
          "has_simultaneous", [](const PyGame& g) { return g.game->has_simultaneous(); },
          "Whether the solver plays the edition's secret pairs of decisions as matrix games.")
      .def_property_readonly("observation_size",
                             [](const PyGame& g) { return g.game->observation_size(); },
                             "Length of observe()'s vector (0: no compiled observation).")
      .def("observe",
           [](const PyGame& g, const py::bytes& state, int player) {
             std::string s = checked(*g.game, state);
             check_player(player);
             const std::size_t size = g.game->observation_size();
             if (size == 0) g.game->observe(bytes_of(s), player, nullptr);  // throws
             py::array_t<float> out(static_cast<py::ssize_t>(size));
             g.game->observe(bytes_of(s), player, out.mutable_data());
             return out;
           },
           py::arg("state"), py::arg("player"),
           "What player (0 or 1) sees, float32, bit-identical to the reference's observe.")
      .def("sample_chance",
           [](const PyGame& g, const py::bytes& state, Pcg64& rng) {
             std::string s = checked(*g.game, state);
             if (g.game->current_player(bytes_of(s)) != kChance)
               throw EngineError(ErrorCode::kValue, "sample_chance needs a chance node");
             std::vector<Outcome> scratch;
             return g.game->sample_chance(bytes_of(s), rng, scratch);
           },
           py::arg("state"), py::arg("rng"),
           "One chance outcome drawn with rng (advanced) as the reference env draws it.")
      .def("walk_chance",
           [](const PyGame& g, const py::bytes& state, Pcg64& rng) {
             std::string s = checked(*g.game, state);
             std::vector<uint8_t> b(s.begin(), s.end());
             std::vector<int32_t> path;
             std::vector<Outcome> scratch;
             while (g.game->current_player(b.data()) == kChance) {
               const int32_t a = g.game->sample_chance(b.data(), rng, scratch);
               path.push_back(a);
               g.game->apply(b.data(), a, b.data());
             }
             return py::make_tuple(as_bytes(b), path);
           },
           py::arg("state"), py::arg("rng"),
           "The chance nodes from state on, drawn with rng (advanced) as the reference env "
           "draws them, to a decision or the end: (the state reached, the outcomes drawn).");

  py::class_<Pcg64>(m, "Pcg64",
                    "numpy's PCG64 in the core, from a state's four 64-bit words (see words).")
      .def(py::init([](uint64_t state_hi, uint64_t state_lo, uint64_t inc_hi, uint64_t inc_lo) {
             return Pcg64(join(state_hi, state_lo), join(inc_hi, inc_lo));
           }),
           py::arg("state_hi"), py::arg("state_lo"), py::arg("inc_hi"), py::arg("inc_lo"))
      .def_property_readonly("words", &words_of,
                             "(state_hi, state_lo, inc_hi, inc_lo) of the state now.")
      .def("random", &Pcg64::next_double, "One draw of numpy's Generator.random().");

  py::class_<PyBatch>(m, "BatchEnv",
                      "N games against a uniformly random opponent, stepped in one call.")
      .def(py::init([](const PyGame& g, int num_actions, std::vector<int> seats,
                       std::vector<Pcg64> generators) {
             return PyBatch{&g, std::make_unique<BatchEnv>(*g.game, num_actions,
                                                           std::move(seats),
                                                           std::move(generators)),
                            {}};
           }),
           py::arg("game"), py::arg("num_actions"), py::arg("seats"), py::arg("generators"),
           py::keep_alive<1, 2>())
      .def_property_readonly("size", [](const PyBatch& b) { return b.env->size(); })
      .def_property_readonly("observation_size",
                             [](const PyBatch& b) { return b.env->observation_size(); })
      .def_property_readonly("num_actions", [](const PyBatch& b) { return b.env->num_actions(); })
      .def_property_readonly("seats",
                             [](const PyBatch& b) {
                               std::vector<int> out;
                               for (std::size_t i = 0; i < b.env->size(); ++i)
                                 out.push_back(b.env->seat(i));
                               return out;
                             })
      .def("generator",
           [](const PyBatch& b, std::size_t i) {
             if (i >= b.env->size()) throw EngineError(ErrorCode::kValue, "no such game");
             return b.env->rng(i);
           },
           py::arg("index"), "A copy of game index's generator now.")
      .def("set_generators",
           [](PyBatch& b, const std::vector<Pcg64>& generators) {
             if (generators.size() != b.env->size())
               throw EngineError(ErrorCode::kValue,
                                 "one generator per game: " + std::to_string(b.env->size()));
             for (std::size_t i = 0; i < generators.size(); ++i)
               b.env->set_rng(i, generators[i]);
           },
           py::arg("generators"), "Give each game its generator (reset() then starts over).")
      .def("set_sampler", [](PyBatch& b, const Pcg64& rng) { b.env->set_sampler(rng); },
           py::arg("generator"), "Seed the generator of sample_legal().")
      .def("sample_legal",
           [](PyBatch& b) {
             BatchEnv& env = *b.env;
             if (!env.started()) throw EngineError(ErrorCode::kValue, "call reset() first");
             auto out = rows<int64_t>(env.size(), 0);
             env.sample_legal(out.mutable_data());
             return out;
           },
           "A uniformly random legal action of every game [N] (kernel.uniform_choice over its "
           "legal actions, from the sampler's generator).")
      .def("reset",
           [](PyBatch& b) {
             BatchEnv& env = *b.env;
             auto obs = rows<float>(env.size(), env.observation_size());
             auto masks = rows<bool>(env.size(), static_cast<std::size_t>(env.num_actions()));
             BatchOutput out;
             out.obs = obs.mutable_data();
             out.masks = masks.mutable_data();
             {
               py::gil_scoped_release release;
               env.reset(out);
             }
             return py::make_tuple(obs, masks);
           },
           "Every game to its learner's first decision: (obs [N, obs], masks [N, actions]).")
      .def("step",
           [](PyBatch& b, const py::object& actions) {
             BatchEnv& env = *b.env;
             if (!env.started()) throw EngineError(ErrorCode::kValue, "call reset() before step()");
             py::array_t<int64_t> checked = checked_actions(env, actions);
             const std::size_t n = env.size(), size = env.observation_size();
             auto obs = rows<float>(n, size);
             auto masks = rows<bool>(n, static_cast<std::size_t>(env.num_actions()));
             auto rewards = rows<double>(n, 0);
             auto terminated = rows<bool>(n, 0);
             auto truncated = rows<bool>(n, 0);
             b.final_rows.resize(n * size);
             BatchOutput out{obs.mutable_data(),        rewards.mutable_data(),
                             terminated.mutable_data(), truncated.mutable_data(),
                             masks.mutable_data(),      b.final_rows.data()};
             {
               py::gil_scoped_release release;
               env.step(checked.data(), out);
             }
             // The last observations of the ended games only, in game order (few per step).
             const bool* ended = terminated.data();
             std::size_t k = 0;
             for (std::size_t i = 0; i < n; ++i) k += ended[i];
             auto final_obs = rows<float>(k, size);
             float* dst = final_obs.mutable_data();
             for (std::size_t i = 0; i < n; ++i)
               if (ended[i]) {
                 std::copy_n(b.final_rows.data() + i * size, size, dst);
                 dst += size;
               }
             return py::make_tuple(obs, rewards, terminated, truncated, masks, final_obs);
           },
           py::arg("actions"),
           "Step every game (actions: int array [N], each legal for its game, else ValueError "
           "naming the game): (obs, rewards, terminated, truncated, masks, final_obs); a game "
           "that ends is reset in the same step (final_obs: the last observations of the games "
           "that ended, [ended, obs] in game order).");

  py::class_<PyEpisode>(m, "Episode",
                        "One game against a uniformly random opponent: the single env's core.")
      .def(py::init([](const PyGame& g, int num_actions, int seat, const Pcg64& generator) {
             if (g.game->observation_size() == 0)
               throw EngineError(ErrorCode::kValue, "this game has no compiled observation");
             return PyEpisode{&g, Episode(*g.game, num_actions, seat, generator)};
           }),
           py::arg("game"), py::arg("num_actions"), py::arg("seat"), py::arg("generator"),
           py::keep_alive<1, 2>())
      .def_property(
          "seat", [](const PyEpisode& e) { return e.episode.seat(); },
          [](PyEpisode& e, int seat) { e.episode.set_seat(seat); })
      .def_property(
          "generator", [](const PyEpisode& e) { return e.episode.rng(); },
          [](PyEpisode& e, const Pcg64& rng) { e.episode.rng() = rng; },
          "A copy of the generator now (setting it gives the episode another).")
      .def_property(
          "recording", [](const PyEpisode& e) { return e.episode.recording(); },
          [](PyEpisode& e, bool on) { e.episode.set_recording(on); },
          "Whether each reset and step keeps its path (for the reference's events).")
      .def_property_readonly("state", [](const PyEpisode& e) { return as_bytes(e.episode.state()); })
      .def_property_readonly("player", [](const PyEpisode& e) { return e.episode.player(); })
      .def_property_readonly("score", [](const PyEpisode& e) { return e.episode.score(); })
      .def_property_readonly("path",
                             [](const PyEpisode& e) {
                               return py::make_tuple(as_bytes(e.episode.path_start()),
                                                     e.episode.path());
                             },
                             "(state the last reset or step started from, actions applied).")
      .def("set_state",
           [](PyEpisode& e, const py::bytes& state) {
             std::string s = checked(*e.game->game, state);
             e.episode.set_state(bytes_of(s));
           },
           py::arg("state"), "Continue from a checked state (nothing is advanced).")
      .def("reset",
           [](PyEpisode& e) {
             e.episode.reset();
             return episode_view(e);
           },
           "To the learner's first decision: (obs, mask).")
      .def("step",
           [](PyEpisode& e, int64_t action) {
             e.episode.step(action);
             py::tuple view = episode_view(e);
             return py::make_tuple(view[0], e.episode.score(), e.episode.player() == kTerminal,
                                   view[1]);
           },
           py::arg("action"),
           "The learner's legal action (else ValueError), then chance and the opponent: "
           "(obs, the learner's score now, terminated, mask).");

  py::class_<ValueNet, std::shared_ptr<ValueNet>>(
      m, "ValueNet", "A board value (agents/value/model.py's BoardValue) for the core's search.")
      .def(py::init(&value_net), py::arg("mean"), py::arg("scale"), py::arg("weights"),
           py::arg("biases"),
           "From BoardValue's arrays: mean and scale [n], weights[i] [rows, cols], biases[i] "
           "[cols]; ValueError unless they chain to one output and are finite.")
      .def_property_readonly("input_size", &ValueNet::input_size)
      .def("__call__",
           [](const ValueNet& net, const py::object& obs) {
             py::array_t<double> x = float_array(obs, 1, "the observation");
             if (static_cast<std::size_t>(x.size()) != net.input_size())
               throw EngineError(ErrorCode::kValue,
                                 "the observation must have " + std::to_string(net.input_size()) +
                                     " entries, not " + std::to_string(x.size()));
             std::vector<float> v(x.data(), x.data() + x.size());
             return net(v.data());
           },
           py::arg("observation"), "The value of one observation (as float32).");

  py::class_<PySolver>(m, "Solver", "Expectiminimax over a compiled game, memoised.")
      .def(py::init([](const PyGame& g, int64_t max_states, const py::object& within,
                       int64_t steps, std::shared_ptr<ValueNet> value, bool pairs, bool phases) {
             if (within.is_none()) {
               if (steps != 1 || value || phases)
                 throw EngineError(ErrorCode::kValue, "steps, value and phases need within=");
               PySolver s{&g, std::make_unique<Solver>(*g.game, max_states)};
               s.solver->set_pairs(pairs);
               return s;
             }
             PySolver s{&g, std::make_unique<Solver>(*g.game, max_states,
                                                     horizon_of(within, steps, phases), value)};
             s.solver->set_pairs(pairs);
             return s;
           }),
           py::arg("game"), py::arg("max_states") = -1, py::arg("within") = py::none(),
           py::arg("steps") = 1, py::arg("value") = nullptr, py::arg("pairs") = true,
           py::arg("phases") = false, py::keep_alive<1, 2>(),
           "Exact, or with within=(round, step) the search agent's lookahead: the states "
           "whose Game.horizon is within (and the next steps - 1 units), a state beyond worth "
           "the score so far plus value (a ValueNet of the game's observation) or alone. "
           "pairs=False plays secret pairs of decisions as two decisions in a row; "
           "phases=True makes the units Psychic phases (Game.phase_horizon).")
      .def_property_readonly("states", [](const PySolver& s) { return s.solver->states(); })
      .def_property_readonly("cut", [](const PySolver& s) { return s.solver->cut(); },
                             "Whether any value rests on a leaf of the horizon.")
      .def_property_readonly("memory_bytes",
                             [](const PySolver& s) { return s.solver->memory_bytes(); })
      .def("set_progress",
           [](PySolver& s, py::object progress) {
             std::function<void(std::size_t)> call;
             if (!progress.is_none())
               call = [progress](std::size_t n) {
                 py::gil_scoped_acquire gil;
                 progress(n);
               };
             // Not while another thread searches; the old callback is let go with the GIL.
             py::gil_scoped_release release;
             std::lock_guard<std::mutex> turn(*s.busy);
             py::gil_scoped_acquire gil;
             s.solver->set_progress(std::move(call));
           },
           "Call progress(states) every 10,000 new states (None: no calls).")
      .def("value",
           [](PySolver& s, const py::bytes& state) {
             std::string st = checked(*s.game->game, state);
             py::gil_scoped_release release;
             std::lock_guard<std::mutex> turn(*s.busy);
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
               std::lock_guard<std::mutex> turn(*s.busy);
               s.solver->child_values(bytes_of(st), &actions, &values);
             }
             std::vector<std::pair<int32_t, double>> out;
             for (std::size_t i = 0; i < actions.size(); ++i)
               out.emplace_back(actions[i], values[i]);
             return out;
           },
           py::arg("state"), "Each legal action with its child's value for player 0.")
      .def("matrix_values",
           [](PySolver& s, const py::bytes& state) {
             std::string st = checked(*s.game->game, state);
             std::vector<int32_t> rows, cols;
             std::vector<double> values;
             {
               py::gil_scoped_release release;
               std::lock_guard<std::mutex> turn(*s.busy);
               s.solver->matrix_values(bytes_of(st), &rows, &cols, &values);
             }
             return py::make_tuple(rows, cols, values);
           },
           py::arg("state"),
           "At a secret pair of decisions: (row actions, column actions, the value for player "
           "0 of each pair's child, row-major).");
}
