"""Train a small numpy policy on one variant, save it, and play it as a bot (``rummy_env.bot``).

    python -m rummy_env.train --variant fortune --out policy-fortune.npz --tournament 100

The learner is an MLP (one hidden layer, ReLU) over the observation tensor, a softmax over the ids its mask allows,
trained by imitation of the variant's bundled greedy bot: the greedy bot plays every seat, each of its moves is
spelled in ids (``Chooser.ids_of``) and every id is one example (observation, mask, the id it took). Why imitation
and not reinforcement from scratch: a hand's reward comes once, after 50 to 200 ids, and random play almost
never melds, so REINFORCE from a random start learns little in the minutes the brief allows on two busy cores;
cloning a teacher gives dense targets (every id) and a policy that melds from the first epoch. What the policy
sees is only what a bot is sent: the seat's view (``known_cards=False``: a bot would need the event stream to
track cards taken face up), so the same tensor is built in the bot from the view the referee sends.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rummy_env._core import Action, SeatView, find
from rummy_env.actions import Chooser, action_space
from rummy_env.game import RummyGame
from rummy_env.observation import layout, observation_tensor

__all__ = ["MlpPolicy", "collect", "fit", "main"]


@dataclass
class MlpPolicy:
    """``logits = relu(x @ w1 + b1) @ w2 + b2``, masked to the allowed ids."""

    variant: str
    seats: int
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    @classmethod
    def new(cls, variant: str, seats: int, hidden: int = 128, seed: int = 0) -> MlpPolicy:
        lay = layout(find(variant).name, seats)
        rng = np.random.default_rng(seed)
        f, a = lay.size, lay.space.size
        return cls(lay.variant, seats, (rng.standard_normal((f, hidden)) * np.sqrt(2.0 / f)).astype(np.float32),
                   np.zeros(hidden, np.float32), (rng.standard_normal((hidden, a)) * np.sqrt(1.0 / hidden)).astype(
                       np.float32), np.zeros(a, np.float32))

    def logits(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        h = np.maximum(x @ self.w1 + self.b1, 0.0)
        z = h @ self.w2 + self.b2
        return np.where(mask > 0, z, -1e9)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The most likely allowed id (a bot plays its best guess)."""
        return int(np.argmax(self.logits(obs[None, :], mask[None, :])[0]))

    def choose(self, view: SeatView, legal: Sequence[Action], rng: random.Random) -> Action:
        """A rummybot policy: spell a move id by id from the view alone (the bot's tensor is the env's)."""
        slots = {m.id: i for i, m in enumerate(view.melds)}
        ch = Chooser(action_space(view.variant), legal, slots)
        mask = np.zeros(ch.space.size, np.float32)
        while True:
            mask.fill(0.0)
            mask[ch.legal_ids()] = 1.0
            done = ch.step(self.act(observation_tensor(view, [], ch.prefix), mask))
            if done is not None:
                return done

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, variant=self.variant, seats=self.seats, w1=self.w1, b1=self.b1, w2=self.w2,
                            b2=self.b2)

    @classmethod
    def load(cls, path: str | Path) -> MlpPolicy:
        with np.load(path, allow_pickle=False) as z:
            return cls(str(z["variant"]), int(z["seats"]), z["w1"], z["b1"], z["w2"], z["b2"])


