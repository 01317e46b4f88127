import assert from "node:assert/strict";
import { test } from "node:test";
import { RANK_JOKER, Rank, Suit, cardText, cardsText, naturalCards, parseCard, parseCards } from "../src";

test("every card's text reads back as the same card", () => {
  const cards = [...naturalCards(), { rank: Rank.RANK_JOKER, suit: Suit.SUIT_NONE }];
  for (const card of cards) assert.deepEqual(parseCard(cardText(card)), card);
  assert.equal(new Set(cards.map(cardText)).size, 53);
});

test("notation: rank then suit, T for ten, JK for a joker", () => {
  assert.equal(cardText({ rank: Rank.RANK_QUEEN, suit: Suit.SUIT_SPADES }), "QS");
  assert.equal(cardText({ rank: Rank.RANK_TEN, suit: Suit.SUIT_HEARTS }), "TH");
  assert.equal(cardText({ rank: Rank.RANK_TWO, suit: Suit.SUIT_CLUBS }), "2C");
  assert.equal(cardText({ rank: Rank.RANK_JOKER, suit: Suit.SUIT_NONE }), RANK_JOKER);
  assert.deepEqual(parseCard("10h"), { rank: Rank.RANK_TEN, suit: Suit.SUIT_HEARTS });
  assert.equal(cardsText(parseCards("AH, 2H 3H  JK")), "AH 2H 3H JK");
});

test("anything else is refused", () => {
  for (const bad of ["", "1S", "AX", "QQ", "S", "11H", "JKS"]) assert.throws(() => parseCard(bad), /not a card/);
});
