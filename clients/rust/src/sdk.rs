//! The Play stream: join, then hand each referee message to the bot's hooks and send its answers.

use std::collections::HashMap;
use std::fmt;
use std::process::ExitCode;

use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::Code;
use tonic::transport::Endpoint;

use crate::options::{Credential, Options, OptionsError};
use crate::proto::join::Credential as JoinCredential;
use crate::proto::player_message::Body as Outgoing;
use crate::proto::referee_client::RefereeClient;
use crate::proto::referee_message::Body as Incoming;
use crate::proto::{
    Action, ActionMessage, DecisionRequest, HandResult, Join, MatchEvent, MatchResult, Phase, PlayerMessage,
    SeatCredential, SeatView, Seated,
};

/// Sent in the Join, for the referee's logs.
pub const SDK_VERSION: &str = "rust/0.1.0";

/// One decision the referee asked for: which match, the seat's view, the listed legal actions, the clock.
#[derive(Debug, Clone)]
pub struct Request {
    pub match_id: String,
    /// Echoed in the answer; a rejection names it too.
    pub request_id: u64,
    pub phase: Phase,
    pub view: SeatView,
    pub legal_actions: Vec<Action>,
    pub time_left_ms: u32,
    pub bank_left_ms: u32,
}

impl Request {
    /// This seat's number in its match.
    pub fn seat(&self) -> u32 {
        self.view.seat
    }
}

impl From<DecisionRequest> for Request {
    fn from(decision: DecisionRequest) -> Self {
        Request {
            phase: decision.phase(),
            match_id: decision.match_id,
            request_id: decision.request_id,
            view: decision.view.unwrap_or_default(),
            legal_actions: decision.legal_actions,
            time_left_ms: decision.time_left_ms,
            bank_left_ms: decision.bank_left_ms,
        }
    }
}

/// A bot: [`decide`](Bot::decide) answers each decision; the other hooks are optional.
///
/// Hooks run on the connection's task one message at a time, in arrival order, so a bot needs no locking; one
/// connection may carry several matches at once, so keep per-match state keyed by `match_id`.
pub trait Bot {
    /// The name sent in the Join (`--name` overrides it).
    fn name(&self) -> &str {
        "rust-bot"
    }

    /// The action to play. Any of `legal` is accepted; the referee may also accept actions it did not list.
    fn decide(&mut self, view: &SeatView, legal: &[Action], request: &Request) -> Action;

    /// A new match starts for this bot.
    fn on_seated(&mut self, _seated: &Seated) {}

    /// Something happened that this seat may see.
    fn on_event(&mut self, _event: &MatchEvent) {}

    /// A hand of a match ended.
    fn on_hand_result(&mut self, _result: &HandResult) {}

    /// The referee refused the answer to `request`. Return another action to try again before the deadline, or
    /// `None` to send nothing more (the deadline's default move then applies). The default prints the reason and
    /// returns `None`: substituting a move silently would hide the bot's bug.
    fn on_rejected(&mut self, code: &str, message: &str, _request: &Request) -> Option<Action> {
        eprintln!("rejected {code}: {message}");
        None
    }

    /// A match ended.
    fn on_match_result(&mut self, _result: &MatchResult) {}
}

/// Why [`run`] stopped early.
#[derive(Debug)]
pub enum Error {
    /// The referee address could not be used or reached.
    Connect(tonic::transport::Error),
    /// The referee ended the stream with an error status (a wrong token is `PERMISSION_DENIED`).
    Status(tonic::Status),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connect(error) => {
                // tonic's own text is only "transport error": the cause (refused, bad address) is in the sources.
                write!(f, "cannot connect to the referee: {error}")?;
                let mut source = std::error::Error::source(error);
                while let Some(cause) = source {
                    write!(f, ": {cause}")?;
                    source = cause.source();
                }
                Ok(())
            }
            Error::Status(status) => write!(f, "{:?}: {}", status.code(), status.message()),
        }
    }
}

impl std::error::Error for Error {}

impl From<tonic::transport::Error> for Error {
    fn from(error: tonic::transport::Error) -> Self {
        Error::Connect(error)
    }
}

impl From<tonic::Status> for Error {
    fn from(status: tonic::Status) -> Self {
        Error::Status(status)
    }
}