def collect(variant: str, seats: int, games: int, seed: int = 0, max_examples: int = 60_000,
            deadline: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The greedy bot's ids in self-play: observations (float16, to hold many), masks (bool) and the ids taken."""
    from referee.rules.policies import greedy_policy

    teacher = greedy_policy(find(variant).name)
    rng = random.Random(seed)
    lay = layout(find(variant).name, seats)
    xs = np.zeros((max_examples, lay.size), np.float16)  # filled in place: no list of arrays stacked at the end
    ms = np.zeros((max_examples, lay.space.size), bool)
    ys = np.zeros(max_examples, np.int64)
    n = 0
    for g_i in range(games):
        if n >= max_examples or (deadline is not None and time.monotonic() > deadline):
            break
        g = RummyGame(variant, seats, seed=f"train:{seed}:{g_i}", max_hands=1)
        while not g.over and n < max_examples:
            s = g.current_seat
            ch = g.chooser()
            view = g.view(s)
            action = teacher(view, ch.actions, rng)
            for i in ch.ids_of(action):
                if n < max_examples:
                    observation_tensor(view, [], ch.prefix, out=xs[n])
                    ms[n, ch.legal_ids()] = True
                    ys[n] = i
                    n += 1
                g.step(i)
    return xs[:n], ms[:n], ys[:n]


def fit(policy: MlpPolicy, x: np.ndarray, m: np.ndarray, y: np.ndarray, epochs: int = 8, batch: int = 256,
        lr: float = 1e-3, seed: int = 0, deadline: float | None = None) -> list[float]:
    """Cross-entropy over the allowed ids, Adam; the mean loss of each epoch."""
    rng = np.random.default_rng(seed)
    params = [policy.w1, policy.b1, policy.w2, policy.b2]
    mom = [np.zeros_like(p) for p in params]
    vel = [np.zeros_like(p) for p in params]
    t = 0
    losses: list[float] = []
    for _ in range(epochs):
        order = rng.permutation(len(y))
        total = 0.0
        for start in range(0, len(y), batch):
            if deadline is not None and time.monotonic() > deadline:
                return losses
            idx = order[start:start + batch]
            xb, mb, yb = x[idx].astype(np.float32), m[idx], y[idx]
            pre = xb @ policy.w1 + policy.b1
            h = np.maximum(pre, 0.0)
            z = np.where(mb, h @ policy.w2 + policy.b2, -1e9)
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            rows = np.arange(len(yb))
            total += float(-np.log(p[rows, yb] + 1e-12).sum())
            dz = p
            dz[rows, yb] -= 1.0
            dz /= len(yb)
            dh = (dz @ policy.w2.T) * (pre > 0)
            grads = [xb.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)]
            t += 1
            for k, (param, grad) in enumerate(zip(params, grads, strict=True)):
                mom[k] = 0.9 * mom[k] + 0.1 * grad
                vel[k] = 0.999 * vel[k] + 0.001 * grad * grad
                param -= (lr * (mom[k] / (1 - 0.9 ** t)) / (np.sqrt(vel[k] / (1 - 0.999 ** t)) + 1e-8)).astype(
                    param.dtype)
        losses.append(total / len(y))
    return losses


def evaluate(policy: MlpPolicy, games: int, seed: int = 1) -> float:
    """The policy's mean reward per game (its seat's points, more is better) against the random bot in process,
    seats alternating: a quick check, the tournament over gRPC is the real one."""
    from referee.rules.policies import random_policy

    rng = random.Random(seed)
    total = 0.0
    for g_i in range(games):
        g = RummyGame(policy.variant, policy.seats, seed=f"eval:{seed}:{g_i}", max_hands=1)
        me = g_i % policy.seats
        while not g.over:
            s = g.current_seat
            choose = policy.choose if s == me else random_policy
            total += g.submit(choose(g.view(s), g.chooser().actions, rng)).rewards[me]
    return total / max(games, 1)


