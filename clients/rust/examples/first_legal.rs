//! The smallest bot: always the first legal action.
use rummybot::{Action, Bot, MatchResult, Request, SeatView};

struct FirstLegal;

impl Bot for FirstLegal {
    fn name(&self) -> &str {
        "rust-first-legal"
    }

    fn decide(&mut self, _view: &SeatView, legal: &[Action], _request: &Request) -> Action {
        legal[0].clone() // any listed action is legal
    }

    fn on_match_result(&mut self, result: &MatchResult) {
        println!("match {} ended: {}", result.match_id, result.reason);
    }
}

fn main() -> std::process::ExitCode {
    rummybot::main(FirstLegal)
}
