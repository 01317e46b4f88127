//! Short constructors and tests for [`Action`], whose payload is the generated `action::Kind` oneof.

use crate::proto::action::Kind;
use crate::proto::{self, Action, Card, Group, WildAssignment};

impl Group {
    /// One meld's cards, for `Action::meld`, `Action::declare` and `Action::take_discards_melding`.
    pub fn of(cards: Vec<Card>) -> Self {
        Group { cards, stands_for: vec![] }
    }

    /// Says that the wild card `wild` stands for `as_card`, where the variant asks (in a set, its suit may be
    /// `Suit::None`).
    pub fn with_wild(mut self, wild: Card, as_card: Card) -> Self {
        self.stands_for.push(WildAssignment { wild: Some(wild), as_card: Some(as_card) });
        self
    }
}

impl Action {
    /// Wraps one `Kind` (`DrawStock`, `Discard`, `Declare`, ...) as an action.
    pub fn of(kind: Kind) -> Self {
        Action { kind: Some(kind) }
    }

    /// Draw the top card of the stock.
    pub fn draw_stock() -> Self {
        Self::of(Kind::DrawStock(proto::DrawStock {}))
    }

    /// Discard `card` from the hand, ending the turn (Iceberg: pass it face down).
    pub fn discard(card: Card) -> Self {
        Self::of(Kind::Discard(proto::Discard { card: Some(card) }))
    }

    /// Take the top `count` cards of the discard pile (0: the whole pile), melding nothing at once.
    pub fn take_discards(count: u32) -> Self {
        Self::of(Kind::TakeDiscards(proto::TakeDiscards { count, meld: None, lay_off_on: None }))
    }

    /// Take the top `count` cards, melding the bottom-most one taken with `group`'s cards from hand (Fortune: the
    /// top card with two from hand; 500 Rum: the deepest card taken).
    pub fn take_discards_melding(count: u32, group: Group) -> Self {
        Self::of(Kind::TakeDiscards(proto::TakeDiscards { count, meld: Some(group), lay_off_on: None }))
    }

    /// Take the top `count` cards, laying the bottom-most one taken off on the table's meld `meld_id`.
    pub fn take_discards_laying_off(count: u32, meld_id: u32) -> Self {
        Self::of(Kind::TakeDiscards(proto::TakeDiscards { count, meld: None, lay_off_on: Some(meld_id) }))
    }

    /// Put one or more groups from hand on the table as one action (a Skarney contract is several at once).
    pub fn meld(groups: Vec<Group>) -> Self {
        Self::of(Kind::Meld(proto::MeldAction { groups }))
    }

    /// Add `cards` from hand to the table's meld `meld_id`.
    pub fn lay_off(meld_id: u32, cards: Vec<Card>) -> Self {
        Self::of(Kind::LayOff(proto::LayOff { meld_id, cards, stands_for: vec![] }))
    }

    /// Put `natural` from hand into meld `meld_id` in place of the wild card `wild` it stands for, taking `wild`.
    pub fn exchange_wild(meld_id: u32, natural: Card, wild: Card) -> Self {
        Self::of(Kind::ExchangeWild(proto::ExchangeWild { meld_id, natural: Some(natural), wild: Some(wild) }))
    }

    /// Show the whole hand as `groups`, putting `discard` away face down (Indian rummy, IND-7).
    pub fn declare(groups: Vec<Group>, discard: Card) -> Self {
        Self::of(Kind::Declare(proto::Declare { groups, discard: Some(discard) }))
    }

    /// Leave the hand for its drop penalty (Indian rummy).
    pub fn drop_hand() -> Self {
        Self::of(Kind::Drop(proto::Drop {}))
    }

    /// End a turn without a discard, where the variant allows it (500 Rum with an empty stock, FH-11).
    pub fn end_turn() -> Self {
        Self::of(Kind::EndTurn(proto::EndTurn {}))
    }

    /// Offer `card` to the other players before discarding it (Skarney, SKA-7).
    pub fn offer(card: Card) -> Self {
        Self::of(Kind::Offer(proto::Offer { card: Some(card) }))
    }

    /// Take the card on offer (Skarney).
    pub fn accept_offer() -> Self {
        Self::of(Kind::AcceptOffer(proto::AcceptOffer {}))
    }

    /// Let the card on offer pass (Skarney).
    pub fn decline_offer() -> Self {
        Self::of(Kind::DeclineOffer(proto::DeclineOffer {}))
    }

    pub fn is_declare(&self) -> bool {
        matches!(self.kind, Some(Kind::Declare(_)))
    }

    pub fn is_draw_stock(&self) -> bool {
        matches!(self.kind, Some(Kind::DrawStock(_)))
    }

    pub fn is_take_discards(&self) -> bool {
        matches!(self.kind, Some(Kind::TakeDiscards(_)))
    }

    /// The card thrown, when this is a `Discard`.
    pub fn discarded_card(&self) -> Option<Card> {
        match &self.kind {
            Some(Kind::Discard(discard)) => discard.card,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::parse_cards;

    /// Every kind of the proto's `Action` oneof has a constructor (the match below stops compiling when the proto
    /// gains a kind), and each builds that kind with what it was given.
    #[test]
    fn every_action_kind_has_a_constructor() {
        let c = parse_cards("QS QD 2C 7H").unwrap();
        let built = [
            Action::draw_stock(),
            Action::take_discards(0),
            Action::take_discards_melding(1, Group::of(vec![c[0], c[1]])),
            Action::take_discards_laying_off(2, 5),
            Action::meld(vec![
                Group::of(vec![c[0], c[1], c[2]]).with_wild(c[2], Card::new(crate::Rank::Queen, crate::Suit::None)),
            ]),
            Action::lay_off(3, vec![c[3]]),
            Action::exchange_wild(2, c[3], c[2]),
            Action::discard(c[3]),
            Action::declare(vec![Group::of(vec![c[0], c[1]])], c[3]),
            Action::drop_hand(),
            Action::end_turn(),
            Action::offer(c[3]),
            Action::accept_offer(),
            Action::decline_offer(),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for action in &built {
            let name = match action.kind.as_ref().expect("a kind") {
                Kind::DrawStock(_) => "draw_stock",
                Kind::TakeDiscards(_) => "take_discards",
                Kind::Meld(_) => "meld",
                Kind::LayOff(_) => "lay_off",
                Kind::ExchangeWild(_) => "exchange_wild",
                Kind::Discard(_) => "discard",
                Kind::Declare(_) => "declare",
                Kind::Drop(_) => "drop",
                Kind::EndTurn(_) => "end_turn",
                Kind::Offer(_) => "offer",
                Kind::AcceptOffer(_) => "accept_offer",
                Kind::DeclineOffer(_) => "decline_offer",
            };
            seen.insert(name);
        }
        assert_eq!(seen.len(), 12);
        match &built[2].kind {
            Some(Kind::TakeDiscards(t)) => assert_eq!((t.count, t.meld.as_ref().map(|g| g.cards.len())), (1, Some(2))),
            other => panic!("{other:?}"),
        }
        match &built[3].kind {
            Some(Kind::TakeDiscards(t)) => assert_eq!(t.lay_off_on, Some(5)),
            other => panic!("{other:?}"),
        }
        match &built[4].kind {
            Some(Kind::Meld(m)) => assert_eq!(m.groups[0].stands_for[0].wild, Some(c[2])),
            other => panic!("{other:?}"),
        }
        assert_eq!(built[7].discarded_card(), Some(c[3]));
    }
}
