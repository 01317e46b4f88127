"""Tournament configuration: a TOML file read with ``tomllib`` and checked whole before anything starts.

Every mistake raises :class:`ConfigError` naming the key (``tournament.seats``, ``bots[2].command``) and what
is wrong with it. Every relative path is relative to the config file's folder, wherever the runner is started:
``output``, ``pool``, a bot's ``cwd``, and (since a bot runs in its ``cwd``, which defaults to that folder) the
paths in a bot's ``command``.

    [tournament]
    variant = "indian"
    options = { format = "points" }
    seats = 2
    games_per_pairing = 20          # deal seeds per pairing; each deal is played once per seat rotation
    schedule = "round-robin"        # or "gauntlet" (candidates vs the rest), "ladder" (new bots vs a rated pool),
                                    # "sprt" (two bots, until [tournament.sprt] decides or games_per_pairing deals)
    concurrency = 4                 # matches at once; default: os.cpu_count()
    seed = "spring"
    output = "results/spring"
    time_control = { per_move_ms = 1000, bank_ms = 0 }
    sandbox = "bwrap"               # or "none"; default: "bwrap" where bubblewrap works (tournaments/sandbox.py)
    limits = { memory_mb = 2048, processes = 256, cpu_cores = 1.0, cpu_time_s = 3600 }  # per bot process

    [[bots]]
    name = "greedy"
    command = ["python", "-m", "rummybot.bots.greedy"]
    # sandbox = "none", limits = { memory_mb = 4096 }, binds = ["../shared-data"]   (per bot, read-only binds)
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ConfigError",
    "BotSpec",
    "TimeControl",
    "RatingOptions",
    "SprtOptions",
    "TournamentConfig",
    "VariantFacts",
    "SCHEDULES",
    "load_config",
    "parse_config",
    "registry_facts",
]

SCHEDULES = ("round-robin", "gauntlet", "ladder", "sprt")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class ConfigError(ValueError):
    """A bad tournament config: ``key`` names the setting, ``problem`` says what is wrong with it."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


@dataclass(frozen=True)
class BotSpec:
    """A bot: a command line (any language) run with ``--referee ADDRESS`` appended and its token in the
    environment (``RUMMY_BOT_TOKEN``; never on the command line, which every local process can read)."""

    name: str
    command: tuple[str, ...]
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    processes: int = 1  # persistent processes of this bot; each plays many matches at once over one stream
    sandbox: str | None = None  # "bwrap" | "none"; None: the tournament's choice
    limits: Mapping[str, int | float] = field(default_factory=dict)  # overrides of the tournament's limits
    binds: tuple[Path, ...] = ()  # more paths the sandboxed bot may read


@dataclass(frozen=True)
class TimeControl:
    per_move_ms: int = 0  # 0: the referee's default
    bank_ms: int = 0
    grace_ms: int = 0  # 0: the referee's default
    connect_ms: int = 5000  # a bot that has not joined by then forfeits its seat; 0: the referee's default


@dataclass(frozen=True)
class RatingOptions:
    """How ratings are reported: by default the mean rating is ``average``; or ``anchor`` is held at
    ``anchor_rating``."""

    anchor: str | None = None
    anchor_rating: float = 1500.0
    average: float = 0.0


@dataclass(frozen=True)
class SprtOptions:
    """An SPRT between ``candidate`` and ``baseline``: H0 says the candidate is ``elo0`` better, H1 ``elo1``."""

    candidate: str
    baseline: str
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05


@dataclass(frozen=True)
class VariantFacts:
    """What the harness must know of a variant to schedule it."""

    name: str
    min_seats: int
    max_seats: int
    team_play: bool
    check_options: Callable[[Mapping[str, str], int], None] = lambda _o, _s: None  # raises on a bad option


