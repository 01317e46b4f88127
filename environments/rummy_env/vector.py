"""Batched self-play: many games stepped in one call, observations and masks written into preallocated arrays.

``BatchEnv("fortune", num_envs=64, num_players=4)``: ``reset()`` and ``step(ids)`` return the observation and mask of
the seat to act in each game (``obs[B, size]``, ``mask[B, actions]``, ``seat[B]``), the points each seat got
(``rewards[B, seats]``) and which games ended (a game that ends starts afresh in the same call, as Gymnasium's vector
envs do). Every array is written in place: the learner reads the same buffers at every step, no copies.

``ProcessBatchEnv(..., workers=2)`` is the same API over worker processes: each steps its share of the games and
writes straight into shared memory, so the parent only writes the ids and waits (one core per worker: a step of a
game is Python, and one interpreter runs on one core).
"""

from __future__ import annotations

import multiprocessing as mp
import traceback
from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from rummy_env.game import RummyGame
from rummy_env.observation import as_positions, as_values, layout, observation_entries

__all__ = ["BatchEnv", "ProcessBatchEnv"]

Arrays = dict[str, np.ndarray]


def _shapes(variant: str, num_envs: int, num_players: int) -> dict[str, tuple[tuple[int, ...], Any]]:
    lay = layout(variant, num_players)
    return {"obs": ((num_envs, lay.size), np.float32), "mask": ((num_envs, lay.space.size), np.int8),
            "seat": ((num_envs,), np.int64), "rewards": ((num_envs, num_players), np.float32),
            "dones": ((num_envs,), np.bool_), "ids": ((num_envs,), np.int64)}


