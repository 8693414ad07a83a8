"""``psygym play`` numbers each of the human's decisions as ``psygym advise --at`` counts them.

``advise --from-log LOG --at N`` takes the state before the N-th decision of the game, from 1,
either player's, chance rolls excluded. ``play`` heads each menu of the human "decision N"; for
every such N of a scripted game, ``advise`` on that game's log must answer about the same
decision: the same side to decide, the same board, the same choices, and the choice played.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from psygym_experiments.cli import app
from typer.testing import CliRunner

runner = CliRunner()

HEADING = re.compile(r"^Your move \((?P<side>[^)]*)\), decision (?P<n>\d+):$")
OPTION = re.compile(r"^\s*\d+\. (?P<label>.+)$")


def _label(text: str) -> str:
    """An option or a decision as printed, without the odds in brackets after it."""
    return text.split("  [")[0].strip()


def _shown_decisions(output: str) -> list[dict]:
    """Each menu of ``play``: its number, side, board, choices and the choice then played."""
    lines = output.splitlines()
    found = []
    for i, line in enumerate(lines):
        heading = HEADING.match(line)
        if heading is None:
            continue
        rule = max(k for k in range(i) if set(lines[k]) == {"─"})
        options = []
        for later in lines[i + 1 :]:
            option = OPTION.match(later)
            if option is None:
                break
            options.append(_label(option["label"]))
        side = heading["side"]
        played = next(ln for ln in lines[i + 1 :] if ln.startswith(f"You ({side}): "))
        found.append(
            {
                "n": int(heading["n"]),
                "side": side,
                "board": "\n".join(lines[rule + 1 : i]),
                "options": options,
                "played": _label(played.split(": ", 1)[1]),
            }
        )
    return found


@pytest.mark.parametrize(
    ("seat", "answers"),
    [(0, "2\n3\n1\n" * 20), (1, "1\n" * 50)],
    ids=["caster", "denier"],
)
def test_the_decision_number_shown_is_the_one_advise_at_takes(tmp_path: Path, seat, answers):
    runs = tmp_path / "runs"
    args = ["play", "--edition", "7th", "--scenario", "single-phase", "--seed", "1"]
    args += ["--opponent", "double-wc", "--seat", str(seat), "--runs-dir", str(runs)]
    played = runner.invoke(app, args, input=answers)
    assert played.exit_code == 0, played.output + repr(played.exception)
    [log] = (runs / "games").glob("*.jsonl")
    shown = _shown_decisions(played.output)
    assert shown, "play shows no decision number"
    # The AI's decisions count too: some number is not one more than the human's previous one.
    assert [d["n"] for d in shown] != list(range(1, len(shown) + 1))
    assert f"psygym advise --from-log {log} --at N" in played.output
    for decision in shown:
        at = ["advise", "--from-log", str(log), "--at", str(decision["n"])]
        at += ["--heuristics", "none"]
        answer = runner.invoke(app, [*at, "--json"])
        assert answer.exit_code == 0, answer.output
        doc = json.loads(answer.output)
        info = doc["from_log"]
        assert info["decision"] == decision["n"]
        assert info["side"] == decision["side"]
        assert info["played"] == decision["played"]
        assert sorted(a["label"] for a in doc["actions"]) == sorted(decision["options"])
        text = runner.invoke(app, at)
        assert text.exit_code == 0, text.output
        assert text.output.startswith(decision["board"] + "\n\n")
        assert f"Decision {decision['n']} of " in text.output
