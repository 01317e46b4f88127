/**
 * A greedy Indian rummy policy (13 cards), ported from referee/rules/policies/indian.py: keep melds
 * and near-melds, take the open card when it builds one, discard the highest-points dead card, declare as soon
 * as the referee lists a valid declaration. It reads only the SeatView: `hand`, `wild_ranks` (the wild joker's
 * rank and printed jokers) and the open deck's top (`discard_pile`). Sequences weigh more than sets, since a
 * declaration needs two (one pure).
 */
import { cardText, sameCard } from "../cards";
import { Rank, type Action, type Card, type SeatView } from "../protocol";

const HIGH: ReadonlySet<number> = new Set([Rank.RANK_ACE, Rank.RANK_JACK, Rank.RANK_QUEEN, Rank.RANK_KING]);
const IN_RUN = 100; // a card of a pure sequence already made
const IN_SET = 60; // a card of a set already made
const WILD = 1000; // a joker is never thrown

type Wilds = ReadonlySet<number>;

/** A rank's place in the referee's card order: a printed joker (RANK_JOKER, 14 on the wire) first, as 0. */
function order(rank: number): number {
  return rank === Rank.RANK_JOKER ? 0 : rank;
}

function points(card: Card, wilds: Wilds): number {
  if (wilds.has(card.rank) || card.rank === Rank.RANK_JOKER) return 0;
  return HIGH.has(card.rank) ? 10 : card.rank;
}

/** Run positions: an ace is both low (1) and high (14). */
function positions(card: Card): number[] {
  return card.rank === Rank.RANK_ACE ? [1, 14] : [order(card.rank)];
}

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

/**
 * How much each card of `hand` (by its text) is worth keeping: wilds most, then cards of made pure sequences,
 * then of made sets, then cards with neighbours (same suit one or two apart, same rank in another suit).
 */
export function keepValues(hand: readonly Card[], wilds: Wilds): Map<string, number> {
  const have = new Map<string, { card: Card; count: number }>(); // the naturals, copies counted
  for (const card of hand) {
    if (!wilds.has(card.rank)) getOrAdd(have, cardText(card), () => ({ card, count: 0 })).count++;
  }
  const bySuit = new Map<number, Set<number>>();
  for (const { card } of have.values()) {
    for (const p of positions(card)) getOrAdd(bySuit, card.suit, () => new Set()).add(p);
  }
  const value = new Map<string, number>();
  for (const card of hand) if (wilds.has(card.rank)) value.set(cardText(card), WILD);

  // a card is in a made sequence when it has two neighbours in a row (either side) in its suit
  const inRun = new Set<string>();
  for (const [suit, pos] of bySuit) {
    for (const p of pos) {
      const has = (q: number): boolean => pos.has(q);
      if ((has(p - 1) && has(p + 1)) || (has(p + 1) && has(p + 2)) || (has(p - 2) && has(p - 1))) {
        const rank = p === 1 || p === 14 ? Rank.RANK_ACE : p;
        inRun.add(cardText({ rank: rank as Card["rank"], suit: suit as Card["suit"] }));
      }
    }
  }
  const byRank = new Map<number, Set<number>>(); // suits of each rank among the cards not in a sequence
  for (const [text, { card }] of have) {
    if (!inRun.has(text)) getOrAdd(byRank, card.rank, () => new Set()).add(card.suit);
  }
  for (const [text, { card, count }] of have) {
    if (inRun.has(text)) {
      value.set(text, IN_RUN);
      continue;
    }
    const suits = byRank.get(card.rank) ?? new Set();
    if (suits.size >= 3) {
      value.set(text, IN_SET);
      continue;
    }
    const pos = bySuit.get(card.suit)!;
    const n = (q: number): number => (pos.has(q) ? 1 : 0);
    let near = 0;
    for (const p of positions(card)) near += 3 * (n(p - 1) + n(p + 1)) + 2 * (n(p - 2) + n(p + 2));
    near += 2.5 * (suits.size - 1);
    near += 0.5 * (count - 1); // a duplicate (two packs) can go in two groups
    value.set(text, near - points(card, wilds) / 20); // high dead cards go first
  }
  return value;
}

/** The card least worth keeping; ties go to the higher points, then the lower rank and suit. */
function worst(hand: readonly Card[], wilds: Wilds): Card {
  const values = keepValues(hand, wilds);
  const key = (c: Card): number[] => [values.get(cardText(c))!, -points(c, wilds), order(c.rank), c.suit];
  return hand.reduce((best, c) => {
    const [a, b] = [key(c), key(best)];
    const i = a.findIndex((x, j) => x !== b[j]);
    return i >= 0 && a[i] < b[i] ? c : best;
  });
}

/**
 * Declare when listed; in DRAW take the open card if it joins a meld or near-meld it would keep, else the closed
 * deck; in PLAY discard the card least worth keeping. Never drops.
 */
export function greedyIndian(view: SeatView, legal: readonly Action[]): Action {
  const wilds: Wilds = new Set(view.wild_ranks);
  const declare = legal.find((a) => a.kind === "declare");
  if (declare) return declare;
  const take = legal.find((a) => a.kind === "take_discards");
  const draw = legal.find((a) => a.kind === "draw_stock");
  if (take || draw) {
    const top = view.discard_pile.at(-1);
    if (take && top) {
      if (wilds.has(top.rank)) return take;
      const after = [...view.hand, top];
      const value = keepValues(after, wilds).get(cardText(top))!;
      if (!sameCard(worst(after, wilds), top) && value >= 2.5) return take;
    }
    return (draw ?? take)!;
  }
  const discards = legal.filter((a) => a.kind === "discard");
  if (discards.length > 0) {
    const card = worst(view.hand, wilds);
    return discards.find((a) => a.discard?.card && sameCard(a.discard.card, card)) ?? discards[0];
  }
  return legal[0];
}
