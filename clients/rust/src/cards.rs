//! The card text notation of logs, records and the CLI: rank then suit, `A23456789TJQK` and `SHDC`
//! (`"QS"`, `"TH"`, `"2C"`), and [`RANK_JOKER`] (`"JK"`) for a printed joker. The wire uses the enums.

use std::fmt;
use std::str::FromStr;

use crate::proto::{Card, Rank, Suit};

/// The text of a printed joker.
pub const RANK_JOKER: &str = "JK";

const RANK_LETTERS: &str = "A23456789TJQK";
const SUIT_LETTERS: &str = "SHDC";

/// The four suits, in wire order.
pub const SUITS: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];

impl Card {
    pub fn new(rank: Rank, suit: Suit) -> Self {
        Card { rank: rank as i32, suit: suit as i32 }
    }

    /// A printed joker (it has no suit).
    pub fn joker() -> Self {
        Self::new(Rank::Joker, Suit::None)
    }

    pub fn is_joker(&self) -> bool {
        self.rank() == Rank::Joker
    }
}

/// Ranks compare in their wire order (`Rank::Two < Rank::Three`, `Rank::Ace` lowest of the naturals, `Rank::Joker`
/// above all: it is 14 on the wire, whose zero is `Rank::Unspecified`): `card.rank()` is the enum, so
/// `card.rank() >= Rank::Ten` needs no cast. `number` is the rank as a count (ace 1, ten 10, king 13; joker 0), for
/// arithmetic such as runs.
///
/// ```
/// use rummybot::{Action, Group, Rank, format_cards, parse_cards};
///
/// let hand = parse_cards("TH JH QH 4C").unwrap();
/// let high: Vec<_> = hand.iter().filter(|c| c.rank() >= Rank::Ten).copied().collect();
/// assert_eq!(format_cards(&high), "TH JH QH");
/// let run = Action::meld(vec![Group::of(high)]);
/// assert_eq!(Rank::Queen.number() - Rank::Ten.number(), 2);
/// # let _ = run;
/// ```
impl Rank {
    pub fn number(self) -> i32 {
        if self == Rank::Joker { 0 } else { self as i32 }
    }

    /// The rank whose `number` is `n` (0, a joker, to 13).
    pub fn from_number(n: i32) -> Option<Rank> {
        match n {
            0 => Some(Rank::Joker),
            1..=13 => Rank::try_from(n).ok(),
            _ => None,
        }
    }
}

/// Writes the text notation; a card outside the enums (never sent by the referee) shows as `??`.
impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_joker() {
            return f.write_str(RANK_JOKER);
        }
        let letter = |letters: &str, value: i32| {
            usize::try_from(value - 1).ok().and_then(|i| letters.chars().nth(i)).unwrap_or('?')
        };
        write!(f, "{}{}", letter(RANK_LETTERS, self.rank), letter(SUIT_LETTERS, self.suit))
    }
}

/// Text that is not a card in the notation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardParseError(pub String);

impl fmt::Display for CardParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a card: {:?} (write rank then suit, e.g. QS, TH, 2C, or JK)", self.0)
    }
}

impl std::error::Error for CardParseError {}

/// Reads `"QS"`, `"th"`, `"10H"` (as the referee does) and `"JK"`.
impl FromStr for Card {
    type Err = CardParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let upper = text.trim().to_ascii_uppercase();
        if matches!(upper.as_str(), RANK_JOKER | "JO" | "*") {
            return Ok(Card::joker());
        }
        let error = || CardParseError(text.to_string());
        let split = upper.len().checked_sub(1).filter(|&i| i > 0 && upper.is_char_boundary(i)).ok_or_else(error)?;
        let (rank_text, suit_text) = upper.split_at(split);
        let rank = match rank_text {
            "10" => Some(10),
            _ if rank_text.len() == 1 => RANK_LETTERS.find(rank_text).map(|i| i as i32 + 1),
            _ => None,
        };
        let suit = SUIT_LETTERS.find(suit_text).map(|i| i as i32 + 1);
        match (rank, suit) {
            (Some(rank), Some(suit)) => Ok(Card { rank, suit }),
            _ => Err(error()),
        }
    }
}

/// Reads cards separated by spaces or commas: `"AH 2H 3H"`.
pub fn parse_cards(text: &str) -> Result<Vec<Card>, CardParseError> {
    text.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()).map(str::parse).collect()
}

/// Writes cards separated by spaces.
pub fn format_cards(cards: &[Card]) -> String {
    cards.iter().map(Card::to_string).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_round_trips_through_its_text() {
        let mut cards: Vec<Card> =
            SUITS.iter().flat_map(|&suit| (1..=13).map(move |rank| Card { rank, suit: suit as i32 })).collect();
        cards.push(Card::joker());
        for card in cards {
            assert_eq!(card.to_string().parse::<Card>(), Ok(card), "{card}");
        }
    }

    #[test]
    fn reads_the_notation_as_the_referee_does() {
        assert_eq!("QS".parse(), Ok(Card::new(Rank::Queen, Suit::Spades)));
        assert_eq!("th".parse(), Ok(Card::new(Rank::Ten, Suit::Hearts)));
        assert_eq!("10H".parse(), Ok(Card::new(Rank::Ten, Suit::Hearts)));
        assert_eq!("2C".parse(), Ok(Card::new(Rank::Two, Suit::Clubs)));
        assert_eq!(RANK_JOKER.parse(), Ok(Card::joker()));
        assert_eq!(format_cards(&parse_cards("AH, 2H 3h JK").unwrap()), "AH 2H 3H JK");
    }

    #[test]
    fn ranks_compare_without_casts() {
        let ten: Card = "TH".parse().unwrap();
        assert!(Rank::Two < Rank::Three && Rank::Queen < Rank::King && Rank::King < Rank::Joker);
        assert!(ten.rank() >= Rank::Ten && ten.rank() < Rank::Jack);
        assert_eq!((Rank::Ace.number(), Rank::King.number()), (1, 13));
        assert_eq!(Rank::from_number(12), Some(Rank::Queen));
        assert_eq!(Rank::from_number(14), None);
        assert_eq!((Rank::Joker.number(), Rank::from_number(0)), (0, Some(Rank::Joker)));
        let mut hand = parse_cards("KS 2H TH AC").unwrap();
        hand.sort_by_key(|c| c.rank());
        assert_eq!(format_cards(&hand), "AC 2H TH KS");
    }

    #[test]
    fn refuses_what_is_not_a_card() {
        for text in ["", "Q", "1S", "QX", "11H", "QSS", "é"] {
            assert!(text.parse::<Card>().is_err(), "{text:?}");
        }
    }
}
