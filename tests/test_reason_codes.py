"""The reason-code list (referee.service.reasons) is true: every code the sources give is listed with the status it really
ends a call with, every listed code is given somewhere, docs/REASON-CODES.md is made from the list, and one fault
has one code in every variant."""

from __future__ import annotations

from collections import Counter

import pytest

from referee.rules.cards import build_deck
from referee.rules.errors import IllegalAction
from referee.rules.match import Match, MatchConfig
from referee.rules.variants import all_variants
from referee.rules.variants.base import Declare, Discard, Group, Offer
from referee.service.reasons import BY_CODE, GROUPS, REASONS, markdown
from tests.reason_scan import ERROR_STATUS, ROOT, scan

HITS, DYNAMIC = scan()


def test_every_code_the_sources_give_is_listed():
    unlisted = sorted({f"{h.code} ({h.where})" for h in HITS if h.code not in BY_CODE})
    assert not unlisted, f"add these to referee/service/reasons.py (and regenerate docs/REASON-CODES.md): {unlisted}"


def test_every_listed_code_is_given_somewhere():
    given = {h.code for h in HITS}
    stale = sorted(r.code for r in REASONS if not r.pending and r.code not in given)
    assert not stale, f"listed but given nowhere (renamed or gone?): {stale}"


def test_pending_codes_are_marked_until_their_branch_is_merged():
    """A code exempted as another branch's must not be found here: once it is, its ``pending`` mark goes."""
    given = {h.code for h in HITS}
    merged = sorted(r.code for r in REASONS if r.pending and r.code in given)
    assert not merged, f"now raised in this tree: remove pending= from {merged} in referee/service/reasons.py"


def test_each_code_ends_a_call_only_with_its_listed_status():
    wrong = sorted({f"{h.code}: {h.status} at {h.where}, listed {BY_CODE[h.code].status}" for h in HITS
                    if h.code in BY_CODE and h.status is not None and h.status not in BY_CODE[h.code].status})
    assert not wrong, wrong


def test_codes_are_literal_except_check_ranges_limit_name():
    """A code built at run time cannot be listed; only ``check_range`` builds ``LIMIT_<NAME>`` (scanned per call)."""
    assert [w.split(":")[0] for w in DYNAMIC] == ["referee/service/limits.py"], DYNAMIC


def test_the_scan_knows_the_status_each_typed_error_maps_to():
    from referee.search import work
    from referee.service.server import STATUS_FOR

    for cls, status in [*((c, s.name) for c, s in STATUS_FOR.items()), *work.STATUS.items()]:
        assert ERROR_STATUS[cls.__name__] == status, cls


def test_the_scan_sees_every_pattern_the_sources_use(tmp_path):
    """The scanner itself, on a small tree written for it: each pattern found, with its status."""
    src = tmp_path / "referee"
    src.mkdir()
    (src / "sample.py").write_text(
        "REASON_GONE = 'ONE'\n"
        "def f(context, conn, s, ok):\n"
        "    raise IllegalAction('TWO', 'm')\n"
        "    require(ok, 'THREE', 'm')\n"
        "    _abort(context, grpc.StatusCode.NOT_FOUND, 'FOUR', 'm')\n"
        "    conn.drop('FIVE', 'm')\n"
        "    self._reject(s, 1, 'SIX', 'm')\n"
        "    refusal = (1, 'SEVEN', 'm')\n"
        "    code = 'EIGHT' if ok else 'NINE'\n"
        "    pb.ActionRejected(code='TEN')\n"
        "    check_range('max_things', 1, 0, 2)\n"
        "    raise InvalidOption(f'LIMIT_{ok}', 'm')\n"
        "def _why_invalid(c):\n"
        "    return 'ELEVEN'\n"
    )
    hits, dynamic = scan(tmp_path)
    assert {(h.code, h.status) for h in hits} == {
        ("ONE", None), ("TWO", "FAILED_PRECONDITION"), ("THREE", "FAILED_PRECONDITION"), ("FOUR", "NOT_FOUND"),
        ("FIVE", "RESOURCE_EXHAUSTED"), ("SIX", None), ("SEVEN", None), ("EIGHT", None), ("NINE", None),
        ("TEN", None), ("LIMIT_MAX_THINGS", "INVALID_ARGUMENT"), ("ELEVEN", None),
    }
    assert len(dynamic) == 1


def test_the_list_is_well_formed():
    codes = Counter(r.code for r in REASONS)
    assert [c for c, n in codes.items() if n > 1] == []
    assert all(r.group in GROUPS and r.meaning and r.code.isupper() for r in REASONS)


def test_docs_reason_codes_is_generated_from_the_list():
    path = ROOT / "docs" / "REASON-CODES.md"
    assert path.read_text(encoding="utf-8") == markdown(), "run: python -m referee.service.reasons > docs/REASON-CODES.md"
    for r in REASONS:
        assert f"`{r.code}`" in markdown()


# ---------------------------------------------------------------- one fault, one code, in every variant


def _first_turn(name: str) -> tuple[Match, int]:
    v = next(x for x in all_variants() if x.name == name)
    m = Match(MatchConfig(name, v.min_seats, seed="reasons"))
    d = m.pending()
    assert d is not None
    return m, d.seat


def _refusal(m: Match, seat: int, action: object) -> str:
    with pytest.raises(IllegalAction) as exc:
        m.submit(seat, action)  # type: ignore[arg-type]
    return exc.value.code


@pytest.mark.parametrize("name", [v.name for v in all_variants()])
def test_a_card_not_held_is_card_not_in_hand_in_every_variant(name):
    """Play on until the seat to act may discard or offer, then name a card it does not hold."""
    m, seat = _first_turn(name)
    for _ in range(20):
        legal = m.legal_actions(seat)
        shape = next((a for a in legal if isinstance(a, (Discard, Offer))), None)
        if shape is not None:
            held = Counter(m.view(seat).hand)
            missing = next(c for c in build_deck(1, 1) if not held[c])
            assert _refusal(m, seat, type(shape)(missing)) == "CARD_NOT_IN_HAND"
            return
        m.submit(seat, legal[0])
        d = m.pending()
        assert d is not None
        seat = d.seat
    pytest.fail(f"{name}: no discard or offer in 20 decisions")


@pytest.mark.parametrize("name", [v.name for v in all_variants()])
def test_an_action_the_variant_lacks_is_not_in_variant(name):
    m, seat = _first_turn(name)
    foreign = Offer(m.view(seat).hand[0]) if name == "indian" else Declare((Group(m.view(seat).hand[:3]),))
    assert _refusal(m, seat, foreign) == "NOT_IN_VARIANT"