@dataclass(frozen=True)
class TournamentConfig:
    bots: tuple[BotSpec, ...]
    variant: str
    seats: int
    team_play: bool
    games_per_pairing: int
    schedule: str = "round-robin"
    options: Mapping[str, str] = field(default_factory=dict)
    candidates: tuple[str, ...] = ()
    pool: Path | None = None  # ladder: the results database of a previous tournament; None: a continuing ladder
    games: int | None = None  # ladder: games each new bot plays against the pool
    time_control: TimeControl = TimeControl()
    concurrency: int = 1
    seed: str = "0"
    output: Path = Path("tournament-output")
    max_turns_per_hand: int | None = None
    max_hands: int | None = None
    forfeit_after: int | None = None  # consecutive missed turns that forfeit a seat; None: the variant's default
    process_per_match: bool = False  # start each bot afresh for every seat (--match ID --token T) instead
    match_timeout_s: float = 3600.0  # a match still unfinished after this is abandoned (and replayed next run)
    ratings: RatingOptions = RatingOptions()
    sprt: SprtOptions | None = None  # schedule "sprt": the test; games_per_pairing caps its deals
    source: Path | None = None  # the file it was read from
    sandbox: str | None = None  # "bwrap" | "none" for every bot; None: bwrap where it works (tournaments.sandbox)
    limits: Mapping[str, int | float] = field(default_factory=dict)  # per bot process (sandbox.Limits keys)

    def bot(self, name: str) -> BotSpec:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bots)

    def fingerprint(self) -> dict[str, Any]:
        """What a results database must have been played with for a rerun to resume into it."""
        return {
            "variant": self.variant,
            "options": dict(sorted(self.options.items())),
            "seats": self.seats,
            "seed": self.seed,
            "max_turns_per_hand": self.max_turns_per_hand,
            "max_hands": self.max_hands,
            "time_control": [self.time_control.per_move_ms, self.time_control.bank_ms],
        }


# ------------------------------------------------------------------------------------------ variants


def registry_facts(name: str) -> VariantFacts:
    """The variant's facts from the referee's own registry. :raises LookupError: naming the known variants."""
    from referee.rules.errors import InvalidOption
    from referee.rules.variants import find

    try:
        v = find(name)
    except InvalidOption as exc:
        raise LookupError(exc.message) from exc

    def check(options: Mapping[str, str], seats: int) -> None:
        try:
            v.configure(options, seats)
        except InvalidOption as exc:
            raise ValueError(exc.message) from exc

    return VariantFacts(v.name, v.min_seats, v.max_seats, bool(v.team_play), check)


# ------------------------------------------------------------------------------------------ reading


