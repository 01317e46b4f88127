"""The ladder's keys and store: a key is printed once and only its hash kept, a revoked key stops working at
once, name@version entries are apart, the schema is migrated at start, and a finished game is stored once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tournaments.cli import main
from tournaments.faults import SeatFaults
from tournaments.ladder.keys import KEY_PREFIX, Registry, key_digest, new_key
from tournaments.ladder.store import MIGRATIONS, SCHEMA_VERSION, BotExists, SqliteLadderStore, StoreTooNew


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "ladder.toml"
    cfg.write_text('[ladder]\nvariant = "indian"\nseats = 2\ndata = "data"\nlisten = "127.0.0.1:0"\nweb = ""\n')
    return cfg


def test_keys_are_long_random_and_only_their_hash_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path)
    assert main(["ladder", "bots", "add", "alice", "-c", str(cfg)]) == 0
    key = capsys.readouterr().out.strip().splitlines()[-1]
    assert key.startswith(KEY_PREFIX) and len(key) - len(KEY_PREFIX) >= 32  # 24 random bytes: 192 bits
    raw = (tmp_path / "data" / "ladder.db").read_bytes() + (tmp_path / "data" / "ladder.db-wal").read_bytes() \
        if (tmp_path / "data" / "ladder.db-wal").exists() else (tmp_path / "data" / "ladder.db").read_bytes()
    assert key.encode() not in raw and key_digest(key).encode() in raw
    assert main(["ladder", "bots", "add", "alice", "-c", str(cfg)]) == 2  # alice@1 exists
    assert main(["ladder", "bots", "add", "alice", "--version", "2", "-c", str(cfg)]) == 0
    key2 = capsys.readouterr().out.strip().splitlines()[-1]
    assert key2 != key
    with SqliteLadderStore(tmp_path / "data" / "ladder.db") as store:
        reg = Registry(store.keys())
        a1, a2 = store.find("alice")
    assert (a1.label, a2.label) == ("alice@1", "alice@2")
    assert reg.bot_of(key) == a1.id and reg.bot_of(key2) == a2.id  # each key is its own entry
    assert reg.bot_of(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert reg.bot_of("greedy.abc.0123456789abcdef0123456789abcdef") is None  # a minted-looking token: not a key


def test_a_revoked_key_is_refused_and_its_history_stays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path)
    main(["ladder", "bots", "add", "bob", "-c", str(cfg)])
    key = capsys.readouterr().out.strip().splitlines()[-1]
    db = tmp_path / "data" / "ladder.db"
    with SqliteLadderStore(db) as store:
        reg = Registry(store.keys())
        assert reg.check(key)
        (bob,) = store.find("bob")
        assert reg.key_of(bob.id) == key  # remembered in memory once the bot presented it
    assert main(["ladder", "bots", "revoke", "bob", "-c", str(cfg)]) == 0
    with SqliteLadderStore(db) as store:
        reg.replace(store.keys())
        assert not reg.check(key) and reg.key_of(bob.id) is None
        assert store.find("bob")[0].revoked_at is not None and store.bots() == []
        assert [b.label for b in store.bots(include_revoked=True)] == ["bob@1"]
    assert main(["ladder", "bots", "revoke", "bob", "-c", str(cfg)]) == 2  # nothing left to revoke
    assert main(["ladder", "bots", "add", "bob", "-c", str(cfg)]) == 2  # a label is never reused
    assert main(["ladder", "bots", "add", "bad name", "-c", str(cfg)]) == 2


def test_a_house_bot_needs_a_program_that_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path)
    assert main(["ladder", "bots", "add", "house", "-c", str(cfg), "--", "./nope.sh"]) == 2
    assert main(["ladder", "bots", "add", "house", "-c", str(cfg), "--", "python", "-m", "rummybot.bots.greedy"]) == 0
    out = capsys.readouterr().out
    assert KEY_PREFIX not in out  # a house bot has no key: the ladder starts it
    with SqliteLadderStore(tmp_path / "data" / "ladder.db") as store:
        (h,) = store.bots()
    assert h.kind == "house" and h.command == ("python", "-m", "rummybot.bots.greedy")
    assert main(["ladder", "bots", "list", "-c", str(cfg)]) == 0
    assert "house@1" in capsys.readouterr().out


def test_the_schema_is_versioned_and_migrated_at_start(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    with SqliteLadderStore(db) as store:
        assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)
        assert store.migrate() == SCHEMA_VERSION  # again: nothing to do
    con = sqlite3.connect(db)
    con.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    con.commit()
    con.close()
    with pytest.raises(StoreTooNew):
        SqliteLadderStore(db)


def test_a_game_is_stored_once_with_its_faults(tmp_path: Path) -> None:
    with SqliteLadderStore(tmp_path / "l.db") as store:
        a = store.add_bot("a", "1", "remote", key_digest(new_key()))
        b = store.add_bot("b", "1", "remote", key_digest(new_key()))
        with pytest.raises(BotExists):
            store.add_bot("a", "1", "remote", None)
        store.add_deal("d1", [a.id, b.id], "why: a test")
        faults = [SeatFaults(seat=1, rejected={"CARD_NOT_IN_HAND": 2}, timed_out=1, disconnects=1)]
        args = ("d1|r0", "d1", 0, [a.id, b.id], [[0], [1]], [10, 0], "out", [1], "m1", "", 1.0, faults)
        assert store.record_game(*args) is True
        assert store.record_game(*args) is False  # a replayed write: nothing doubles
        (g,) = store.games()
        assert g.seats == (a.id, b.id) and g.why == "why: a test" and g.forfeited == (1,)
        f = store.faults()
        assert f[b.id].forfeits == 1 and f[b.id].refused == {"CARD_NOT_IN_HAND": 2} and f[b.id].disconnects == 1
        assert f[a.id].total == 0 and f[a.id].games == 1


def _said(capsys: pytest.CaptureFixture[str]) -> str:
    """What the command printed on stderr, on one line (the console wraps long messages)."""
    return " ".join(capsys.readouterr().err.split())


def test_a_house_bot_runs_in_the_folder_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path)
    (tmp_path / "bots" / "g").mkdir(parents=True)
    assert main(["ladder", "bots", "add", "g", "--cwd", str(tmp_path / "bots" / "nope"), "-c", str(cfg), "--",
                 "python", "-m", "rummybot.bots.greedy"]) == 2
    assert "no such folder" in _said(capsys)
    assert main(["ladder", "bots", "add", "g", "--cwd", str(tmp_path / "bots" / "g"), "-c", str(cfg)]) == 2
    assert "give its command" in _said(capsys)  # a remote bot has no folder here
    assert main(["ladder", "bots", "add", "g", "--cwd", str(tmp_path / "bots" / "g"), "-c", str(cfg), "--",
                 "./run.sh"]) == 2  # a relative program is looked for in that folder
    assert "bots/g/run.sh" in _said(capsys).replace(" ", "")
    assert main(["ladder", "bots", "add", "g", "--cwd", str(tmp_path / "bots" / "g"), "-c", str(cfg), "--",
                 "python", "-m", "rummybot.bots.greedy"]) == 0
    with SqliteLadderStore(tmp_path / "data" / "ladder.db") as store:
        (g,) = store.bots()
    assert g.cwd == str(tmp_path / "bots" / "g")
