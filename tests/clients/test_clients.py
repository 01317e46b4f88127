"""Every native SDK, the same checks: its greedy example beats the Python random bot over one connection
(bot-token mode), plays one seat with a seat token and exits 0, and shows the referee's rejection of an
illegal answer, then plays on (``--probe-rejection``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clients.harness import SDKS, assert_rejection_shown, play_gauntlet, play_one_seat, require, wins


def _command(lang: str) -> list[str]:
    artifact, prefix, toolchain = SDKS[lang]
    require(lang, artifact, toolchain=toolchain)
    return [*prefix, str(artifact)]


@pytest.mark.parametrize("lang", SDKS)
def test_the_greedy_example_beats_the_random_bot(tmp_path: Path, lang: str) -> None:
    rows = play_gauntlet(tmp_path, f"{lang}-greedy", _command(lang), games=4)
    won = wins(rows, f"{lang}-greedy")
    assert won >= 6, f"{lang} greedy won {won} of {len(rows)}"


@pytest.mark.parametrize("lang", SDKS)
def test_one_seat_with_a_seat_token(lang: str) -> None:
    _, output = play_one_seat(_command(lang))
    assert "ended: ranking" in output, output[-3000:]


@pytest.mark.parametrize("lang", SDKS)
def test_a_rejection_is_shown_and_play_goes_on(lang: str) -> None:
    _, output = play_one_seat([*_command(lang), "--probe-rejection"])  # finishes, no forfeit, exit 0
    assert_rejection_shown(output)
    assert "ended: ranking" in output, output[-3000:]
