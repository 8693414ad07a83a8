"""The foundation: psygym.core (the API), psygym.conformance (check_rules), odds rounding,
combat, scenario, purity."""

from __future__ import annotations

import ast
import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from pathlib import Path

import numpy as np
import pytest
from helpers import REPO
from pydantic import Field

from psygym import combat
from psygym.conformance import RulesCheckError, check_rules
from psygym.core import (
    CHANCE,
    TERMINAL,
    ActionView,
    Event,
    IllegalActionError,
    RulesBase,
    play_game,
    sample_action,
)
from psygym.edition import aliases
from psygym.editions import available, edition_id, load, load_file, scenario_names
from psygym.odds import Table, percent
from psygym.scenario import (
    ScenarioError,
    Spec,
    distance,
    field_problem,
    read_toml,
    resolve_path,
    validate,
)

F = Fraction


# ----------------------------------------------------------------------------- a toy game
@dataclass(frozen=True)
class ToyState:
    """Player 0 calls heads (0) or tails (1), then a coin is flipped."""

    stage: int = 0  # 0 call, 1 coin, 2 over
    call: int = -1
    coin: int = -1


class ToyRules(RulesBase):
    """A correct tiny game: a call, a coin, +1/-1 for player 0."""

    edition = "toy"
    num_actions = 2
    observation_size = 3
    coin = ((0, 0.5), (1, 0.5))

    def initial_state(self):
        return ToyState()

    def current_player(self, s):
        return {0: 0, 1: CHANCE}.get(s.stage, TERMINAL)

    def legal_actions(self, s):
        return [0, 1] if s.stage == 0 else []

    def chance_outcomes(self, s):
        return list(self.coin) if s.stage == 1 else []

    def _apply(self, s, a):
        if s.stage == 0:
            return ToyState(1, a), (Event("call", f"calls {a}", 0),)
        return ToyState(2, s.call, a), (Event("coin", f"coin {a}"),)

    def returns(self, s):
        if s.stage < 2:
            return (0.0, 0.0)
        r = 1.0 if s.call == s.coin else -1.0
        return (r, -r)

    def observe(self, s, player):
        return np.array([s.stage, s.call, s.coin], dtype=np.float32)

    def describe(self, s, a):
        if s.stage == 0:
            return ActionView(label=("call heads", "call tails")[a])
        return ActionView(label=f"coin {a}")


class BadProbabilities(ToyRules):
    coin = ((0, 0.5), (1, 0.4))


class RepeatedOutcome(ToyRules):
    coin = ((0, 0.5), (0, 0.5))


class ZeroProbability(ToyRules):
    coin = ((0, 1.0), (1, 0.0))


class UnsortedLegal(ToyRules):
    def legal_actions(self, s):
        return [1, 0] if s.stage == 0 else []


class DuplicateLegal(ToyRules):
    def legal_actions(self, s):
        return [0, 0, 1] if s.stage == 0 else []


class LegalOutOfRange(ToyRules):
    num_actions = 1


class NoLegalActions(ToyRules):
    def legal_actions(self, s):
        return []


class MaskDiffers(ToyRules):
    def legal_mask(self, s):
        return np.ones(self.num_actions, dtype=bool) if s.stage else np.array([True, False])


class NotZeroSum(ToyRules):
    def returns(self, s):
        return (1.0, 1.0) if s.stage == 2 else (0.0, 0.0)


class WrongObservationShape(ToyRules):
    def observe(self, s, player):
        return np.zeros(5, dtype=np.float32)


class WrongObservationDtype(ToyRules):
    def observe(self, s, player):
        return np.zeros(3, dtype=np.float64)


class NonFiniteObservation(ToyRules):
    def observe(self, s, player):
        return np.array([np.nan, 0, 0], dtype=np.float32)


class EmptyLabel(ToyRules):
    def describe(self, s, a):
        return ActionView(label="")


class TerminalWithLegal(ToyRules):
    def legal_actions(self, s):
        return [0, 1] if s.stage in (0, 2) else []


class NeverEnds(ToyRules):
    def current_player(self, s):
        return 0

    def legal_actions(self, s):
        return [0, 1]

    def _apply(self, s, a):
        return ToyState(0, a), ()


class Nondeterministic(ToyRules):
    calls = 0

    def _apply(self, s, a):
        type(self).calls += 1
        if s.stage == 0:
            return ToyState(1, a, type(self).calls), ()
        return super()._apply(s, a)


