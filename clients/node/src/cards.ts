/**
 * The text notation of cards (logs, records, the CLI): rank then suit, ranks A23456789TJQK, suits S H D C, e.g.
 * "QS", "TH", "2C"; "JK" is a printed joker. The wire itself carries the Rank and Suit enums.
 */
import { Rank, Suit, type Card } from "./protocol";

/** The text of a printed joker. */
export const RANK_JOKER = "JK";

const RANK_TEXT = ["", "A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
const SUIT_TEXT = ["", "S", "H", "D", "C"];

/** "QS", "TH", "2C", or "JK". */
export function cardText(card: Card): string {
  if (card.rank === Rank.RANK_JOKER) return RANK_JOKER;
  return RANK_TEXT[card.rank] + SUIT_TEXT[card.suit];
}

/** Cards as text, separated by spaces. */
export function cardsText(cards: readonly Card[]): string {
  return cards.map(cardText).join(" ");
}

/** Read one card ("QS", "th", "10H", "JK"); throws on anything else. */
export function parseCard(text: string): Card {
  const t = text.trim().toUpperCase();
  if (t === RANK_JOKER) return { rank: Rank.RANK_JOKER, suit: Suit.SUIT_NONE };
  const rankText = t.slice(0, -1) === "10" ? "T" : t.slice(0, -1);
  const rank = RANK_TEXT.indexOf(rankText);
  const suit = SUIT_TEXT.indexOf(t.slice(-1));
  if (rankText === "" || rank < 1 || suit < 1) {
    throw new Error(`not a card: ${JSON.stringify(text)} (write rank then suit, e.g. QS, TH, 2C, or JK)`);
  }
  return { rank: rank as Card["rank"], suit: suit as Card["suit"] };
}

/** Read cards separated by spaces or commas: "AH 2H 3H". */
export function parseCards(text: string): Card[] {
  return text.split(/[\s,]+/).filter((t) => t !== "").map(parseCard);
}

/** Identical cards (copies from several packs are equal). */
export function sameCard(a: Card, b: Card): boolean {
  return a.rank === b.rank && a.suit === b.suit;
}

/** The 52 natural cards of one pack, spades to clubs, ace to king. */
export function naturalCards(): Card[] {
  const cards: Card[] = [];
  for (let suit: number = Suit.SUIT_SPADES; suit <= Suit.SUIT_CLUBS; suit++) {
    for (let rank: number = Rank.RANK_ACE; rank <= Rank.RANK_KING; rank++) {
      cards.push({ rank: rank as Card["rank"], suit: suit as Card["suit"] });
    }
  }
  return cards;
}
