"""7th-edition psychic phase rules (rules/seventh.md, 7E-1 to 7E-9).

The game: power generation before the battle (7E-2), then a number of battle rounds in which each
player has one Psychic phase while the other denies (7E-8.1).

This module holds legality, chance and transitions only. The action layout (``Discrete``,
encode/decode) is :mod:`.actions` (``rules.actions``); observations, action views and the text
picture are :mod:`.views`; the state is :mod:`.state`.

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

from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np

from psygym.combat import (
    capped,
    roll_chance,
    to_wound_7th,
    unsaved_chance_7th,
)
from psygym.core import (
    CHANCE,
    TERMINAL,
    ActionView,
    Event,
    EventKind,
    GameInfo,
    RulesBase,
)
from psygym.dice import Dist, at_least, binomial, distribution, parse, pool, pool_any_double
from psygym.editions.seventh import views
from psygym.editions.seventh.actions import ActionLayout
from psygym.editions.seventh.bounds import utility_bounds
from psygym.editions.seventh.spec import AREA_HITS, PerilsFile, Power, PowerFile, Scenario
from psygym.editions.seventh.state import Cast, Draft, Stage, State, UnitState
from psygym.kernel import ChanceCache, ChanceTable, evolve
from psygym.scenario import distance
from psygym.text import plural

# Stage members as module constants (the same objects): in Python 3.11 ``Stage.SELECT`` is a
# class-attribute lookup through the enum metaclass, about 0.14 us, and transitions make dozens.
_DISCIPLINE = Stage.DISCIPLINE
_GEN_ROLL = Stage.GEN_ROLL
_SWAP = Stage.SWAP
_PHASE_ROLL = Stage.PHASE_ROLL
_SELECT = Stage.SELECT
_DICE = Stage.DICE
_CAST_ROLL = Stage.CAST_ROLL
_PERILS = Stage.PERILS
_LD_TEST = Stage.LD_TEST
_PERILS_HITS = Stage.PERILS_HITS
_PURGE = Stage.PURGE
_DRAIN = Stage.DRAIN
_DENY = Stage.DENY
_DENY_ROLL = Stage.DENY_ROLL
_EFFECT = Stage.EFFECT
_OVER = Stage.OVER
# Event kinds likewise (``EventKind.PERILS`` is the same slow lookup).
_EV_ATTEMPT = EventKind.ATTEMPT
_EV_DENIED = EventKind.DENIED
_EV_DENY_ATTEMPT = EventKind.DENY_ATTEMPT
_EV_DENY_FAILED = EventKind.DENY_FAILED
_EV_DRAIN = EventKind.DRAIN
_EV_END_PHASE = EventKind.END_PHASE
_EV_GENERATE = EventKind.GENERATE
_EV_HEAL = EventKind.HEAL
_EV_LD_TEST = EventKind.LD_TEST
_EV_MANIFEST = EventKind.MANIFEST
_EV_PASSED = EventKind.PASSED
_EV_PERILS = EventKind.PERILS
_EV_PERILS_ROLL = EventKind.PERILS_ROLL
_EV_PHASE = EventKind.PHASE
_EV_POOLS = EventKind.POOLS
_EV_PURGE = EventKind.PURGE
_EV_SLAIN = EventKind.SLAIN
_EV_SURGE = EventKind.SURGE
_EV_WOUNDS = EventKind.WOUNDS
_DECISIONS = frozenset((_DISCIPLINE, _SWAP, _SELECT, _DICE, _DENY))
_CHANCE_STAGES = frozenset(Stage) - _DECISIONS - {_OVER}
_GENERATION_STAGES = frozenset((_DISCIPLINE, _GEN_ROLL, _SWAP))
_AFTER_CAST_ROLL = frozenset(
    (_PERILS, _LD_TEST, _PERILS_HITS, _PURGE, _DRAIN, _DENY, _DENY_ROLL, _EFFECT)
)
_CHANCE_NODE, _ACTIVE, _DENIER, _GENERATOR, _ENDED = range(5)
_ROLE_OF = {
    _DISCIPLINE: _GENERATOR,
    _SWAP: _GENERATOR,
    _SELECT: _ACTIVE,
    _DICE: _ACTIVE,
    _DENY: _DENIER,
    _OVER: _ENDED,
}
_ROLE = tuple(_ROLE_OF.get(st, _CHANCE_NODE) for st in Stage)  # Stage values are 0, 1, 2, ...
"""Who moves at each stage (indexed by ``Stage``): one tuple lookup in ``current_player``."""
_MOVER = tuple(
    tuple(
        {_CHANCE_NODE: CHANCE, _ACTIVE: active, _DENIER: 1 - active, _ENDED: TERMINAL}.get(role)
        for active in (0, 1)
    )
    for role in _ROLE
)
"""``current_player`` by stage and active player (``None``: the generating psyker's owner)."""
_FAST_HOOKS = ("_step", "_table", "_chance_key", "_decide_and_walk", "_walk")
"""Methods the fast walk (``_decide_and_walk``, ``_walk``) relies on (``_own_chance_walk``)."""
_NO_ATTEMPTS: frozenset[tuple[int, int]] = frozenset()
"""The empty ``attempted`` of a new phase (one object, so the casting-choice memo can match it)."""
_CACHE_SIZE = 200_000
"""Entries a per-key memo holds before it is cleared (keeps long runs bounded in memory)."""
_MASK_MEMO_SIZE = 4096
"""SELECT masks :meth:`SeventhRules.legal_mask` keeps before it forgets them all."""


_new = object.__new__
_set = object.__setattr__


class _Blank:
    """A plain instance to fill with a dictionary and turn into a frozen class (``_recast``)."""


def _recast(
    c: Cast,
    *,
    dice: int | None = None,
    successes: int | None = None,
    perils: bool | None = None,
    deny_dice: int | None = None,
) -> Cast:
    """``evolve(c, ...)`` for the casting fields a transition changes.

    As ``evolve``: the dictionary is copied and the changes set in it (the fields keep their
    order); the instance is a plain one given that dictionary and then the class ``Cast``.
    """
    values = c.__dict__.copy()
    if dice is not None:
        values["dice"] = dice
    if successes is not None:
        values["successes"] = successes
    if perils is not None:
        values["perils"] = perils
    if deny_dice is not None:
        values["deny_dice"] = deny_dice
    out = _new(_Blank)
    out.__dict__ = values
    out.__class__ = Cast
    return out  # type: ignore[return-value]


def _event(
    kind: EventKind, text: str, player: int | None = None, data: tuple[tuple[str, object], ...] = ()
) -> Event:
    """``Event(kind, text, player, data)``, built without the frozen ``__init__`` (faster).

    Events have no ``__post_init__`` to skip; the instance is the same as the constructor's.
    """
    e = _new(Event)
    _set(e, "__dict__", {"kind": kind, "text": text, "player": player, "data": data})
    return e


# ----------------------------------------------------------------------------- exact tables
@cache
def ld_pass(leadership: int) -> Fraction:
    """P(2D6 <= Ld), the Leadership test (7E-6)."""
    return sum((p for v, p in distribution("2D6").items() if v <= leadership), Fraction(0))


@cache
def cast_distribution(dice: int, doubles_peril: bool) -> tuple[tuple[int, Fraction], ...]:
    """Outcomes ``2*successes + perils`` of a casting roll (7E-4.3, 7E-4.4).

    Successes are rolls of 4+; Perils is two or more 6s, or any double for Daemonology powers cast
    by a psyker without the matching flag.
    """
    out: dict[int, Fraction] = {}
    if doubles_peril:
        for (k, dbl), p in pool_any_double(dice, 4).items():
            key = 2 * k + int(dbl)
            out[key] = out.get(key, Fraction(0)) + p
    else:
        for (k, sixes), p in pool(dice, 4).items():
            key = 2 * k + int(sixes >= 2)
            out[key] = out.get(key, Fraction(0)) + p
    return tuple(sorted(out.items()))


@cache
def deny_chance(dice: int, threshold: int, successes: int) -> Fraction:
    """P(at least ``successes`` of ``dice`` dice roll ``threshold``+) (7E-5.2, 7E-5.3)."""
    return at_least(binomial(dice, roll_chance(threshold)), successes)


# ----------------------------------------------------------------------------- the rules
class SeventhRules(RulesBase):
    """7th-edition rules for one scenario; see the module docstring for layout and defaults."""

    edition = "7th"
    fast_walk_hooks = _FAST_HOOKS

    def __init__(self, scenario: Scenario, powers: PowerFile, perils: PerilsFile):
        self.scenario = scenario
        self.perils_table = {r.roll: r for r in perils.result}
        self.removed_hits = perils.removed_hits
        self.specs = [u for side in scenario.sides for u in side.units]
        self.owner = tuple(i for i, side in enumerate(scenario.sides) for _ in side.units)
        self.side_units = tuple(
            tuple(i for i, o in enumerate(self.owner) if o == side) for side in (0, 1)
        )
        self.names = [u.name for u in self.specs]
        self.max_wounds = tuple(u.models * u.wounds for u in self.specs)
        game = scenario.game
        self.total_phases = game.phase_limit or 2 * game.battle_rounds
        by_name = {p.name: p for p in powers.power}

        # Disciplines named by the scenario and the powers any psyker may come to know.
        disciplines: list[str] = []
        relevant: set[str] = set()
        for u in self.specs:
            if u.psyker is None:
                continue
            relevant.update(u.psyker.powers)
            if u.psyker.force_weapon:
                relevant.add("Force")
            if game.generate_powers:
                for d in u.psyker.disciplines:
                    if d not in disciplines:
                        disciplines.append(d)
        for p in powers.power:
            if p.discipline in disciplines:
                relevant.add(p.name)
        self.disciplines = disciplines
        self.powers: list[Power] = [p for p in powers.power if p.name in relevant]
        self.power_index = {p.name: i for i, p in enumerate(self.powers)}
        self.primaris = {
            d: self.power_index.get(
                next((p.name for p in powers.power if p.discipline == d and p.number == 0), ""), -1
            )
            for d in disciplines
        }
        self.numbered = {
            d: tuple(i for i, p in enumerate(self.powers) if p.discipline == d and p.number > 0)
            for d in disciplines
        }
        del by_name

        n_units, n_powers = len(self.specs), len(self.powers)
        self.mastery = tuple(u.psyker.mastery if u.psyker else 0 for u in self.specs)
        self.max_dice = 6 + max(
            sum(self.mastery[i] for i in range(n_units) if self.owner[i] == side) + s.pool_bonus
            for side, s in enumerate(scenario.sides)
        )
        self.actions = ActionLayout(n_units, n_powers, len(disciplines), self.max_dice)
        """The public action layout (encode/decode, the bases below)."""
        # The bases stay readable as attributes (tests and tools name them).
        self.CAST = self.actions.CAST
        self.DICE = self.actions.DICE
        self.DENY = self.actions.DENY
        self.DISC = self.actions.DISC
        self.SWAP = self.actions.SWAP
        self.num_actions = self.actions.num_actions

        # Geometry per battle round: the scenario's advance moves are fixed in advance, so unit
        # positions depend on the battle round only (module docstring, "Movement").
        rounds = max(game.battle_rounds, -(-self.total_phases // 2))
        self.positions = plan_positions(
            [u.position for u in self.specs], [u.advance for u in self.specs], self.owner, rounds
        )
        """Unit positions (x, y) per battle round (index 0: the first battle round)."""
        self._distances = tuple(
            tuple(tuple(distance(a, b) for b in pos) for a in pos) for pos in self.positions
        )
        """Centre-to-centre distance between each two units, per battle round."""
        self.candidates_by_round = tuple(
            {
                (c, p): self._candidates(c, power, r)
                for c in range(len(self.specs))
                for p, power in enumerate(self.powers)
            }
            for r in range(rounds)
        )
        """Candidate targets per (caster, power) in each battle round (7E-4.1, disciplines.md)."""
        self.candidates = self.candidates_by_round[0]
        """Candidate targets per (caster, power) in the first battle round."""
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
        self._last_round = len(self.positions) - 1
        self.instant_death = game.instant_death
        self._deny_needs = tuple(
            tuple(
                6
                - 1
                - (self.mastery[t] > self.mastery[c])
                - (spec.psyker is not None and spec.psyker.adamantium_will)
                for t, spec in enumerate(self.specs)
            )
            for c in range(n_units)
        )
        """Deny roll needed by unit t (with a living psyker) against caster c (7E-5.2)."""
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
        self.observation_size = (
            11
            + n_units * (6 + 3 * n_powers)
            + 2 * n_units
            + n_powers
            + 5
            + n_units
            + len(disciplines)
            + n_powers
        )
        self._observer = views.Observer(self)
        fixed = {_PHASE_ROLL: _d6(), _PERILS: _d6(), _DRAIN: tuple(distribution("D3").items())}
        self._stage_tables = tuple(
            self._chance_cache.get((st,), lambda st=st: _exact(fixed[st])) if st in fixed else None
            for st in Stage
        )
        """The one table of each node whose outcomes never change (the ``(stage,)`` keys)."""
        self._cast_tables = [
            [[None] * (self.max_dice + 1) for _ in self.powers] for _ in self.specs
        ]
        """Casting-roll tables by caster, power and dice (filled as they are first asked for)."""
        self._node_tables: dict[tuple, ChanceTable] = {}  # the cache's tables, by key, at hand
        self._event_memo: dict[tuple, tuple[Event, ...]] = {}
        """The events of the commonest transitions, by everything their texts and data depend on
        (events are frozen, so one object serves every transition with that key)."""
        self._first_player = game.first_player
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

    # ------------------------------------------------------------------ static helpers
    def round_of(self, s: State) -> int:
        """Index of the battle round of ``s`` (0-based; the last one once the game is over)."""
        return min(s.phase // 2, len(self.positions) - 1)

    def _in_range(self, a: int, b: int, rng: float, rnd: int = 0) -> bool:
        """Centre to centre, inclusive, no line of sight (module docstring, "Ranges")."""
        return self._distances[rnd][a][b] <= rng

    def _candidates(self, c: int, power: Power, rnd: int = 0) -> tuple[int, ...]:
        side = self.owner[c]
        if power.target in ("self", "none", "enemies"):
            return (c,)
        wanted = side if power.target == "friendly" else 1 - side
        return tuple(
            t
            for t in range(len(self.specs))
            if self.owner[t] == wanted and (t == c or self._in_range(c, t, power.range, rnd))
        )

    def targets_in_range(self, s: State, c: int, p: int) -> tuple[int, ...]:
        """Candidate targets of power ``p`` cast by unit ``c`` in the battle round of ``s``."""
        return self.candidates_by_round[self.round_of(s)][(c, p)]

    def nova_targets(self, s: State, c: int, power: Power) -> tuple[int, ...]:
        """Living enemy units in range of a nova ``power`` cast by unit ``c`` (7E-7.1)."""
        rnd = self.round_of(s)
        return tuple(
            t
            for t, u in enumerate(s.units)
            if self.owner[t] != self.owner[c]
            and u.wounds > 0
            and self._in_range(c, t, power.range, rnd)
        )

    def _living_ml(self, s: State, side: int) -> int:
        return self._side_facts(s.units)[side][0]

    def _can_cast(self, s: State, side: int) -> bool:
        return self._side_facts(s.units)[side][1]

    def _side_facts(self, units: tuple[UnitState, ...]) -> tuple[tuple[int, bool], ...]:
        """Per side: its living psykers' mastery levels (7E-3.1), and whether one knows a power.

        Kept for the last units tuple asked about (held, compared by identity).
        """
        last = self._last_facts
        if last[0] is units:
            return last[1]
        facts = []
        for side in self.side_units:
            total, can = 0, False
            for i in side:
                u = units[i]
                if u.psyker and u.wounds > 0:
                    total += self.mastery[i]
                    can = can or bool(u.powers)
            facts.append((total, can))
        out = tuple(facts)
        self._last_facts = (units, out)
        return out

    def _both_sides_alive(self, s: State) -> bool:
        """Whether each side still has a unit with wounds (else the game ends, 7E-8.1).

        The answer for the last units tuple asked about is kept (held, compared by identity).
        """
        units = s.units
        last = self._last_alive
        if last[0] is units:
            return last[1]
        answer = True
        for side in self.side_units:
            for i in side:
                if units[i].wounds > 0:
                    break
            else:
                answer = False
                break
        self._last_alive = (units, answer)
        return answer

    def models_left(self, s: State, unit: int) -> int:
        """Models still in a unit (wounds left over wounds per model, rounded up)."""
        w = self.specs[unit].wounds
        return -(-s.units[unit].wounds // w)

    def deny_unit_and_threshold(self, s: State, cast: Cast) -> tuple[int | None, int]:
        """Which enemy unit denies and the roll it needs (7E-5.2): 6, 5, 4 or 3."""
        power = self.powers[cast.power]
        if power.target == "enemy":
            # The one target: its modifiers (per caster and target, from the table) count while
            # it has a living psyker, as the loop below would find.
            t = cast.target
            u = s.units[t]
            if u.psyker and u.wounds > 0:
                return (t, self._deny_needs[cast.caster][t])
            return (t, 6)
        if power.target == "enemies":
            units = self.nova_targets(s, cast.caster, power)
        else:
            return None, 6
        best: tuple[int | None, int] = (None, 6)
        for t in units:  # the nova's targets (7E-5.2: the best modifiers deny)
            mods = 0
            spec, u = self.specs[t], s.units[t]
            if u.psyker and u.wounds > 0:
                mods += 1
                if self.mastery[t] > self.mastery[cast.caster]:
                    mods += 1
                if spec.psyker is not None and spec.psyker.adamantium_will:
                    mods += 1
            if best[0] is None or 6 - mods < best[1]:
                best = (t, 6 - mods)
        return best

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
        player = _MOVER[s.stage][s.active]
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
        lo, hi = utility_bounds(self)
        return evolve(
            super().game_info(),
            max_chance_outcomes=most,
            min_utility=lo,
            max_utility=hi,
        )

    def legal_actions(self, s: State) -> list[int]:
        """Sorted legal actions (see the module docstring for the layout)."""
        st = s.stage
        if st == _SELECT:
            return [0, *self._legal_casts(s)]
        if st == _DICE:
            n = s.pools[s.active]
            if 0 <= n <= self.max_dice:
                return list(self._dice_actions[n])
            return list(range(self.DICE, self.DICE + n))
        if st == _DENY:
            n = s.pools[1 - s.active]
            if 0 <= n <= self.max_dice:
                return list(self._deny_actions[n])
            return list(range(self.DENY, self.DENY + n + 1))
        if st == _DISCIPLINE:
            return sorted(self.DISC + d for d in self._open_disciplines(s, s.gen_unit))
        if st == _SWAP:
            return [self.SWAP, self.SWAP + 1]
        return []

    def legal_mask(self, s: State) -> np.ndarray:
        """Boolean mask of :meth:`legal_actions` (a fresh array per call, as the base class's).

        At ``SELECT`` masks are kept per tuple of casting choices (without building the legal
        list), at ``DICE`` and ``DENY`` per pool size; other stages use the base class's memo.
        """
        st = s.stage
        if st == _SELECT:
            casts = self._legal_casts(s)
            last = self._last_mask
            if last[0] is not casts:  # not the casting choices asked about last
                masks = self._masks
                mask = masks.get(casts)
                if mask is None:
                    if len(masks) >= _MASK_MEMO_SIZE:
                        masks.clear()
                    mask = masks[casts] = np.zeros(self.num_actions, dtype=bool)
                    mask[self.legal_actions(s)] = True
                last = self._last_mask = (casts, mask)
            return last[1].copy()
        if st == _DICE:
            n = s.pools[s.active]
            if 0 <= n <= self.max_dice:
                return self._dice_masks[n].copy()
        elif st == _DENY:
            n = s.pools[1 - s.active]
            if 0 <= n <= self.max_dice:
                return self._deny_masks[n].copy()
        return super().legal_mask(s)

    def _mask_of(self, actions: tuple[int, ...]) -> np.ndarray:
        """A new mask with ``actions`` set."""
        mask = np.zeros(self.num_actions, dtype=bool)
        mask[list(actions)] = True
        return mask

    def _legal_casts(self, s: State) -> tuple[int, ...]:
        """Sorted choose-cast actions of the active player.

        The last answer is kept by the identity of the fields it read: the casting decision is
        asked about several times in a row (when the phase is settled, then by the mask and the
        policies), always with the same tuples, so no key needs hashing. (A dictionary keyed by
        those fields cost more to hash than the table lookups cost to redo.) When only one
        more (psyker, power) has been attempted since (a failed or denied cast), the answer is
        the last one without that pair's choices: nothing else the choices depend on changed.
        """
        units, attempted, effects = s.units, s.attempted, s.effects
        rnd = s.phase // 2  # round_of(s)
        if rnd > self._last_round:
            rnd = self._last_round
        last = self._last_casts
        if last[0] is units and last[2] is effects and last[3] == s.active and last[4] == rnd:
            before = last[1]
            if before is attempted:
                return last[5]
            if len(attempted) == len(before) + 1 and before < attempted:
                (pair,) = attempted - before
                pair_of = self._cast_pair
                hit = tuple([a for a in last[5] if pair_of[a] != pair])
                self._last_casts = (units, attempted, effects, s.active, rnd, hit)
                return hit
        hit = self._compute_legal_casts(s, rnd)
        self._last_casts = (units, attempted, effects, s.active, rnd, hit)
        return hit

    def _compute_legal_casts(self, s: State, rnd: int) -> tuple[int, ...]:
        out = []
        plan = self._cast_plan[rnd]
        units, attempted = s.units, s.attempted
        in_force = {(p, t) for p, t, _ in s.effects} if s.effects else ()
        for c in self.side_units[s.active]:
            u = units[c]
            if not u.psyker or u.wounds <= 0:
                continue
            by_power = plan[c]
            for p in u.powers:
                if (c, p) in attempted:
                    continue
                reach, blessing, options = by_power[p]
                # A nova needs a living enemy unit in range (nova_targets, 7E-7.1).
                if reach is not None and not any(units[t].wounds > 0 for t in reach):
                    continue
                for t, action in options:
                    if units[t].wounds <= 0:
                        continue
                    if blessing and (p, t) in in_force:
                        continue  # 7E-7.2: copies do not stack
                    out.append(action)
        return tuple(sorted(out))

    def _open_disciplines(self, s: State, unit: int) -> list[int]:
        """Disciplines ``unit`` may still roll on (7E-2.1), memoised by its known powers."""
        key = (unit, s.units[unit].powers)
        got = self._open_memo.get(key)
        if got is None:
            if len(self._open_memo) >= _CACHE_SIZE:
                self._open_memo.clear()
            got = self._open_memo[key] = self._find_open_disciplines(s, unit)
        return list(got)

    def _find_open_disciplines(self, s: State, unit: int) -> list[int]:
        known = set(s.units[unit].powers)
        spec = self.specs[unit].psyker
        assert spec is not None
        return [
            self.disciplines.index(d)
            for d in spec.disciplines
            if any(p not in known for p in self.numbered[d])
        ]

    # ------------------------------------------------------------------ API: chance
    def chance_outcomes(self, s: State) -> list[tuple[int, float]]:
        """Exact outcomes of the pending chance event (see the stage comments in ``state.py``).

        Empty at decision nodes and at the end of the game.
        """
        if s.stage not in _CHANCE_STAGES:
            return []
        return list(self._table(s).outcomes)

    def sample_chance(self, s: State, rng: np.random.Generator) -> int:
        """Draw a chance outcome (one uniform draw) from the table ``chance_outcomes`` reads."""
        return self._table(s).sample(rng)

    def _table(self, s: State) -> ChanceTable:
        """The chance table of the pending event, memoised per chance-node key.

        The D6 and D3 nodes have one table each, a casting roll's table is kept by its dice,
        caster and power too (what its key is made from), and the other nodes' by their keys in
        a plain dictionary; these are the tables the chance-node keys find in the same cache.
        """
        st = s.stage
        table = self._stage_tables[st]
        if table is not None:
            return table
        if st == _CAST_ROLL:
            cast = s.cast
            by_dice = self._cast_tables[cast.caster][cast.power]
            dice = cast.dice
            table = by_dice[dice] if 0 <= dice < len(by_dice) else None
            if table is None:
                table = self._chance_cache.get(self._chance_key(s), lambda: self._exact_outcomes(s))
                if 0 <= dice < len(by_dice):
                    by_dice[dice] = table
            return table
        key = self._chance_key(s)
        table = self._node_tables.get(key)
        if table is None:
            table = self._chance_cache.get(key, lambda: self._exact_outcomes(s))
            if len(self._node_tables) >= _CACHE_SIZE:
                self._node_tables.clear()
            self._node_tables[key] = table
        return table

    def _exact_outcomes(self, s: State) -> tuple[tuple[int, Fraction], ...]:
        """Exact outcomes, sorted, zero-probability ones dropped (what the table holds)."""
        return _exact(self._compute_distribution(s))

    def _chance_key(self, s: State) -> tuple:
        """Everything the pending chance event's distribution depends on."""
        st = s.stage
        cast = s.cast
        # The commonest nodes after the casting roll first (the order changes no key).
        if st == _DENY_ROLL:
            _, threshold = self.deny_unit_and_threshold(s, cast)
            return (st, cast.deny_dice, threshold, cast.successes)
        if st == _EFFECT:
            return self._effect_key(s, s.targets[0])
        if st in (_PHASE_ROLL, _PERILS, _DRAIN):
            return (st,)
        if st == _GEN_ROLL:
            return (st, s.gen_disc, s.units[s.gen_unit].powers)
        assert cast is not None
        if st == _CAST_ROLL:
            return (st, cast.dice, self._doubles_peril(cast))
        if st == _LD_TEST:
            return (st, cast.caster)
        if st == _PERILS_HITS:
            return (st, cast.caster, s.units[cast.caster].wounds)
        if st == _PURGE:
            return (st, s.units[cast.caster].powers)
        raise ValueError(f"stage {st.name} is not a chance node")

    def _effect_key(self, s: State, target: int) -> tuple:
        assert s.cast is not None
        u = s.units[target]
        return (_EFFECT, s.cast.power, s.cast.caster, target, u.wounds, u.surge)

    def chance_distribution(self, s: State) -> tuple[tuple[int, Fraction], ...]:
        """Exact (Fraction) outcomes of the pending chance event, in ``chance_outcomes`` order."""
        return self._table(s).exact

    def _compute_distribution(self, s: State) -> tuple[tuple[int, Fraction], ...]:
        st = s.stage
        if st == _PHASE_ROLL:
            return _d6()
        if st == _GEN_ROLL:
            d = self.disciplines[s.gen_disc]
            left = [p for p in self.numbered[d] if p not in s.units[s.gen_unit].powers]
            return tuple((p, Fraction(1, len(left))) for p in left)
        if st == _CAST_ROLL:
            assert s.cast is not None
            return cast_distribution(s.cast.dice, self._doubles_peril(s.cast))
        if st == _PERILS:
            return _d6()
        if st == _LD_TEST:
            assert s.cast is not None
            p = ld_pass(self.specs[s.cast.caster].leadership)
            return _binary(p)
        if st == _PERILS_HITS:
            assert s.cast is not None
            return tuple(sorted(self._removed_hits_dist(s, s.cast.caster).items()))
        if st == _PURGE:
            assert s.cast is not None
            known = s.units[s.cast.caster].powers
            return tuple((p, Fraction(1, len(known))) for p in known)
        if st == _DRAIN:
            return tuple(sorted(distribution("D3").items()))
        if st == _DENY_ROLL:
            assert s.cast is not None
            _, threshold = self.deny_unit_and_threshold(s, s.cast)
            return _binary(deny_chance(s.cast.deny_dice, threshold, s.cast.successes))
        if st == _EFFECT:
            return tuple(sorted(self.effect_distribution(s, s.targets[0]).items()))
        raise ValueError(f"stage {st.name} is not a chance node")

    def _doubles_peril(self, cast: Cast) -> bool:
        flag = self.powers[cast.power].doubles_perils_unless
        psyker = self.specs[cast.caster].psyker
        return flag is not None and not (psyker is not None and getattr(psyker, flag))

    def _removed_hits_dist(self, s: State, unit: int) -> Dist:
        spec, rh = self.specs[unit], self.removed_hits
        hit = to_wound_7th(rh.strength, spec.toughness)
        p = roll_chance(hit) * unsaved_chance_7th(spec.save, spec.invulnerable, rh.ap)
        instant = self._instant(rh.strength, unit)
        return self._attack_wounds(distribution(rh.hits), p, ((1, Fraction(1)),), s, unit, instant)

    def _instant(self, strength: int, unit: int) -> bool:
        """Instant Death (module docstring): S >= 2 x T against a model of more than one wound."""
        spec = self.specs[unit]
        return self.instant_death and spec.wounds > 1 and strength >= 2 * spec.toughness

    def _attack_wounds(
        self,
        hits: Dist,
        p: Fraction,
        damage: tuple[tuple[int, Fraction], ...],
        s: State,
        unit: int,
        instant: bool,
    ) -> Dist:
        """Wounds lost to ``hits`` hits that each become an unsaved wound with chance ``p``."""
        left, per_model = s.units[unit].wounds, self.specs[unit].wounds
        # The number of unsaved wounds first, then what they take: the same exact sums as
        # allocating after each (hits, unsaved) pair, with far fewer Fraction products.
        unsaved: Dist = {}
        for h, ph in hits.items():
            for k, pk in binomial(h, p).items():
                unsaved[k] = unsaved.get(k, Fraction(0)) + ph * pk
        out: Dist = {}
        for k, pk in unsaved.items():
            for w, pw in allocate_wounds(left, per_model, k, damage, instant):
                out[w] = out.get(w, Fraction(0)) + pk * pw
        return out

    def effect_distribution(self, s: State, target: int) -> Dist:
        """Exact wounds the pending manifested power inflicts on ``target`` (7E-7.1)."""
        key = self._effect_key(s, target)
        hit = self._effect_cache.get(key)
        if hit is None:
            hit = self._effect_cache[key] = {
                k: p for k, p in self._effect_distribution(s, target).items() if p
            }
        return hit

    def _effect_distribution(self, s: State, target: int) -> Dist:
        assert s.cast is not None
        power = self.powers[s.cast.power]
        eff = power.effect
        spec, u = self.specs[target], s.units[target]
        if eff.mortal is not None:
            d = distribution(eff.mortal)
            if eff.minus_target_ld:
                d = {v - spec.leadership: p for v, p in d.items()}
            return capped(d, u.wounds)
        if eff.rolloff_mortal is not None:
            caster_ld = self.specs[s.cast.caster].leadership
            p_win = _rolloff_win(caster_ld, spec.leadership)
            out = {
                k: p * p_win for k, p in capped(distribution(eff.rolloff_mortal), u.wounds).items()
            }
            out[0] = out.get(0, Fraction(0)) + 1 - p_win
            return out
        atk = eff.attack
        assert atk is not None
        caster = self.specs[s.cast.caster]
        if atk.hits in AREA_HITS:
            hits: Dist = {min(self.models_left(s, target), AREA_HITS[atk.hits]): Fraction(1)}
        else:
            hits = distribution(atk.hits)
        p_hit = (
            Fraction(1) if atk.to_hit == "auto" else roll_chance(max(2, 7 - caster.ballistic_skill))
        )
        invuln = spec.invulnerable
        if u.surge:
            invuln = 3 if invuln is None else min(invuln, 3)  # 7E-6.6 Warp Surge: 3++
        ap_dist = {None: Fraction(1)} if atk.ap == "none" else distribution(atk.ap)
        damage = tuple(sorted(distribution(atk.damage).items()))
        # Strengths and APs that give the same chance per hit (and the same Instant Death)
        # give the same wounds: their weights are added first, so each is allocated once.
        weights: dict[tuple[Fraction, bool], Fraction] = {}
        for strength, ps in distribution(atk.strength).items():
            wound_on = atk.always_wounds_on or to_wound_7th(strength, spec.toughness)
            instant = self._instant(strength, target)
            for ap, pa in ap_dist.items():
                p = p_hit * roll_chance(wound_on) * unsaved_chance_7th(spec.save, invuln, ap)
                weights[(p, instant)] = weights.get((p, instant), Fraction(0)) + ps * pa
        out: Dist = {}
        for (p, instant), weight in weights.items():
            for w, pw in self._attack_wounds(hits, p, damage, s, target, instant).items():
                out[w] = out.get(w, Fraction(0)) + weight * pw
        return out

    # ------------------------------------------------------------------ API: transitions
    # One transition edits one Draft (a mutable copy of the state) and freezes it once at the
    # end. ``ev`` collects the events, or is None when nobody reads them (``apply``, which the
    # exact search calls): the same code runs either way, and ``if ev is not None`` only skips
    # building the event objects and their text.
    def _apply(self, s: State, a: int) -> tuple[State, tuple[Event, ...]]:
        ev: list[Event] = []
        return self._step(s, a, ev), tuple(ev)

    def _transition(self, s: State, a: int) -> State:
        """The next state through the same code as :meth:`_apply`, building no events (search)."""
        return self._step(s, a, None)

    def _step(self, s: State, a: int, ev: list[Event] | None) -> State:
        """One transition: a draft of ``s``, the stage's handler, frozen; events go to ``ev``."""
        d = Draft(s)
        self._on_stage[s.stage](d, a, ev)
        return d.freeze()

    def _remember(self, key: tuple, events: list[Event]) -> tuple[Event, ...]:
        """Keep ``events`` as the events of ``key`` in :attr:`_event_memo` (bounded)."""
        memo = self._event_memo
        if len(memo) >= _CACHE_SIZE:
            memo.clear()
        out = memo[key] = tuple(events)
        return out

    # The envs' walks: a run of chance nodes, or a decision and the run after it, in one draft.
    # Node by node, each transition would freeze its draft and the next would copy it again;
    # nobody sees the states in between, so one draft serves the whole run. Each node draws from
    # the same table (``_table``) with the same one uniform number as ``sample_chance``.
    def sample_chance_run(self, s: State, rng: np.random.Generator, events: list[Event]) -> State:
        """Walk chance nodes to the next decision or the end, in one draft of the state.

        The same draws, transition code and events as :meth:`sample_chance` and
        :meth:`apply_with_events` node by node (:meth:`RulesBase.sample_chance_run`).
        """
        if _ROLE[s.stage] != _CHANCE_NODE:
            return s
        # Not while sample_chance or the transition code below is replaced (tests do).
        if not self._own_chance_walk():
            return super().sample_chance_run(s, rng, events)
        d = _new(Draft)
        d.__dict__ = s.__dict__.copy()  # Draft(s), without the call
        self._walk(d, rng, events)
        d.__class__ = State  # d.freeze(), without the call
        return d  # type: ignore[return-value]

    def _decide_and_walk(
        self, s: State, action: int, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """A decision and the chance nodes after it, in one draft of the state.

        The same transition code, draws and events as :meth:`apply_with_events` and then
        :meth:`sample_chance_run`.
        """
        d = _new(Draft)
        d.__dict__ = s.__dict__.copy()  # Draft(s), without the call
        on_stage = self._on_stage
        on_stage[d.stage](d, action, events)
        # The walk after it (as _walk does, inline: most decisions lead to a chance node).
        role, table, fixed = _ROLE, self._table, self._stage_tables
        while role[st := d.stage] == _CHANCE_NODE:
            node = fixed[st]
            if node is None:
                node = table(d)
            on_stage[st](d, node.sample(rng), events)
        d.__class__ = State  # d.freeze(), without the call
        return d  # type: ignore[return-value]

    def _walk(self, d: Draft, rng: np.random.Generator, events: list[Event]) -> None:
        """Resolve chance nodes on ``d`` until a decision or the end (one draw per node)."""
        on_stage, role, table, fixed = self._on_stage, _ROLE, self._table, self._stage_tables
        while role[st := d.stage] == _CHANCE_NODE:
            node = fixed[st]
            if node is None:
                node = table(d)
            on_stage[st](d, node.sample(rng), events)

    # One handler per stage (``_on_stage``, indexed by Stage): a decision or a chance outcome.
    def _on_select(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        if a == 0:  # 7E-4.1: end the phase
            if ev is not None:
                key = (_EV_END_PHASE, d.active)
                got = self._event_memo.get(key)
                if got is None:
                    text = f"{self._side(d.active)} ends the Psychic phase"
                    got = self._remember(key, [_event(_EV_END_PHASE, text, d.active)])
                ev.extend(got)
            return self._start_phase(d, d.phase + 1, ev)
        d.stage, d.cast = _DICE, self._new_casts[a - self.CAST]
        return None

    def _on_dice(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        assert d.cast is not None
        d.stage, d.cast = _CAST_ROLL, _recast(d.cast, dice=a - self.DICE + 1)

    def _on_deny(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        self._deny(d, a - self.DENY, ev)

    def _on_discipline(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        d.stage, d.gen_disc = _GEN_ROLL, a - self.DISC

    def _on_swap(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        self._finish_pick(d, swap=a == self.SWAP + 1, ev=ev)

    def _on_phase_roll(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        active = d.active
        bonus = self._pool_bonus[active]
        # 7E-3.1: the roll plus the living psykers' mastery levels, plus the active side's bonus.
        pools = (
            a + self._living_ml(d, 0) + (bonus if active == 0 else 0),
            a + self._living_ml(d, 1) + (bonus if active == 1 else 0),
        )
        if ev is not None:
            key = (_EV_POOLS, a, active, pools)
            got = self._event_memo.get(key)
            if got is None:
                event = _event(
                    _EV_POOLS,
                    f"Warp charge roll {a}: {self._side(active)} has "
                    f"{plural(pools[active], 'die')}, {self._side(1 - active)} "
                    f"{pools[1 - active]} to deny",
                    active,
                    (("roll", a),),
                )
                got = self._remember(key, [event])
            ev.extend(got)
        d.stage, d.pools = _SELECT, pools
        self._settle_select(d, ev)

    def _on_gen_roll(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        d.gen_power = a
        disc = self.disciplines[d.gen_disc]
        prim = self.primaris[disc]
        if ev is not None:
            ev.append(
                _event(
                    _EV_GENERATE,
                    f"{self.names[d.gen_unit]} rolls {self.powers[a].name} ({disc})",
                    self.owner[d.gen_unit],
                )
            )
        if prim < 0 or prim in d.units[d.gen_unit].powers:
            return self._finish_pick(d, swap=False, ev=ev)
        d.stage = _SWAP  # 7E-2.2
        return None

    def _on_cast_roll(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        self._cast_rolled(d, a // 2, bool(a % 2), ev)

    def _on_perils(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        self._perils(d, a, ev)

    def _on_ld_test(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        row = self.perils_table[d.perils_roll]
        passed = bool(a)
        if ev is not None:
            ev.append(
                _event(
                    _EV_LD_TEST,
                    f"{self.names[cast.caster]} "
                    f"{'passes' if passed else 'fails'} its Leadership test",
                    self.owner[cast.caster],
                )
            )
        self._perils_outcome(d, row.on_pass if passed else row.on_fail, ev)

    def _on_perils_hits(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        assert d.cast is not None
        self._wound(d, d.cast.caster, a, ev, "Dragged into the Warp hits")
        self._after_perils(d, ev)

    def _on_purge(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        unit = d.units[cast.caster]
        d.set_unit(cast.caster, powers=tuple(p for p in unit.powers if p != a))  # 7E-6.2
        if ev is not None:
            ev.append(
                _event(
                    _EV_PURGE,
                    f"{self.names[cast.caster]} forgets {self.powers[a].name}",
                    self.owner[cast.caster],
                )
            )
        self._after_perils(d, ev)

    def _on_drain(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        if ev is not None:
            ev.append(_event(_EV_DRAIN, f"Power Drain: both pools lose {plural(a, 'die')}", None))
        d.pools = tuple(max(0, x - a) for x in d.pools)  # 7E-6.3
        self._after_perils(d, ev)

    def _on_deny_roll(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        if a:
            if ev is not None:
                key = (_EV_DENIED, d.active, cast.power)
                got = self._event_memo.get(key)
                if got is None:
                    text = f"{self._side(1 - d.active)} denies {self.powers[cast.power].name}"
                    got = self._remember(key, [_event(_EV_DENIED, text, 1 - d.active)])
                ev.extend(got)
            d.stage, d.cast = _SELECT, None
            return self._settle_select(d, ev)
        if ev is not None:
            key = (_EV_DENY_FAILED, d.active)
            got = self._event_memo.get(key)
            if got is None:
                event = _event(_EV_DENY_FAILED, "the deny fails", 1 - d.active)
                got = self._remember(key, [event])
            ev.extend(got)
        return self._manifest(d, ev)

    def _on_effect(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        self._wound(d, d.targets[0], a, ev, self.powers[cast.power].name)
        attack = self.powers[cast.power].effect.attack
        if a > 0 and attack is not None and attack.heal_caster:
            self._heal(d, cast.caster, ev)
        d.targets = d.targets[1:]
        self._next_target(d, ev)

    def _on_over(self, d: Draft, a: int, ev: list[Event] | None) -> None:
        raise ValueError("the game is over: no action or chance outcome applies")

    # ------------------------------------------------------------------ generation (7E-2)
    def _next_generation(self, d: Draft, after: int, ev: list[Event] | None = None) -> None:
        for u in range(after + 1, len(self.specs)):
            psy = self.specs[u].psyker
            if psy is not None and psy.disciplines:
                d.gen_unit, d.gen_pick = u, 0
                return self._begin_pick(d, ev)
        d.gen_unit, d.gen_pick, d.gen_disc, d.gen_power = -1, 0, -1, -1
        return self._start_phase(d, 0)

    def _begin_pick(self, d: Draft, ev: list[Event] | None = None) -> None:
        psy = self.specs[d.gen_unit].psyker
        assert psy is not None
        if d.gen_pick >= psy.mastery:
            return self._focus(d, ev)
        options = self._open_disciplines(d, d.gen_unit)
        if not options:
            return self._focus(d, ev)
        if len(options) == 1:
            d.stage, d.gen_disc = _GEN_ROLL, options[0]
        else:
            d.stage, d.gen_disc, d.gen_power = _DISCIPLINE, -1, -1
        return None

    def _finish_pick(self, d: Draft, swap: bool, ev: list[Event] | None) -> None:
        disc = self.disciplines[d.gen_disc]
        power = self.primaris[disc] if swap else d.gen_power
        if swap and ev is not None:
            ev.append(
                _event(
                    _EV_GENERATE,
                    f"{self.names[d.gen_unit]} takes the Primaris power "
                    f"{self.powers[power].name} instead",
                    self.owner[d.gen_unit],
                )
            )
        unit = d.units[d.gen_unit]
        d.set_unit(
            d.gen_unit,
            powers=tuple(sorted({*unit.powers, power})),
            generated=(*unit.generated, d.gen_disc),
        )
        d.gen_pick, d.gen_disc, d.gen_power = d.gen_pick + 1, -1, -1
        return self._begin_pick(d, ev)

    def _focus(self, d: Draft, ev: list[Event] | None = None) -> None:
        unit = d.units[d.gen_unit]
        if unit.generated and len(set(unit.generated)) == 1:  # 7E-2.3 Psychic Focus
            disc = self.disciplines[unit.generated[0]]
            prim = self.primaris[disc]
            if prim >= 0 and prim not in unit.powers:
                d.set_unit(d.gen_unit, powers=tuple(sorted({*unit.powers, prim})))
                if ev is not None:
                    ev.append(
                        _event(
                            _EV_GENERATE,
                            f"Psychic Focus: {self.names[d.gen_unit]} generated all its powers "
                            f"from {disc}, so it also knows its Primaris power "
                            f"{self.powers[prim].name} (7E-2.3)",
                            self.owner[d.gen_unit],
                        )
                    )
        return self._next_generation(d, d.gen_unit, ev)

    # ------------------------------------------------------------------ phases (7E-3, 7E-8)
    def _start_phase(self, d: Draft, phase: int, ev: list[Event] | None = None) -> None:
        first = self._first_player
        while True:
            if phase >= self.total_phases or not self._both_sides_alive(d):
                d.stage, d.phase, d.cast, d.targets = _OVER, phase, None, ()
                return
            active = first if phase % 2 == 0 else 1 - first
            # Blessings, maledictions and Warp Surge end at their owner's next phase (7E-6.6).
            # (Units with no Warp Surge to end keep their tuple, and effects with nothing to end
            # keep their set: memos compare them by identity.)
            units = d.units
            for i in self.side_units[active]:
                if units[i].surge:
                    d.units = tuple(
                        evolve(u, surge=False) if self.owner[i] == active and u.surge else u
                        for i, u in enumerate(units)
                    )
                    break
            d.phase, d.active, d.pools, d.cast, d.targets = phase, active, (0, 0), None, ()
            d.attempted = _NO_ATTEMPTS
            effects = d.effects
            for e in effects:
                if e[2] == active:
                    d.effects = frozenset(e for e in effects if e[2] != active)
                    break
            if self._can_cast(d, active):
                if ev is not None:
                    key = (_EV_PHASE, phase, active)
                    got = self._event_memo.get(key)
                    if got is None:
                        text = (
                            f"Battle round {phase // 2 + 1}: {self._side(active)}'s Psychic phase"
                        )
                        got = self._remember(key, [_event(_EV_PHASE, text, active)])
                    ev.extend(got)
                d.stage = _PHASE_ROLL
                return
            phase += 1

    def _settle_select(self, d: Draft, ev: list[Event] | None) -> None:
        """Stay in the casting decision while there is a cast to make, else end the phase.

        A side with no units left ends the game at once (7E-8.1).
        """
        if d.pools[d.active] > 0 and self._both_sides_alive(d) and self._legal_casts(d):
            return
        d.stage = _SELECT
        self._start_phase(d, d.phase + 1, ev)

    # ------------------------------------------------------------------ casting (7E-4, 7E-5)
    def _cast_rolled(self, d: Draft, successes: int, perils: bool, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        power = self.powers[cast.power]
        active = d.active
        pools = d.pools
        d.pools = (
            (pools[0] - cast.dice, pools[1]) if active == 0 else (pools[0], pools[1] - cast.dice)
        )
        d.attempted = d.attempted | {(cast.caster, cast.power)}
        passed = successes >= power.warp_charge
        perils_now = perils or (power.perils_on_fail and not passed)  # 7E-4.4, Vortex of Doom
        if ev is not None:
            key = (_EV_ATTEMPT, cast.caster, cast.power, cast.dice, successes, perils, active)
            got = self._event_memo.get(key)
            if got is None:
                got = self._remember(key, self._attempt_events(cast, successes, perils, active))
            ev.extend(got)
        if perils_now:
            d.stage, d.cast = _PERILS, _recast(cast, successes=successes, perils=perils)
            return
        # No Perils: the dice are forgotten at once, as _after_perils would (one copy, not two).
        d.cast = _recast(cast, successes=successes, dice=0)
        self._after_perils(d, ev)

    def _attempt_events(self, cast: Cast, successes: int, perils: bool, active: int) -> list[Event]:
        """The events of a casting roll: the attempt, and whether it passed and Perils strike."""
        power = self.powers[cast.power]
        passed = successes >= power.warp_charge
        out = [
            _event(
                _EV_ATTEMPT,
                f"{self.names[cast.caster]} casts {power.name} with "
                f"{plural(cast.dice, 'die')}: {plural(successes, 'success')}"
                f"{' and Perils of the Warp' if perils else ''}",
                active,
                (("power", power.name), ("dice", cast.dice), ("successes", successes)),
            )
        ]
        if passed:
            out.append(_event(_EV_PASSED, f"{power.name} is cast", active))
        if perils or (power.perils_on_fail and not passed):
            out.append(
                _event(
                    _EV_PERILS,
                    f"{self.names[cast.caster]} suffers Perils of the Warp",
                    active,
                )
            )
        return out

    def _perils(self, d: Draft, roll: int, ev: list[Event] | None) -> None:
        row = self.perils_table[roll]
        if ev is not None:
            ev.append(
                _event(
                    _EV_PERILS_ROLL,
                    f"Perils roll {roll}: {row.name}",
                    d.active,
                    (("roll", roll),),
                )
            )
        d.perils_roll = roll
        if row.ld_test:
            d.stage = _LD_TEST
            return
        self._perils_outcome(d, row.on_pass, ev)

    def _perils_outcome(self, d: Draft, outcome: str, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        caster = cast.caster
        row = self.perils_table[d.perils_roll]
        if outcome == "wound":
            self._wound(d, caster, 1, ev, row.name)
        elif outcome == "surge":
            d.set_unit(caster, surge=True)
            self._score(d, self.owner[caster], self.scenario.game.warp_surge_value)
            if ev is not None:
                ev.append(
                    _event(
                        _EV_SURGE,
                        f"{self.names[caster]} is filled with a Warp Surge",
                        self.owner[caster],
                    )
                )
        elif outcome == "removed":
            lost = d.units[caster].wounds % self.specs[caster].wounds or self.specs[caster].wounds
            self._wound(d, caster, lost, ev, "Dragged into the Warp")
            d.set_unit(caster, psyker=False)
            if ev is not None:
                ev.append(
                    _event(
                        _EV_SLAIN,
                        f"{self.names[caster]}'s psyker is dragged into the warp",
                        self.owner[caster],
                        (("unit", self.names[caster]),),
                    )
                )
            if d.units[caster].wounds > 0:
                d.stage = _PERILS_HITS
                return
        if row.extra == "purge" and d.units[caster].wounds > 0 and d.units[caster].powers:
            d.stage = _PURGE
        elif row.extra == "drain":
            d.stage = _DRAIN
        else:
            self._after_perils(d, ev)

    def _after_perils(self, d: Draft, ev: list[Event] | None) -> None:
        # Once the roll and any Perils are resolved, only the successes matter to what follows
        # (7E-5.3): forgetting the dice, the perils flag and the perils roll lets solvers merge
        # states that differ only in how they got here.
        cast = d.cast
        assert cast is not None
        power = self.powers[cast.power]
        d.perils_roll = 0
        # 7E-6 note: a power still takes effect when its caster dies to Perils; a power aimed at a
        # unit needs that unit still on the table (conjurations and novas aim at none).
        if cast.successes < power.warp_charge or (
            power.target in ("enemy", "friendly", "self") and d.units[cast.target].wounds <= 0
        ):
            d.stage, d.cast = _SELECT, None
            return self._settle_select(d, ev)
        if cast.dice or cast.perils:
            d.cast = _recast(cast, dice=0, perils=False)
        if d.pools[1 - d.active] > 0:
            d.stage = _DENY
            return None
        return self._manifest(d, ev)

    def _deny(self, d: Draft, dice: int, ev: list[Event] | None) -> None:
        if dice == 0:
            return self._manifest(d, ev)
        assert d.cast is not None
        if ev is not None:
            unit, threshold = self.deny_unit_and_threshold(d, d.cast)
            key = (_EV_DENY_ATTEMPT, unit, threshold, dice, d.active)
            got = self._event_memo.get(key)
            if got is None:
                who = self.names[unit] if unit is not None else self._side(1 - d.active)
                event = _event(
                    _EV_DENY_ATTEMPT,
                    f"{who} tries to deny with {plural(dice, 'die')} ({threshold}+)",
                    1 - d.active,
                    (("dice", dice),),
                )
                got = self._remember(key, [event])
            ev.extend(got)
        pools = d.pools
        pools = (pools[0] - dice, pools[1]) if d.active == 1 else (pools[0], pools[1] - dice)
        d.stage, d.pools, d.cast = _DENY_ROLL, pools, _recast(d.cast, deny_dice=dice)
        return None

    def _manifest(self, d: Draft, ev: list[Event] | None) -> None:
        cast = d.cast
        assert cast is not None
        power = self.powers[cast.power]
        side = self.owner[cast.caster]
        value = power.effect.value
        if ev is not None:
            key = (_EV_MANIFEST, cast.power, side)
            got = self._event_memo.get(key)
            if got is None:
                event = _event(
                    _EV_MANIFEST,
                    f"{power.name} takes effect",
                    side,
                    (("power", power.name), ("value", value or 0.0)),
                )
                got = self._remember(key, [event])
            ev.extend(got)
        if value is not None:
            self._score(d, side, value)
            d.effects = d.effects | {(cast.power, cast.target, side)}
            d.stage, d.cast = _SELECT, None
            return self._settle_select(d, ev)
        if power.target == "enemies":
            d.targets = self.nova_targets(d, cast.caster, power)
        else:
            d.targets = (cast.target,)
        return self._next_target(d, ev)

    def _next_target(self, d: Draft, ev: list[Event] | None) -> None:
        """Resolve the manifested power's targets; deterministic results need no chance node."""
        cast = d.cast
        assert cast is not None
        power = self.powers[cast.power]
        while d.targets:
            target = d.targets[0]
            if d.units[target].wounds <= 0:
                d.targets = d.targets[1:]
                continue
            dist = self.effect_distribution(d, target)
            if len(dist) > 1:
                d.stage = _EFFECT
                return
            wounds = next(iter(dist))
            self._wound(d, target, wounds, ev, power.name)
            if wounds and power.effect.attack is not None and power.effect.attack.heal_caster:
                self._heal(d, cast.caster, ev)
            d.targets = d.targets[1:]
        d.stage, d.cast = _SELECT, None
        self._settle_select(d, ev)

    # ------------------------------------------------------------------ wounds and score
    def _score(self, d: Draft, side: int, value: float) -> None:
        d.score = d.score + (value if side == 0 else -value)

    def _wound(self, d: Draft, unit: int, amount: int, ev: list[Event] | None, cause: str) -> None:
        u = d.units[unit]
        amount = min(amount, u.wounds)
        if amount <= 0:
            if ev is not None:
                ev.extend(self._wound_events(unit, 0, False, cause))
            return
        left = u.wounds - amount
        if left > 0:
            d.set_unit(unit, wounds=left)
        else:
            d.set_unit(unit, wounds=left, psyker=False)  # a destroyed unit has no psyker
        # 7E-8.2: the wounded unit's owner loses the value, the other side gains it.
        self._score(d, 1 - self.owner[unit], amount * self.specs[unit].value_per_wound)
        if ev is not None:
            ev.extend(self._wound_events(unit, amount, left <= 0, cause))

    def _wound_events(self, unit: int, amount: int, slain: bool, cause: str) -> tuple[Event, ...]:
        """The events of ``amount`` wounds to ``unit`` from ``cause`` (and of its destruction)."""
        key = (_EV_WOUNDS, unit, amount, slain, cause)
        got = self._event_memo.get(key)
        if got is not None:
            return got
        name, owner = self.names[unit], self.owner[unit]
        if amount <= 0:
            text = f"{cause}: {name} takes no wounds"
        else:
            text = f"{cause}: {name} loses {plural(amount, 'wound')}"
        out = [_event(_EV_WOUNDS, text, owner, (("unit", name), ("amount", amount)))]
        if slain:
            out.append(_event(_EV_SLAIN, f"{name} is destroyed", owner, (("unit", name),)))
        return self._remember(key, out)

    def _heal(self, d: Draft, unit: int, ev: list[Event] | None) -> None:
        u = d.units[unit]
        if u.wounds <= 0 or u.wounds >= self.max_wounds[unit]:
            return
        d.set_unit(unit, wounds=u.wounds + 1)
        self._score(d, self.owner[unit], self.specs[unit].value_per_wound)
        if ev is not None:
            ev.append(_event(_EV_HEAL, f"{self.names[unit]} regains a wound", self.owner[unit]))

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

    def returns(self, s: State) -> tuple[float, float]:
        """Zero-sum score so far (7E-8.2)."""
        return (s.score, -s.score)

    # ------------------------------------------------------------------ views (views.py)
    def _side(self, side: int) -> str:
        return self.scenario.sides[side].name

    def describe(self, s: State, a: int) -> ActionView:
        """Typed view of a decision or chance outcome (:func:`views.describe`)."""
        return views.describe(self, s, a)

    def observe(self, s: State, player: int) -> np.ndarray:
        """Flat float32 view for ``player`` (:func:`views.observe` documents the layout)."""
        return self._observer.observe(s, player)

    def render(self, s: State, player: int | None = None) -> str:
        """Text picture of the state (:func:`views.render`)."""
        return views.render(self, s, player)

    def power_texts(self, s: State, player: int | None = None) -> dict[str, str]:
        """One line of rules text per power a living psyker knows (:func:`views.power_texts`)."""
        return views.power_texts(self, s, player)


@cache
def allocate_wounds(
    wounds: int,
    per_model: int,
    unsaved: int,
    damage: tuple[tuple[int, Fraction], ...],
    instant: bool,
) -> tuple[tuple[int, Fraction], ...]:
    """Wounds a unit loses to ``unsaved`` unsaved wounds, one at a time (7E-7.1, defaults).

    Each unsaved wound goes to the partly wounded model if there is one (wounds come off the
    unit's pool model by model) and takes ``damage`` wounds from it, never more than that model
    has left (no spill into the next model); with ``instant`` (Instant Death) it removes the model
    outright.

    Args:
        wounds: wounds left in the unit.
        per_model: wounds of one model.
        unsaved: number of unsaved wounds.
        damage: distribution of wounds per unsaved wound, as sorted (value, chance) pairs.
        instant: Instant Death applies.

    Returns:
        Sorted (wounds lost, chance) pairs.
    """
    dist: dict[int, Fraction] = {wounds: Fraction(1)}
    for _ in range(unsaved):
        nxt: dict[int, Fraction] = {}
        for w, p in dist.items():
            if w <= 0:
                nxt[0] = nxt.get(0, Fraction(0)) + p
                continue
            model = w % per_model or per_model  # wounds left on the model being hit
            if instant:
                nxt[w - model] = nxt.get(w - model, Fraction(0)) + p
                continue
            for d, pd in damage:
                k = w - min(max(d, 0), model)
                nxt[k] = nxt.get(k, Fraction(0)) + p * pd
        dist = nxt
    return tuple(sorted((wounds - w, p) for w, p in dist.items() if p))


def plan_positions(
    start: list[tuple[float, float]],
    advance: list[float],
    owner: tuple[int, ...],
    rounds: int,
) -> tuple[tuple[tuple[float, float], ...], ...]:
    """Unit positions in each battle round under the scenario's advance moves.

    Before each battle round after the first, every unit with an ``advance`` moves that many
    inches straight toward the nearest enemy unit (ties: the lowest index), in unit order, and
    stops short of coming closer than 1" to any enemy unit. Casualties are not considered: the
    plan of advance is the scenario's, so positions depend on the battle round only.

    Args:
        start: positions in the first battle round.
        advance: inches per battle round, per unit.
        owner: the side of each unit.
        rounds: number of battle rounds to plan.
    """
    pos = [(float(x), float(y)) for x, y in start]
    out = [tuple(pos)]
    n = len(pos)
    for _ in range(1, rounds):
        for i in range(n):
            if advance[i] <= 0:
                continue
            enemies = [t for t in range(n) if owner[t] != owner[i]]
            if not enemies:
                continue
            goal = min(enemies, key=lambda t: (distance(pos[i], pos[t]), t))
            d = distance(pos[i], pos[goal])
            if d <= 1:
                continue
            ux, uy = (pos[goal][0] - pos[i][0]) / d, (pos[goal][1] - pos[i][1]) / d

            def at(step: float, i: int = i, ux: float = ux, uy: float = uy) -> tuple[float, float]:
                return (pos[i][0] + ux * step, pos[i][1] + uy * step)

            def clear(step: float, i: int = i) -> bool:
                here = at(step)
                return all(distance(here, pos[t]) >= 1 for t in range(n) if owner[t] != owner[i])

            step = min(advance[i], d - 1)
            if not clear(step):
                lo, hi = 0.0, step  # the longest clear step, by bisection
                for _ in range(40):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if clear(mid) else (lo, mid)
                step = lo
            pos[i] = at(step)
        out.append(tuple(pos))
    return tuple(out)


@cache
def _rolloff_win(ld_a: int, ld_b: int) -> Fraction:
    """P(D6 + ld_a > D6 + ld_b)."""
    d6 = distribution("D6")
    return sum(
        (p * q for a, p in d6.items() for b, q in d6.items() if a + ld_a > b + ld_b), Fraction(0)
    )


@cache
def _d6() -> tuple[tuple[int, Fraction], ...]:
    return tuple(sorted(distribution("D6").items()))


def _exact(dist) -> tuple[tuple[int, Fraction], ...]:
    """Outcomes of ``dist`` (pairs or a dict's items), sorted, zero-probability ones dropped."""
    return tuple((int(k), p) for k, p in sorted(dist) if p)


def _binary(p: Fraction) -> tuple[tuple[int, Fraction], ...]:
    return tuple((k, q) for k, q in ((0, 1 - p), (1, p)) if q)


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


# The one-draft decision and walk of RulesBase.apply_with_chance (see _decide_and_walk).

__all__ = ["SeventhRules", "load_rules", "cast_distribution", "deny_chance", "ld_pass", "parse"]
