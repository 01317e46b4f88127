//! Short constructors and tests for [`Action`], whose payload is the generated `action::Kind` oneof.

use crate::proto::action::Kind;
use crate::proto::{self, Action, Card};

impl Action {
    /// Wraps one `Kind` (`DrawStock`, `Discard`, `Declare`, ...) as an action.
    pub fn of(kind: Kind) -> Self {
        Action { kind: Some(kind) }
    }

    /// Draw the top card of the stock.
    pub fn draw_stock() -> Self {
        Self::of(Kind::DrawStock(proto::DrawStock {}))
    }

    /// Discard `card` from the hand, ending the turn.
    pub fn discard(card: Card) -> Self {
        Self::of(Kind::Discard(proto::Discard { card: Some(card) }))
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
