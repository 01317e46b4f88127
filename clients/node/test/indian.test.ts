import assert from "node:assert/strict";
import { test } from "node:test";
import { Phase, Rank, cardText, greedyIndian, keepValues, parseCards, type Action, type SeatView } from "../src";

function view(hand: string, discardPile: string, wildRanks: number[] = [Rank.RANK_JOKER]): SeatView {
  return {
    variant: "indian", seat: 0, hand_number: 1, dealer: 1, turn: 0, phase: Phase.PHASE_DRAW,
    hand: parseCards(hand), hand_sizes: [13, 13], stock_size: 70, discard_pile: parseCards(discardPile),
    discard_size: 1, melds: [], face_up: [], wild_ranks: wildRanks as SeatView["wild_ranks"], in_front: [],
    received: [], teams: [0, 1], active: [true, true], totals: ["0", "0"], notes: [], offer: null,
  };
}

const DRAW: Action[] = [{ kind: "draw_stock", draw_stock: {} }, { kind: "take_discards", take_discards: { count: 1, meld: null } }, { kind: "drop", drop: {} }];
const discards = (hand: string): Action[] => parseCards(hand).map((card) => ({ kind: "discard", discard: { card } }));

test("cards of made sequences and wilds are kept; a lone high card is worth least", () => {
  const hand = parseCards("AH 2H 3H 5S 6S 9C 9D KD JK");
  const values = keepValues(hand, new Set([Rank.RANK_JOKER]));
  assert.equal(values.get("JK"), 1000);
  assert.equal(values.get("2H"), 100);
  const least = [...values].sort((a, b) => a[1] - b[1])[0][0];
  assert.equal(least, "KD");
});

test("takes the open card when it builds a meld, else draws; never drops", () => {
  const hand = "AH 2H 5S 6S 9C 9D KD QC 3D 7H TC JS 4C";
  assert.equal(greedyIndian(view(hand, "3H"), DRAW).kind, "take_discards");
  assert.equal(greedyIndian(view(hand, "8S"), DRAW).kind, "draw_stock");
  assert.equal(greedyIndian(view(hand, "7C", [Rank.RANK_JOKER, Rank.RANK_SEVEN]), DRAW).kind, "take_discards");
});

test("discards the card least worth keeping; declares when a Declare is listed", () => {
  const hand = "AH 2H 3H 5S 6S 7S 9C 9D 9H KD 4C 4D JK TC";
  const chosen = greedyIndian({ ...view(hand, ""), phase: Phase.PHASE_PLAY }, discards(hand));
  assert.equal(cardText(chosen.discard!.card!), "KD");
  const declare: Action = { kind: "declare", declare: { groups: [], discard: parseCards("KD")[0] } };
  assert.equal(greedyIndian(view(hand, ""), [...discards(hand), declare]).kind, "declare");
});
