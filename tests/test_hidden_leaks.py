"""Nothing hidden reaches a player: every response is the same for every re-deal (issue 39).

What a player is shown (``psygym serve``'s HTTP answers, ``psygym play``'s screen, a replay as
that player, ``advise --from-log``) must be a function of what that player may know: all of it
comes from ``PlayerView``, which reads only the edition's ``private_to``.

Design. Games of the hidden-hand edition are played to the end, in both seats, against five
opponents, on small scenarios made to force the cases of the issue (a deck holding one kind of
card while the other hand holds another, reshuffles of a discard pile holding the other player's
face-down cards), the shipped duel cut to one battle round, and the issue's own game. At every
response (HTTP: the answer to one request; terminal: from the board and menu of one decision of
the player to the next prompt) a twin is made from the state the response started at, with
everything the player has not seen dealt again (``rules.sample_hidden``), and it plays the same
response as the player sees it (``leak_twins.Script``):

- the player's own action; the public dice and the cards dealt to the player as in the real game
  (a card the twin's deck lacks: another re-deal is tried);
- a card dealt to the other player drawn from the twin's own deck (not the real card: a label
  that named it, or that was hidden in one world and not the other, would show here);
- the other player's decisions as in the real game (one its twin hand cannot make: another
  re-deal is tried; every decision is a choice some policy could make with that hand);
- a re-deal after which the player would observe something else (``rules.observe``: a hand
  discarded face up, 2E-4.3) is not the game the player is in: another is tried.

The twin's answer must then be byte-identical to the real one (HTTP: the response body, and the
hint at some responses; terminal: every character printed, hints included at some prompts). A
twin that goes through other kinds of steps than the real game fails too (the course of the game
would depend on the hidden cards). A response that no re-deal of ``leak_twins.ATTEMPTS`` plays is
*void*; their share is bounded.

The same for the secret-move edition: at every response that ends with the other player's
secret bid pending, each other bid it could have made gives a twin whose answer (and hint) must
be byte-identical. Some games go through the real ``psygym play`` command (a subprocess with
piped input): its output must contain the in-process session's, whose every response is
checked; their logs replayed ``--as-player`` and read by ``advise --from-log`` show the steps
play showed. A canary (the rule of the issue, asking the true state whether other outcomes look
the same) must be caught, in serve and in play. The counts of games and responses are printed
(``pytest -s``) and asserted: about 1,010 serve games with 5,700 responses, 210 terminal games
with 1,170 responses, 60 + 30 games with pending secret bids, 6 subprocess games.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import leak_twins  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from leak_twins import Leak, PlayChecker, ServeChecker, chooser, picker, subsequence  # noqa: E402
from psygym_experiments import play_session  # noqa: E402
from psygym_experiments.advise import seen_lines  # noqa: E402
from psygym_experiments.harness.advice import decision_from_log  # noqa: E402
from psygym_experiments.harness.player_view import PlayerView, Shown  # noqa: E402
from psygym_experiments.play_replay import replay_log  # noqa: E402
from psygym_experiments.serve import games as serve_games  # noqa: E402
from psygym_experiments.serve.app import create_app  # noqa: E402
from psygym_experiments.serve.store import GameStore  # noqa: E402
from rich.console import Console  # noqa: E402

from psygym import edition as registry  # noqa: E402
from psygym.core import CHANCE, Information, RulesBase  # noqa: E402
from psygym.editions import load  # noqa: E402
from psygym.policies import resolve_policy  # noqa: E402

OPPONENTS = ("cast-biggest", "random", "nullify-always", "cast-cheapest", "hoard-nullify")
"""Opponents of the hidden-hand games (the heuristics and the random policy)."""

SMALL = """
edition = "2nd"
name = "{name}"
description = "A leak-test game: {what}."

[game]
battle_rounds = {rounds}
first_player = 0

[rules]
warp_flux_dice = {flux}
public_discards = {public}
retain_specials = {retain}

[[sides]]
name = "Space Marines"

[[sides.units]]
name = "Librarian"
wounds = 3
toughness = 4
save = 3
leadership = 9
position = [0.0, 0.0]
psyker = {{ mastery = {ml}, powers = {powers} }}

[[sides]]
name = "Eldar"

