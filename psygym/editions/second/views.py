"""What a 2nd-edition player may see: the player's view, the observation vector, action views, text.

Hidden information (2E-2, 2E-4): a player sees its own hand, the size of the other hand, the size
of the deck, the face-up part of the discard pile (cards played), its own face-down discards and
the number of the other player's (hands discarded at the end of a phase, 2E-4.3, unless
``public_discards``), the cards paid for the power being cast and the public table; never the
other hand, the other player's face-down discards or the deck's composition.
:meth:`SecondViews.view` returns exactly that (:class:`SecondView`); :meth:`SecondViews.observe`
encodes the same fields and nothing else, and :meth:`SecondViews.render` prints only the asking
player's hand and face-down discards.

The rules class (:class:`~psygym.editions.second.rules.SecondRules`) builds one
:class:`SecondViews` and delegates ``view``, ``observe``, ``describe``, ``render`` and
``power_texts`` to it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from operator import sub
from typing import TYPE_CHECKING

import numpy as np

from psygym.core import CHANCE, TERMINAL, ActionView
from psygym.editions.second.actions import (
    ENERGY_DRAIN,
    PASS,
    PAY_ULTIMATE,
    RESPONSE_CARDS,
)
from psygym.editions.second.data import CARD_LABELS, NUM_CARDS
from psygym.editions.second.state import (
    DEAL,
    FLUX,
    OVER,
    RESPONSE,
    ROLL_DAEMONIC,
    ROLL_NULLIFY,
    ROLL_NULLIFY_IN_PLAY,
    SETUP,
    TURN,
    InPlay,
    Pending,
    Roll,
    SecondState,
)
from psygym.text import plural

if TYPE_CHECKING:
    from psygym.editions.second.rules import SecondRules

# Kinds of decision in the observation's first entries.
DECISION_TURN = 0
"""The player takes a turn of alternating play (2E-4)."""
DECISION_RESPONSE = 1
"""The player may answer the power being cast (2E-5.2)."""
DECISION_WAIT = 2
"""The other player (or chance) is to move."""
DECISION_OVER = 3
"""The game is over."""
NUM_DECISIONS = 4

_BOARD_CACHE_SIZE = 50_000
_FLOAT32 = np.dtype(np.float32)


def _remember(cache: dict, key: object, block: np.ndarray) -> bytes:
    """Store ``block``'s bytes under ``key`` (clearing a full cache first) and return them.

    Bytes are immutable, so no caller can change a memoised block.
    """
    data = block.tobytes()
    if len(cache) >= _BOARD_CACHE_SIZE:
        cache.clear()
    cache[key] = data
    return data


# ---------------------------------------------------------------------------------------------
# Action views


@dataclass(frozen=True)
class PassView(ActionView):
    """Pass on your turn, or play no response card."""

    player: int = 0
    response: bool = False


@dataclass(frozen=True)
class CardView(ActionView):
    """Play Energy Drain or a response card."""

    player: int = 0
    card: str = ""


@dataclass(frozen=True)
class CastView(ActionView):
    """Cast a power (2E-5.1)."""

    player: int = 0
    psyker: str = ""
    power: str = ""
    target: str = ""
    force: int = 0
    ultimate: bool = False
    psyker_index: int = -1
    slot: int = -1
    target_index: int = -1


@dataclass(frozen=True)
class InPlayView(ActionView):
    """End your own remain-in-play power, or Nullify an enemy one."""

    player: int = 0
    psyker: str = ""
    power: str = ""
    nullify: bool = False
    psyker_index: int = -1
    slot: int = -1


@dataclass(frozen=True)
class DuelView(ActionView):
    """Play Psychic Duel (2E-7)."""

    player: int = 0
    psyker: str = ""
    enemy: str = ""
    psyker_index: int = -1
    enemy_index: int = -1


@dataclass(frozen=True)
class OutcomeView(ActionView):
    """A chance outcome."""

    kind: str = ""
    value: int = 0


@dataclass(frozen=True, slots=True)
class SecondView:
    """What one player may see of a state: its own hand and the public table, nothing hidden.

    Heuristics read only this; :meth:`SecondViews.observe` encodes the same fields.
    """

    player: int
    decision: int
    phase: int
    active: int
    to_move: int
    passes: int
    hand: tuple[int, ...]
    opponent_hand_size: int
    deck_size: int
    discard: tuple[int, ...]
    """The face-up part of the discard pile (every card played; all of it with
    ``public_discards``)."""
    own_face_down: tuple[int, ...]
    """The cards this player discarded face down (2E-4.3)."""
    opponent_face_down: int
    """How many cards the other player discarded face down."""
    paid: tuple[int, ...]
    wounds: tuple[int, ...]
    powers: tuple[tuple[int, ...], ...]
    used: tuple[bool, ...]
    in_play: tuple[InPlay, ...]
    pending: Pending | None
    roll: Roll | None
    score: float
    """The player's own score so far."""


