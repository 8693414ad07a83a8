"""The 8th-edition psychic phase as an exact game (rules/eighth.md, 8E-1 .. 8E-8).

## Flow of one Psychic phase

``SELECT`` (active player: a PSYKER unit or end the phase, 8E-2.1) -> ``POWER`` (a power and
target for that unit, or stop with it, 8E-2.2, 8E-3) -> ``TEST`` chance (the 2D6 total, 8E-4) ->
``PERILS`` chance (D3 wounds on a double 1 or double 6, before any deny, 8E-4.3, 8E-6.1) ->
``BLAST`` chance per unit within 6" if Perils slew the caster (8E-6.2) -> ``DENY`` decision (the
opponent: which eligible PSYKER unit denies, or none, after seeing the total, 8E-5.1) ->
``DENY_ROLL`` chance (one binary outcome, P(2D6 > total), 8E-5.2) -> ``EFFECT`` chance (wounds the
target loses, 8E-7) -> back to ``POWER`` while the unit has attempts left, then ``SELECT``.
Battle rounds: the first player's phase then the second's (8E-8.1).

## Action indices (``Discrete(num_actions)``, N units, P powers of the scenario)

* ``i`` in ``[0, N)``: select unit ``i`` (SELECT).
* ``N``: end the phase (SELECT).
* ``N + 1 + p * N + t``: attempt power ``p`` on target unit ``t`` (POWER); for ``self``/``none``
  targets ``t`` is the caster.
* ``N + 1 + P * N``: stop manifesting with the selected unit (POWER).
* ``N + 2 + P * N + d``: deny with unit ``d`` (DENY).
* ``2 * N + 2 + P * N``: do not deny (DENY).

Units are numbered in scenario order (side 0's units, then side 1's); powers are the powers some
unit of the scenario knows, in data-file order. Chance outcomes: the test total (2..12), the
number of wounds lost (PERILS, BLAST, EFFECT), or 1 = denied / 0 = not denied (DENY_ROLL).

## Defaults where the spec or the book is silent

* Units are points: ranges and "within" distances are measured centre to centre and are
  inclusive (a unit exactly 18" away is within 18"). Every unit is visible.
* Smite and ``closest_enemy`` powers: ties for closest go to the lowest unit index (8E-7.1).
* The test outcome is the total alone: a total of 2 is always a double 1 and 12 a double 6, so
  the total says whether Perils happens (8E-4.3): 11 outcomes, not 36.
* A deny cannot succeed against a test of 12 (no 2D6 beats it), so no deny decision is asked
  then; nor when no eligible PSYKER unit is within range (8E-5.1).
* Powers whose effect is a ``value`` score the same whatever their target, so their target is
  not a decision: the lowest-index legal target is used (it only has to exist, 8E-3.4).
  Damaging powers with an ``enemy`` target let the caster choose among the enemies in range.
* A unit is selectable only if it has a power it may attempt now; selecting it then stopping at
  once is allowed (8E-2.2). A unit with no attempt left or no legal power stops automatically;
  a phase with no selectable unit ends automatically.
* "Once per battle round" (8E-3.2, 8E-3.3) is checked on the current phase's records: each army
  casts only in its own Psychic phase, once per battle round.
* Deny attempts (8E-1.2) refill at the start of every Psychic phase. A deny roll never perils
  (8E-5.3).
* Perils kills: the caster is removed after the blast; the blast hits every other unit within
  6" that still has wounds, each with its own D3 (8E-6.2). Units slain by a blast do not blast.
* A dead psyker's remaining attempts are lost. The game ends at once when a side has no units
  left (checked when a power's resolution is complete, so a blast still lands, 8E-8.1).
* Damage from an ``attack`` does not spill over models (excess damage is lost); mortal wounds do
  (8E-7.2). ``rolloff`` effects (Psychic Scourge, Mind War) use both units' Leadership.
* Chance nodes with a single possible outcome (a D3 against a unit with one wound left, a
  ``value`` effect) are resolved at once instead of being asked.
* Every PSYKER knows Smite (``known_by_all_psykers`` in the data) whether or not its ``powers``
  list it. A PSYKER with ``manifest = 0`` only denies.
* ``game.phase_limit`` stops the game after that many Psychic phases (``single-phase``: 1).
* Score (8E-8.2): player 0's score = value of wounds side 1 lost - value of wounds side 0 lost +
  value effects of side 0 - value effects of side 1, whatever caused the wounds (own Perils and
  blasts included).
* The "phase" event of the game's first Psychic phase is not reported (no transition leads to the
  initial state); every later phase reports one.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from psygym.core import CHANCE, TERMINAL, ActionView, Event, RulesBase
from psygym.editions.eighth.effects import (
    attack_distribution,
    deny_chance,
    is_perils,
    mortal_distribution,
    rolloff_distribution,
    two_d6,
)
from psygym.editions.eighth.spec import Effect, PowerFile, Scenario, TargetKind, Unit
from psygym.editions.eighth.state import Stage, State, evolve
from psygym.scenario import distance

_DECISION_KINDS = 5  # select, power, deny, chance, over
_GLOBALS = 8
_UNIT_FEATURES = 10
_POWER_FEATURES = 4
_CACHE_LIMIT = 200_000
_KIND = {Stage.SELECT: 0, Stage.POWER: 1, Stage.DENY: 2, Stage.OVER: 4}


@dataclass(frozen=True, slots=True)
class PowerDef:
    """A power as the rules use it (from the data file, with scenario value overrides)."""

    name: str
    warp_charge: int
    range: float
    target: TargetKind
    character_only: bool
    repeatable: bool
    escalation: int
    effect: Effect
    value: float | None  # value effects (8E-7.3), after ``game.power_values``
    chosen_target: bool  # the caster chooses among targets (a damaging ``enemy`` power)


# ---------------------------------------------------------------- typed views of actions


@dataclass(frozen=True)
class SelectUnit(ActionView):
    """Select a PSYKER unit to manifest powers (8E-2.1)."""

    unit: str = ""


@dataclass(frozen=True)
class EndPhase(ActionView):
    """End the Psychic phase (8E-2.1)."""

    side: str = ""


@dataclass(frozen=True)
class Cast(ActionView):
    """Attempt a power (8E-3, 8E-4)."""

    caster: str = ""
    power: str = ""
    warp_charge: int = 0
    target: str | None = None


@dataclass(frozen=True)
class StopUnit(ActionView):
    """Stop manifesting powers with the selected unit (8E-2.2)."""

    unit: str = ""


@dataclass(frozen=True)
class Deny(ActionView):
    """Attempt to deny the pending power with ``denier`` (``None``: do not deny) (8E-5)."""

    denier: str | None = None
    power: str = ""
    test_total: int = 0
    chance: float = 0.0


@dataclass(frozen=True)
class Outcome(ActionView):
    """A chance outcome: ``kind`` is test, perils, blast, deny or effect; ``value`` its number."""

    kind: str = ""
    value: int = 0
    unit: str | None = None


def _data(**kw: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(kw.items()))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class EighthRules(RulesBase):
    """8th-edition psychic phase rules for one scenario (see the module docstring).

    Attributes:
        scenario: the validated scenario.
        units: every unit's spec, in index order; ``side_of[i]`` its player.
        powers: the scenario's powers (``PowerDef``), in action-index order.
        known: power indices each unit knows (empty for non-psykers).
    """

    edition = "8th"

    def __init__(self, scenario: Scenario, catalogue: PowerFile):
        self.scenario = scenario
        self.game = game = scenario.game
        self.side_names = tuple(side.name for side in scenario.sides)
        pairs = [(i, u) for i, side in enumerate(scenario.sides) for u in side.units]
        self.units: tuple[Unit, ...] = tuple(u for _, u in pairs)
        self.side_of: tuple[int, ...] = tuple(i for i, _ in pairs)
        self.names = tuple(u.name for u in self.units)
        n = self.n_units = len(self.units)
        self.max_wounds = tuple(u.models * u.wounds for u in self.units)
        self.side_units = tuple(
            tuple(i for i in range(n) if self.side_of[i] == side) for side in (0, 1)
        )
        self.side_psykers = tuple(
            tuple(i for i in units if self.units[i].psyker and self.units[i].manifest > 0)
            for units in self.side_units
        )

        # Powers: those some unit knows (every psyker knows the universal ones: Smite, 8E-1.2).
        universal = {p.name for p in catalogue.powers if p.known_by_all_psykers}
        knows = [(set(u.powers) | universal) if u.psyker else set() for u in self.units]
        used = [p for p in catalogue.powers if any(p.name in k for k in knows)]
        overrides = game.power_values
        self.powers: tuple[PowerDef, ...] = tuple(
            PowerDef(
                name=p.name,
                warp_charge=p.warp_charge,
                range=p.range,
                target=p.target,
                character_only=p.character_only,
                repeatable=p.repeatable,
                escalation=p.escalation,
                effect=p.effect,
                value=overrides.get(p.name, p.effect.value) if p.effect.value is not None else None,
                chosen_target=p.target == "enemy" and p.effect.value is None,
            )
            for p in used
        )
        self.power_index = {p.name: i for i, p in enumerate(self.powers)}
        n_powers = self.n_powers = len(self.powers)
        self.known: tuple[tuple[int, ...], ...] = tuple(
            tuple(i for i, p in enumerate(self.powers) if p.name in k) for k in knows
        )

        # Geometry, precomputed once (8E-3.4, 8E-5.1, 8E-6.2, 8E-7.1).
        d = [[distance(a.position, b.position) for b in self.units] for a in self.units]
        self.distances = tuple(tuple(row) for row in d)
        self.targets: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
            tuple(self._candidates(c, p) for p in self.powers) for c in range(n)
        )
        self.deny_candidates = tuple(
            tuple(
                j
                for j in self.side_units[1 - self.side_of[c]]
                if self.units[j].psyker and self.units[j].deny > 0 and d[c][j] <= game.deny_range
            )
            for c in range(n)
        )
        self.blast_candidates = tuple(
            tuple(j for j in range(n) if j != c and d[c][j] <= game.perils_blast_range)
            for c in range(n)
        )

        # Action layout (module docstring).
        self.END_PHASE = n
        self.CAST = n + 1
        self.STOP = n + 1 + n_powers * n
        self.DENY = self.STOP + 1
        self.NO_DENY = self.DENY + n
        self.num_actions = self.NO_DENY + 1
        self.observation_size = (
            _DECISION_KINDS + _GLOBALS + _UNIT_FEATURES * n + _POWER_FEATURES * n_powers
        )

        # Bound of every observation entry: wounds, deny counts, attempts and the score.
        values = [p.value for p in self.powers if p.value is not None]
        casts = sum(u.manifest for u in self.units if u.psyker)
        score_bound = sum(m * u.value_per_wound for m, u in zip(self.max_wounds, self.units))
        score_bound += game.battle_rounds * casts * max(values, default=0.0)
        self.observation_bound = float(max(1000.0, max(self.max_wounds), score_bound + 1))

        self._full_deny = tuple(u.deny if u.psyker else 0 for u in self.units)
        self._no_attempts = (0,) * n_powers
        self._chance_cache: dict[tuple[Any, ...], tuple[list[tuple[int, float]], np.ndarray]] = {}
        self._test_outcomes = tuple(two_d6())
        self._mean_cache: dict[tuple[int, ...], float] = {}
        self._options_cache: dict[tuple[Any, ...], tuple[int, ...]] = {}
        self._prepare_observations()

    def _candidates(self, c: int, p: PowerDef) -> tuple[int, ...]:
        """Units power ``p`` may target from caster ``c`` when alive, in preference order."""
        if p.target in ("self", "none"):
            return (c,)
        side = self.side_of[c]
        pool = (
            self.side_units[1 - side]
            if p.target in ("closest_enemy", "enemy")
            else (self.side_units[side])
        )
        out = [
            j
            for j in pool
            if self.distances[c][j] <= p.range and (self.units[j].character or not p.character_only)
        ]
        if p.target == "closest_enemy":
            out.sort(key=lambda j: (self.distances[c][j], j))  # ties: lowest index (8E-7.1)
        return tuple(out)

    # ------------------------------------------------------------------ game API

    def initial_state(self) -> State:
        """Battle round 1, the first player's Psychic phase, at its first decision."""
        first = self.game.first_player
        s = State(
            stage=Stage.SELECT,
            wounds=self.max_wounds,
            deny_left=self._full_deny,
            attempts=self._no_attempts,
            active=first,
        )
        return self._advance(s, [])

    def current_player(self, state: State) -> int:
        """The active player at SELECT/POWER, the opponent at DENY, else CHANCE or TERMINAL."""
        stage = state.stage
        if stage <= Stage.POWER:
            return state.active
        if stage == Stage.DENY:
            return 1 - state.active
        if stage == Stage.OVER:
            return TERMINAL
        return CHANCE

    def is_response(self, state: State) -> bool:
        """True at the opponent's deny decision (8E-5.1)."""
        return state.stage == Stage.DENY

    def legal_actions(self, state: State) -> list[int]:
        """Sorted legal actions (empty at chance and terminal nodes)."""
        stage = state.stage
        if stage == Stage.SELECT:
            out = [i for i in self.side_psykers[state.active] if self._selectable(state, i)]
            out.append(self.END_PHASE)
            return out
        if stage == Stage.POWER:
            out = self._cast_options(state, state.caster, state.unit_powers)
            out.append(self.STOP)
            return out
        if stage == Stage.DENY:
            out = [self.DENY + d for d in self.deniers(state)]
            out.append(self.NO_DENY)
            return out
        return []

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        """Exact aggregated outcomes of the pending roll (see the module docstring)."""
        if self.current_player(state) != CHANCE:
            return []
        return list(self._chance(state)[0])

    def sample_chance(self, state: State, rng: np.random.Generator) -> int:
        """Draw a chance outcome from the same cached exact outcome list (fast path)."""
        outcomes, cumulative = self._chance(state)
        idx = int(np.searchsorted(cumulative, rng.random(), side="right"))
        return outcomes[min(idx, len(outcomes) - 1)][0]

    def returns(self, state: State) -> tuple[float, float]:
        """Zero-sum scores (8E-8.2)."""
        return (state.score, -state.score)

    # ------------------------------------------------------------------ legality helpers

    def _selectable(self, s: State, i: int) -> bool:
        if (s.selected >> i) & 1 or not s.wounds[i]:
            return False
        cached = self._options_cache.get((i, 0, s.attempts, s.wounds))
        return bool(cached) if cached is not None else bool(self._cast_options(s, i, 0))

    def _cast_options(self, s: State, c: int, unit_powers: int) -> list[int]:
        """Cast actions of unit ``c`` (8E-3): known, not locked out, with a living target."""
        key = (c, unit_powers, s.attempts, s.wounds)
        cached = self._options_cache.get(key)
        if cached is None:
            if len(self._options_cache) > _CACHE_LIMIT:
                self._options_cache.clear()
            cached = self._options_cache[key] = tuple(self._find_cast_options(s, c, unit_powers))
        return list(cached)

    def _find_cast_options(self, s: State, c: int, unit_powers: int) -> list[int]:
        out: list[int] = []
        n, wounds = self.n_units, s.wounds
        for p in self.known[c]:
            power = self.powers[p]
            if power.repeatable:
                if (unit_powers >> p) & 1:  # the same unit, once per round (8E-3.3)
                    continue
            elif s.attempts[p]:  # once per round for the whole army (8E-3.2)
                continue
            base = self.CAST + p * n
            if power.chosen_target:
                out.extend(base + t for t in self.targets[c][p] if wounds[t] > 0)
            else:
                for t in self.targets[c][p]:
                    if wounds[t] > 0:
                        out.append(base + t)
                        break
        out.sort()
        return out

    def deniers(self, state: State) -> list[int]:
        """Units that may deny the pending power (8E-5.1): PSYKERs within range with denies left."""
        if state.caster < 0 or deny_chance(state.total) == 0:
            return []
        return [
            d
            for d in self.deny_candidates[state.caster]
            if state.wounds[d] > 0 and state.deny_left[d] > 0
        ]

    def decode_cast(self, action: int) -> tuple[int, int]:
        """``(power index, target unit)`` of a cast action."""
        return divmod(action - self.CAST, self.n_units)

    def cast_action(self, power: int | str, target: int) -> int:
        """The action that attempts ``power`` (index or name) on unit ``target``."""
        p = self.power_index[power] if isinstance(power, str) else power
        return self.CAST + p * self.n_units + target

    def warp_charge(self, state: State, power: int) -> int:
        """Warp charge of ``power`` for the active army now (8E-4.2: Smite's escalation)."""
        p = self.powers[power]
        return p.warp_charge + p.escalation * state.attempts[power]

    # ------------------------------------------------------------------ exact distributions

    def effect_distribution(
        self, power: int, caster: int, target: int, total: int, remaining: int | None = None
    ) -> tuple[tuple[int, Fraction], ...]:
        """Exact distribution of wounds the target loses if ``power`` is manifested (8E-7).

        Args:
            power: power index.
            caster: casting unit.
            target: target unit.
            total: the psychic test total (for ``boosted`` effects such as Smite's D6).
            remaining: the target's wounds left (default: all of them).
        """
        eff = self.powers[power].effect
        unit = self.units[target]
        left = self.max_wounds[target] if remaining is None else remaining
        if eff.mortal_wounds is not None:
            expr = eff.mortal_wounds
            if eff.boosted_at is not None and total >= eff.boosted_at:
                expr = eff.boosted  # type: ignore[assignment]
            return mortal_distribution(expr, left)
        if eff.attack is not None:
            a = eff.attack
            return attack_distribution(
                a.hits,
                a.strength,
                a.ap,
                a.damage,
                unit.toughness,
                unit.save,
                unit.invulnerable,
                left,
                unit.wounds,
            )
        if eff.rolloff is not None:
            r = eff.rolloff
            return rolloff_distribution(
                r.dice, r.win, r.tie, self.units[caster].leadership, unit.leadership, left
            )
        return ((0, Fraction(1)),)

    def expected_effect(
        self, state: State, power: int, caster: int, target: int, total: int
    ) -> float:
        """Expected score, for the caster's side, of ``power`` taking effect now (8E-7, 8E-8.2)."""
        return self.mean_effect(power, caster, target, total, state.wounds[target])

    def mean_effect(
        self, power: int, caster: int, target: int, total: int, remaining: int
    ) -> float:
        """Expected score of ``power`` taking effect on a target with ``remaining`` wounds."""
        p = self.powers[power]
        if p.value is not None:
            return p.value
        eff = p.effect
        boosted = eff.boosted_at is not None and total >= eff.boosted_at
        key = (power, caster, target, remaining, boosted)
        value = self._mean_cache.get(key)
        if value is None:
            dist = self.effect_distribution(power, caster, target, total, remaining)
            value = float(sum(w * q for w, q in dist)) * self.units[target].value_per_wound
            self._mean_cache[key] = value
        return value

    def _chance(self, s: State) -> tuple[list[tuple[int, float]], np.ndarray]:
        stage = s.stage
        if stage == Stage.TEST:
            key: tuple[Any, ...] = ("test",)
        elif stage == Stage.PERILS:
            key = ("mw", self.game.perils_mortal_wounds, s.wounds[s.caster])
        elif stage == Stage.BLAST:
            key = ("mw", self.game.perils_blast_mortal_wounds, s.wounds[s.blast[0]])
        elif stage == Stage.DENY_ROLL:
            key = ("deny", s.total)
        else:
            eff = self.powers[s.power].effect
            boosted = eff.boosted_at is not None and s.total >= eff.boosted_at
            key = ("effect", s.power, s.caster, s.target, s.wounds[s.target], boosted)
        cached = self._chance_cache.get(key)
        if cached is None:
            if key[0] == "test":
                exact: Any = self._test_outcomes
            elif key[0] == "mw":
                exact = mortal_distribution(key[1], key[2])
            elif key[0] == "deny":
                q = deny_chance(s.total)
                exact = [(o, p) for o, p in ((0, 1 - q), (1, q)) if p]
            else:
                exact = self.effect_distribution(
                    s.power, s.caster, s.target, s.total, s.wounds[s.target]
                )
            outcomes = [(int(o), float(p)) for o, p in exact]
            cumulative = np.cumsum([p for _, p in outcomes])
            cumulative[-1] = 1.0
            cached = self._chance_cache[key] = (outcomes, cumulative)
        return cached

    # ------------------------------------------------------------------ transitions

    def _apply(self, state: State, action: int) -> tuple[State, tuple[Event, ...]]:
        events: list[Event] = []
        stage = state.stage
        if stage == Stage.SELECT:
            s = self._select(state, action, events)
        elif stage == Stage.POWER:
            s = self._power(state, action, events)
        elif stage == Stage.DENY:
            s = self._deny(state, action, events)
        else:
            s = self._chance_result(state, action, events)
        return s, tuple(events)

    def _select(self, s: State, a: int, events: list[Event]) -> State:
        if a == self.END_PHASE:  # 8E-2.1
            return self._advance(self._next_phase(s, events), events)
        events.append(
            Event(
                "select",
                f"{self.names[a]} is selected to manifest powers.",
                s.active,
                _data(unit=self.names[a]),
            )
        )
        return evolve(
            s,
            stage=Stage.POWER,
            caster=a,
            manifests_left=self.units[a].manifest,
            unit_powers=0,
            selected=s.selected | (1 << a),
        )

    def _power(self, s: State, a: int, events: list[Event]) -> State:
        if a == self.STOP:  # 8E-2.2
            return self._advance(
                evolve(s, stage=Stage.SELECT, caster=-1, manifests_left=0, unit_powers=0), events
            )
        p, t = self.decode_cast(a)
        power = self.powers[p]
        wc = self.warp_charge(s, p)  # 8E-4.2
        attempts = list(s.attempts)
        attempts[p] += 1
        target = "" if power.target in ("self", "none") else f" at {self.names[t]}"
        events.append(
            Event(
                "attempt",
                f"{self.names[s.caster]} attempts {power.name} (WC {wc}){target}.",
                s.active,
                _data(
                    power=power.name,
                    warp_charge=wc,
                    caster=self.names[s.caster],
                    target=self.names[t],
                ),
            )
        )
        return evolve(
            s,
            stage=Stage.TEST,
            attempts=tuple(attempts),
            unit_powers=s.unit_powers | (1 << p),
            manifests_left=s.manifests_left - 1,
            power=p,
            target=t,
            warp_charge=wc,
            total=0,
        )

    def _deny(self, s: State, a: int, events: list[Event]) -> State:
        if a == self.NO_DENY:
            return self._to_effect(s, events)
        d = a - self.DENY
        deny_left = list(s.deny_left)
        deny_left[d] -= 1
        events.append(
            Event(
                "deny_attempt",
                f"{self.names[d]} attempts to deny {self.powers[s.power].name} (test {s.total}).",
                1 - s.active,
                _data(unit=self.names[d], power=self.powers[s.power].name),
            )
        )
        return evolve(s, stage=Stage.DENY_ROLL, denier=d, deny_left=tuple(deny_left))

    def _chance_result(self, s: State, a: int, events: list[Event]) -> State:
        stage = s.stage
        power = self.powers[s.power]
        caster = self.names[s.caster]
        if stage == Stage.TEST:  # 8E-4.1, 8E-4.3
            s = evolve(s, total=a)
            passed = s.passed
            events.append(
                Event(
                    "passed" if passed else "failed",
                    f"{caster} rolls {a} for {power.name} (WC {s.warp_charge}): "
                    f"{'passed' if passed else 'failed'}.",
                    s.active,
                    _data(power=power.name, total=a),
                )
            )
            if is_perils(a):
                events.append(
                    Event(
                        "perils",
                        f"{caster} suffers Perils of the Warp (double {1 if a == 2 else 6}).",
                        s.active,
                        _data(unit=caster),
                    )
                )
                return self._enter_chance(evolve(s, stage=Stage.PERILS), events)
            if passed:
                return self._to_deny(s, events)
            return self._after_attempt(s, events)
        if stage == Stage.PERILS:  # 8E-6.1
            s = self._hurt(s, s.caster, a, events, "Perils of the Warp")
            if s.wounds[s.caster] == 0:  # 8E-6.2: the power fails, then the blast
                events.append(
                    Event(
                        "failed",
                        f"{power.name} fails: {caster} is destroyed by Perils of the Warp.",
                        s.active,
                        _data(power=power.name),
                    )
                )
                blast = tuple(j for j in self.blast_candidates[s.caster] if s.wounds[j] > 0)
                if blast:
                    return self._enter_chance(evolve(s, stage=Stage.BLAST, blast=blast), events)
                return self._after_attempt(s, events)
            if s.passed:
                return self._to_deny(s, events)
            return self._after_attempt(s, events)
        if stage == Stage.BLAST:  # 8E-6.2
            s = self._hurt(s, s.blast[0], a, events, f"the blast of {caster}'s Perils")
            rest = s.blast[1:]
            if rest:
                return self._enter_chance(evolve(s, blast=rest), events)
            return self._after_attempt(evolve(s, blast=()), events)
        if stage == Stage.DENY_ROLL:  # 8E-5.2
            if a:
                events.append(
                    Event(
                        "denied",
                        f"{self.names[s.denier]} denies {power.name}.",
                        1 - s.active,
                        _data(unit=self.names[s.denier], power=power.name),
                    )
                )
                return self._after_attempt(s, events)
            events.append(
                Event(
                    "deny_failed",
                    f"{self.names[s.denier]} fails to deny {power.name}.",
                    1 - s.active,
                    _data(unit=self.names[s.denier], power=power.name),
                )
            )
            return self._to_effect(s, events)
        # Stage.EFFECT (8E-7)
        value = a * self.units[s.target].value_per_wound
        events.append(
            Event(
                "manifest",
                f"{power.name} is manifested: {self.names[s.target]} loses {_plural(a, 'wound')}.",
                s.active,
                _data(power=power.name, value=value, wounds=a),
            )
        )
        s = self._hurt(s, s.target, a, events, power.name)
        return self._after_attempt(s, events)

    def _to_deny(self, s: State, events: list[Event]) -> State:
        if self.deniers(s):  # 8E-5.1
            return evolve(s, stage=Stage.DENY)
        return self._to_effect(s, events)

    def _to_effect(self, s: State, events: list[Event]) -> State:
        power = self.powers[s.power]
        if power.value is not None:  # value effects score for the caster (8E-7.3, 8E-8.2)
            sign = 1.0 if s.active == 0 else -1.0
            events.append(
                Event(
                    "manifest",
                    f"{power.name} is manifested (worth {power.value:g}).",
                    s.active,
                    _data(power=power.name, value=power.value),
                )
            )
            return self._after_attempt(evolve(s, score=s.score + sign * power.value), events)
        return self._enter_chance(evolve(s, stage=Stage.EFFECT), events)

    def _enter_chance(self, s: State, events: list[Event]) -> State:
        """Resolve a chance node at once when it has a single outcome."""
        outcomes = self._chance(s)[0]
        if len(outcomes) == 1:
            return self._chance_result(s, outcomes[0][0], events)
        return s

    def _hurt(self, s: State, unit: int, amount: int, events: list[Event], cause: str) -> State:
        """Remove ``amount`` wounds from ``unit`` (spilling over models, 8E-7.2) and score them."""
        if amount <= 0:
            return s
        wounds = list(s.wounds)
        wounds[unit] -= amount
        owner = self.side_of[unit]
        delta = amount * self.units[unit].value_per_wound
        name = self.names[unit]
        events.append(
            Event(
                "wounds",
                f"{name} loses {_plural(amount, 'wound')} to {cause}.",
                owner,
                _data(unit=name, amount=amount),
            )
        )
        if wounds[unit] == 0:  # 8E-1.3
            events.append(Event("slain", f"{name} is destroyed.", owner, _data(unit=name)))
        return evolve(s, wounds=tuple(wounds), score=s.score + (delta if owner else -delta))

    def _after_attempt(self, s: State, events: list[Event]) -> State:
        s = evolve(
            s, stage=Stage.POWER, power=-1, target=-1, warp_charge=0, total=0, denier=-1, blast=()
        )
        return self._advance(s, events)

    def _advance(self, s: State, events: list[Event]) -> State:
        """Skip decisions the rules leave no choice in; end the game when it is over."""
        while True:
            if s.stage == Stage.OVER:
                return s
            if not any(s.wounds[i] for i in self.side_units[0]) or not any(
                s.wounds[i] for i in self.side_units[1]
            ):  # 8E-8.1
                return evolve(s, stage=Stage.OVER)
            if s.stage == Stage.POWER:
                if (
                    s.wounds[s.caster] > 0
                    and s.manifests_left > 0
                    and self._cast_options(s, s.caster, s.unit_powers)
                ):
                    return s
                s = evolve(s, stage=Stage.SELECT, caster=-1, manifests_left=0, unit_powers=0)
                continue
            if s.stage == Stage.SELECT:
                if any(self._selectable(s, i) for i in self.side_psykers[s.active]):
                    return s
                s = self._next_phase(s, events)
                continue
            return s

    def _next_phase(self, s: State, events: list[Event]) -> State:
        """The next Psychic phase (8E-8.1), or the end of the game."""
        played = s.phases_played + 1
        limit = self.game.phase_limit
        phase, rnd = (1, s.round) if s.phase == 0 else (0, s.round + 1)
        if (limit is not None and played >= limit) or rnd > self.game.battle_rounds:
            return evolve(s, stage=Stage.OVER, caster=-1)
        first = self.game.first_player
        active = first if phase == 0 else 1 - first
        events.append(
            Event(
                "phase",
                f"Battle round {rnd}: {self.side_names[active]}'s Psychic phase.",
                active,
                _data(round=rnd),
            )
        )
        return State(
            stage=Stage.SELECT,
            wounds=s.wounds,
            deny_left=self._full_deny,
            attempts=self._no_attempts,
            round=rnd,
            phase=phase,
            phases_played=played,
            active=active,
            score=s.score,
        )

    # ------------------------------------------------------------------ views

    def observe(self, state: State, player: int) -> np.ndarray:
        """Everything ``player`` may see (8th edition has no hidden information), float32.

        Layout (N units, P powers):

        * ``[0:5]`` kind of node: select a unit, choose a power, deny, chance, game over.
        * ``[5:13]`` battle round / battle rounds; 1 if it is this player's Psychic phase; 1 if
          this player is the first player; pending test total / 12; pending warp charge / 12;
          1 if the pending test perilled; chance that a deny beats the pending total; score from
          this player's view.
        * ``[13:13+10N]`` per unit: mine, alive, wounds left / wound pool, wounds left, psyker,
          deny attempts left, selected this phase, is the caster, is the pending target, is the
          denier.
        * then ``4P`` per power: warp charge now / 12 (with Smite's escalation), attempts this
          phase by the active army, known by the selected unit, is the pending power.

        Every entry lies within ``[-observation_bound, observation_bound]`` (at least 1000; more
        for scenarios with bigger wound pools or scores).
        """
        kind = [0.0] * _DECISION_KINDS
        kind[_KIND.get(state.stage, 3)] = 1.0
        pending = state.power >= 0
        total = state.total if pending else 0
        values = kind + [
            state.round / self.game.battle_rounds,
            float(state.active == player),
            self._obs_first[player],
            total / 12,
            state.warp_charge / 12 if pending else 0.0,
            float(is_perils(total)),
            self._obs_deny[total],
            state.score if player == 0 else -state.score,
        ]
        mine, psyker, max_wounds = self._obs_mine[player], self._obs_psyker, self.max_wounds
        selected, caster, target, denier = state.selected, state.caster, state.target, state.denier
        deny_left = state.deny_left
        for i, w in enumerate(state.wounds):
            values += (
                mine[i],
                float(w > 0),
                w / max_wounds[i],
                w,
                psyker[i],
                deny_left[i],
                float((selected >> i) & 1),
                float(caster == i),
                float(target == i),
                float(denier == i),
            )
        known = self.known[caster] if caster >= 0 else ()
        for p, tries in enumerate(state.attempts):
            power = self.powers[p]
            values += (
                (power.warp_charge + power.escalation * tries) / 12,
                tries,
                float(p in known),
                float(state.power == p),
            )
        return np.array(values, dtype=np.float32)

    def _prepare_observations(self) -> None:
        """Observation entries that never change (first player, mine, psyker, deny chances)."""
        first = self.game.first_player
        self._obs_first = (float(first == 0), float(first == 1))
        self._obs_mine = tuple(
            tuple(float(self.side_of[i] == p) for i in range(self.n_units)) for p in (0, 1)
        )
        self._obs_psyker = tuple(float(u.psyker) for u in self.units)
        self._obs_deny = [float(deny_chance(t)) if t else 0.0 for t in range(13)]

    def describe(self, state: State, action: int) -> ActionView:
        """Typed view of a decision, or of a chance outcome at chance nodes."""
        stage, a = state.stage, int(action)
        n = self.n_units
        if stage == Stage.SELECT:
            if a == self.END_PHASE:
                side = self.side_names[state.active]
                return EndPhase(label=f"End {side}'s Psychic phase", side=side)
            if 0 <= a < n:
                return SelectUnit(label=f"Select {self.names[a]}", unit=self.names[a])
        elif stage == Stage.POWER:
            caster = self.names[state.caster]
            if a == self.STOP:
                return StopUnit(label=f"{caster} stops manifesting", unit=caster)
            if self.CAST <= a < self.STOP:
                p, t = self.decode_cast(a)
                power = self.powers[p]
                wc = self.warp_charge(state, p)
                if power.target in ("self", "none"):
                    label, target = f"{caster} casts {power.name} (WC {wc})", None
                else:
                    target = self.names[t]
                    label = f"{caster} casts {power.name} (WC {wc}) at {target}"
                return Cast(
                    label=label, caster=caster, power=power.name, warp_charge=wc, target=target
                )
        elif stage == Stage.DENY:
            power = self.powers[state.power].name
            chance = float(deny_chance(state.total))
            if a == self.NO_DENY:
                return Deny(
                    label=f"Do not deny {power} (test {state.total})",
                    power=power,
                    test_total=state.total,
                )
            if self.DENY <= a < self.NO_DENY:
                d = self.names[a - self.DENY]
                return Deny(
                    label=f"{d} denies {power} (test {state.total}, {chance:.0%} to deny)",
                    denier=d,
                    power=power,
                    test_total=state.total,
                    chance=chance,
                )
        elif stage == Stage.TEST:
            passed = a >= state.warp_charge
            tag = " (Perils)" if is_perils(a) else ""
            return Outcome(
                label=f"test {a}: {'passed' if passed else 'failed'}{tag}",
                kind="test",
                value=a,
                unit=self.names[state.caster],
            )
        elif stage in (Stage.PERILS, Stage.BLAST, Stage.EFFECT):
            unit = {
                Stage.PERILS: state.caster,
                Stage.BLAST: state.blast[0] if state.blast else -1,
                Stage.EFFECT: state.target,
            }[stage]
            kind = stage.name.lower()
            name = self.names[unit] if unit >= 0 else None
            return Outcome(
                label=f"{kind}: {name} loses {_plural(a, 'wound')}", kind=kind, value=a, unit=name
            )
        elif stage == Stage.DENY_ROLL:
            return Outcome(
                label="denied" if a else "not denied",
                kind="deny",
                value=a,
                unit=self.names[state.denier],
            )
        elif stage == Stage.OVER:
            return Outcome(label="game over", kind="over", value=a)
        return ActionView(label=f"action {a} (not an action at this {stage.name} node)")

    def render(self, state: State, player: int | None = None) -> str:
        """Text picture of the state for terminal play (everything is public in 8th edition)."""
        who = self.side_names[state.active]
        view = 0 if player is None else player
        score = state.score if view == 0 else -state.score
        if state.stage == Stage.OVER:
            head = f"Game over after battle round {state.round}"
        else:
            head = (
                f"Battle round {state.round}/{self.game.battle_rounds}: {who}'s Psychic phase "
                f"({state.stage.name.lower()})"
            )
        lines = [f"{head}; score {score:+g} for {self.side_names[view]}"]
        for side in (0, 1):
            lines.append(f"  {self.side_names[side]}:")
            for i in self.side_units[side]:
                u = self.units[i]
                w = state.wounds[i]
                bits = [f"{w}/{self.max_wounds[i]} W" if w else "destroyed"]
                if u.models > 1 and w:
                    bits.append(_plural(-(-w // u.wounds), "model"))
                if u.psyker:
                    bits.append(f"PSYKER deny {state.deny_left[i]}")
                if (state.selected >> i) & 1:
                    bits.append("selected")
                if state.caster == i:
                    bits.append(f"casting, {state.manifests_left} attempts left")
                lines.append(f"    [{i}] {u.name}: {', '.join(bits)}")
        if state.power >= 0:
            p = self.powers[state.power]
            line = f"  Pending: {p.name} (WC {state.warp_charge})"
            if state.total:
                line += f", test {state.total}"
            lines.append(line)
        return "\n".join(lines)
