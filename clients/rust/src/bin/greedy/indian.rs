//! A greedy Indian rummy policy (13 cards), a port of the Python SDK's `referee.rules.policies.indian`: keep melds
//! and near-melds, take the open card when it builds one, discard the dead card least worth keeping, declare as
//! soon as the referee lists a valid declaration. Sequences weigh more than sets, since a declaration needs two
//! (one pure).

use std::collections::{HashMap, HashSet};

use rummybot::{Action, Card, Rank, SeatView};

const IN_RUN: f64 = 100.0; // a card of a pure sequence already made
const IN_SET: f64 = 60.0; // a card of a set already made
const WILD: f64 = 1000.0; // a joker is never thrown

/// The ranks that are wild this deal (the wild joker's rank and printed jokers), as wire numbers.
type Wilds = HashSet<i32>;

fn points(card: &Card, wilds: &Wilds) -> i32 {
    if wilds.contains(&card.rank) {
        return 0;
    }
    match card.rank() {
        Rank::Ace | Rank::Jack | Rank::Queen | Rank::King => 10,
        _ => card.rank().number(), // a printed joker 0
    }
}

/// Run positions: an ace sits below the two and above the king.
fn positions(card: &Card) -> Vec<i32> {
    if card.rank() == Rank::Ace { vec![1, 14] } else { vec![card.rank().number()] }
}

/// How much each card of `hand` is worth keeping: wilds most, then cards of made pure sequences, then of made
/// sets, then cards with neighbours (same suit one or two apart, same rank in another suit).
pub fn keep_values(hand: &[Card], wilds: &Wilds) -> HashMap<Card, f64> {
    let mut copies: HashMap<Card, usize> = HashMap::new();
    for card in hand.iter().filter(|c| !wilds.contains(&c.rank)) {
        *copies.entry(*card).or_default() += 1;
    }
    let mut by_suit: HashMap<i32, HashSet<i32>> = HashMap::new();
    for card in copies.keys() {
        by_suit.entry(card.suit).or_default().extend(positions(card));
    }
    let mut value: HashMap<Card, f64> = hand.iter().filter(|c| wilds.contains(&c.rank)).map(|c| (*c, WILD)).collect();

    // A card is in a made sequence when it has two neighbours in a row (either side) in its suit.
    let mut in_run: HashSet<Card> = HashSet::new();
    for (&suit, pos) in &by_suit {
        let has = |p: i32| pos.contains(&p);
        for &p in pos {
            if (has(p - 1) && has(p + 1)) || (has(p + 1) && has(p + 2)) || (has(p - 2) && has(p - 1)) {
                let rank = if p == 1 || p == 14 { Rank::Ace.number() } else { p };
                in_run.insert(Card { rank, suit });
            }
        }
    }
    let mut suits_by_rank: HashMap<i32, HashSet<i32>> = HashMap::new();
    for card in copies.keys().filter(|c| !in_run.contains(c)) {
        suits_by_rank.entry(card.rank).or_default().insert(card.suit);
    }

    for (card, &count) in &copies {
        if in_run.contains(card) {
            value.insert(*card, IN_RUN);
            continue;
        }
        let suits = suits_by_rank.get(&card.rank).map_or(0, HashSet::len);
        if suits >= 3 {
            value.insert(*card, IN_SET);
            continue;
        }
        let pos = &by_suit[&card.suit];
        let near_by = |p: i32| f64::from(u8::from(pos.contains(&p)));
        let mut near = 0.0;
        for p in positions(card) {
            near += 3.0 * (near_by(p - 1) + near_by(p + 1)) + 2.0 * (near_by(p - 2) + near_by(p + 2));
        }
        near += 2.5 * (suits as f64 - 1.0);
        near += 0.5 * (count as f64 - 1.0); // a duplicate (two packs) can go in two groups
        value.insert(*card, near - f64::from(points(card, wilds)) / 20.0); // high dead cards go first
    }
    value
}

/// The card least worth keeping; among equals the one with more points, then the lowest in rank-suit order.
fn worst(hand: &[Card], wilds: &Wilds) -> Option<Card> {
    let values = keep_values(hand, wilds);
    let key = |c: &Card| (values[c], -points(c, wilds), c.rank().number(), c.suit); // a joker (number 0) first
    hand.iter().copied().min_by(|a, b| {
        let (a, b) = (key(a), key(b));
        a.0.total_cmp(&b.0).then_with(|| (a.1, a.2, a.3).cmp(&(b.1, b.2, b.3)))
    })
}

/// Declare when listed; in DRAW take the open card if it is wild or joins a meld or near-meld it would keep,
/// else the closed deck; in PLAY discard the card least worth keeping. Never drops.
pub fn greedy(view: &SeatView, legal: &[Action]) -> Action {
    let wilds: Wilds = view.wild_ranks.iter().copied().collect();
    if let Some(declare) = legal.iter().find(|a| a.is_declare()) {
        return declare.clone();
    }
    let take = legal.iter().find(|a| a.is_take_discards());
    let draw = legal.iter().find(|a| a.is_draw_stock());
    if take.is_some() || draw.is_some() {
        if let (Some(take), Some(top)) = (take, view.discard_pile.last()) {
            if wilds.contains(&top.rank) {
                return take.clone();
            }
            let after: Vec<Card> = view.hand.iter().chain([top]).copied().collect();
            let builds = keep_values(&after, &wilds).get(top).is_some_and(|&v| v >= 2.5);
            if builds && worst(&after, &wilds) != Some(*top) {
                return take.clone();
            }
        }
        return draw.or(take).cloned().unwrap_or_default();
    }
    let discards: Vec<&Action> = legal.iter().filter(|a| a.discarded_card().is_some()).collect();
    if let Some(first) = discards.first() {
        let worst = worst(&view.hand, &wilds);
        let choice = discards.iter().find(|a| a.discarded_card() == worst).unwrap_or(first);
        return (*choice).clone();
    }
    legal.first().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rummybot::cards::parse_cards;

    fn view(hand: &str, open: &str, wild: Rank) -> SeatView {
        SeatView {
            variant: "indian".into(),
            hand: parse_cards(hand).unwrap(),
            discard_pile: parse_cards(open).unwrap(),
            wild_ranks: vec![Rank::Joker.into(), wild.into()],
            ..SeatView::default()
        }
    }

    fn take_or_draw() -> Vec<Action> {
        let take = rummybot::proto::TakeDiscards { count: 1, ..Default::default() };
        vec![Action::draw_stock(), Action::of(rummybot::proto::action::Kind::TakeDiscards(take))]
    }

    #[test]
    fn takes_an_open_card_that_extends_a_run() {
        let view = view("4H 5H 9C KD 2S 3D 8D JC QS 6C 7S TD AS", "6H", Rank::Two);
        assert!(greedy(&view, &take_or_draw()).is_take_discards());
    }

    #[test]
    fn draws_when_the_open_card_is_dead() {
        let view = view("4H 5H 9C KD 2S 3D 8D JC QS 6C 7S TD AS", "QH", Rank::Two);
        assert!(greedy(&view, &take_or_draw()).is_draw_stock());
    }

    #[test]
    fn discards_the_highest_dead_card_and_keeps_runs_and_wilds() {
        let view = view("4H 5H 6H 9C 9D 9S 7D 7D JK 2C KS 3C QD", "", Rank::Two);
        let legal: Vec<Action> = view.hand.iter().map(|&c| Action::discard(c)).collect();
        let thrown = greedy(&view, &legal).discarded_card().unwrap();
        assert_eq!(thrown.to_string(), "QD"); // ties with KS on value and points; lower rank first
    }
}
