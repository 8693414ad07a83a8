"""What players see of a 7th-edition state: observations, action views and the text picture.

:class:`Observer` builds the flat observation vector (layout in :meth:`Observer.observe`),
:func:`describe` the typed view of an action, :func:`render` the text picture, :func:`power_texts`
one line of rules text per known power. The rules class (``rules.py``) delegates its ``observe``,
``describe``, ``render`` and ``power_texts`` here; nothing here changes a state. Everything here
reads a state and the scenario's read-only :class:`~.facts.SeventhFacts` only, never the rules
class. 7th edition has no hidden information (7E-1), so every player sees everything.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from psygym.core import ActionView
from psygym.editions.seventh.actions import (
    CastAction,
    DenyAction,
    DiceAction,
    DisciplineAction,
    EndPhaseAction,
    SwapAction,
)
from psygym.editions.seventh.facts import SeventhFacts
from psygym.editions.seventh.spec import AREA_HITS, Power
from psygym.editions.seventh.state import Stage, State
from psygym.text import plural


def _side(facts: SeventhFacts, side: int) -> str:
    return facts.scenario.sides[side].name


# ----------------------------------------------------------------------------- action views
@dataclass(frozen=True)
class EndPhase(ActionView):
    """End the Psychic phase (7E-4.1)."""


@dataclass(frozen=True)
class Choose(ActionView):
    """Choose a psyker, one of its powers and a target (7E-4.1)."""

    psyker: str = ""
    power: str = ""
    target: str = ""
    warp_charge: int = 0


@dataclass(frozen=True)
class CastDice(ActionView):
    """Cast the chosen power with ``dice`` dice (7E-4.3)."""

    psyker: str = ""
    power: str = ""
    target: str = ""
    dice: int = 0


@dataclass(frozen=True)
class Deny(ActionView):
    """Deny the Witch with ``dice`` dice (0: let it through) (7E-5)."""

    unit: str = ""
    dice: int = 0


@dataclass(frozen=True)
class ChooseDiscipline(ActionView):
    """Generate the next power from a discipline (7E-2.1)."""

    psyker: str = ""
    discipline: str = ""


@dataclass(frozen=True)
class KeepOrSwap(ActionView):
    """Keep the rolled power or swap it for the Primaris power (7E-2.2)."""

    psyker: str = ""
    power: str = ""
    swap: bool = False


@dataclass(frozen=True)
class Outcome(ActionView):
    """A chance outcome."""


_KINDS_AT = {
    Stage.SELECT: (EndPhaseAction, CastAction),
    Stage.DICE: (DiceAction,),
    Stage.DENY: (DenyAction,),
    Stage.DISCIPLINE: (DisciplineAction,),
    Stage.SWAP: (SwapAction,),
}
"""The kinds of action (:mod:`.actions`) each decision asks for: ``describe`` names no other."""


def describe(facts: SeventhFacts, s: State, a: int) -> ActionView:
    """Typed view of a decision or chance outcome.

    An id of this decision's kind describes the action it would be, legal here or not (as
    OpenSpiel's ``action_to_string`` does); any other id (outside the action space, negative,
    or of another kind of decision) gets a plain "not an action" label, and so does an outcome
    no chance node of this kind can have.
    """
    st = s.stage
    a = int(a)
    kinds, layout = _KINDS_AT.get(st), facts.actions
    if kinds is not None:
        if not 0 <= a < layout.num_actions or not isinstance(layout.decode(a), kinds):
            return ActionView(label=f"action {a} (not an action at this {st.name} node)")
    elif a < 0 or (st in (Stage.GEN_ROLL, Stage.PURGE) and a >= len(facts.powers)):
        return Outcome(label=f"outcome {a} (not an outcome at this {st.name} node)")
    if st == Stage.SELECT:
        if a == 0:
            return EndPhase(label="End the Psychic phase")
        c, p, t = facts.actions.decode_cast(a)
        power = facts.powers[p]
        at = (
            ""
            if t == c and power.target in ("self", "none", "enemies")
            else f" at {facts.names[t]}"
        )
        return Choose(
            label=f"{facts.names[c]}: {power.name} (WC {power.warp_charge}){at}",
            psyker=facts.names[c],
            power=power.name,
            target=facts.names[t],
            warp_charge=power.warp_charge,
        )
    if st == Stage.DICE:
        cast = s.cast
        n = facts.actions.dice_of(a)
        power = facts.powers[cast.power]
        return CastDice(
            label=f"Cast {power.name} with {plural(n, 'die')}",
            psyker=facts.names[cast.caster],
            power=power.name,
            target=facts.names[cast.target],
            dice=n,
        )
    if st == Stage.DENY:
        m = facts.actions.deny_dice_of(a)
        unit, _ = facts.deny_unit_and_threshold(s, s.cast)
        label = "Do not deny" if m == 0 else f"Deny with {plural(m, 'die')}"
        return Deny(label=label, unit=facts.names[unit] if unit is not None else "", dice=m)
    if st == Stage.DISCIPLINE:
        d = facts.disciplines[a - facts.actions.DISC]
        return ChooseDiscipline(
            label=f"{facts.names[s.gen_unit]} rolls on {d}",
            psyker=facts.names[s.gen_unit],
            discipline=d,
        )
    if st == Stage.SWAP:
        swap = a == facts.actions.swap(True)
        d = facts.disciplines[s.gen_disc]
        name = facts.powers[facts.primaris[d] if swap else s.gen_power].name
        return KeepOrSwap(
            label=f"{'Swap for' if swap else 'Keep'} {name}",
            psyker=facts.names[s.gen_unit],
            power=name,
            swap=swap,
        )
    return Outcome(label=outcome_label(facts, s, a))


def outcome_label(facts: SeventhFacts, s: State, a: int) -> str:
    """Readable label of chance outcome ``a`` at ``s``."""
    st = s.stage
    if st in (Stage.PHASE_ROLL, Stage.PERILS, Stage.DRAIN):
        return f"roll {a}"
    if st == Stage.CAST_ROLL:
        return f"{plural(a // 2, 'success')}{' with Perils' if a % 2 else ''}"
    if st == Stage.LD_TEST:
        return "Leadership test passed" if a else "Leadership test failed"
    if st == Stage.DENY_ROLL:
        return "denied" if a else "not denied"
    if st in (Stage.GEN_ROLL, Stage.PURGE):
        return facts.powers[a].name
    return plural(a, "wound")


def render(facts: SeventhFacts, s: State, player: int | None = None) -> str:
    """Text picture: round, pools, every unit with wounds and powers, the pending cast."""
    lines = []
    if s.stage == Stage.OVER:
        lines.append(f"Game over. Score {s.score:+.2f} for {_side(facts, 0)}")
    elif s.gen_unit >= 0:
        lines.append(f"Generating powers: {facts.names[s.gen_unit]}")
    else:
        lines.append(
            f"Battle round {s.phase // 2 + 1}, {_side(facts, s.active)}'s Psychic "
            f"phase. Dice: {_side(facts, 0)} {s.pools[0]}, {_side(facts, 1)} "
            f"{s.pools[1]}. Score {s.score:+.2f}"
        )
    for side in (0, 1):
        lines.append(f"{_side(facts, side)}:")
        for t, u in enumerate(s.units):
            if facts.owner[t] != side:
                continue
            spec = facts.specs[t]
            status = f"{u.wounds}/{facts.max_wounds[t]} W" if u.alive() else "destroyed"
            extra = ""
            if spec.psyker is not None and u.psyker:
                names = ", ".join(
                    f"{facts.powers[p].name}{'*' if (t, p) in s.attempted else ''}"
                    for p in u.powers
                )
                extra = f"  ML{spec.psyker.mastery} [{names}]"
                if u.surge:
                    extra += " (Warp Surge)"
            lines.append(f"  {spec.name:<16} {status}{extra}")
    if s.cast is not None:
        lines.append(_cast_line(facts, s))
    if s.attempted and s.stage != Stage.OVER:
        lines.append("* attempted this phase: not again until the next (7E-4.2)")
    return "\n".join(lines)


def _cast_line(facts: SeventhFacts, s: State) -> str:
    """The pending cast: the dice before the roll, the successes after it.

    A rolled cast keeps its successes but not its dice (the state forgets them once the roll is
    made, so that casts with the same result merge), so after the roll only the successes are
    shown; the events of the roll say how many dice were rolled.
    """
    c = s.cast
    assert c is not None
    line = (
        f"Casting: {facts.names[c.caster]} -> {facts.powers[c.power].name}"
        f" at {facts.names[c.target]}"
    )
    if s.stage == Stage.DICE:
        return f"{line}, dice not yet chosen"
    if s.stage == Stage.CAST_ROLL:
        return f"{line}, rolling {plural(c.dice, 'die')}"
    line += f", {plural(c.successes, 'success')}"
    if s.stage == Stage.DENY_ROLL and c.deny_dice:
        line += f", deny attempt with {plural(c.deny_dice, 'die')}"
    return line


# ----------------------------------------------------------------------------- power texts
_AREA_WORDS = {"template": "a template", "blast": "a blast", "large_blast": "a large blast"}
_UNLESS = {"grey_knight": "a Grey Knight", "daemon": "a daemon"}


def _stat(name: str, value: str) -> str:
    """``"S4"``, ``"AP2"``; a dice expression gets a space: ``"S 2D6"``, ``"AP D6"``."""
    return f"{name}{value}" if value.isdigit() or value == "-" else f"{name} {value}"


def _effect_text(power: Power) -> str:
    """The effect of ``power`` in player terms: its ``text``, else made from its fields (7E-7.1)."""
    e = power.effect
    if power.text is not None:
        return power.text
    if e.attack is not None:
        a = e.attack
        if a.hits in AREA_HITS:
            # Blasts and templates: min(target models, n) hits (disciplines.md).
            shots = f"{_AREA_WORDS[a.hits]} (up to {AREA_HITS[a.hits]} hits)"
        else:
            shots = plural(a.hits, "shot" if a.to_hit == "bs" else "hit")
        ap = "-" if a.ap == "none" else a.ap
        text = f"{shots} at {_stat('S', a.strength)} {_stat('AP', ap)}"
        if a.damage != "1":
            text += f", {a.damage} wounds each"
        if a.always_wounds_on is not None:
            text += f", wounds on {a.always_wounds_on}+"
        if a.heal_caster:
            text += "; heals the caster 1 wound if it wounds"
        return text
    if e.mortal is not None:
        if e.minus_target_ld:
            return f"{e.mortal} minus the target's Ld wounds, no saves"
        return f"{plural(e.mortal, 'wound')}, no saves"
    if e.rolloff_mortal is not None:
        return f"Ld roll-off won: {plural(e.rolloff_mortal, 'wound')}, no saves"
    # value(v): scored as v wound-equivalents when it takes effect (7E-7.1, 7E-8.2).
    return f"scored as {plural(f'{e.value:g}', 'wound')}"


def power_line(power: Power) -> str:
    """One line of rules text for a 7th-edition power (7E-9 data, effects by 7E-7).

    ``"Smite (Biomancy primaris, WC 1, witchfire, 18"): 4 shots at S4 AP2"``: discipline and
    number (7E-2), warp charge (7E-4.3), kind, range or target, then the effect made from the
    data fields, or the power's ``text`` where the data gives one. Perils on any double unless
    the caster has the power's flag (7E-4.4) and automatic Perils on a failed test are added;
    ``[default]`` marks powers with numbers no source gives.
    """
    head = []
    if power.number >= 0:
        number = "primaris" if power.number == 0 else str(power.number)
        head.append(f"{power.discipline} {number}" if power.discipline else number)
    head += [f"WC {power.warp_charge}", power.kind]
    where = {
        "enemy": f'{power.range:g}"',
        "enemies": f'enemies {power.range:g}"',
        "friendly": f'friendly {power.range:g}"',
        "self": "self",
    }.get(power.target)
    if where is not None:
        head.append(where)
    text = f"{power.name} ({', '.join(head)}): {_effect_text(power)}"
    if power.perils_on_fail:
        text += "; Perils if the test fails"
    if power.doubles_perils_unless is not None:
        text += f"; Perils on doubles unless {_UNLESS[power.doubles_perils_unless]}"
    if power.default:
        text += " [default]"
    return text


def power_texts(facts: SeventhFacts, s: State, player: int | None = None) -> dict[str, str]:
    """One line per power a living psyker on the table knows, by name (7E-1.3, 7E-2).

    Every player sees every psyker's powers (7E-1: no hidden information), so ``player`` does not
    change the result. Powers are listed in unit order, then in power order; a power several
    psykers know appears once. Before powers are generated (7E-2) only fixed powers are known.
    """
    texts: dict[str, str] = {}
    for t, u in enumerate(s.units):
        if facts.specs[t].psyker is None or not u.psyker:
            continue
        for p in u.powers:
            power = facts.powers[p]
            if power.name not in texts:
                texts[power.name] = power_line(power)
    return texts


# ----------------------------------------------------------------------------- observations
_KINDS = {Stage.DISCIPLINE: 0, Stage.SWAP: 1, Stage.SELECT: 2, Stage.DICE: 3, Stage.DENY: 4}
_KIND_INDEX = tuple(_KINDS.get(st, 5) for st in Stage)  # by Stage value (0, 1, 2, ...)


class Observer:
    """Builds one scenario's observation vectors from a static part and the state's changes.

    The static part (which units are the player's own, mastery levels) is computed once per
    player; :meth:`observe` copies it and writes only what the state sets. The values are the
    same Python floats as a direct computation, cast once to float32, so vectors are bit-identical
    to writing every entry.

    Args:
        facts: the scenario's facts.
    """

    def __init__(self, facts: SeventhFacts):
        self.facts = facts
        n_units, n_powers = len(facts.specs), len(facts.powers)
        self.n_units, self.n_powers = n_units, n_powers
        self.size = facts.observation_size
        self.unit_base = tuple(11 + t * (6 + 3 * n_powers) for t in range(n_units))
        self.attempted_base = tuple(i + 6 + n_powers for i in self.unit_base)
        self.effect_base = tuple(i + 6 + 2 * n_powers for i in self.unit_base)
        self.cast_base = 11 + n_units * (6 + 3 * n_powers)
        self.gen_base = self.cast_base + 2 * n_units + n_powers + 5
        total = facts.total_phases
        self.round_div = max(1, (total + 1) // 2)
        self.total_phases = total
        self.phase_values = tuple(
            ((phase // 2 + 1) / self.round_div, max(0, total - phase) / total)
            for phase in range(total + 1)
        )
        """Entries 6 (battle round / rounds) and 10 (phases left / total) of each phase."""
        self.max_wounds = facts.max_wounds
        self.wc = tuple(p.warp_charge / 3 for p in facts.powers)
        self.no_powers = np.zeros(n_powers, dtype=np.float32)
        self.templates = []
        for player in (0, 1):
            obs = np.zeros(self.size, dtype=np.float32)
            for t, i in enumerate(self.unit_base):
                obs[i] = facts.owner[t] == player
                obs[i + 4] = facts.mastery[t] / 4
            self.templates.append(obs)
        self._last: list[tuple[tuple | None, np.ndarray]] = [(None, t) for t in self.templates]

    def _with_units(self, units: tuple, player: int) -> np.ndarray:
        """The template of ``player`` with the units' entries written (not to be changed).

        Kept for the last ``units`` tuple seen per player: units change far less often than
        the rest of the state, and an unchanged state field is the same tuple object. A new
        tuple usually differs from the last in one unit (the same ``UnitState`` objects
        otherwise), so only the blocks of units that are other objects are written again, each
        first cleared back to the template's zeros (the entries a unit sets are zero there).
        """
        last_units, vector = self._last[player]
        if last_units is units:
            return vector
        base = self.unit_base
        if last_units is None or len(last_units) != len(units):
            obs = self.templates[player].copy()
            changed = range(len(units))
        else:
            obs = vector  # only observe's copies of it ever leave: rewritten in place
            changed = [t for t, u in enumerate(units) if u is not last_units[t]]
        out = memoryview(obs)  # float32 writes as numpy's (see observe)
        max_wounds, n_powers = self.max_wounds, self.n_powers
        for t in changed:
            u = units[t]
            i = base[t]
            if last_units is not None:
                out[i + 1] = out[i + 2] = out[i + 3] = out[i + 5] = 0
                out[i + 6 : i + 6 + n_powers] = self.no_powers
            if u.wounds:
                out[i + 2] = u.wounds / max_wounds[t]
                if u.wounds > 0:
                    out[i + 1] = 1
            if u.psyker:
                out[i + 3] = 1
            if u.surge:
                out[i + 5] = 1
            for p in u.powers:
                out[i + 6 + p] = 1
        self._last[player] = (units, obs)
        return obs

    def observe(self, s: State, player: int) -> np.ndarray:
        """Flat float32 view for ``player`` (7th edition has no hidden information).

        Layout: [0:6] one-hot decision kind (discipline, swap, select, dice, deny, none);
        [6] battle round / rounds; [7] 1 if it is ``player``'s phase; [8] own dice / 10;
        [9] enemy dice / 10; [10] phases left / total. Then per unit: own unit, alive,
        wounds / max, living psyker, ML / 4, warp surge, and per power: knows it, attempted this
        phase, in force on the unit. Then the pending cast: caster one-hot, power one-hot, target
        one-hot, dice / 10, successes / 10, warp charge / 3, deny threshold / 6, perils. Then
        generation: psyker one-hot, discipline one-hot, rolled power one-hot.
        """
        obs = self._with_units(s.units, player).copy()
        # Entries are written through a memoryview of the vector: each value is cast to float32
        # just as numpy's item assignment casts it (the same C cast), at about half the cost.
        out = memoryview(obs)
        n_units, n_powers = self.n_units, self.n_powers
        out[_KIND_INDEX[s.stage]] = 1
        phase = s.phase
        if phase < len(self.phase_values):
            out[6], out[10] = self.phase_values[phase]
        else:
            out[6] = (phase // 2 + 1) / self.round_div
            out[10] = max(0, self.total_phases - phase) / self.total_phases
        out[7] = s.active == player
        pools = s.pools
        out[8] = pools[player] / 10
        out[9] = pools[1 - player] / 10
        if s.attempted:
            base = self.attempted_base
            for c, p in s.attempted:
                out[base[c] + p] = 1
        if s.effects:
            base = self.effect_base
            for p, unit, _ in s.effects:
                out[base[unit] + p] = 1
        cast = s.cast
        if cast is not None:
            i = self.cast_base
            out[i + cast.caster] = 1
            out[i + n_units + cast.power] = 1
            out[i + n_units + n_powers + cast.target] = 1
            i += 2 * n_units + n_powers
            _, threshold = self.facts.deny_unit_and_threshold(s, cast)
            out[i] = cast.dice / 10
            out[i + 1] = cast.successes / 10
            out[i + 2] = self.wc[cast.power]
            out[i + 3] = threshold / 6
            out[i + 4] = cast.perils
        if s.gen_unit >= 0:
            i = self.gen_base
            out[i + s.gen_unit] = 1
            if s.gen_disc >= 0:
                out[i + n_units + s.gen_disc] = 1
            if s.gen_power >= 0:
                out[i + n_units + len(self.facts.disciplines) + s.gen_power] = 1
        return obs


__all__ = [
    "CastDice",
    "Choose",
    "ChooseDiscipline",
    "Deny",
    "EndPhase",
    "KeepOrSwap",
    "Observer",
    "Outcome",
    "describe",
    "outcome_label",
    "power_line",
    "power_texts",
    "render",
]
