"""7th-edition psychic phase rules (rules/seventh.md, 7E-1 to 7E-9).

The game: power generation before the battle (7E-2), then a number of battle rounds in which each
player has one Psychic phase while the other denies (7E-8.1).

Where each rule lives: :class:`SeventhRules` (this module) holds the public API, built once per
scenario; each rule section is a class of its own module, mixed into it, so every method keeps
its name on the rules object and the hot paths gain no call:

* 7E-2 power generation: :mod:`.generation` (``SeventhGeneration``);
* 7E-3 the pools and 7E-8.1 the order of the phases and the end: :mod:`.phases`
  (``SeventhPhases``);
* 7E-4 casting and 7E-5 Deny the Witch: :mod:`.casting` (``SeventhCasting``);
* 7E-6 Perils of the Warp: :mod:`.perils` (``SeventhPerils``);
* 7E-7 effects and 7E-8.2 the score: :mod:`.effects` (``SeventhEffects``);
* the legal actions and masks: :mod:`.legality` (``SeventhLegality``);
* the chance nodes and their exact tables: :mod:`.chances` (``SeventhChances``);
* the transition loop and the fast walks: :mod:`.transitions` (``SeventhTransitions``).

The scenario's read-only facts (units, powers, geometry) are :class:`~.facts.SeventhFacts`,
which the views and the score bounds read instead of the rules. The action layout
(``Discrete``, encode/decode) is :mod:`.actions` (``rules.actions``); observations, action views
and the text picture are :mod:`.views`; the state is :mod:`.state`; the score bounds
:mod:`.bounds`.

Chance outcomes are aggregated: a cast of n dice is one node whose outcomes are
``2*successes + perils``; a deny is one node "denied or not"; an attack is one node over the
wounds it inflicts.

Defaults chosen where the spec is silent (each can be seen in the code at the cited rule):

- Decisions with a single option (one discipline to roll on, Primaris already known, no deny
  dice, nothing left to cast) are taken automatically, so every decision node is a real choice.
- A player whose army has no living psyker with a power skips its Psychic phase (no pool roll).
- Perils is resolved in full right after the casting roll, before the deny (7E-5.4 "Perils already
  suffered still stand"); so Power Drain shrinks the deny pool before the deny.
- A "wound" from Perils removes one wound from the psyker's unit; Feel No Pain is not modelled.
  Dragged into the Warp (failed) removes one model's worth of wounds and the unit's psyker; any
  models left take the table's D6 S6 AP1 hits.
- Wounds come off a unit's pool of models x wounds, model by model: each unsaved wound goes to
  the partly wounded model if there is one, and a multi-wound result (``damage = "D3"``) takes at
  most what that model has left; the rest is lost, it does not spill into the next model (as in
  8th edition, where excess attack damage is lost too; mortal wounds and Perils wounds, which
  are wounds one for one, do come off the pool). Area attacks hit min(models left, 3/2/4) times
  (template/blast/large blast).
- Instant Death (game setting ``instant_death``, default on as in the 7th rulebook; not in the
  seeds or the spec): an unsaved wound from an attack of Strength at least twice the target's
  Toughness removes a model of more than one wound outright (all the wounds it has left). It
  applies to ``attack`` effects and to the D6 S6 hits of Dragged into the Warp, not to wounds
  with no Strength (mortal wounds, Perils wounds). Eternal Warrior is not modelled.
- A nova hits every living enemy unit in range and rolls its hits (2D6) once per target unit;
  the unit with the best deny modifiers denies. A beam hits its one target.
- Ranges are measured centre to centre between unit positions, inclusive (a unit exactly at the
  power's range is in range), with no line of sight or terrain.
- Movement: a unit with ``advance`` (inches, default 0) moves that far straight toward the
  nearest enemy unit before each battle round after the first, never closer than 1" to an enemy
  (:func:`plan_positions`). The plan ignores casualties, so positions depend on the battle round
  only and the state holds none; legal targets are those in range in the current battle round.
- Power generation (7E-2) with fixed powers: a psyker that generates powers may also have fixed
  powers only of no discipline (such as Force); those do not count toward its ML and do not break
  Psychic Focus (7E-2.3, 7E-2.4). Fixed powers of a discipline beside ``disciplines`` are refused
  with a scenario error (7E-2 does not say how they count toward ML or Focus).
- A blessing or malediction already in force on a unit cannot be cast on it again (7E-7.2 "copies
  do not stack"); it lasts until its owner's next Psychic phase. Warp Surge gives a 3++ save until
  then, to the whole of the psyker's unit (wounds come off the unit's pool, so the save covers
  every model), and scores ``warp_surge_value``.
- Life Leech heals its caster one wound (scored back) if it caused any wound.
- A power whose caster died to Perils still takes effect (7E-6 note), conjurations included, but
  a power aimed at a unit no longer on the table (a self-blessing of the dead psyker) has nothing
  to act on.
- Focused witchfires' precision shots change nothing (7E-4.5 default).
- Ties for deny: the denier must negate all successes (7E-5.3); a power that targets none of the
  denier's units is denied by natural 6s only (7E-5.2).

Data no source gives (``default = true`` in ``data/disciplines.toml``): the seven Sanctic and
Malefic powers rules/disciplines.md leaves out (Gate of Infinity, Sanctuary, Cursed Earth,
Sacrifice, Incursion, Possession as value() entries, and Dark Flame as a template attack
S4 AP5), their warp charges and values, and the 8" range of the template powers Flame Breath and
Dark Flame (rules/disciplines.md gives templates no range; 8" is the flamer template's length).

Speed (same games): a transition copies the state once, into a :class:`~.state.Draft` that the
stage's handler (``_on_stage``) edits and that is frozen at the end; ``apply`` (what search calls)
runs the same handlers with ``ev=None``, which only skips building the events. Geometry, the
choose-cast actions per (caster, power) and the ``Cast`` each choice starts are tables made once
per scenario; the casting choices of the last state asked about are kept (``_legal_casts``).
The envs' walk (``apply_with_chance``: a decision and the chance nodes after it) edits one draft
for the whole run and draws each node's outcome from the table ``sample_chance`` reads. Kept per
key, all exactly what a fresh computation gives (``tests/test_speed_seventh.py``): the events of
the commonest transitions, the casting choices after one more attempt (the last answer minus that
pair's), masks per legal set, the D6/D3 and casting-roll tables, the open disciplines per known
powers, the initial state. Stage and event-kind members are module constants (in Python 3.11
``Stage.SELECT`` is a slow lookup through the enum metaclass).

Change note (rules-fidelity audit): Instant Death added (``instant_death``, default on); attack
damage no longer spills into the next model; units may ``advance`` (the shipped duel advances
2" a battle round, so every power its psykers can generate comes into range); fixed powers of a
discipline beside ``disciplines`` are refused; defaults above documented. Seeded 7th games with
Instant Death or advances differ from before; with ``instant_death = false`` and no advances the
games are the same as before.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from psygym.core import ActionView, Event, GameInfo, RulesBase
from psygym.dice import Dist, parse
from psygym.editions.seventh import views
from psygym.editions.seventh.bounds import utility_bounds
from psygym.editions.seventh.casting import SeventhCasting
from psygym.editions.seventh.chances import (
    SeventhChances,
    allocate_wounds,
    cast_distribution,
    deny_chance,
    ld_pass,
)
from psygym.editions.seventh.effects import SeventhEffects
from psygym.editions.seventh.facts import SeventhFacts, plan_positions
from psygym.editions.seventh.generation import SeventhGeneration
from psygym.editions.seventh.legality import SeventhLegality
from psygym.editions.seventh.perils import SeventhPerils
from psygym.editions.seventh.phases import SeventhPhases
from psygym.editions.seventh.spec import PerilsFile, PowerFile, Scenario
from psygym.editions.seventh.state import (
    _CAST_ROLL,
    _DENY,
    _DENY_ROLL,
    _DICE,
    _DISCIPLINE,
    _DRAIN,
    _EFFECT,
    _GEN_ROLL,
    _LD_TEST,
    _OVER,
    _PERILS,
    _PERILS_HITS,
    _PHASE_ROLL,
    _PURGE,
    _SELECT,
    _SWAP,
    MOVER,
    Cast,
    Draft,
    Stage,
    State,
    UnitState,
)
from psygym.editions.seventh.transitions import SeventhTransitions
from psygym.kernel import ChanceCache, ChanceTable, evolve

_GENERATION_STAGES = frozenset((_DISCIPLINE, _GEN_ROLL, _SWAP))
_AFTER_CAST_ROLL = frozenset(
    (_PERILS, _LD_TEST, _PERILS_HITS, _PURGE, _DRAIN, _DENY, _DENY_ROLL, _EFFECT)
)
_FAST_HOOKS = ("_step", "_table", "_chance_key", "_decide_and_walk", "_walk")
"""Methods the fast walk (``_decide_and_walk``, ``_walk``) relies on (``_own_chance_walk``)."""


# ----------------------------------------------------------------------------- the rules
class SeventhRules(
    SeventhGeneration,
    SeventhPhases,
    SeventhCasting,
    SeventhPerils,
    SeventhEffects,
    SeventhLegality,
    SeventhChances,
    SeventhTransitions,
    RulesBase,
):
    """7th-edition rules for one scenario; see the module docstring for layout and defaults.

    The rule sections live in the mixed-in classes (the module docstring says which); this class
    builds the scenario's tables and memos once and holds the structure of the game (the
    initial state, who moves, the bounds and the horizon) and the views.

    Attributes:
        facts: the scenario's :class:`~.facts.SeventhFacts`; each of its fields is also an
            attribute of the rules (``scenario``, ``specs``, ``owner``, ``names``, ``powers``,
            ``actions``, ``positions``, ``candidates_by_round``...), see there.
    """

    edition = "7th"
    fast_walk_hooks = _FAST_HOOKS

    def __init__(self, scenario: Scenario, powers: PowerFile, perils: PerilsFile):
        self.facts = facts = SeventhFacts.build(scenario, powers, perils)
        # The facts' fields are the rules' attributes too: the hot paths read ``self.powers``,
        # not ``self.facts.powers``.
        self.__dict__.update(facts.fields())
        n_units = len(self.specs)
        rounds = len(self.positions)
        self._cast_options = tuple(
            {
                key: tuple((t, self.actions.cast(*key, t)) for t in targets)
                for key, targets in by_key.items()
            }
            for by_key in self.candidates_by_round
        )
        """Per battle round, (target, choose-cast action) pairs per (caster, power)."""
        self._cast_plan = tuple(
            tuple(
                tuple(
                    (
                        tuple(
                            t
                            for t in range(n_units)
                            if self.owner[t] != self.owner[c]
                            and self._in_range(c, t, power.range, r)
                        )
                        if power.target == "enemies"
                        else None,
                        power.effect.value is not None,
                        self._cast_options[r][(c, p)],
                    )
                    for p, power in enumerate(self.powers)
                )
                for c in range(n_units)
            )
            for r in range(rounds)
        )
        """Per battle round, caster and power: the enemy units a nova reaches (``None``: not a
        nova), whether the power is a blessing or malediction (7E-7.2), and its choose-cast
        options (what :meth:`_compute_legal_casts` reads)."""
        self._new_casts = tuple(
            Cast(*self.actions.decode_cast(a)) for a in range(self.CAST, self.DICE)
        )
        """The ``Cast`` each choose-cast action starts (frozen, so shared), by action - CAST."""
        self._cast_pair = (None,) * self.CAST + tuple((c.caster, c.power) for c in self._new_casts)
        """The (psyker, power) each choose-cast action chooses, by action."""
        self._last_round = rounds - 1
        self._pool_bonus = tuple(side.pool_bonus for side in scenario.sides)
        self._chance_cache = ChanceCache()
        self._effect_cache: dict[tuple, Dist] = {}
        self._last_casts: tuple = (None,) * 6
        self._last_alive: tuple = (None, True)  # _both_sides_alive's last units and answer
        self._last_facts: tuple = (None, ())  # _side_facts' last units and answer
        self._masks: dict[tuple[int, ...], np.ndarray] = {}  # SELECT masks, by casting choices
        self._last_mask: tuple = (None, None)  # the last casting choices' mask (by identity)
        # Dice and deny choices and their masks per pool size (7E-4.3, 7E-5.1).
        self._dice_actions = tuple(
            tuple(range(self.DICE, self.DICE + n)) for n in range(self.max_dice + 1)
        )
        self._deny_actions = tuple(
            tuple(range(self.DENY, self.DENY + n + 1)) for n in range(self.max_dice + 1)
        )
        self._dice_masks = tuple(self._mask_of(a) for a in self._dice_actions)
        self._deny_masks = tuple(self._mask_of(a) for a in self._deny_actions)
        self._observer = views.Observer(facts)
        self._stage_tables = self._fixed_stage_tables()
        """The one table of each node whose outcomes never change (the ``(stage,)`` keys)."""
        self._cast_tables = [
            [[None] * (self.max_dice + 1) for _ in self.powers] for _ in self.specs
        ]
        """Casting-roll tables by caster, power and dice (filled as they are first asked for)."""
        self._node_tables: dict[tuple, ChanceTable] = {}  # the cache's tables, by key, at hand
        self._event_memo: dict[tuple, tuple[Event, ...]] = {}
        """The events of the commonest transitions, by everything their texts and data depend on
        (events are frozen, so one object serves every transition with that key)."""
        self._first_player = scenario.game.first_player
        self._initial: State | None = None
        self._open_memo: dict[tuple[int, tuple[int, ...]], list[int]] = {}
        handlers = {
            _DISCIPLINE: self._on_discipline,
            _GEN_ROLL: self._on_gen_roll,
            _SWAP: self._on_swap,
            _PHASE_ROLL: self._on_phase_roll,
            _SELECT: self._on_select,
            _DICE: self._on_dice,
            _CAST_ROLL: self._on_cast_roll,
            _PERILS: self._on_perils,
            _LD_TEST: self._on_ld_test,
            _PERILS_HITS: self._on_perils_hits,
            _PURGE: self._on_purge,
            _DRAIN: self._on_drain,
            _DENY: self._on_deny,
            _DENY_ROLL: self._on_deny_roll,
            _EFFECT: self._on_effect,
            _OVER: self._on_over,
        }
        self._on_stage = tuple(handlers[st] for st in Stage)
        """The transition handler of each stage, indexed by ``Stage`` (0, 1, 2, ...)."""

    # One definition each, in the facts: the views ask the facts, the rules the same function.
    round_of = SeventhFacts.round_of
    _in_range = SeventhFacts._in_range
    targets_in_range = SeventhFacts.targets_in_range
    nova_targets = SeventhFacts.nova_targets
    models_left = SeventhFacts.models_left
    deny_unit_and_threshold = SeventhFacts.deny_unit_and_threshold

    # ------------------------------------------------------------------ API: structure
    def initial_state(self) -> State:
        """Units with their fixed powers (and Force), then power generation or the first phase.

        Built once: states are immutable, so every game starts from the same object.
        """
        if self._initial is None:
            self._initial = self._build_initial_state()
        return self._initial

    def _build_initial_state(self) -> State:
        units = []
        for u in self.specs:
            if u.psyker is None:
                units.append(UnitState(wounds=u.models * u.wounds, psyker=False))
                continue
            known = {self.power_index[n] for n in u.psyker.powers}
            if u.psyker.force_weapon:
                known.add(self.power_index["Force"])  # 7E-2.4
            units.append(
                UnitState(wounds=u.models * u.wounds, psyker=True, powers=tuple(sorted(known)))
            )
        d = Draft(State(stage=_PHASE_ROLL, units=tuple(units)))
        if self.scenario.game.generate_powers:
            self._next_generation(d, -1)
        else:
            self._start_phase(d, 0)
        return d.freeze()

    def current_player(self, s: State) -> int:
        """Owner at generation decisions, the active player when casting, the other at denies."""
        player = MOVER[s.stage][s.active]
        if player is None:  # a generation decision: the generating psyker's owner
            return self.owner[s.gen_unit]
        return player

    def is_response(self, s: State) -> bool:
        """True at a deny decision, where the player answers the other's cast."""
        return s.stage == _DENY

    def game_info(self) -> GameInfo:
        """Static facts, with the most outcomes any chance node can list and the score bounds.

        Casting n dice lists at most ``2n + 2`` outcomes (successes 0..n, with or without
        Perils); wounds rolls list at most a unit's wounds + 1; a power generation roll at most
        a discipline's numbered powers; Mental Purge at most the powers known; the D6 rolls 6.
        Utilities (7E-8.2): loose but sound bounds from the scenario alone, every enemy wound's
        value plus each possible cast attempt's best ``value`` and Warp Surge
        (:func:`.bounds.utility_bounds`, which argues why heals and blessings cast again in
        later phases stay within them).
        """
        most = max(
            6,
            2 * self.max_dice + 2,
            max(self.max_wounds) + 1,
            len(self.powers),
            max((len(n) for n in self.numbered.values()), default=0),
        )
        lo, hi = utility_bounds(self.facts)
        return evolve(
            super().game_info(),
            max_chance_outcomes=most,
            min_utility=lo,
            max_utility=hi,
        )

    def horizon(self, s: State) -> tuple[int, int]:
        """``(battle round, step)``: one step per generated power, then one per cast.

        Round 0 is power generation (7E-2), a step per psyker's pick (its discipline, roll and
        keep-or-swap). In a battle round a step runs from a choice at ``SELECT`` through that
        cast's resolution (7E-4 to 7E-7), so ``search`` looks ahead one whole cast at a time.
        """
        st = s.stage
        if st in _GENERATION_STAGES:
            return (0, 1 + s.gen_unit * 16 + s.gen_pick)
        rolled = st in _AFTER_CAST_ROLL  # the cast is already in ``attempted`` (7E-4.3)
        return (s.phase // 2 + 1, (s.phase % 2) * 64 + len(s.attempted) - rolled)

    def phase_horizon(self, s: State) -> tuple[int, int]:
        """``(battle round, phase)``: every state of one Psychic phase (7E-3 to 7E-8) is one unit.

        Power generation keeps :meth:`horizon`'s steps (there is no Psychic phase yet).
        """
        if s.stage in _GENERATION_STAGES:
            return self.horizon(s)
        return (s.phase // 2 + 1, s.phase % 2)

    def returns(self, s: State) -> tuple[float, float]:
        """Zero-sum score so far (7E-8.2)."""
        return (s.score, -s.score)

    # ------------------------------------------------------------------ views (views.py)
    def describe(self, s: State, a: int) -> ActionView:
        """Typed view of a decision or chance outcome (:func:`views.describe`)."""
        return views.describe(self.facts, s, a)

    def observe(self, s: State, player: int) -> np.ndarray:
        """Flat float32 view for ``player`` (:func:`views.observe` documents the layout)."""
        return self._observer.observe(s, player)

    def render(self, s: State, player: int | None = None) -> str:
        """Text picture of the state (:func:`views.render`)."""
        return views.render(self.facts, s, player)

    def power_texts(self, s: State, player: int | None = None) -> dict[str, str]:
        """One line of rules text per power a living psyker knows (:func:`views.power_texts`)."""
        return views.power_texts(self.facts, s, player)


def load_rules(scenario: Scenario, source: str) -> SeventhRules:
    """Build rules for a validated scenario, checking power and discipline names."""
    from psygym.editions.seventh.spec import load_perils, load_powers
    from psygym.scenario import ScenarioError

    powers_path = scenario.powers_file
    if powers_path is not None and not Path(powers_path).is_absolute():
        powers_path = str(Path(source).parent / powers_path)
    powers = load_powers(powers_path) if powers_path else load_powers()
    names = {p.name for p in powers.power}
    disciplines = sorted({p.discipline for p in powers.power if p.discipline})
    for i, side in enumerate(scenario.sides):
        for j, u in enumerate(side.units):
            if u.psyker is None:
                continue
            where = f"sides.{i}.units.{j}.psyker"
            for k, name in enumerate(u.psyker.powers):
                if name not in names:
                    raise ScenarioError(
                        source,
                        f"{where}.powers.{k}",
                        f"unknown power {name!r}",
                        ", ".join(sorted(names)),
                    )
            for k, d in enumerate(u.psyker.disciplines):
                if d not in disciplines:
                    raise ScenarioError(
                        source,
                        f"{where}.disciplines.{k}",
                        f"unknown discipline {d!r}",
                        ", ".join(disciplines),
                    )
            by_name = {p.name: p for p in powers.power}
            if scenario.game.generate_powers and u.psyker.disciplines:
                for k, name in enumerate(u.psyker.powers):
                    if by_name[name].discipline:
                        # 7E-2 gives no rule for a psyker that both generates powers and has
                        # fixed powers of a discipline (for ML and Psychic Focus): refuse it.
                        raise ScenarioError(
                            source,
                            f"{where}.powers.{k}",
                            f"fixed power {name!r} is of the {by_name[name].discipline} "
                            "discipline, and this psyker also generates powers (disciplines)",
                            "fixed powers of no discipline (such as Force) beside disciplines, "
                            "or fixed powers without disciplines",
                        )
            if not u.psyker.powers and not u.psyker.disciplines and not u.psyker.force_weapon:
                raise ScenarioError(
                    source,
                    where,
                    "a psyker needs powers or disciplines",
                    "powers = [...] or disciplines = [...]",
                )
    return SeventhRules(scenario, powers, load_perils())


__all__ = [
    "SeventhRules",
    "allocate_wounds",
    "cast_distribution",
    "deny_chance",
    "ld_pass",
    "load_rules",
    "parse",
    "plan_positions",
]