def face_up(state: SecondState) -> tuple[int, ...]:
    """The face-up part of the discard pile: all of it but the face-down discards (2E-4.3)."""
    down0, down1 = state.face_down
    if not (any(down0) or any(down1)):
        return state.discard
    return tuple(map(sub, map(sub, state.discard, down0), down1))


def cards_text(counts: tuple[int, ...]) -> str:
    """A card multiset as text: ``"2 Force, 1 Nullify"`` (``"none"`` when empty)."""
    parts = [f"{n} {CARD_LABELS[c]}" for c, n in enumerate(counts) if n]
    return ", ".join(parts) or "none"


class SecondViews:
    """Views of one scenario's states: player view, observation, action views and text.

    Args:
        rules: the rules of the scenario.

    The observation is one new array made from bytes: the card and phase entries packed per
    call (cards are dealt one by one), then the board: the units block memoised per
    ``(player, wounds)``, the psykers' blocks memoised together in two steps (the power cards
    and powers in play, which change little within a game, then which psykers are alive and
    have cast), and a pending-power block memoised per pending power (memoised blocks are
    immutable bytes). Whole boards are not memoised: power cards differ from game to game, so
    three boards in four would miss.
    """

    def __init__(self, rules: SecondRules):
        self.rules = rules
        P, M, U = rules.num_psykers, rules.num_slots, rules.num_units
        K = NUM_CARDS
        self.n_powers = len(rules.power_data)
        per_psyker = 5 + M * (3 + self.n_powers)
        self.board_start = NUM_DECISIONS + 5 + 5 * K + 3 + 1
        self.pending_start = self.board_start + 4 * U + P * per_psyker
        self.observation_size = self.pending_start + 1 + P + M + (U + 1) + 3
        self._unit_blocks: dict[tuple, tuple[bytes, tuple[bool, ...]]] = {}
        """Units block and psykers alive by ``(player, wounds)`` (:meth:`_units_entry`)."""
        self._psyker_boards: dict[tuple, tuple[tuple[bytes, ...], dict[tuple, bytes]]] = {}
        """:meth:`_psykers_entry` by ``(player, powers, in_play)``."""
        self._slot_bytes: dict[tuple[int, bool, bool], bytes] = {}
        """:meth:`_slot_block` by its arguments, as bytes (a few per power)."""
        self._headers: dict[tuple[int, tuple[bool, ...], tuple[bool, ...]], tuple[bytes, ...]] = {}
        """Every psyker's :meth:`_psyker_header` (as bytes) by ``(player, alive, used)``."""
        self._pending_blocks: dict[Pending | None, bytes] = {}
        self._cast_views: dict[tuple[int, int, int], CastView] = {}
        self._head = self._head_packer()
        """The observation's first entries as native float32 (C casts, as numpy converts)."""
        self._max_wounds = tuple(float(w) for w in rules.max_wounds)
        self._counts = rules.deck_counts
        self._psyker_units = tuple(enumerate(rules.psyker_unit))
        """``(psyker, its unit)`` in psyker order."""
        self._rounds = rules.game.battle_rounds
        self._decision_rows = tuple(
            tuple(float(k == d) for k in range(NUM_DECISIONS)) for d in range(NUM_DECISIONS)
        )

    def _head_packer(self) -> struct.Struct:
        """The packer of the observation's first ``board_start`` entries (native float32)."""
        return struct.Struct(f"={self.board_start}f")

    def __getstate__(self) -> dict:
        """Everything but the packer, which cannot be pickled (a ``struct.Struct``).

        Worker pools send the rules, and with them this object, to their processes.
        """
        state = self.__dict__.copy()
        del state["_head"]
        return state

    def __setstate__(self, state: dict) -> None:
        """Restore the fields and rebuild the packer from ``board_start``."""
        self.__dict__.update(state)
        self._head = self._head_packer()

    # -----------------------------------------------------------------------------------------
    # The player's view

    def decision(self, state: SecondState, player: int) -> int:
        """Which decision (``DECISION_*``) ``state`` asks of ``player``."""
        mover = self.rules.current_player(state)
        if mover == TERMINAL:
            return DECISION_OVER
        if mover != player:
            return DECISION_WAIT
        return DECISION_RESPONSE if state.stage == RESPONSE else DECISION_TURN

    def view(self, state: SecondState, player: int) -> SecondView:
        """The part of ``state`` that ``player`` may see: own hand, public table, card counts."""
        return SecondView(
            player=player,
            decision=self.decision(state, player),
            phase=state.phase,
            active=self.rules.active(state),
            to_move=state.to_move,
            passes=state.passes,
            hand=state.hands[player],
            opponent_hand_size=sum(state.hands[1 - player]),
            deck_size=sum(state.deck),
            discard=face_up(state),
            own_face_down=state.face_down[player],
            opponent_face_down=sum(state.face_down[1 - player]),
            paid=state.paid,
            wounds=state.wounds,
            powers=state.powers,
            used=state.used,
            in_play=state.in_play,
            pending=state.pending,
            roll=state.roll,
            score=state.score if player == 0 else -state.score,
        )

    # -----------------------------------------------------------------------------------------
    # Observation

    def observe(self, state: SecondState, player: int) -> np.ndarray:
        """What ``player`` may see as a flat float32 vector (the fields of :meth:`view` only).

        Layout (P psykers, M slots, U units, K = 8 card kinds, N powers in the data):

        * ``[0:4]`` decision asked of ``player``: own turn, own response, waiting, game over;
        * ``[4:9]`` is the active player, battle round / rounds, phase / phases, passes in a row,
          is the player to move in the alternation;
        * own hand (K counts), other hand's size, deck size, face-up discard pile (K), cards paid
          for the power being cast (K), unseen cards by kind (K: deck + other hand + the other
          player's face-down discards together, which any card counter knows), own score, own
          face-down discards (K), the other player's face-down discards (count);
        * per unit (U x 4): mine, alive, wounds left, fraction of wounds left;
        * per psyker (P x (5 + M x (3 + N))): mine, alive, ML, has cast this phase, psychic hood;
          per slot: holds a card, in play, in play paid with Ultimate Force (cannot be
          nullified), one-hot of the power;
        * pending power: present, psyker one-hot (P), slot one-hot (M), target one-hot (U + 1),
          Force paid, Ultimate Force, response cards played.

        Built as bytes: the head packed in one call (float32, as numpy converts), the memoised
        board and pending blocks joined to it, and one new array made from the result.
        """
        rules = self.rules
        # Only what view() holds is read: the own hand, the other hand's and the deck's sizes.
        hand = state.hands[player]
        down0, down1 = state.face_down
        own_down, other_down = (down0, down1) if player == 0 else (down1, down0)
        discard = state.discard
        paid, phase, stage, pending = state.paid, state.phase, state.stage, state.pending
        counts = self._counts
        # The unseen cards (deck, other hand and the other player's face-down discards, by kind)
        # are what is neither in hand, face up, paid nor discarded face down by this player.
        if any(down0) or any(down1):  # face_up(state), inline
            discard = tuple(map(sub, map(sub, discard, down0), down1))
            unseen = map(sub, map(sub, map(sub, map(sub, counts, hand), discard), paid), own_down)
        else:  # nothing lies face down (own_down is all zeros)
            unseen = map(sub, map(sub, map(sub, counts, hand), discard), paid)
        # self.decision(state, player), inline: the tests of rules.current_player.
        if stage == OVER:
            decision = DECISION_OVER
        elif state.effects:
            decision = DECISION_WAIT
        elif stage == TURN:
            decision = DECISION_TURN if state.to_move == player else DECISION_WAIT
        elif stage == RESPONSE:
            mover = 1 - rules.psyker_side[pending.psyker]  # the responder (2E-5.2)
            decision = DECISION_RESPONSE if mover == player else DECISION_WAIT
        else:
            decision = DECISION_WAIT
        rounds = self._rounds
        head = self._head.pack(
            *self._decision_rows[decision],
            (rules.game.first_player + phase) % 2 == player,  # rules.active(state)
            (phase // 2 + 1) / rounds,
            phase / (2 * rounds),
            state.passes,
            state.to_move == player,
            *hand,
            sum(state.hands[1 - player]),
            sum(state.deck),
            *discard,
            *paid,
            *unseen,
            state.score if player == 0 else -state.score,
            *own_down,
            sum(other_down),
        )
        wounds, powers, used, in_play = state.wounds, state.powers, state.used, state.in_play
        units = self._unit_blocks.get((player, wounds))  # the memos' hits, without their calls
        if units is None:
            units = self._units_entry(player, wounds)
        board = self._psyker_boards.get((player, powers, in_play))
        if board is None:
            board = self._psykers_entry(player, powers, in_play)
        psykers = board[1].get((units[1], used))
        if psykers is None:
            psykers = self._psykers_block(player, board, units[1], used)
        block = self._pending_blocks.get(pending)
        if block is None:
            block = self._pending_block(pending)
        return np.frombuffer(  # one copy, writable
            bytearray().join((head, units[0], psykers, block)), dtype=_FLOAT32
        )

    def _units_entry(self, player: int, wounds: tuple[int, ...]) -> tuple[bytes, tuple[bool, ...]]:
        """The units block of :meth:`_units_block` and which psykers are alive (memoised)."""
        alive = tuple(wounds[u] > 0 for _, u in self._psyker_units)
        entry = (self._units_block(player, wounds), alive)
        if len(self._unit_blocks) >= _BOARD_CACHE_SIZE:
            self._unit_blocks.clear()
        self._unit_blocks[(player, wounds)] = entry
        return entry

    def _psykers_entry(
        self, player: int, powers: tuple[tuple[int, ...], ...], in_play: tuple[InPlay, ...]
    ) -> tuple[tuple[bytes, ...], dict[tuple, bytes]]:
        """What the psykers' blocks show of the power cards: built once per game, as a rule.

        ``(slots, blocks)``: per psyker, its slot blocks (:meth:`_slot_block`) joined; and the
        psykers' blocks by ``(alive, used)`` once built (:meth:`_psykers_block`). Memoised by
        ``(player, powers, in_play)`` (bounded).
        """
        slots = []
        memo = self._slot_bytes
        for i, cards in enumerate(powers):
            held = {ip.slot: ip.ultimate for ip in in_play if ip.psyker == i}
            parts = []
            for j, k in enumerate(cards):
                key = (k, j in held, held.get(j, False))
                block = memo.get(key)
                if block is None:
                    block = memo[key] = self._slot_block(*key).tobytes()
                parts.append(block)
            slots.append(b"".join(parts))
        entry: tuple[tuple[bytes, ...], dict[tuple, bytes]] = (tuple(slots), {})
        if len(self._psyker_boards) >= _BOARD_CACHE_SIZE:
            self._psyker_boards.clear()
        self._psyker_boards[(player, powers, in_play)] = entry
        return entry

    def _psykers_block(
        self,
        player: int,
        entry: tuple[tuple[bytes, ...], dict[tuple, bytes]],
        alive: tuple[bool, ...],
        used: tuple[bool, ...],
    ) -> bytes:
        """Every psyker's block: its header (:meth:`_psyker_header`) and slots, joined.

        Kept in ``entry`` (of :meth:`_psykers_entry`) by ``(alive, used)``.
        """
        headers = self._headers.get((player, alive, used))
        if headers is None:
            headers = self._headers[(player, alive, used)] = tuple(
                self._psyker_header(player, i, alive[i], used[i]).tobytes()
                for i in range(len(alive))
            )
        parts = []
        for header, slots in zip(headers, entry[0]):
            parts += (header, slots)
        block = entry[1][(alive, used)] = b"".join(parts)
        return block

    def _units_block(self, player: int, wounds: tuple[int, ...]) -> bytes:
        """Per unit: mine, alive, wounds left, fraction of wounds left (as bytes).

        Memoised with the psykers' alive flags in :meth:`_units_entry`.
        """
        owner, max_wounds = self.rules.owner, self._max_wounds
        out: list[float] = []
        for u, left in enumerate(wounds):
            out += (owner[u] == player, left > 0, left, left / max_wounds[u])
        return np.array(out, dtype=np.float32).tobytes()

    def _psyker_header(self, player: int, i: int, alive: bool, used: bool) -> np.ndarray:
        """A psyker's first five entries: mine, alive, ML, has cast this phase, psychic hood."""
        rules = self.rules
        out = [rules.psyker_side[i] == player, alive, rules.ml[i], used, rules.hood[i]]
        return np.array(out, dtype=np.float32)

    def _slot_block(self, power: int, in_play: bool, ultimate: bool) -> np.ndarray:
        """One power slot: holds a card, in play, paid with Ultimate Force, power one-hot."""
        slot = [0.0] * (3 + self.n_powers)
        slot[0] = power >= 0
        slot[1] = in_play
        slot[2] = ultimate
        if power >= 0:
            slot[3 + power] = 1.0
        return np.array(slot, dtype=np.float32)

    def _pending_block(self, pending: Pending | None) -> bytes:
        """The pending-power block of the observation (memoised by the pending power)."""
        block = self._pending_blocks.get(pending)
        if block is None:
            rules = self.rules
            block = np.zeros(self.observation_size - self.pending_start, dtype=np.float32)
            if pending is not None:
                block[0] = 1.0
                block[1 + pending.psyker] = 1.0
                base = 1 + rules.num_psykers
                block[base + pending.slot] = 1.0
                base += rules.num_slots
                block[base + pending.target] = 1.0
                base += rules.num_units + 1
                block[base : base + 3] = (pending.force, pending.ultimate, pending.responses)
            block = _remember(self._pending_blocks, pending, block)
        return block

    # -----------------------------------------------------------------------------------------
    # Action views

    def target_name(self, power: int, target: int) -> str:
        """Name of a cast's target (``target == num_units``: every enemy unit in range)."""
        rules = self.rules
        if target == rules.num_units:
            return f'every enemy unit within {rules.power_data[power].range:g}"'
        return rules.units[target].name if 0 <= target < rules.num_units else "?"

    def describe(self, state: SecondState, action: int) -> ActionView:
        """Typed view of an action (or of a chance outcome at chance nodes)."""
        rules = self.rules
        player = rules.current_player(state)
        if player == CHANCE:
            return self.describe_chance(state, action)
        p = max(player, 0)
        name = rules.side_names[p]
        if state.stage == RESPONSE:
            if action == PASS:
                return PassView(f"{name} plays no response card", p, True)
            card = RESPONSE_CARDS.get(action)
            label = CARD_LABELS[card] if card is not None else f"action {action}"
            return CardView(f"{name} plays {label}", p, label)
        if action == PASS:
            return PassView(f"{name} passes", p, False)
        if action == ENERGY_DRAIN:
            return CardView(f"{name} plays Energy Drain", p, "Energy Drain")
        layout = rules.actions
        psyker_name = rules.psyker_names
        if layout.is_duel(action):
            i, k = layout.decode_duel(action)
            a, b = psyker_name[i], psyker_name[k]
            return DuelView(f"{name} plays Psychic Duel: {a} against {b}", p, a, b, i, k)
        if layout.end_base <= action < layout.cast_base:
            nullify = layout.is_nullify_in_play(action)
            i, j = layout.decode_in_play(action)
            k = state.powers[i][j]
            power = rules.power_data[k].name if k >= 0 else "(no card)"
            psyker = psyker_name[i]
            label = (
                f"{name} plays Nullify on {psyker}'s {power}"
                if nullify
                else f"{psyker} ends {power}"
            )
            return InPlayView(label, p, psyker, power, nullify, i, j)
        if layout.is_cast(action):
            i, j, _, _ = layout.decode_cast(action)
            return self.cast_view(action, state.powers[i][j], p)
        return ActionView(f"action {action} (not an action of this scenario)")

    def cast_view(self, action: int, power: int, player: int) -> CastView:
        """View of the cast ``action`` asked of ``player`` when its slot holds ``power``.

        Memoised: these three are all the view depends on.
        """
        key = (action, power, player)
        view = self._cast_views.get(key)
        if view is None:
            view = self._cast_views[key] = self._cast_view(action, power, player)
        return view

    def _cast_view(self, action: int, k: int, p: int) -> CastView:
        rules = self.rules
        i, j, t, pay = rules.actions.decode_cast(action)
        psyker = rules.psyker_names[i]
        if k < 0:
            return CastView(f"{psyker}: empty power slot {j}", p)
        power = rules.power_data[k]
        force = power.max_force if pay == PAY_ULTIMATE else pay
        target = self.target_name(k, t)
        paying = "Ultimate Force" if pay == PAY_ULTIMATE else f"{pay} Force"
        label = f"{psyker} casts {power.name} (Force {force}, paying {paying}) at {target}"
        return CastView(label, p, psyker, power.name, target, force, pay == PAY_ULTIMATE, i, j, t)

    def describe_chance(self, state: SecondState, outcome: int) -> OutcomeView:
        """Typed view of a chance outcome (cards dealt, flux, draws, rolls, wounds)."""
        rules = self.rules
        if state.effects:
            _, victim = rules.effect_units(state.effects[0])
            return OutcomeView(
                f"{rules.units[victim].name} loses {plural(outcome, 'wound')}", "wounds", outcome
            )
        stage = state.stage
        if stage == DEAL:
            label = CARD_LABELS[outcome] if 0 <= outcome < NUM_CARDS else "?"
            return OutcomeView(
                f"deal {label} to {rules.side_names[state.deal_to]}", "deal", outcome
            )
        if stage == FLUX:
            return OutcomeView(f"warp flux {outcome}: {plural(outcome, 'card')}", "flux", outcome)
        if stage == SETUP:
            i = rules.next_draw(state)
            power = rules.power_data[outcome].name if 0 <= outcome < len(rules.power_data) else "?"
            return OutcomeView(f"{rules.psyker_names[i]} draws {power}", "draw", outcome)
        roll = state.roll
        if roll is not None and roll.kind in (ROLL_NULLIFY, ROLL_NULLIFY_IN_PLAY):
            text = "succeeds" if outcome else "fails"
            return OutcomeView(f"Nullify {text}", "nullify", outcome)
        if roll is not None and roll.kind == ROLL_DAEMONIC:
            text = "slays the caster" if outcome else "is survived"
            return OutcomeView(f"Daemonic Attack {text}", "daemonic", outcome)
        if roll is not None:
            who = rules.psyker_names[roll.b if outcome > 0 else roll.a]
            lost = plural(abs(outcome), "wound")
            return OutcomeView(f"Psychic Duel: {who} loses {lost}", "duel", outcome)
        return OutcomeView(f"outcome {outcome}", "", outcome)

    # -----------------------------------------------------------------------------------------
    # Text

    def render(self, state: SecondState, player: int | None = None) -> str:
        """The table as ``player`` sees it: only that player's hand (``None``: both hands)."""
        rules = self.rules
        names = rules.side_names
        lines = [
            f"2nd edition - {rules.scenario.name} - battle round {rules.battle_round(state)}/"
            f"{rules.game.battle_rounds}, Psychic phase of {names[rules.active(state)]}"
            + (" (game over)" if state.stage == OVER else ""),
            f"Score {names[0]} {state.score:+.2f}",
        ]
        for side in (0, 1):
            lines.append(f"{names[side]}:")
            for u in rules.side_units[side]:
                unit = rules.units[u]
                text = f"  {unit.name}: {state.wounds[u]}/{rules.max_wounds[u]} wounds"
                i = rules.unit_psyker[u]
                if state.wounds[u] <= 0:
                    text += " (slain)"
                elif i >= 0:
                    cards = []
                    for j, k in enumerate(state.powers[i]):
                        if k < 0:
                            continue
                        entry = [ip for ip in state.in_play if (ip.psyker, ip.slot) == (i, j)]
                        mark = ""
                        if entry:
                            mark = (
                                " [in play, Ultimate Force]" if entry[0].ultimate else " [in play]"
                            )
                        power = rules.power_data[k]
                        cards.append(f"{power.name} ({power.cost}){mark}")
                    text += f", ML{rules.ml[i]}{', hood' if rules.hood[i] else ''}"
                    text += ", cast" if state.used[i] else ""
                    text += f"; powers: {', '.join(cards) or 'none'}"
                lines.append(text)
        for side in (0, 1):
            if player is None or player == side:
                lines.append(f"Hand of {names[side]}: {cards_text(state.hands[side])}")
            else:
                lines.append(f"Hand of {names[side]}: {plural(sum(state.hands[side]), 'card')}")
        lines.append(
            f"Deck: {plural(sum(state.deck), 'card')}; discard pile face up: "
            f"{cards_text(face_up(state))}"
        )
        for side in (0, 1):
            down = state.face_down[side]
            if not any(down):
                continue
            # 2E-4.3: face-down discards are shown only to the player who discarded them.
            own = player is None or player == side
            shown = cards_text(down) if own else plural(sum(down), "card")
            lines.append(f"Discarded face down by {names[side]}: {shown}")
        if state.pending is not None:
            pend = state.pending
            lines.append(
                f"Being cast: {rules.power_data[pend.power].name} by "
                f"{rules.psyker_names[pend.psyker]} at "
                f"{self.target_name(pend.power, pend.target)}, Force "
                f"{pend.force}{' (Ultimate Force)' if pend.ultimate else ''}"
            )
        return "\n".join(lines)

    # -----------------------------------------------------------------------------------------
    # Power texts

    def power_texts(self, state: SecondState, player: int | None = None) -> dict[str, str]:
        """One line of rules text per power card ``player`` may see, by name (2E-1, 2E-5, 2E-6).

        ``player`` sees the power cards of its own living psykers, every power in play and the
        power being cast (2E-4, 2E-5); ``None`` sees every living psyker's cards. The warp cards
        in the hands (2E-2) are never read, so the other hand cannot show.
        """
        rules = self.rules
        shown: list[int] = []
        for i, slots in enumerate(state.powers):
            if player is not None and rules.psyker_side[i] != player:
                continue
            if state.wounds[rules.psyker_unit[i]] <= 0:
                continue
            shown += [k for k in slots if k >= 0]
        shown += [ip.power for ip in state.in_play]
        if state.pending is not None:
            shown.append(state.pending.power)
        texts: dict[str, str] = {}
        for k in shown:
            name = rules.power_data[k].name
            if name not in texts:
                texts[name] = self.power_line(k)
        return texts

    def power_line(self, k: int) -> str:
        """One line for power card ``k``: ``"Smite (Force 1, attack, 12"): D6 hits at S4, ..."``.

        Force cost (2E-1.1), kind, range or target, then the effect from the card's fields
        (2E-6.1) or its ``text``; a ``value`` changed by the scenario is the one shown.
        """
        rules = self.rules
        power = rules.power_data[k]
        where = {
            "self": "self",
            "friendly": f'friendly {power.range:g}"',
            "enemy": f'{power.range:g}"',
            "enemies": f'every enemy unit {power.range:g}"',
            "enemy-psyker": f'enemy psyker {power.range:g}"',
        }[power.target]
        head = ", ".join(x for x in (f"Force {power.cost}", power.kind, where) if x)
        if power.text is not None:
            effect = power.text
        else:
            lo = power.min_force
            if power.variable:
                lo = max(lo, rules.settings.variable_min_force)
            forces = [f for f in range(lo, power.max_force + 1)]
            parts = [self._effect_text(k, power.effect(f)) for f in forces]
            if len(parts) == 1:
                effect = parts[0]
            else:
                effect = "; ".join(f"Force {f}: {t}" for f, t in zip(forces, parts))
        if power.remain_in_play and "remain" not in power.kind:
            effect += " (remains in play)"
        return f"{power.name} ({head}): {effect}"

    def _effect_text(self, k: int, e: object) -> str:
        """One effect in player terms (2E-6.1; duel: 2E-7 as the card does it)."""
        kind = getattr(e, "type", "")
        if kind == "attack":
            word = "shot" if e.to_hit == "bs" else "hit"  # type: ignore[attr-defined]
            hits = str(e.hits)  # type: ignore[attr-defined]
            text = f"{plural(hits, word)} at S{e.strength}"  # type: ignore[attr-defined]
            damage = str(e.damage)  # type: ignore[attr-defined]
            text += f", {plural(damage, 'wound')} each"
            if not e.saves:  # type: ignore[attr-defined]
                text += ", no armour save"
            return text
        if kind == "mortal":
            return f"{plural(str(e.wounds), 'wound')}, no save"  # type: ignore[attr-defined]
        if kind == "duel":
            dice = e.dice  # type: ignore[attr-defined]
            return (
                f"each rolls {dice} + ML; caster higher: the target loses the difference in wounds"
            )
        override = self.rules.power_value[k]
        value = override if override is not None else e.value  # type: ignore[attr-defined]
        each = " each phase" if self.rules.power_data[k].remain_in_play else ""
        return f"scored as {value:g} wound{'' if value == 1 else 's'}{each}"


__all__ = [
    "DECISION_OVER",
    "DECISION_RESPONSE",
    "DECISION_TURN",
    "DECISION_WAIT",
    "NUM_DECISIONS",
    "CardView",
    "CastView",
    "DuelView",
    "InPlayView",
    "OutcomeView",
    "PassView",
    "SecondView",
    "SecondViews",
    "cards_text",
    "face_up",
]