[[sides.units]]
name = "Farseer"
wounds = 3
toughness = 3
save = 7
invulnerable = 4
leadership = 10
position = [0.0, 6.0]
psyker = {{ mastery = {ml}, powers = {powers} }}

[deck]
force = {force}
nullify = {nullify}
daemonic_attack = 0
destroy_power = {destroy}
psychic_duel = {duel}
reflection = {reflection}
ultimate_force = 0
energy_drain = {drain}
"""

SCENARIOS = {
    # Mostly Force: the deck often holds Force alone while the other hand holds the rest.
    "leak-one-kind": dict(
        what="a deck of Force and one Nullify", rounds=1, flux=2, public="true", retain="false",
        ml=2, powers='["Smite", "Warp Blast"]', force=4, nullify=1, destroy=0, duel=0,
        reflection=0, drain=0,
    ),
    # Five cards, dealt out in the first phase: the second deals from a reshuffled discard pile.
    "leak-mixed": dict(
        what="five cards of three kinds", rounds=1, flux=1, public="false", retain="false",
        ml=1, powers='["Smite"]', force=3, nullify=1, destroy=0, duel=0, reflection=1, drain=0,
    ),
    # Two rounds over six cards: a reshuffle every phase, face-down discards and kept specials.
    "leak-reshuffle": dict(
        what="reshuffles every phase", rounds=2, flux=1, public="false", retain="true",
        ml=1, powers='["Smite", "Psychic Shield"]', force=2, nullify=1, destroy=1, duel=1,
        reflection=0, drain=1,
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def scenario_files(tmp_path_factory) -> dict[str, Path]:
    """The scenarios above as TOML files."""
    folder = tmp_path_factory.mktemp("scenarios")
    out = {}
    for name, fields in SCENARIOS.items():
        path = folder / f"{name}.toml"
        path.write_text(SMALL.format(name=name, **fields))
        out[name] = path
    return out


def _edition(information: Information) -> registry.Edition:
    found = [e for e in registry.editions() if e.information == information]
    if not found:
        pytest.skip(f"no edition of {information} information is installed")
    return found[0]


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A client over a fresh store, with cheap hint searches (the same code, fewer iterations)."""
    monkeypatch.setattr(serve_games, "HINT_ITERATIONS", 12)
    store = GameStore(tmp_path / "runs", max_games=5000)
    with TestClient(create_app(store)) as client:
        yield client, store


