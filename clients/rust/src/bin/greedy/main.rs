//! The example bot: greedy Indian rummy (any other variant: the first legal action).
//!
//! `greedy --referee HOST:PORT --bot-token T` plays match after match; `greedy --match ID --token T` one seat.
//! With `--probe-rejection` its first answer in each match is deliberately illegal (a Discard of a card it does
//! not hold, sent in the DRAW phase): it prints the referee's `rejected CODE: message` and, for that request
//! only, answers again with its greedy choice, then plays on normally. That shows the rejection path end to end.

mod indian;

use std::collections::HashMap;
use std::process::ExitCode;

use rummybot::cards::SUITS;
use rummybot::{Action, Bot, Card, MatchResult, Options, OptionsError, Phase, Request, SeatView, Seated};

const PROBE_FLAG: &str = "--probe-rejection";

#[derive(Default)]
struct Greedy {
    probe_rejection: bool,
    /// Per match: how far the deliberate illegal answer has got.
    probes: HashMap<String, Probe>,
}

/// The `--probe-rejection` answer of one match: one illegal action, then one re-answer of that request.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Probe {
    #[default]
    NotSent,
    Sent {
        request_id: u64,
    },
    Answered,
}

impl Greedy {
    fn choose(view: &SeatView, legal: &[Action]) -> Action {
        match view.variant.as_str() {
            "indian" => indian::greedy(view, legal),
            _ => legal.first().cloned().unwrap_or_default(),
        }
    }
}

impl Bot for Greedy {
    fn name(&self) -> &str {
        "rust-greedy"
    }

    fn decide(&mut self, view: &SeatView, legal: &[Action], request: &Request) -> Action {
        if self.probe_rejection && request.phase == Phase::Draw {
            let probe = self.probes.entry(request.match_id.clone()).or_default();
            if *probe == Probe::NotSent {
                *probe = Probe::Sent { request_id: request.request_id };
                return Action::discard(card_not_in(&view.hand));
            }
        }
        Self::choose(view, legal)
    }

    fn on_seated(&mut self, seated: &Seated) {
        self.probes.insert(seated.match_id.clone(), Probe::NotSent);
    }

    fn on_rejected(&mut self, code: &str, message: &str, request: &Request) -> Option<Action> {
        eprintln!("rejected {code}: {message}");
        let probe = self.probes.get_mut(&request.match_id)?;
        if *probe != (Probe::Sent { request_id: request.request_id }) {
            return None; // a rejection of a greedy answer is a bug to show, not to paper over
        }
        *probe = Probe::Answered;
        Some(Self::choose(&request.view, &request.legal_actions))
    }

    fn on_match_result(&mut self, result: &MatchResult) {
        self.probes.remove(&result.match_id);
        let ranking: Vec<&[u32]> = result.ranking.iter().map(|place| place.seats.as_slice()).collect();
        println!("match {} ended: ranking {ranking:?} totals {:?} ({})", result.match_id, result.totals, result.reason);
    }
}

/// The first card of a pack that `hand` lacks (a 13-card hand always lacks one).
fn card_not_in(hand: &[Card]) -> Card {
    SUITS
        .iter()
        .flat_map(|&suit| (1..=13).map(move |rank| Card { rank, suit: suit as i32 }))
        .find(|card| !hand.contains(card))
        .unwrap_or_else(Card::joker)
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let probe_rejection = args.iter().any(|arg| arg == PROBE_FLAG);
    args.retain(|arg| arg != PROBE_FLAG);
    let options = match Options::parse(args, |key| std::env::var(key).ok()) {
        Ok(options) => options,
        Err(OptionsError::Help) => {
            println!(
                "{}\n  {PROBE_FLAG}    answer illegally once per match to show the referee's rejection",
                OptionsError::Help
            );
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let mut bot = Greedy { probe_rejection, ..Greedy::default() };
    rummybot::main_with(&mut bot, &options)
}