class OutcomesAtTerminal(ToyRules):
    def chance_outcomes(self, s):
        return [(0, 1.0)] if s.stage == 2 else super().chance_outcomes(s)


class RestBoundsTooTight(ToyRules):
    def rest_bounds(self, s):
        return (0.0, 0.0)  # the coin still moves the score by 1 before stage 2


class RestBoundsInverted(ToyRules):
    def rest_bounds(self, s):
        return (1.0, -1.0)


class SamplesUnlisted(ToyRules):
    def sample_chance(self, s, rng):
        return 7


class MutableState:
    """A state with value equality whose list a buggy ``_apply`` mutates."""

    def __init__(self, stage: int, log: list[int]):
        self.stage, self.log = stage, list(log)

    def __eq__(self, other):
        return isinstance(other, MutableState) and (self.stage, self.log) == (
            other.stage,
            other.log,
        )

    def __hash__(self):
        return hash((self.stage, tuple(self.log)))

    def __repr__(self):
        return f"MutableState({self.stage}, {self.log})"


class MutatesInput(ToyRules):
    def initial_state(self):
        return MutableState(0, [])

    def current_player(self, s):
        return 0 if s.stage == 0 else TERMINAL

    def _apply(self, s, a):
        s.log.append(a)  # the bug: the input state changes
        return MutableState(1, s.log), ()

    def returns(self, s):
        return (0.0, 0.0)

    def observe(self, s, player):
        return np.zeros(3, dtype=np.float32)


BROKEN = [
    (BadProbabilities, "sum to 0.9"),
    (RepeatedOutcome, "empty or repeated"),
    (ZeroProbability, "probability <= 0"),
    (UnsortedLegal, "not sorted"),
    (DuplicateLegal, "not sorted and unique"),
    (LegalOutOfRange, "outside range"),
    (NoLegalActions, "no legal actions"),
    (MaskDiffers, "legal_mask differs"),
    (NotZeroSum, "not zero-sum"),
    (WrongObservationShape, "observe gave shape"),
    (WrongObservationDtype, "observe gave shape"),
    (NonFiniteObservation, "non-finite"),
    (EmptyLabel, "empty label"),
    (TerminalWithLegal, "terminal state has legal actions"),
    (NeverEnds, "did not end within"),
    (Nondeterministic, "not deterministic"),
    (SamplesUnlisted, "not an outcome"),
    (OutcomesAtTerminal, "chance_outcomes is not"),
    (MutatesInput, "modified its input"),
    (RestBoundsTooTight, "outside this state's rest_bounds"),
    (RestBoundsInverted, "low above its high"),
]


def test_check_rules_passes_a_correct_toy_game():
    report = check_rules(ToyRules(), games=7, seed=1)
    assert (report.games, report.decision_nodes, report.chance_nodes, report.max_length) == (
        7,
        7,
        7,
        2,
    )


@pytest.mark.parametrize("cls,message", BROKEN, ids=[c.__name__ for c, _ in BROKEN])
def test_check_rules_catches_broken_rules(cls, message):
    with pytest.raises(RulesCheckError, match=message) as err:
        check_rules(cls(), games=3, max_steps=50)
    assert str(err.value).startswith("toy: ")


def test_rest_bounds_that_hold_pass_and_the_default_is_unbounded():
    class Exact(ToyRules):
        def rest_bounds(self, s):
            return (0.0, 0.0) if s.stage == 2 else (-1.0, 1.0)

    check_rules(Exact(), games=7, seed=1)
    assert ToyRules().rest_bounds(ToyState()) == (-math.inf, math.inf)


def test_rules_check_error_is_an_assertion_error():
    assert issubclass(RulesCheckError, AssertionError)


# ----------------------------------------------------------------------------- apply and errors
def test_illegal_decision_lists_legal_actions_with_labels():
    rules = ToyRules()
    with pytest.raises(IllegalActionError) as err:
        rules.apply(rules.initial_state(), 5)
    msg = str(err.value)
    assert "action 5 is not legal for player 0" in msg
    assert "0 (call heads), 1 (call tails)" in msg
    assert err.value.legal == [0, 1] and err.value.action == 5
    assert isinstance(err.value, ValueError)


def test_illegal_chance_outcome_and_finished_game():
    rules = ToyRules()
    coin = rules.apply(rules.initial_state(), 0)
    with pytest.raises(
        IllegalActionError,
        match=r"as a chance outcome here; legal actions: "
        r"0 \(coin 0\), 1 \(coin 1\)",
    ):
        rules.apply(coin, 2)
    over = rules.apply(coin, 1)
    assert rules.is_terminal(over)
    with pytest.raises(IllegalActionError, match="in a finished game"):
        rules.apply(over, 0)


