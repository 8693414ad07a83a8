"""The legal actions of the 7th-edition rules and their masks (7E-2.1, 7E-4.1, 7E-5.1, 7E-7.2).

:class:`SeventhLegality` is the part of :class:`~.rules.SeventhRules` that lists the legal
actions of a decision, sorted, and their boolean mask. At ``SELECT``: end the phase, or a
psyker of the active side with a power it has not attempted this phase (7E-4.2) and a living
target in range in this battle round (7E-4.1); a nova needs a living enemy unit in range; a
blessing or malediction already in force on a unit cannot be cast on it again (7E-7.2). At
``DICE``: one to all of the active pool's dice (7E-4.1); at ``DENY``: none to all of the
other pool's (7E-5.1); at ``DISCIPLINE``: the psyker's open disciplines (:mod:`.generation`,
7E-2.1); at ``SWAP``: keep or swap (7E-2.2).

The casting choices of the last state asked about are kept (``_legal_casts``), masks per tuple
of casting choices and per pool size.
"""

from __future__ import annotations

import numpy as np

from psygym.editions.seventh.state import _DENY, _DICE, _DISCIPLINE, _SELECT, _SWAP, State

_MASK_MEMO_SIZE = 4096
"""SELECT masks :meth:`SeventhLegality.legal_mask` keeps before it forgets them all."""


class SeventhLegality:
    """Legal actions and masks, mixed into the rules class.

    Reads the scenario's facts (:class:`~.facts.SeventhFacts` fields, held by the rules as
    attributes), the tables the rules build once (``_cast_plan``, ``_cast_pair``,
    ``_dice_actions``, ``_deny_actions`` and their masks) and the memos they set up
    (``_last_casts``, ``_masks``, ``_last_mask``).
    """

    def legal_actions(self, s: State) -> list[int]:
        """Sorted legal actions (:mod:`.actions` has the layout)."""
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


__all__ = ["SeventhLegality"]