/// Plays until the referee closes the stream (bot-token mode) or the one match ends (seat mode); returns the
/// results of the matches played.
pub async fn run<B: Bot + ?Sized>(bot: &mut B, options: &Options) -> Result<Vec<MatchResult>, Error> {
    let channel = Endpoint::from_shared(format!("http://{}", options.referee))?.connect().await?;
    let mut client = RefereeClient::new(channel);
    let (outbox, outgoing) = mpsc::unbounded_channel();
    let send = |body: Outgoing| {
        // The receiver lives as long as the call; a send fails only once the stream is over.
        let _ = outbox.send(PlayerMessage { body: Some(body) });
    };
    send(Outgoing::Join(join(options, bot.name())));
    let mut incoming = client.play(UnboundedReceiverStream::new(outgoing)).await?.into_inner();

    let seat_match = match &options.credential {
        Credential::Seat { match_id, .. } => Some(match_id.as_str()),
        Credential::BotToken(_) => None,
    };
    let answer = |request: &Request, action: Action| {
        send(Outgoing::Action(ActionMessage {
            match_id: request.match_id.clone(),
            request_id: request.request_id,
            action: Some(action),
        }))
    };
    // Answered but not yet accepted, by (match, request): a rejection is handed back with its request.
    let mut open: HashMap<(String, u64), Request> = HashMap::new();
    let mut results = Vec::new();
    while let Some(message) = incoming.message().await? {
        match message.body {
            Some(Incoming::Decision(decision)) => {
                let request = Request::from(decision);
                let action = bot.decide(&request.view, &request.legal_actions, &request);
                answer(&request, action);
                open.insert((request.match_id.clone(), request.request_id), request);
            }
            Some(Incoming::Rejected(rejected)) => match open.get(&(rejected.match_id, rejected.request_id)) {
                Some(request) => {
                    if let Some(retry) = bot.on_rejected(&rejected.code, &rejected.message, request) {
                        answer(request, retry);
                    }
                }
                None => eprintln!("rejected {}: {}", rejected.code, rejected.message),
            },
            Some(Incoming::Accepted(accepted)) => {
                open.remove(&(accepted.match_id, accepted.request_id));
            }
            Some(Incoming::Seated(seated)) => bot.on_seated(&seated),
            Some(Incoming::Event(event)) => bot.on_event(&event),
            Some(Incoming::HandResult(result)) => bot.on_hand_result(&result),
            Some(Incoming::MatchResult(result)) => {
                open.retain(|(match_id, _), _| *match_id != result.match_id);
                bot.on_match_result(&result);
                let done = seat_match == Some(result.match_id.as_str());
                results.push(result);
                if done {
                    break;
                }
            }
            // a batch comes only to a client whose Join set `batch`, which this SDK does not
            Some(Incoming::Welcome(_)) | Some(Incoming::Batch(_)) | None => {}
        }
    }
    Ok(results)
}

fn join(options: &Options, default_name: &str) -> Join {
    let credential = match &options.credential {
        Credential::BotToken(token) => JoinCredential::BotToken(token.clone()),
        Credential::Seat { match_id, token } => {
            JoinCredential::Seat(SeatCredential { match_id: match_id.clone(), token: token.clone() })
        }
    };
    Join {
        credential: Some(credential),
        bot_name: options.name.clone().unwrap_or_else(|| default_name.to_string()),
        sdk: SDK_VERSION.to_string(),
        ..Default::default() // no resume points (this SDK does not rejoin) and no batches
    }
}

/// Runs `bot` with this process's command line until the referee is done with it: exit 0 then, 2 on a bad
/// command line, 1 on an error.
pub fn main<B: Bot>(mut bot: B) -> ExitCode {
    match Options::from_env() {
        Ok(options) => main_with(&mut bot, &options),
        Err(OptionsError::Help) => {
            println!("{}", OptionsError::Help);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::from(2)
        }
    }
}

/// [`main`] with options already parsed (a bot with flags of its own parses them first).
pub fn main_with<B: Bot + ?Sized>(bot: &mut B, options: &Options) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(bot, options)) {
        Ok(_) => ExitCode::SUCCESS,
        // The referee shutting down or hanging up ends the bot's work, as in the Python SDK.
        Err(Error::Status(status)) if matches!(status.code(), Code::Unavailable | Code::Cancelled) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}: {error}", options.name.as_deref().unwrap_or(bot.name()));
            ExitCode::FAILURE
        }
    }
}