def test_apply_without_check_skips_legality():
    rules = ToyRules()
    assert rules.apply(rules.initial_state(), 5, check=False) == ToyState(1, 5)


def test_apply_with_events_and_masks_and_labels():
    rules = ToyRules()
    s, events = rules.apply_with_events(rules.initial_state(), 1)
    assert s == ToyState(1, 1)
    assert [e.kind for e in events] == ["call"]
    assert rules.action_label(rules.initial_state(), 1) == "call tails"
    assert rules.legal_mask(rules.initial_state()).tolist() == [True, True]
    assert rules.legal_mask(s).tolist() == [False, False]


def test_event_get_and_action_view_label():
    e = Event("wounds", "x loses 2", 1, (("unit", "x"), ("amount", 2)))
    assert e.get("amount") == 2 and e.get("missing", "d") == "d"
    assert str(ActionView(label="hello")) == "hello"
    assert ActionView(label="a") == ActionView(label="b")  # labels are not compared


class Loaded(ToyRules):
    coin = ((0, 1 / 6), (1, 2 / 6), (2, 3 / 6))


def test_default_sample_chance_follows_the_outcomes():
    """30,000 draws: chi-square below the 0.1% critical value (2 d.f., 13.82)."""
    rules = Loaded()
    s = ToyState(1, 0)
    rng = np.random.default_rng(5)
    n = 30_000
    counts = Counter(rules.sample_chance(s, rng) for _ in range(n))
    chi = sum((counts[k] - n * p) ** 2 / (n * p) for k, p in rules.coin)
    assert chi < 13.82


class Biased:
    name = "biased"

    def action_probabilities(self, rules, state, player):
        return {0: 0.25, 1: 0.75}


class AlwaysTails:
    name = "tails"

    def action_probabilities(self, rules, state, player):
        return {1: 1.0}


def test_sample_action_follows_the_policy():
    rules = ToyRules()
    rng = np.random.default_rng(2)
    n = 20_000
    s = rules.initial_state()
    counts = Counter(sample_action(Biased(), rules, s, 0, rng) for _ in range(n))
    assert abs(counts[1] / n - 0.75) < 0.015
    assert sample_action(AlwaysTails(), rules, rules.initial_state(), 0, rng) == 1


def test_play_game_reaches_the_end_and_reports_every_step():
    rules = ToyRules()
    steps = []
    end = play_game(
        rules,
        [AlwaysTails(), AlwaysTails()],
        np.random.default_rng(0),
        on_step=lambda s, a, ev: steps.append((s, a, [e.kind for e in ev])),
    )
    assert rules.is_terminal(end)
    assert end.call == 1
    assert [(s.stage, a) for s, a, _ in steps] == [(0, 1), (1, end.coin)]
    assert steps[0][2] == ["call"] and steps[1][2] == ["coin"]


def test_play_game_from_a_given_state():
    rules = ToyRules()
    end = play_game(rules, [Biased(), Biased()], np.random.default_rng(0), state=ToyState(1, 0))
    assert end.call == 0 and end.stage == 2


# ----------------------------------------------------------------------------- odds rounding
@pytest.mark.parametrize(
    "p,text",
    [
        (F(21, 32), "65.63"),  # 65.625: half-up, not half-even
        (F(1, 8), "12.50"),
        (F(1, 3), "33.33"),
        (F(2, 3), "66.67"),
        (F(11, 36), "30.56"),
        (F(5, 100_000), "0.01"),  # 0.005% rounds up
        (F(0), "0.00"),
        (F(1), "100.00"),
        (0.5, "50.00"),
    ],
)
def test_percent_rounds_half_up_exactly(p, text):
    assert percent(p) == text


def test_table_cells():
    t = Table("t", "T", ["a", "b", "c", "d"], [[3, F(21, 32), 0.123456, "x"]])
    assert t.text_rows() == [["3", "65.63", "0.1235", "x"]]
    assert t.cell(F(1, 3)) == "33.33"