def load_config(path: str | os.PathLike[str], variants: Callable[[str], VariantFacts] = registry_facts) -> TournamentConfig:
    """Read and check a tournament TOML file. :raises ConfigError: naming the key at fault."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("config", f"cannot read {p}: {exc.strerror or exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("config", f"{p} is not valid TOML: {exc}") from exc
    return parse_config(data, base_dir=p.resolve().parent, variants=variants, source=p)


def parse_config(
    data: Mapping[str, Any],
    base_dir: Path | None = None,
    variants: Callable[[str], VariantFacts] = registry_facts,
    source: Path | None = None,
) -> TournamentConfig:
    """Check a parsed TOML document and build the config. :raises ConfigError: naming the key at fault."""
    base = base_dir or Path.cwd()
    _no_unknown(data, "", ("tournament", "bots", "ratings"))
    bots = _bots(data.get("bots"), base)
    names = tuple(b.name for b in bots)

    t = data.get("tournament")
    if not isinstance(t, Mapping):
        raise ConfigError("tournament", "missing: a [tournament] table is required (variant, games_per_pairing, ...)")
    _no_unknown(
        t,
        "tournament.",
        (
            "variant", "options", "seats", "games_per_pairing", "schedule", "candidates", "pool", "games",
            "time_control", "concurrency", "seed", "output", "max_turns_per_hand", "max_hands", "forfeit_after",
            "match_timeout_s", "process_per_match", "sprt", "sandbox", "limits",
        ),
    )

    variant_name = _string(t, "tournament.variant", "variant", required=True)
    assert variant_name is not None
    try:
        facts = variants(variant_name)
    except LookupError as exc:
        raise ConfigError("tournament.variant", str(exc.args[0] if exc.args else exc)) from exc

    options = _options(t.get("options", {}))
    seats_default = 4 if facts.team_play and facts.min_seats <= 4 <= facts.max_seats else facts.min_seats
    seats = _int(t, "tournament.seats", "seats", default=seats_default, minimum=2)
    assert seats is not None
    if not facts.min_seats <= seats <= facts.max_seats:
        raise ConfigError("tournament.seats", f"{facts.name} is for {facts.min_seats} to {facts.max_seats} players, not {seats}")
    if facts.team_play and seats % 2:
        raise ConfigError("tournament.seats", f"{facts.name} is a partnership game: seats must be even, not {seats}")
    try:
        facts.check_options(options, seats)
    except ValueError as exc:
        raise ConfigError("tournament.options", str(exc)) from exc

    gpp = _int(t, "tournament.games_per_pairing", "games_per_pairing", required=True, minimum=1)
    assert gpp is not None
    schedule = _string(t, "tournament.schedule", "schedule", default="round-robin")
    assert schedule is not None
    if schedule not in SCHEDULES:
        raise ConfigError("tournament.schedule", f"{schedule!r} is not one of {', '.join(SCHEDULES)}")

    candidates = _names(t, "tournament.candidates", "candidates", names)
    if "sprt" in t and schedule != "sprt":
        raise ConfigError("tournament.sprt", f"only an SPRT schedule has SPRT settings; this is a {schedule}")
    sprt: SprtOptions | None = None
    pool: Path | None = None
    games: int | None = None
    table_bots = 2 if facts.team_play else seats
    if schedule == "round-robin":
        if candidates:
            raise ConfigError("tournament.candidates", "only a gauntlet or a ladder has candidates; this is a round-robin")
        if len(names) < table_bots:
            raise ConfigError("bots", f"a round-robin of {table_bots}-bot tables needs at least {table_bots} bots, not {len(names)}")
    elif schedule == "gauntlet":
        if not candidates:
            raise ConfigError("tournament.candidates", "a gauntlet needs at least one candidate (the bots that play the rest)")
        rest = len(names) - len(candidates)
        if rest < table_bots - 1:
            raise ConfigError("tournament.candidates", f"a gauntlet with {table_bots}-bot tables needs at least {table_bots - 1} bots that are not candidates, not {rest}")
    elif schedule == "sprt":
        sprt = _sprt(t.get("sprt", {}), names, candidates)
        if table_bots != 2:
            raise ConfigError("tournament.seats", f"an SPRT compares two bots at 2-bot tables: seats = 2 or a partnership variant, not {seats}")
    else:  # ladder
        pool_s = _string(t, "tournament.pool", "pool")  # none: a continuing ladder, its pool in its own output
        if pool_s is not None:
            pool = _path(pool_s, base)
            if not pool.is_file():
                raise ConfigError("tournament.pool", f"no results database at {pool} (a ladder rates new bots against a previous tournament's pool)")
        elif candidates:
            raise ConfigError("tournament.candidates", "a continuing ladder (no pool) has no candidates: add bots with `tournament ladder add`")
        games = _int(t, "tournament.games", "games", required=True, minimum=1)

    tc = t.get("time_control", {})
    if not isinstance(tc, Mapping):
        raise ConfigError("tournament.time_control", "must be a table: { per_move_ms = ..., bank_ms = ... }")
    _no_unknown(tc, "tournament.time_control.", ("per_move_ms", "bank_ms", "grace_ms", "connect_ms"))
    time_control = TimeControl(
        per_move_ms=_int(tc, "tournament.time_control.per_move_ms", "per_move_ms", default=0, minimum=0) or 0,
        bank_ms=_int(tc, "tournament.time_control.bank_ms", "bank_ms", default=0, minimum=0) or 0,
        grace_ms=_int(tc, "tournament.time_control.grace_ms", "grace_ms", default=0, minimum=0) or 0,
        connect_ms=_int(tc, "tournament.time_control.connect_ms", "connect_ms", default=5000, minimum=0) or 0,
    )

    concurrency = _int(t, "tournament.concurrency", "concurrency", default=os.cpu_count() or 1, minimum=1)
    seed_v = t.get("seed", "0")
    if isinstance(seed_v, bool) or not isinstance(seed_v, (str, int)):
        raise ConfigError("tournament.seed", f"must be a string or an integer, not {_show(seed_v)}")
    output = _path(_string(t, "tournament.output", "output", default=f"{source.stem if source else 'tournament'}-output") or "", base)
    timeout = t.get("match_timeout_s", 3600.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ConfigError("tournament.match_timeout_s", f"must be a positive number of seconds, not {_show(timeout)}")

    ratings = _ratings(data.get("ratings", {}), names)
    return TournamentConfig(
        bots=bots,
        variant=facts.name,
        seats=seats,
        team_play=facts.team_play,
        games_per_pairing=gpp,
        schedule=schedule,
        options=options,
        candidates=candidates,
        pool=pool,
        games=games,
        time_control=time_control,
        concurrency=concurrency or 1,
        seed=str(seed_v),
        output=output,
        max_turns_per_hand=_int(t, "tournament.max_turns_per_hand", "max_turns_per_hand", minimum=1),
        max_hands=_int(t, "tournament.max_hands", "max_hands", minimum=1),
        forfeit_after=_int(t, "tournament.forfeit_after", "forfeit_after", minimum=1),
        process_per_match=_bool(t, "tournament.process_per_match", "process_per_match", default=False),
        match_timeout_s=float(timeout),
        ratings=ratings,
        sprt=sprt,
        source=source,
        sandbox=_sandbox(t, "tournament.sandbox"),
        limits=_limits(t.get("limits", {}), "tournament.limits"),
    )


def _bots(value: Any, base: Path) -> tuple[BotSpec, ...]:
    if value is None:
        raise ConfigError("bots", "missing: add [[bots]] tables, each with a name and a command")
    if not isinstance(value, list) or not all(isinstance(b, Mapping) for b in value):
        raise ConfigError("bots", "must be an array of tables: [[bots]] name = ..., command = [...]")
    if len(value) < 2:
        raise ConfigError("bots", f"a tournament needs at least 2 bots, not {len(value)}")
    out: list[BotSpec] = []
    seen: set[str] = set()
    for i, b in enumerate(value):
        where = f"bots[{i}]"
        _no_unknown(b, f"{where}.", ("name", "command", "cwd", "env", "processes", "sandbox", "limits", "binds"))
        name = _string(b, f"{where}.name", "name", required=True)
        assert name is not None
        if not _NAME.match(name):
            raise ConfigError(f"{where}.name", f"{name!r} is not a usable name: letters, digits, '_', '.', '-' (it names log files)")
        if name in seen:
            raise ConfigError(f"{where}.name", f"{name!r} is used by another bot; names must be unique")
        seen.add(name)
        cmd = b.get("command")
        if isinstance(cmd, str):
            raise ConfigError(f"{where}.command", f"must be a list of strings, e.g. {cmd.split()!r}, not one string")
        if not isinstance(cmd, list) or not cmd or not all(isinstance(c, str) and c for c in cmd):
            raise ConfigError(f"{where}.command", f"must be a non-empty list of non-empty strings, not {_show(cmd)}")
        cwd = base  # relative paths in the command then resolve against the config's folder, as every other path
        if "cwd" in b:
            cwd_s = _string(b, f"{where}.cwd", "cwd")
            assert cwd_s is not None
            cwd = _path(cwd_s, base)
            if not cwd.is_dir():
                raise ConfigError(f"{where}.cwd", f"no such directory: {cwd}")
        env_v = b.get("env", {})
        if not isinstance(env_v, Mapping):
            raise ConfigError(f"{where}.env", "must be a table of NAME = \"value\"")
        env: dict[str, str] = {}
        for k, v in env_v.items():
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise ConfigError(f"{where}.env.{k}", f"must be a string, not {_show(v)}")
            env[str(k)] = str(v)
        processes = _int(b, f"{where}.processes", "processes", default=1, minimum=1)
        binds_v = b.get("binds", [])
        if not isinstance(binds_v, list) or not all(isinstance(x, str) and x for x in binds_v):
            raise ConfigError(f"{where}.binds", f"must be a list of paths the sandboxed bot may read, not {_show(binds_v)}")
        binds = tuple(_path(x, base) for x in binds_v)
        for x in binds:
            if not x.exists():
                raise ConfigError(f"{where}.binds", f"no such file or folder: {x}")
        out.append(BotSpec(name, tuple(cmd), cwd, env, processes or 1, _sandbox(b, f"{where}.sandbox"),
                           _limits(b.get("limits", {}), f"{where}.limits"), binds))
    return tuple(out)


def _sandbox(table: Mapping[str, Any], key: str) -> str | None:
    v = table.get("sandbox")
    if v is None:
        return None
    if v not in ("bwrap", "none"):
        raise ConfigError(key, f'must be "bwrap" (bubblewrap) or "none", not {_show(v)}')
    return str(v)


_LIMITS = {"memory_mb": int, "processes": int, "cpu_time_s": int, "cpu_cores": float}


def _limits(value: Any, key: str) -> dict[str, int | float]:
    """A sandbox's limits table: each a non-negative number (0 turns it off)."""
    if not isinstance(value, Mapping):
        raise ConfigError(key, "must be a table: { memory_mb = 2048, processes = 256, cpu_cores = 1.0, cpu_time_s = 3600 }")
    _no_unknown(value, f"{key}.", tuple(_LIMITS))
    out: dict[str, int | float] = {}
    for name, v in value.items():
        kind = _LIMITS[name]
        ok = not isinstance(v, bool) and (isinstance(v, int) if kind is int else isinstance(v, (int, float)))
        if not ok or v < 0:
            what = "a whole number" if kind is int else "a number"
            raise ConfigError(f"{key}.{name}", f"must be {what} of at least 0 (0: no limit), not {_show(v)}")
        if name == "memory_mb" and 0 < v < 16:
            raise ConfigError(f"{key}.{name}", f"{v} MB cannot run a bot; give at least 16 (or 0: no limit)")
        if name == "processes" and 0 < v < 4:
            raise ConfigError(f"{key}.{name}", f"{v} cannot run a bot (bwrap alone takes 2); give at least 4 (or 0: no limit)")
        out[name] = kind(v)
    return out


