"""The observation vector of a 2nd-edition player: what it may see, as float32 (2E-2, 2E-4).

:class:`SecondObservation` is the part of :class:`~.views.SecondViews` that encodes the fields of
a player's view (its own hand, the other hand's size, the deck's size, the face-up discards, its
own face-down discards and the other's count, the public table) and nothing else, from a state
and the scenario's :class:`~.facts.SecondFacts`. The ``DECISION_*`` constants name the kinds of
decision in its first entries.

The observation is one new array made from bytes: the card and phase entries packed per call
(cards are dealt one by one), then the board: the units block memoised per ``(player,
wounds)``, the psykers' blocks memoised together in two steps (the power cards and powers in
play, which change little within a game, then which psykers are alive and have cast), and a
pending-power block memoised per pending power (memoised blocks are immutable bytes). Whole
boards are not memoised: power cards differ from game to game, so three boards in four would
miss.
"""

from __future__ import annotations

import struct
from operator import sub

import numpy as np

from psygym.editions.second.data import NUM_CARDS
from psygym.editions.second.state import OVER, RESPONSE, TURN, InPlay, Pending, SecondState

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


class SecondObservation:
    """The observation vector and its memos, mixed into :class:`~.views.SecondViews`.

    Reads ``self.facts`` (the scenario's :class:`~.facts.SecondFacts`); the views call
    :meth:`_setup_observation` once.

    Attributes:
        observation_size: length of the observation vector.
        board_start: index of the first unit's entries (after the cards and the phase).
        pending_start: index of the pending-power block.
        n_powers: the number of powers in the data.
    """

    def _setup_observation(self) -> None:
        """The observation's sizes, packer and memos, from ``self.facts`` (called once)."""
        facts = self.facts
        P, M, U = facts.num_psykers, facts.num_slots, facts.num_units
        K = NUM_CARDS
        self.n_powers = len(facts.power_data)
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
        self._head = self._head_packer()
        """The observation's first entries as native float32 (C casts, as numpy converts)."""
        self._max_wounds = tuple(float(w) for w in facts.max_wounds)
        self._counts = facts.deck_counts
        self._psyker_units = tuple(enumerate(facts.psyker_unit))
        """``(psyker, its unit)`` in psyker order."""
        self._rounds = facts.game.battle_rounds
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

    def observe(self, state: SecondState, player: int) -> np.ndarray:
        """What ``player`` may see as a flat float32 vector (the fields of ``view`` only).

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
        facts = self.facts
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
        # self.decision(state, player), inline: the tests of facts.current_player.
        if stage == OVER:
            decision = DECISION_OVER
        elif state.effects:
            decision = DECISION_WAIT
        elif stage == TURN:
            decision = DECISION_TURN if state.to_move == player else DECISION_WAIT
        elif stage == RESPONSE:
            mover = 1 - facts.psyker_side[pending.psyker]  # the responder (2E-5.2)
            decision = DECISION_RESPONSE if mover == player else DECISION_WAIT
        else:
            decision = DECISION_WAIT
        rounds = self._rounds
        head = self._head.pack(
            *self._decision_rows[decision],
            (facts.game.first_player + phase) % 2 == player,  # facts.active(state)
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
        owner, max_wounds = self.facts.owner, self._max_wounds
        out: list[float] = []
        for u, left in enumerate(wounds):
            out += (owner[u] == player, left > 0, left, left / max_wounds[u])
        return np.array(out, dtype=np.float32).tobytes()

    def _psyker_header(self, player: int, i: int, alive: bool, used: bool) -> np.ndarray:
        """A psyker's first five entries: mine, alive, ML, has cast this phase, psychic hood."""
        facts = self.facts
        out = [facts.psyker_side[i] == player, alive, facts.ml[i], used, facts.hood[i]]
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
            facts = self.facts
            block = np.zeros(self.observation_size - self.pending_start, dtype=np.float32)
            if pending is not None:
                block[0] = 1.0
                block[1 + pending.psyker] = 1.0
                base = 1 + facts.num_psykers
                block[base + pending.slot] = 1.0
                base += facts.num_slots
                block[base + pending.target] = 1.0
                base += facts.num_units + 1
                block[base : base + 3] = (pending.force, pending.ultimate, pending.responses)
            block = _remember(self._pending_blocks, pending, block)
        return block


__all__ = [
    "DECISION_OVER",
    "DECISION_RESPONSE",
    "DECISION_TURN",
    "DECISION_WAIT",
    "NUM_DECISIONS",
    "SecondObservation",
]