def tournament(weights: Path, variant: str, seats: int, deals: int, output: Path, max_hands: int | None = 1,
               budget_s: float | None = None) -> dict[str, float]:
    """The trained bot (``python -m rummy_env.bot``, a process speaking gRPC to an embedded referee) against the
    bundled random bot: ``deals`` duplicate deals, each played once per seat rotation; the Elo ratings and their
    95% error bars (the harness's own report, also in ``output``)."""
    import shutil
    import sys

    from tournaments.config import BotSpec, TimeControl, TournamentConfig, registry_facts
    from tournaments.report import load_ratings
    from tournaments.runner import run_tournament

    facts = registry_facts(variant)
    if output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True)
    weights = weights.resolve()
    # the bot imports these packages from where this process did (an unpacked checkout as well as an install):
    # on its PYTHONPATH and readable in its sandbox
    import referee
    import rummy_env
    import rummybot
    from rummy.referee.v1 import referee_pb2  # the wire code (protos/python in a checkout): the SDK imports it

    roots = tuple(dict.fromkeys([*(Path(m.__file__ or "").resolve().parent.parent for m in (rummy_env, rummybot, referee)),
                                 Path(referee_pb2.__file__ or "").resolve().parents[3]]))
    bots = (BotSpec("trained", (sys.executable, "-m", "rummy_env.bot", "--weights", str(weights)),
                    env={"PYTHONPATH": os.pathsep.join(map(str, roots))}, binds=(weights, *roots)),
            BotSpec("random", (sys.executable, "-m", "rummybot.bots.random_bot")))
    config = TournamentConfig(bots=bots, variant=facts.name, seats=seats, team_play=facts.team_play,
                              games_per_pairing=deals, time_control=TimeControl(per_move_ms=2000), concurrency=2,
                              seed="train", output=output.resolve(), max_hands=max_hands)
    run_tournament(config, handle_signals=False, time_budget_s=budget_s)
    table, _ = load_ratings(output)
    t, r = table.bot("trained"), table.bot("random")
    forfeits = faults = 0  # the trained bot's seats forfeited, and its faults (illegal or late answers)
    for line in (output / "tournament.log").read_text().splitlines():
        game = json.loads(line)
        if game.get("event") == "game_finished":
            mine = {i for i, name in enumerate(game["seats"]) if name == "trained"}
            forfeits += len(mine & set(game["forfeited"]))
            faults += sum(1 for f in game["faults"] if f.get("seat") in mine)
    return {"trained_elo": t.elo, "trained_error": t.error, "random_elo": r.elo, "random_error": r.error,
            "games": float(t.games), "apart": float(t.elo - t.error > r.elo + r.error),
            "trained_forfeits": float(forfeits), "trained_faults": float(faults)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rummy_env.train", description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--variant", default="fortune")
    p.add_argument("--seats", type=int, default=2)
    p.add_argument("--minutes", type=float, default=12.0, help="the whole run's budget: collecting, then fitting")
    p.add_argument("--games", type=int, default=4000, help="greedy self-play games to learn from (at most)")
    p.add_argument("--examples", type=int, default=100_000)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("policy.npz"))
    p.add_argument("--tournament", type=int, default=0, metavar="DEALS",
                   help="then play DEALS duplicate deals against the random bot over gRPC (0: none)")
    p.add_argument("--tournament-output", type=Path, default=Path("tournament-output/trained"))
    args = p.parse_args(argv)
    if args.tournament and args.out.exists() and args.minutes <= 0:
        return _report(tournament(args.out, args.variant, args.seats, args.tournament, args.tournament_output))
    start = time.monotonic()
    budget = args.minutes * 60.0
    x, m, y = collect(args.variant, args.seats, args.games, args.seed, args.examples, deadline=start + budget * 0.4)
    print(f"{len(y)} examples from the greedy bot in {time.monotonic() - start:.0f} s", flush=True)
    policy = MlpPolicy.new(args.variant, args.seats, args.hidden, args.seed)
    losses = fit(policy, x, m, y, args.epochs, seed=args.seed, deadline=start + budget * 0.95)
    print(f"{len(losses)} epochs, loss {' '.join(f'{v:.3f}' for v in losses)}; {time.monotonic() - start:.0f} s",
          flush=True)
    policy.save(args.out)
    print(f"saved {args.out}; mean points a game against the random bot (in process, 40 games): "
          f"{evaluate(policy, 40):.1f}", flush=True)
    if args.tournament:
        return _report(tournament(args.out, args.variant, args.seats, args.tournament, args.tournament_output))
    return 0


def _report(result: dict[str, float]) -> int:
    apart = bool(result["apart"])
    print(f"tournament, {result['games']:.0f} games: trained {result['trained_elo']:.0f} ± {result['trained_error']:.0f}"
          f" vs random {result['random_elo']:.0f} ± {result['random_error']:.0f}: "
          + ("the trained bot ranks above random, error bars apart" if apart else "error bars overlap"), flush=True)
    return 0 if apart else 1


if __name__ == "__main__":
    raise SystemExit(main())