class BatchEnv:
    def __init__(self, variant: str, num_envs: int, num_players: int, max_hands: int = 1, known_cards: bool = True,
                 seed: int = 0, seed_prefix: str = "batch", arrays: Arrays | None = None, **options: Any) -> None:
        self.variant = variant
        self.num_envs = num_envs
        self.num_players = num_players
        self.options = options
        self.max_hands = max_hands
        self.known = known_cards
        self._next_seed = seed
        self._prefix = seed_prefix
        self.layout = layout(variant, num_players)
        self.games: list[RummyGame] = []
        a = arrays if arrays is not None else {k: np.zeros(shape, dtype=dt) for k, (shape, dt) in
                                               _shapes(variant, num_envs, num_players).items()}
        if not (a["obs"].flags.c_contiguous and a["mask"].flags.c_contiguous):
            raise ValueError("the observation and mask arrays must be C-contiguous (written through a flat view)")
        self.obs, self.mask, self.seat = a["obs"], a["mask"], a["seat"]
        self.rewards, self.dones = a["rewards"], a["dones"]

    def _new(self) -> RummyGame:
        self._next_seed += 1
        return RummyGame(self.variant, self.num_players, self.options, seed=f"{self._prefix}:{self._next_seed}",
                         max_hands=self.max_hands)

    def _write(self) -> None:
        """Every game's observation and mask: each row starts as the copy of its seat's kept melds tensor, then each
        array is written by one numpy assignment for the whole batch (numpy's per-call cost, paid per game, was as
        much as the values' own)."""
        obs_idx: list[int] = []
        obs_val: list[float] = []
        mask_idx: list[int] = []
        size, actions = self.layout.size, self.layout.space.size
        obs = self.obs
        for b, g in enumerate(self.games):
            s = g.current_seat
            self.seat[b] = s
            known = g.known_cards(s) if self.known else []
            memo = g.memo(s)
            i, v = observation_entries(g.view(s), known, g.chooser().prefix, b * size, memo=memo)
            obs[b] = memo["dense"]  # the melds (``observation_tensor``), then the rest written over
            obs_idx += i
            obs_val += v
            base = b * actions
            mask_idx += [base + a for a in g.legal_ids()]
        obs.reshape(-1)[as_positions(obs_idx)] = as_values(obs_val)
        self.mask.fill(0)
        self.mask.reshape(-1)[as_positions(mask_idx)] = 1

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.games = [self._new() for _ in range(self.num_envs)]
        self._write()
        return self.obs, self.mask, self.seat

    def step(self, ids: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One id per game. :raises ActionCodeError: for an id its game's mask does not allow."""
        self.rewards.fill(0.0)
        self.dones.fill(False)
        for b, action_id in enumerate(ids):
            g = self.games[b]
            result = g.step(int(action_id))
            if result.action is not None:
                self.rewards[b] = result.rewards
            if result.game_over:
                self.dones[b] = True
                self.games[b] = self._new()
        self._write()
        return self.obs, self.mask, self.seat, self.rewards, self.dones

    def random_ids(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random allowed id for every game (a baseline policy, and the benchmark's)."""
        return random_ids(self.mask, rng)


def random_ids(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = rng.random(mask.shape) * mask
    return np.asarray(noise.argmax(axis=1))


class WorkerError(RuntimeError):
    """A worker's game failed (an id its mask did not allow, or a bug): the worker's traceback, as text."""


def _worker(conn: Connection, names: dict[str, str], shapes: dict[str, tuple[tuple[int, ...], str]], lo: int, hi: int,
            kwargs: dict[str, Any]) -> None:
    """Steps games ``lo..hi-1`` of the batch on the parent's word, in the shared arrays."""
    blocks = {k: SharedMemory(name=n) for k, n in names.items()}
    arrays: Arrays = {}
    env: BatchEnv | None = None
    try:
        arrays = {k: np.ndarray(shape, dtype=np.dtype(dt), buffer=blocks[k].buf)[lo:hi]
                  for k, (shape, dt) in shapes.items()}
        env = BatchEnv(num_envs=hi - lo, arrays=arrays, **kwargs)
        while True:
            what = conn.recv()
            try:
                if what == "reset":
                    env.reset()
                elif what == "step":
                    env.step(arrays["ids"])
                else:
                    break
                conn.send(None)
            except Exception:  # noqa: BLE001 - told to the parent, which raises it
                conn.send(traceback.format_exc())
    finally:
        env = None
        arrays.clear()
        for b in blocks.values():
            _close(b)


def _close(block: SharedMemory) -> None:
    try:
        block.close()
    except BufferError:  # an array over it is still held (by the caller): the mapping goes with the process
        pass


class ProcessBatchEnv:
    """``BatchEnv``'s API over ``workers`` processes sharing the arrays. Close it (or use ``with``): the workers and
    the shared memory go with it."""

    def __init__(self, variant: str, num_envs: int, num_players: int, workers: int = 2, max_hands: int = 1,
                 known_cards: bool = True, seed: int = 0, **options: Any) -> None:
        if not 1 <= workers <= num_envs:
            raise ValueError(f"workers is 1 to num_envs ({num_envs}), not {workers}")
        self.layout = layout(variant, num_players)
        self.num_envs = num_envs
        shapes = _shapes(variant, num_envs, num_players)
        self._blocks: list[SharedMemory] = []
        self._arrays: Arrays = {}
        for k, (shape, dt) in shapes.items():
            size = int(np.prod(shape)) * np.dtype(dt).itemsize
            block = SharedMemory(create=True, size=max(size, 1))
            self._blocks.append(block)
            self._arrays[k] = np.ndarray(shape, dtype=dt, buffer=block.buf)
            self._arrays[k].fill(0)
        self.obs, self.mask, self.seat = self._arrays["obs"], self._arrays["mask"], self._arrays["seat"]
        self.rewards, self.dones, self._ids = self._arrays["rewards"], self._arrays["dones"], self._arrays["ids"]
        names = {k: b.name for k, b in zip(shapes, self._blocks, strict=True)}
        plain = {k: (shape, np.dtype(dt).str) for k, (shape, dt) in shapes.items()}
        ctx = mp.get_context("spawn")  # no fork of a parent holding threads (gRPC, a learner's)
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        bounds = np.linspace(0, num_envs, workers + 1).astype(int)
        for w in range(workers):
            parent, child = ctx.Pipe()
            kwargs = {"variant": variant, "num_players": num_players, "max_hands": max_hands,
                      "known_cards": known_cards, "seed": seed, "seed_prefix": f"batch{w}", **options}
            p = ctx.Process(target=_worker, args=(child, names, plain, int(bounds[w]), int(bounds[w + 1]), kwargs),
                            daemon=True)
            p.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(p)

    def _all(self, what: str) -> None:
        for c in self._conns:
            c.send(what)
        errors = [e for e in (c.recv() for c in self._conns) if e is not None]
        if errors:
            raise WorkerError(errors[0])

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._all("reset")
        return self.obs, self.mask, self.seat

    def step(self, ids: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One id per game. :raises WorkerError: for an id its game's mask does not allow (the worker's reason)."""
        self._ids[:] = ids
        self._all("step")
        return self.obs, self.mask, self.seat, self.rewards, self.dones

    def random_ids(self, rng: np.random.Generator) -> np.ndarray:
        return random_ids(self.mask, rng)

    def close(self) -> None:
        for c in self._conns:
            try:
                c.send("close")
            except OSError:
                pass
        for p in self._procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
        self._conns, self._procs = [], []
        for k in list(self._arrays):
            del self._arrays[k]
        self.obs = self.mask = self.seat = self.rewards = self.dones = self._ids = np.zeros(0)
        for b in self._blocks:
            _close(b)
            b.unlink()
        self._blocks = []

    def __enter__(self) -> ProcessBatchEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