# ----------------------------------------------------------------------------- combat (7E-7.1)
@pytest.mark.parametrize(
    "s,t,needed",
    [
        (6, 4, 2),
        (10, 4, 2),
        (5, 4, 3),
        (4, 4, 4),
        (3, 4, 5),
        (2, 4, 6),
        (1, 4, 6),
        (1, 5, None),
        (3, 7, None),
        (4, 7, 6),
        (8, 3, 2),
    ],
)
def test_to_wound_7th_chart(s, t, needed):
    """7E-7.1: 2+ at S >= T+2, 3+ at T+1, 4+ at T, 5+ at T-1, 6+ at T-2/T-3, else impossible."""
    assert combat.to_wound_7th(s, t) == needed


def test_roll_and_save_chances():
    assert combat.roll_chance(4) == F(1, 2)
    assert combat.roll_chance(1) == F(5, 6)  # a natural 1 always fails
    assert combat.roll_chance(7) == 0 and combat.roll_chance(None) == 0
    assert combat.save_chance(3, 5) == F(2, 3)
    assert combat.save_chance(None, 7) == 0
    # 7E-7.1: AP <= save value removes the armour save; the invulnerable save remains
    assert combat.unsaved_chance_7th(3, None, 3) == 1
    assert combat.unsaved_chance_7th(3, None, 4) == F(1, 3)
    assert combat.unsaved_chance_7th(3, 5, 2) == F(2, 3)
    assert combat.unsaved_chance_7th(3, 4, None) == F(1, 3)


def test_wound_distribution_matches_brute_force():
    """D3 hits, each an unsaved wound with p = 1/2, D3 damage each, capped at 4 wounds."""
    p = F(1, 2)
    brute: dict[int, Fraction] = {}
    for hits in (1, 2, 3):
        for succ in product((0, 1), repeat=hits):
            k = sum(succ)
            pk = F(1, 3) * p**k * (1 - p) ** (hits - k)
            for dmg in product((1, 2, 3), repeat=k):
                w = min(sum(dmg), 4)
                brute[w] = brute.get(w, F(0)) + pk * F(1, 3**k)
    assert combat.wound_distribution("D3", p, "D3", cap=4) == brute
    assert sum(combat.wound_distribution("2D6", F(1, 3)).values()) == 1


def test_capped_merges_the_tail():
    assert combat.capped({0: F(1, 4), 1: F(1, 4), 5: F(1, 2)}, 2) == {
        0: F(1, 4),
        1: F(1, 4),
        2: F(1, 2),
    }
    assert combat.capped({-1: F(1)}, 3) == {0: F(1)}


# ----------------------------------------------------------------------------- scenario module
class Toy(Spec):
    count: int = Field(ge=1, le=3)
    label: str = "x"


def test_validate_raises_one_scenario_error_naming_file_field_allowed():
    with pytest.raises(ScenarioError) as err:
        validate(Toy, {"count": 9}, "toy.toml")
    e = err.value
    assert (e.source, e.field) == ("toy.toml", "count")
    assert str(e).startswith("toy.toml: field count: ")
    assert "at most 3" in str(e)
    with pytest.raises(ScenarioError, match="toy.toml: field colour: Extra inputs"):
        validate(Toy, {"count": 1, "colour": "red"}, "toy.toml")


def test_field_problem_points_at_a_precise_field():
    class Checked(Spec):
        items: list[int]

        def model_post_init(self, _):
            if len(set(self.items)) != len(self.items):
                raise field_problem("items.1", "repeated", "distinct numbers")

    with pytest.raises(ScenarioError) as err:
        validate(Checked, {"items": [1, 1]}, "f.toml")
    assert str(err.value) == "f.toml: field items.1: repeated (allowed: distinct numbers)"


def test_read_toml_and_resolve_path_errors(tmp_path):
    with pytest.raises(ScenarioError, match="no such file"):
        read_toml(tmp_path / "missing.toml")
    with pytest.raises(ScenarioError) as err:
        resolve_path("nope", REPO / "psygym/editions/seventh/scenarios", "7th")
    assert "duel" in str(err.value) and "single-phase" in str(err.value)


def test_distance():
    assert distance((0, 0), (3, 4)) == 5
    assert distance((1, 1), (1, 1)) == 0


# ----------------------------------------------------------------------------- edition registry
def test_edition_ids_and_aliases():
    assert set(available()) >= {"rt", "2nd", "7th", "8th"}
    assert edition_id("seventh") == "7th" == edition_id(" 7 ") == edition_id("7TH")
    assert edition_id("rogue-trader") == "rt"
    assert all(v in available() for v in aliases().values())
    assert "7th" in available()
    with pytest.raises(ValueError, match=r"unknown edition '9th'; known editions: .*7th"):
        edition_id("9th")


