"""What an OpenSpiel game of psygym records about its scenario, so that OpenSpiel can rebuild it.

OpenSpiel rebuilds a game from its parameters alone (``pyspiel.load_game(str(game))``, pickling
a game or a state, ``pyspiel.deserialize_game_and_state``), so they name the scenario as it was
given, never by the ``name`` inside its TOML (a custom file may call itself ``duel``; a
generated scenario is named ``random-2`` but is built from ``random:2``):

* ``scenario``: a shipped name (``"default"`` is recorded as the name it stands for), a
  generated scenario's ``random:SEED[,options]`` as given, or a file's absolute path.
  OpenSpiel's game string cannot carry ``( ) , =``: they (and ``%``) are recorded as ``%28 %29
  %2C %3D %25`` (:func:`encode`), and every ``scenario`` given is read through :func:`decode`.
* ``sha256``: for a file, the SHA-256 of its bytes. Loading again refuses a file that changed
  (an edit, another file at that path) instead of building another game under the same name.

A game wrapped from ``Rules`` built in code (:func:`source_of`) records the first source that
builds the same game again, checked in this process (the validated scenario, the rules' facts,
the sizes and bounds). Where none does (game settings overridden, a custom file whose path the
rules do not keep), it records ``<built in code: NAME>``, which loading refuses, saying why.
The scenario's data is not recorded instead: rules built in code need not come from any data
(an attribute changed after building, a data file read beside the scenario), so a rebuild from
a copy could give another game just as silently as the name did.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psygym import edition as registry
from psygym.editions import load
from psygym.generator import RANDOM_PREFIX, is_random
from psygym.scenario import ScenarioError, resolve_path

SHA256 = "sha256"
"""Name of the parameter holding a scenario file's SHA-256 (hex)."""

IN_CODE = "<built in code: "
"""How the ``scenario`` parameter of a game no scenario argument rebuilds begins."""

_ESCAPES = {"%": "%25", "(": "%28", ")": "%29", ",": "%2C", "=": "%3D"}
_ESCAPED = re.compile("%(25|28|29|2C|3D)", re.IGNORECASE)
# A generated scenario's name (generator.short_name): random-3-psykers2-mastery1-2-rounds4.
_GENERATED = re.compile(
    r"random-(?P<seed>\d+)(?:-psykers(?P<psykers>\d+))?(?:-mastery(?P<mastery>\d+-\d+))?"
    r"(?:-rounds(?P<rounds>\d+))?"
)


def encode(text: str) -> str:
    """``text`` with the characters OpenSpiel's game string cannot carry escaped.

    ``,`` becomes ``%2C`` and so on, so that ``pyspiel.load_game(str(game))`` reads the same
    parameter back.
    """
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def decode(text: str) -> str:
    """The inverse of :func:`encode` (other ``%`` sequences are left as they are)."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def edition_id(rules: Any) -> str:
    """The canonical id of the edition of ``rules``."""
    ed = rules.edition
    return str(getattr(ed, "id", ed))


@dataclass(frozen=True)
class Source:
    """The scenario argument a game records (decoded), and a file's SHA-256 (else ``""``)."""

    scenario: str
    sha256: str = ""

    def params(self, edition: str) -> dict[str, str]:
        """The game's OpenSpiel parameters (``sha256`` only for a file)."""
        out = {"edition": edition, "scenario": encode(self.scenario)}
        if self.sha256:
            out[SHA256] = self.sha256
        return out


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_source(edition: str, scenario: str, sha256: str = "") -> tuple[Any, Source]:
    """Build the rules the parameters name, and the source the game records.

    Args:
        edition: edition id or alias.
        scenario: the ``scenario`` parameter (encoded or not: it is read through :func:`decode`).
        sha256: the SHA-256 the file must have (``""``: any).

    Raises:
        ScenarioError: the scenario cannot be loaded, the file's SHA-256 differs, ``sha256``
            is given for a scenario that is not a file, or the game was built in code.
    """
    scenario = decode(scenario)
    if scenario.startswith(IN_CODE):
        raise ScenarioError(
            scenario, "", "this game was wrapped by game_from_rules from rules built in code that "
            "no scenario name or file builds again, so it cannot be loaded from its parameters",
            "wrap the same Rules again with psygym.interop.openspiel.game_from_rules",
        )  # fmt: skip
    ed = registry.get(edition)
    path = None
    if not is_random(scenario):
        name = ed.default_scenario if scenario == "default" else scenario
        path = resolve_path(name, Path(ed.scenario_dir), ed.id)
        bare = len(Path(name).parts) == 1 and not Path(name).suffix
        if bare and path == Path(ed.scenario_dir) / f"{name}.toml":
            scenario, path = name, None  # a shipped name
    if path is None:
        if sha256:
            raise ScenarioError(scenario, SHA256, "is for a scenario file only",
                                "no sha256 for a shipped or generated scenario")  # fmt: skip
        return load(ed.id, scenario), Source(scenario)
    path = path.resolve()
    rules = load(ed.id, path)
    digest = _file_sha256(path)
    if sha256 and digest != sha256.lower():
        raise ScenarioError(
            str(path), "", f"changed since the game was recorded (SHA-256 {digest}, recorded "
            f"{sha256})", "the file as it was recorded, or load it without sha256",
        )  # fmt: skip
    return rules, Source(str(path), digest)


def _candidates(rules: Any, ed: registry.Edition) -> list[str]:
    """Scenario arguments that may build ``rules`` again, the most portable first."""
    name = str(getattr(getattr(rules, "scenario", None), "name", ""))
    out = [name] if name in ed.scenario_names() else []
    given = getattr(rules, "source", None)  # the path or random:... some editions' rules keep
    if isinstance(given, str) and given:
        out.append(given)
    m = _GENERATED.fullmatch(name)
    if m is not None:
        found = m.groupdict()
        seed = found.pop("seed")
        out.append(RANDOM_PREFIX + ",".join([seed, *(f"{k}={v}" for k, v in found.items() if v)]))
    return out


def _same_game(rules: Any, other: Any) -> bool:
    """Whether ``other`` (built from a candidate source) is the game of ``rules``."""
    scenario, facts = getattr(rules, "scenario", None), getattr(rules, "facts", None)
    if scenario is None and facts is None:
        return False  # nothing to compare: a rebuild cannot be trusted
    return (
        type(other) is type(rules)
        and getattr(other, "scenario", None) == scenario
        # The facts hold all a scenario fixes (data files read beside it too); their repr is
        # by value and compared within this process only.
        and repr(getattr(other, "facts", None)) == repr(facts)
        and other.num_actions == rules.num_actions
        and other.observation_size == rules.observation_size
        and other.game_info() == rules.game_info()
    )


def source_of(rules: Any) -> Source:
    """The source a game wrapping ``rules`` records.

    The first candidate (the shipped name, the source the rules keep, the ``random:...`` their
    generated name stands for) that builds the same game again, else ``<built in code: NAME>``,
    which loading refuses.
    """
    edition = edition_id(rules)
    try:
        candidates = _candidates(rules, registry.get(edition))
    except ValueError:  # an edition the registry does not know: nothing can load it again
        candidates = []
    for candidate in candidates:
        try:
            other, source = load_source(edition, candidate)
        except (ValueError, OSError):  # ScenarioError is a ValueError
            continue
        if _same_game(rules, other):
            return source
    name = str(getattr(getattr(rules, "scenario", None), "name", "scenario"))
    return Source(f"{IN_CODE}{name}>")


__all__ = ["IN_CODE", "SHA256", "Source", "decode", "edition_id", "encode", "load_source",
           "source_of"]  # fmt: skip
