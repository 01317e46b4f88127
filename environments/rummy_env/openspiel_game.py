"""Every variant as an OpenSpiel Python game: ``pyspiel.load_game("python_rummy_indian", {"players": 4})``.

Importing this module registers ``python_rummy_<variant>`` for the nine variants (``-`` in a name becomes ``_``:
``python_rummy_500_rum``). An episode is one hand, as in OpenSpiel's ``gin_rummy``: chance nodes deal the whole
deck card by card (an outcome is one of the 53 card ids, with probability its copies left over the cards left),
then the seats play with the variant's fixed action ids (``rummy_env.actions``). A reshuffled stock inside the hand
(IND-14, FOR-9's shuffle option) is seeded by the game, not by a chance node. Returns are the points the hand
scores (negated where the variant counts penalties). ``resample_from_infostate`` deals the hidden cards afresh with
the search service's sampler, consistent with what the player was told.

Game parameters: ``players`` and ``max_turns`` (the engine's turn cap per hand), and each variant option as a
string (``pyspiel.load_game("python_rummy_fortune", {"players": 3, "max_set": "unlimited"})``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from rummy_env._core import Card, Event, OptionSpec, all_variants, find, sample_states, seat_record
from rummy_env.actions import CARDS, NUM_CARDS, action_space, card_index
from rummy_env.game import RummyGame
from rummy_env.observation import information_state_string, layout, observation_string, observation_tensor

__all__ = ["game_name", "register_all", "RummyState", "RummyObserver"]

_TURN_CAP = 400
_IDS_PER_TURN = 60  # a bound on the ids of one turn (draw, melds card by card, lay-offs, discard) for the length


def game_name(variant: str) -> str:
    return "python_rummy_" + find(variant).name.replace("-", "_")


def _deck(variant: str, seats: int, options: dict[str, str]) -> list[Card]:
    v = find(variant)
    return list(v.deck(v.configure(options, seats), seats))


class RummyState(pyspiel.State):  # type: ignore[misc]
    """One hand: dealing (chance), then play. ``self.game`` is the ``RummyGame`` once the deck is dealt."""

    def __init__(self, game: RummySpielGame) -> None:
        super().__init__(game)
        self.variant: str = game.variant
        self.seats: int = game.seats
        self.options: dict[str, str] = game.options
        self.max_turns: int = game.max_turns
        self.left: list[int] = [0] * NUM_CARDS  # the cards still to deal, by id
        for c in _deck(self.variant, self.seats, self.options):
            self.left[card_index(c)] += 1
        self.dealt: list[int] = []
        self.game: RummyGame | None = None

    # ------------------------------------------------------------ the tree

    def current_player(self) -> int:
        if self.game is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.game.over:
            return int(pyspiel.PlayerId.TERMINAL)
        return self.game.current_seat

    def _legal_actions(self, player: int) -> list[int]:
        assert self.game is not None
        return self.game.legal_ids()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        total = sum(self.left)
        return [(i, k / total) for i, k in enumerate(self.left) if k]

    def _apply_action(self, action: int) -> None:
        if self.game is None:
            self.left[action] -= 1
            self.dealt.append(action)
            if not any(self.left):
                deck = tuple(CARDS[i] for i in self.dealt)
                self.game = RummyGame(self.variant, self.seats, self.options, seed="spiel", max_hands=1,
                                      max_turns_per_hand=self.max_turns, decks=(deck,))
            return
        self.game.step(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {CARDS[action]}"
        return action_space(self.variant).name(action)

    def is_terminal(self) -> bool:
        return self.game is not None and self.game.over

    def returns(self) -> list[float]:
        if self.game is None or not self.game.over:
            return [0.0] * self.seats
        return list(self.game.returns)

    def __str__(self) -> str:
        if self.game is None:
            return f"dealing: {len(self.dealt)} cards dealt"
        if self.game.over:
            return f"hand over: returns {self.game.returns}"
        return f"seat {self.game.current_seat} to act, {len(self.game.trail)} ids played"

    # ------------------------------------------------------------ search

    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None) -> RummyState:
        """A state ``player_id`` cannot tell from this one: the hidden cards (other hands, the stock, face-down
        cards) dealt afresh by the search service's sampler, uniformly among the deals consistent with what the
        player was told. The other seats' private events are dropped from the copy's record (their redacted twins
        made public), so no search can read the true hidden cards from it."""
        new = self.clone()
        if self.game is None or self.game.over:
            return new  # type: ignore[no-any-return]
        seed = probability_sampler() if callable(probability_sampler) else np.random.random()
        g = new.game
        taken = list(g.chooser().prefix)  # before the log changes: the chooser is keyed on where the match stands
        sample, _ = next(sample_states(seat_record(g.match, player_id), 1, seed=f"spiel:{seed}"))
        g.match.state = sample.state
        g.match.log = _seen_by(g.match.log, player_id)
        g._chooser = None  # noqa: SLF001 - the steps taken stay, the legal actions are listed from the sample
        g._knowledge.clear()  # noqa: SLF001
        for i in taken:
            g.chooser().step(i)
        return new  # type: ignore[no-any-return]


def _seen_by(log: list[Event], seat: int) -> list[Event]:
    """The events ``seat`` saw, each made public (a redacted twin then stands for the event for every seat)."""
    out = []
    for e in log:
        if e.visible_to(seat):
            if e.to is None and e.not_to:
                e = Event(e.kind, e.seat, e.cards, e.meld_id, e.count, e.points, e.text, None, frozenset())
            out.append(e)
    return out


class RummyObserver:
    """OpenSpiel's Python observer: the seat's tensor, and its observation or information-state string."""

    def __init__(self, variant: str, seats: int, perfect_recall: bool) -> None:
        self.layout = layout(variant, seats)
        self.tensor = np.zeros(self.layout.size, dtype=np.float32)
        self.dict = {"observation": self.tensor}
        self.perfect_recall = perfect_recall

    def set_from(self, state: RummyState, player: int) -> None:
        g = state.game
        if g is None:
            self.tensor.fill(0.0)
            return
        prefix = g.chooser().prefix if not g.over and g.current_seat == player else []
        known = g.known_cards(player) if not g.over else []
        observation_tensor(g.view(player), known, prefix, out=self.tensor, memo=g.memo(player))

    def string_from(self, state: RummyState, player: int) -> str:
        g = state.game
        if g is None:
            return f"dealing: {len(state.dealt)} of {len(state.dealt) + sum(state.left)} cards dealt"
        prefix = g.chooser().prefix if not g.over and g.current_seat == player else []
        known = g.known_cards(player) if not g.over else []
        if self.perfect_recall:
            return information_state_string(g.view(player), known, prefix, g.events(player))
        return observation_string(g.view(player), known, prefix)


class RummySpielGame(pyspiel.Game):  # type: ignore[misc]
    variant = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        game_type, spec = _TYPES[type(self).variant]
        params = {**spec, **(params or {})}
        v = find(type(self).variant)
        self.seats = int(params["players"])
        self.max_turns = int(params["max_turns"])
        self.options = {o.name: _from_param(o, params[o.name]) for o in v.options}
        v.configure(self.options, self.seats)  # a bad option is refused here, typed
        deck = len(_deck(v.name, self.seats, self.options))
        space = action_space(v.name)
        info = pyspiel.GameInfo(
            num_distinct_actions=space.size, max_chance_outcomes=NUM_CARDS, num_players=self.seats,
            min_utility=-100_000.0, max_utility=100_000.0, utility_sum=None,
            max_game_length=deck + self.max_turns * _IDS_PER_TURN)
        super().__init__(game_type, info, params)

    def new_initial_state(self) -> RummyState:
        return RummyState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> RummyObserver:
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return RummyObserver(type(self).variant, self.seats, perfect_recall)


_TYPES: dict[str, tuple[Any, dict[str, Any]]] = {}


def _numeric(o: OptionSpec) -> bool:
    return all(c.isdigit() or c == "<int>" for c in o.choices)


def _to_param(o: OptionSpec, value: str) -> int | str:
    """An option as a game parameter. OpenSpiel reads a number in a game string as an integer, so an option of
    numbers is an int parameter, and a number in an option that also takes words is written with a leading ``n``
    (``max_set=n4``, ``target=n500``, ``special_values=n700-350-350``): a serialized game then loads with the types it was made with."""
    if _numeric(o):
        return int(value)
    return f"n{value}" if value[:1].isdigit() else value


def _from_param(o: OptionSpec, value: Any) -> str:
    text = str(value)
    if not _numeric(o) and text.startswith("n") and text[1:2].isdigit():
        return text[1:]
    return text


def register_all() -> list[str]:
    """Register every variant with pyspiel (done on import; again is a no-op). Returns the game names."""
    names = []
    for v in all_variants():
        name = game_name(v.name)
        names.append(name)
        if v.name in _TYPES:
            continue
        spec: dict[str, Any] = {"players": v.min_seats, "max_turns": _TURN_CAP}
        spec.update({o.name: _to_param(o, o.default) for o in v.options})
        game_type = pyspiel.GameType(
            short_name=name, long_name=f"Python rummy {v.title}",
            dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
            chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
            information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
            utility=pyspiel.GameType.Utility.GENERAL_SUM,
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=v.max_seats, min_num_players=v.min_seats,
            provides_information_state_string=True, provides_information_state_tensor=False,
            provides_observation_string=True, provides_observation_tensor=True,
            parameter_specification=spec)
        _TYPES[v.name] = (game_type, spec)
        cls = type(f"RummySpielGame_{name}", (RummySpielGame,), {"variant": v.name})
        pyspiel.register_game(game_type, cls)
    return names


register_all()