def test_serve_never_shows_hidden_cards(served, scenario_files, capsys):
    """>= 1,000 games through the HTTP API, both seats, 5 opponents, 4 scenarios: every
    response is byte-identical for every re-deal of what the player has not seen."""
    client, store = served
    ed = _edition(Information.HIDDEN)
    checker = ServeChecker(client, store, seed=39)
    uploads = {n: store.upload(p.read_bytes())["upload"] for n, p in scenario_files.items()}
    plans = [({"upload": u}, 300) for u in uploads.values()]
    plans.append(({"edition": ed.id, "scenario": ed.default_scenario, "rounds": 1}, 110))
    i = 0
    for where, games in plans:
        for g in range(games):
            body = {**where, "seat": g % 2, "seed": g, "opponent": OPPONENTS[g // 2 % 5]}
            checker.play(body, chooser(i), hints=2 if i % 25 == 0 else 0)
            i += 1
    count = checker.count
    with capsys.disabled():
        print(f"\nserve leak check: {count}")
    assert count["games"] >= 1000 and count["compared"] >= 4000, count
    assert count["void"] <= count["responses"] // 20, count
    assert count["hints"] >= 40, count


def test_the_issue_game_shows_no_card_of_the_ai(served):
    """Issue 39's game: the duel, seat 1, against cast-biggest, seed 1, always the first action
    (it showed "deal Force to Space Marines" after 12 actions)."""
    client, store = served
    ed = _edition(Information.HIDDEN)
    checker = ServeChecker(client, store, seed=1)
    body = {
        "edition": ed.id,
        "scenario": ed.default_scenario,
        "seat": 1,
        "seed": 1,
        "opponent": "cast-biggest",
    }
    view = checker.play(body, lambda v: v["actions"][0]["action"])
    rules = store.get(view["id"]).rules
    ai = rules.side_names[0]
    assert view["over"] and checker.count["responses"] > 12, checker.count
    assert not [e for e in view["events"] if e["text"].endswith(f" to {ai}")]
    hidden = [e for e in view["events"] if e["text"] == "(hidden from you)"]
    assert len(hidden) > 10 and all(
        e["events"][0]["text"] == f"{ai} is dealt a warp card." for e in hidden
    )


def test_serve_never_shows_a_pending_secret_bid(served, capsys):
    """Every response ending at the player's bid after the AI's secret bid is byte-identical
    for every other bid the AI could have made; so are the hints."""
    client, store = served
    ed = _edition(Information.SIMULTANEOUS)
    checker = ServeChecker(client, store, seed=3)
    opponents = ("random", "bid-half", "bid-all", "spend-freely")
    for g in range(60):
        where = {"edition": ed.id, "scenario": ed.default_scenario, "rounds": 4}
        body = {**where, "seat": g % 2, "seed": g, "opponent": opponents[g // 2 % 4]}
        checker.play(body, chooser(g), secret=True, hints=40 if g < 6 else 0)
    count = checker.count
    with capsys.disabled():
        print(f"\nserve secret-bid check: {count}")
    assert count["secret_bids"] >= 30 and count["secret_twins"] >= 150, count
    assert count["hints"] >= 3, count


def test_play_never_shows_hidden_cards(scenario_files, capsys):
    """>= 200 games of ``psygym play`` with piped answers, both seats, 5 opponents: every
    response prints the same for every re-deal of what the player has not seen."""
    ed = _edition(Information.HIDDEN)
    checker = PlayChecker(seed=7)
    i = 0
    for path in scenario_files.values():
        rules = load(ed.id, path)
        for g in range(70):
            name = OPPONENTS[g // 2 % 5]
            hints = (1,) if i % 20 == 0 else ()
            checker.play(rules, resolve_policy(name, rules), name, g % 2, g, picker(i), hints)
            i += 1
    count = checker.count
    with capsys.disabled():
        print(f"\nplay leak check: {count}")
    assert count["games"] >= 200 and count["compared"] >= 800, count
    assert count["void"] <= count["responses"] // 20, count
    assert count["hints"] >= 8, count


def test_play_never_shows_a_pending_secret_bid(capsys):
    ed = _edition(Information.SIMULTANEOUS)
    rules = load(ed.id, ed.default_scenario)
    checker = PlayChecker(seed=8)
    for g in range(30):
        name = ("random", "bid-half")[g // 2 % 2]
        policy = resolve_policy(name, rules)
        checker.play(rules, policy, name, g % 2, g, picker(2 * g), secret=True)
    count = checker.count
    with capsys.disabled():
        print(f"\nplay secret-bid check: {count}")
    assert count["secret_bids"] >= 10 and count["secret_twins"] >= 50, count


def _psygym_play(edition: str, scenario: Path, seat: int, seed: int, opponent: str, runs: Path):
    """``psygym play`` in a fresh process, answering 1 (the first action) at every prompt."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "psygym_experiments.cli",
            "play",
            "--edition",
            edition,
            "--scenario",
            str(scenario),
            "--seat",
            str(seat),
            "--seed",
            str(seed),
            "--opponent",
            opponent,
            "--runs-dir",
            str(runs),
        ],
        input="1\n" * 400,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_psygym_play_prints_what_the_checked_session_prints(scenario_files, tmp_path):
    """The real command, in a subprocess with piped input, prints what the in-process session
    prints (checked at every response); ``psygym replay --as-player`` shows the game's steps as
    play showed them, while the full replay names the AI's cards that play never named."""
    ed = _edition(Information.HIDDEN)
    checker = PlayChecker(seed=9)
    runs = tmp_path / "runs"
    named = advised = 0
    for j, path in enumerate(scenario_files.values()):
        rules = load(ed.id, path)
        dealt = {
            s: re.compile(rf"Chance: deal .+ to {re.escape(n)}\b")
            for s, n in enumerate(rules.side_names)
        }
        for seat in (0, 1):
            opponent, seed = OPPONENTS[(2 * j + seat) % 5], 11 + j
            before = set(runs.glob("games/*.jsonl"))
            done = _psygym_play(ed.id, path, seat, seed, opponent, runs)
            assert done.returncode == 0, done.stderr
            mine = checker.play(
                rules, resolve_policy(opponent, rules), opponent, seat, seed, lambda legal: 0
            )
            assert mine in done.stdout
            (log,) = set(runs.glob("games/*.jsonl")) - before
            full, seen = io.StringIO(), io.StringIO()
            replay_log(log, Console(file=full, width=160))
            replay_log(log, Console(file=seen, width=160), as_player=seat)
            named += len(dealt[1 - seat].findall(full.getvalue()))
            assert not dealt[1 - seat].findall(seen.getvalue())
            assert not dealt[1 - seat].findall(done.stdout)
            steps = seen.getvalue().split("\n\n")[0].splitlines()[1:]
            assert "Chance: (hidden from you)" in steps
            assert subsequence(steps, done.stdout.splitlines())
            advised += _advice_shows_what_play_showed(log, seat, done.stdout)
    assert checker.count["games"] == 6 and checker.count["compared"] >= 20, checker.count
    assert named > 10 and advised > 10


def _advice_shows_what_play_showed(log: Path, seat: int, played: str) -> int:
    """``advise --from-log``: at each of the player's decisions, the rolls and events it says
    the player was shown since its previous decision are those play printed; returns how many
    decisions were checked."""
    decisions = 0
    for at in range(1, 200):
        try:
            rules, state, info = decision_from_log(log, at)
        except ValueError:
            break
        if rules.current_player(state) == seat:
            lines = seen_lines(rules, seat, info["seen"])
            rolls = [x for x in lines if x.startswith(("Chance: ", "    "))]
            assert subsequence(rolls, played.splitlines())
            decisions += 1
    return decisions


# ----------------------------------------------------------------------------- the canary
class OldRule(PlayerView):
    """The rule of the issue: hide a step when another outcome *of the true state* leads to a
    state the player's render cannot tell apart (a deck of one kind then names the card)."""

    def see(self, state, action, events, probability=None) -> Shown:  # noqa: D102
        rules = self.rules
        player = rules.current_player(state)
        shown = super().see(state, action, events, probability)
        if player == self.seat:
            return shown
        alternatives = (
            [o for o, _ in rules.chance_outcomes(state)]
            if player == CHANCE
            else rules.legal_actions(state)
        )
        nxt = rules.apply(state, action, check=False)
        mine, full = rules.render(nxt, self.seat), rules.render(nxt, None)
        for b in alternatives:
            other = rules.apply(state, b, check=False)
            if (
                b != action
                and rules.render(other, self.seat) == mine != full
                and (rules.render(other, None) != full)
            ):
                return Shown(player, None, shown.events)
        return Shown(player, rules.action_label(state, action), shown.events, None, shown.odds)


def test_the_check_catches_the_rule_of_the_issue(served, scenario_files, monkeypatch):
    """With the old rule in the server, the same check finds responses that differ."""
    client, store = served
    monkeypatch.setattr(serve_games, "PlayerView", OldRule)
    monkeypatch.setattr(leak_twins, "PlayerView", OldRule)
    checker = ServeChecker(client, store, seed=5)
    upload = store.upload(scenario_files["leak-one-kind"].read_bytes())["upload"]
    caught = 0
    for g in range(30):
        body = {"upload": upload, "seat": g % 2, "seed": g, "opponent": "cast-biggest"}
        try:
            checker.play(body, chooser(1))
        except Leak as exc:
            assert "deal " in str(exc)
            caught += 1
    assert caught >= 5, caught
    with pytest.raises(Leak, match="deal "):
        rules = load(_edition(Information.HIDDEN).id, scenario_files["leak-one-kind"])
        monkeypatch.setattr(play_session, "PlayerView", OldRule)
        checker = PlayChecker(seed=5)
        policy = resolve_policy("cast-biggest", rules)
        for g in range(30):
            checker.play(rules, policy, "cast-biggest", g % 2, g, picker(1))


# ----------------------------------------------------------------------------- the contract
def test_every_edition_with_secrets_says_what_is_private():
    """``private_to`` is the one source of what is hidden: editions that are not of perfect
    information must answer it (the default says everything is public)."""
    for ed in registry.editions():
        rules = load(ed.id, ed.default_scenario)
        overrides = type(rules).private_to is not RulesBase.private_to
        assert overrides == (ed.information != Information.PERFECT), ed.id
