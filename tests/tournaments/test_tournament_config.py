"""Config: a good file parses; every bad one raises ConfigError naming the key, before anything starts."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tournaments.config import ConfigError, VariantFacts, load_config, parse_config
from tournaments.runner import plan

GOOD = """
[tournament]
variant = "indian"
seats = 2
games_per_pairing = 4
seed = "spring"
output = "results"
time_control = { per_move_ms = 500, bank_ms = 2000 }

[[bots]]
name = "greedy"
command = ["python", "-m", "rummybot.bots.greedy"]
env = { LEVEL = "3" }

[[bots]]
name = "random"
command = ["python", "-m", "rummybot.bots.random_bot"]
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.toml"
    p.write_text(textwrap.dedent(text))
    return p


def test_a_good_config_parses_with_paths_relative_to_the_file(tmp_path: Path) -> None:
    c = load_config(_write(tmp_path, GOOD))
    assert c.variant == "indian" and c.seats == 2 and c.games_per_pairing == 4
    assert c.output == tmp_path / "results"
    assert c.time_control.per_move_ms == 500 and c.time_control.bank_ms == 2000
    assert c.bot("greedy").env == {"LEVEL": "3"}
    assert c.concurrency == (os.cpu_count() or 1)
    assert c.schedule == "round-robin"
    assert len(plan(c).games) == 1 * 2 * 4


def _facts(name: str) -> VariantFacts:
    if name == "ffa":
        return VariantFacts("ffa", 2, 4, False)
    if name == "teams":
        return VariantFacts("teams", 4, 4, True)
    raise LookupError(f"no variant {name!r}; known: ffa, teams")


def _base(**tournament: Any) -> dict[str, Any]:
    t = {"variant": "ffa", "games_per_pairing": 2, **tournament}
    return {
        "tournament": {k: v for k, v in t.items() if v is not None},
        "bots": [{"name": "a", "command": ["x"]}, {"name": "b", "command": ["y"]}, {"name": "c", "command": ["z"]}],
    }


def _with_bots(bots: Any, **t: Any) -> dict[str, Any]:
    d = _base(**t)
    d["bots"] = bots
    return d


