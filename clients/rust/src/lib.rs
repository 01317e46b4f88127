//! The Rust bot SDK for the Rummy Referee: connect to a referee over gRPC, be seated, answer decisions.
//!
//! A bot implements [`Bot::decide`]: given its [`SeatView`] (hand, table, scores) and the actions the referee
//! knows to be legal, it returns an [`Action`]; returning one of the listed actions is always accepted.
//! [`main`] reads `--referee HOST:PORT` (or `unix:/PATH`, a Unix domain socket) and `--bot-token T` (match after
//! match over one connection) or `--match ID --token T` (one seat of one match), each falling back to the
//! environment (RUMMY_REFEREE, RUMMY_BOT_TOKEN, RUMMY_MATCH, RUMMY_SEAT_TOKEN), then plays until the referee is
//! done with the bot.
//!
//! Cards: `card.rank()` and `card.suit()` give the enums, which compare in rank order (`card.rank() >= Rank::Ten`,
//! `Rank::Ace.number() == 1`); [`parse_cards`] and [`format_cards`] read and write the text notation (`"AH 2H 3H"`);
//! [`Action`] has a constructor for every kind (`Action::draw_stock()`, `Action::discard(card)`, `Action::meld(..)`).
//!
//! ```no_run
//! use rummybot::{Action, Bot, Request, SeatView};
//!
//! struct FirstLegal;
//!
//! impl Bot for FirstLegal {
//!     fn decide(&mut self, _view: &SeatView, legal: &[Action], _request: &Request) -> Action {
//!         legal[0].clone()
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     rummybot::main(FirstLegal)
//! }
//! ```

pub mod actions;
pub mod cards;
mod options;
mod sdk;

/// The wire types of `rummy.referee.v1`, generated from `protos/` by `build.rs`.
pub mod proto {
    tonic::include_proto!("rummy.referee.v1");
}

pub use cards::{CardParseError, RANK_JOKER, SUITS, format_cards, parse_cards};
pub use options::{Credential, Options, OptionsError, RECONNECT_ENV, Tls, USAGE, reconnect_forever_from_env};
pub use proto::{
    Action, Card, DecisionRequest, Group, HandResult, MatchEvent, MatchResult, Phase, Rank, SeatView, Seated, Suit,
    WildAssignment,
};
pub use sdk::{
    Bot, Error, RECONNECT_CAP, RECONNECT_INITIAL, Request, SDK_VERSION, backoff, backoff_ceiling, connect,
    connect_with, main, main_with, run, unix_socket_path,
};