def test_seventh_registry_loading():
    assert scenario_names("7th") == ["duel", "single-phase"]
    duel = load("7th")
    assert duel.scenario.name == "duel"
    assert load("seventh", "duel").scenario == duel.scenario
    shorter = load("7th", "duel", battle_rounds=2)
    assert shorter.scenario.game.battle_rounds == 2
    path = REPO / "psygym/editions/seventh/scenarios/single-phase.toml"
    assert load_file(path).scenario.name == "single-phase"
    assert load("7th", str(path)).scenario.name == "single-phase"


# ----------------------------------------------------------------------------- policies
def test_resolve_policy_errors_and_combos():
    from psygym.policies import SplitPolicy, UnknownAgentError, agent_names, resolve_policy

    rules = load("7th", "single-phase")
    names = agent_names(rules)
    assert "random" in names and "double-wc" in names
    with pytest.raises(UnknownAgentError) as err:
        resolve_policy("no-such-bot", rules)
    assert "no-such-bot" in str(err.value) and "double-wc" in str(err.value)
    with pytest.raises(TypeError):
        resolve_policy(42, rules)
    p = AlwaysTails()
    assert resolve_policy(p, rules) is p
    combo = resolve_policy("double-wc+deny-never", rules)
    assert isinstance(combo, SplitPolicy) and combo.name == "double-wc+deny-never"


def test_split_policy_takes_a_model_file_on_either_side():
    """``caster+denier`` splits even when a part is a model file path (ends in .safetensors)."""
    from psygym_agents.value.model import PRETRAINED

    from psygym.policies import SplitPolicy, resolve_policy

    rules = load("7th", "single-phase")
    model = str(PRETRAINED / "7th-single-phase-seat0.safetensors")
    for spec in (f"deny-never+{model}", f"{model}+deny-never"):
        combo = resolve_policy(spec, rules)
        assert isinstance(combo, SplitPolicy)
        names = (combo.caster.name, combo.denier.name)
        assert "deny-never" in names and names[0] != names[1]
        assert names.index("deny-never") == (0 if spec.startswith("deny") else 1)


# ----------------------------------------------------------------------------- purity (DESIGN.md)
RL_LIBS = {"gymnasium", "torch", "stable_baselines3", "sb3_contrib", "optuna", "pettingzoo"}


def imported_roots(path: Path) -> set[str]:
    """Top-level names of every module a file imports (anywhere in it), plus literal
    ``importlib.import_module("...")`` targets."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(
            node.func, "attr", getattr(node.func, "id", "")
        ) in ("import_module", "__import__"):
            if (
                node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                out.add(node.args[0].value.split(".")[0])
    return out


def test_imported_roots_sees_nested_and_dynamic_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "import os\ndef f():\n    import torch.nn\n    from optuna import x\n"
        "    importlib.import_module('psygym_agents.seventh')\n"
    )
    assert imported_roots(f) == {"os", "torch", "optuna", "psygym_agents"}


def test_editions_import_no_rl_library():
    files = sorted((REPO / "psygym" / "editions").rglob("*.py"))
    assert len(files) >= 5
    offenders = {str(f.relative_to(REPO)): sorted(imported_roots(f) & RL_LIBS) for f in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_psygym_never_imports_agents_or_experiments():
    files = sorted((REPO / "psygym").rglob("*.py"))
    assert len(files) >= 10
    offenders = {
        str(f.relative_to(REPO)): sorted(
            imported_roots(f) & {"psygym_agents", "psygym_experiments"}
        )
        for f in files
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_agents_never_import_experiments():
    files = sorted((REPO / "agents").rglob("*.py"))
    assert len(files) >= 10
    offenders = {
        str(f.relative_to(REPO)): sorted(imported_roots(f) & {"psygym_experiments"}) for f in files
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_constants():
    assert CHANCE == -1 and TERMINAL == -2
    assert math.isclose(sum(p for _, p in ToyRules.coin), 1)


def test_legal_mask_is_memoised_per_legal_set_and_a_fresh_copy():
    rules = ToyRules()
    s = rules.initial_state()
    mask = rules.legal_mask(s)
    assert list(np.flatnonzero(mask)) == rules.legal_actions(s)
    mask[:] = False  # the caller's copy: the memo must not change
    again = rules.legal_mask(s)
    assert list(np.flatnonzero(again)) == rules.legal_actions(s) and again is not mask
    assert len(rules._mask_memo) == 1