CASES: list[tuple[str, dict[str, Any], str, str]] = [
    ("no tournament table", {"bots": _base()["bots"]}, "tournament", "missing"),
    ("no bots", {"tournament": _base()["tournament"]}, "bots", "missing"),
    ("one bot", _with_bots([{"name": "a", "command": ["x"]}]), "bots", "at least 2"),
    ("unknown top-level key", {**_base(), "bot": []}, "bot", "did you mean bots"),
    ("misspelt key", _base(games_per_pair=3), "tournament.games_per_pair", "did you mean tournament.games_per_pairing"),
    ("unknown variant", _base(variant="gin"), "tournament.variant", "no variant 'gin'"),
    ("variant not a string", _base(variant=3), "tournament.variant", "non-empty string"),
    ("games missing", _base(games_per_pairing=None), "tournament.games_per_pairing", "missing"),
    ("games zero", _base(games_per_pairing=0), "tournament.games_per_pairing", "at least 1"),
    ("games a string", _base(games_per_pairing="10"), "tournament.games_per_pairing", "must be an integer"),
    ("seats out of range", _base(seats=7), "tournament.seats", "2 to 4 players"),
    ("seats a float", _base(seats=2.5), "tournament.seats", "integer"),
    ("odd seats for teams", _base(variant="teams", seats=3), "tournament.seats", "4 to 4"),
    ("more seats than bots", _base(seats=4), "bots", "at least 4 bots"),
    ("bad schedule", _base(schedule="swiss"), "tournament.schedule", "not one of"),
    ("gauntlet without candidates", _base(schedule="gauntlet"), "tournament.candidates", "at least one candidate"),
    ("unknown candidate", _base(schedule="gauntlet", candidates=["zed"]), "tournament.candidates", "no bot named 'zed'"),
    ("candidates in a round-robin", _base(candidates=["a"]), "tournament.candidates", "only a gauntlet"),
    ("continuing ladder with candidates", _base(schedule="ladder", games=10, candidates=["a"]), "tournament.candidates", "no candidates"),
    ("ladder pool missing", _base(schedule="ladder", pool="nope.sqlite", games=10), "tournament.pool", "no results database"),
    ("concurrency zero", _base(concurrency=0), "tournament.concurrency", "at least 1"),
    ("negative per-move", _base(time_control={"per_move_ms": -5}), "tournament.time_control.per_move_ms", "at least 0"),
    ("time control typo", _base(time_control={"per_move": 5}), "tournament.time_control.per_move", "did you mean"),
    ("time control not a table", _base(time_control=500), "tournament.time_control", "must be a table"),
    ("options not a table", _base(options="x"), "tournament.options", "must be a table"),
    ("option a list", _base(options={"format": [1]}), "tournament.options.format", "string or a number"),
    ("seed a list", _base(seed=[1]), "tournament.seed", "string or an integer"),
    ("max hands zero", _base(max_hands=0), "tournament.max_hands", "at least 1"),
    ("timeout negative", _base(match_timeout_s=-1), "tournament.match_timeout_s", "positive"),
    ("per-match not a bool", _base(process_per_match="yes"), "tournament.process_per_match", "true or false"),
    ("bot without name", _with_bots([{"command": ["x"]}, {"name": "b", "command": ["y"]}]), "bots[0].name", "missing"),
    ("duplicate bot", _with_bots([{"name": "a", "command": ["x"]}, {"name": "a", "command": ["y"]}]), "bots[1].name", "unique"),
    ("bad bot name", _with_bots([{"name": "a b/c", "command": ["x"]}, {"name": "b", "command": ["y"]}]), "bots[0].name", "not a usable name"),
    ("command a string", _with_bots([{"name": "a", "command": "python bot.py"}, {"name": "b", "command": ["y"]}]), "bots[0].command", "list of strings"),
    ("command empty", _with_bots([{"name": "a", "command": []}, {"name": "b", "command": ["y"]}]), "bots[0].command", "non-empty list"),
    ("command with a number", _with_bots([{"name": "a", "command": ["x", 3]}, {"name": "b", "command": ["y"]}]), "bots[0].command", "non-empty strings"),
    ("cwd missing", _with_bots([{"name": "a", "command": ["x"], "cwd": "no/such/dir"}, {"name": "b", "command": ["y"]}]), "bots[0].cwd", "no such directory"),
    ("env not a table", _with_bots([{"name": "a", "command": ["x"], "env": ["A=1"]}, {"name": "b", "command": ["y"]}]), "bots[0].env", "table"),
    ("env value a table", _with_bots([{"name": "a", "command": ["x"], "env": {"A": {}}}, {"name": "b", "command": ["y"]}]), "bots[0].env.A", "string"),
    ("bot key typo", _with_bots([{"name": "a", "cmd": ["x"]}, {"name": "b", "command": ["y"]}]), "bots[0].cmd", "unknown key"),
    ("processes zero", _with_bots([{"name": "a", "command": ["x"], "processes": 0}, {"name": "b", "command": ["y"]}]), "bots[0].processes", "at least 1"),
    ("anchor unknown", {**_base(), "ratings": {"anchor": "zed"}}, "ratings.anchor", "no bot named 'zed'"),
    ("anchor rating text", {**_base(), "ratings": {"anchor": "a", "anchor_rating": "high"}}, "ratings.anchor_rating", "number"),
]


@pytest.mark.parametrize(("what", "data", "key", "problem"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_config_names_the_key_and_the_problem(tmp_path: Path, what: str, data: dict[str, Any], key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(data, base_dir=tmp_path, variants=_facts)
    assert info.value.key == key, str(info.value)
    assert problem in info.value.problem, str(info.value)
    assert str(info.value).startswith(f"{key}: ")


def test_variant_options_are_checked_by_the_variant(tmp_path: Path) -> None:
    """The real registry rejects an unknown option of a real variant, under tournament.options."""
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, GOOD.replace('seats = 2', 'seats = 2\noptions = { colour = "red" }')))
    assert info.value.key == "tournament.options" and "colour" in info.value.problem


def test_unreadable_and_invalid_toml_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(_write(tmp_path, "[tournament\nvariant = 1"))


def test_team_variants_default_to_four_seats(tmp_path: Path) -> None:
    c = parse_config(_base(variant="teams"), base_dir=tmp_path, variants=_facts)
    assert c.seats == 4 and c.team_play