def _ratings(value: Any, names: tuple[str, ...]) -> RatingOptions:
    if not isinstance(value, Mapping):
        raise ConfigError("ratings", "must be a table: [ratings] anchor = \"name\", anchor_rating = 1500")
    _no_unknown(value, "ratings.", ("anchor", "anchor_rating", "average"))
    anchor = _string(value, "ratings.anchor", "anchor")
    if anchor is not None and anchor not in names:
        raise ConfigError("ratings.anchor", f"no bot named {anchor!r}; bots: {', '.join(names)}")
    nums = {}
    for key, default in (("anchor_rating", 1500.0), ("average", 0.0)):
        v = value.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ConfigError(f"ratings.{key}", f"must be a number, not {_show(v)}")
        nums[key] = float(v)
    return RatingOptions(anchor, nums["anchor_rating"], nums["average"])


def _sprt(value: Any, names: tuple[str, ...], candidates: tuple[str, ...]) -> SprtOptions:
    if not isinstance(value, Mapping):
        raise ConfigError("tournament.sprt", "must be a table: { elo0 = 0, elo1 = 10, alpha = 0.05, beta = 0.05 }")
    _no_unknown(value, "tournament.sprt.", ("elo0", "elo1", "alpha", "beta"))
    if len(names) != 2:
        raise ConfigError("bots", f"an SPRT compares exactly 2 bots, not {len(names)}")
    if len(candidates) > 1:
        raise ConfigError("tournament.candidates", "an SPRT has one candidate (the other bot is its baseline)")
    candidate = candidates[0] if candidates else names[0]
    baseline = next(n for n in names if n != candidate)
    nums: dict[str, float] = {}
    for key, default in (("elo0", 0.0), ("elo1", 10.0), ("alpha", 0.05), ("beta", 0.05)):
        v = value.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ConfigError(f"tournament.sprt.{key}", f"must be a number, not {_show(v)}")
        nums[key] = float(v)
    from tournaments.sprt import SprtParameters

    try:
        SprtParameters(nums["elo0"], nums["elo1"], nums["alpha"], nums["beta"])
    except ValueError as exc:
        raise ConfigError("tournament.sprt", str(exc)) from exc
    return SprtOptions(candidate, baseline, **nums)


def _options(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ConfigError("tournament.options", "must be a table of option = value (e.g. { format = \"points\" })")
    out: dict[str, str] = {}
    for k, v in value.items():
        if isinstance(v, bool):
            out[str(k)] = "true" if v else "false"
        elif isinstance(v, (str, int, float)):
            out[str(k)] = str(v)
        else:
            raise ConfigError(f"tournament.options.{k}", f"must be a string or a number, not {_show(v)}")
    return out


def _no_unknown(table: Mapping[str, Any], prefix: str, known: tuple[str, ...]) -> None:
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {prefix}{close[0]}?" if close else f"; known keys: {', '.join(known)}"
            raise ConfigError(f"{prefix}{key}", f"unknown key{hint}")


def _string(table: Mapping[str, Any], key: str, name: str, required: bool = False, default: str | None = None) -> str | None:
    if name not in table:
        if required:
            raise ConfigError(key, "missing (required)")
        return default
    v = table[name]
    if not isinstance(v, str) or not v.strip():
        raise ConfigError(key, f"must be a non-empty string, not {_show(v)}")
    return v.strip()


def _int(table: Mapping[str, Any], key: str, name: str, required: bool = False, default: int | None = None, minimum: int | None = None) -> int | None:
    if name not in table:
        if required:
            raise ConfigError(key, "missing (required)")
        return default
    v = table[name]
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(key, f"must be an integer, not {_show(v)}")
    if minimum is not None and v < minimum:
        raise ConfigError(key, f"must be at least {minimum}, not {v}")
    return v


def _bool(table: Mapping[str, Any], key: str, name: str, default: bool) -> bool:
    v = table.get(name, default)
    if not isinstance(v, bool):
        raise ConfigError(key, f"must be true or false, not {_show(v)}")
    return v


def _names(table: Mapping[str, Any], key: str, name: str, bots: tuple[str, ...]) -> tuple[str, ...]:
    v = table.get(name, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(key, f"must be a list of bot names, not {_show(v)}")
    for x in v:
        if x not in bots:
            raise ConfigError(key, f"no bot named {x!r}; bots: {', '.join(bots)}")
    if len(set(v)) != len(v):
        raise ConfigError(key, "names a bot twice")
    return tuple(v)


def _path(value: str, base: Path) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else (base / p)


def _show(v: Any) -> str:
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    for t, word in kind.items():
        if type(v) is t:
            return f"{word} ({v!r})" if t is not dict else word
    return "nothing" if v is None else type(v).__name__
