//! The Play stream: join, then hand each referee message to the bot's hooks and send its answers.

use std::collections::HashMap;
use std::fmt;
use std::process::ExitCode;

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::Code;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::options::{Credential, Options, OptionsError};
use crate::proto::join::Credential as JoinCredential;
use crate::proto::play_request::Body as Outgoing;
use crate::proto::referee_service_client::RefereeServiceClient;
use crate::proto::play_response::Body as Incoming;
use crate::proto::{
    Action, ActionMessage, DecisionRequest, HandResult, Join, MatchEvent, MatchResult, Phase, PlayRequest,
    SeatCredential, SeatView, Seated,
};

/// Sent in the Join, for the referee's logs: `rust/` and the crate's version (the project's VERSION).
pub const SDK_VERSION: &str = concat!("rust/", env!("CARGO_PKG_VERSION"));

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
    /// No referee answered at `address` (nothing listening there, or an address that cannot be used). Shown as
    /// one line naming the address.
    Connect { address: String, error: tonic::transport::Error },
    /// The referee ended the stream with an error status (a wrong token is `PERMISSION_DENIED`).
    Status(tonic::Status),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connect { address, error } => {
                // tonic's own text is only "transport error": the cause (refused, bad address) is in the sources.
                write!(f, "cannot reach the referee at {address}: {error}")?;
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

impl From<tonic::Status> for Error {
    fn from(status: tonic::Status) -> Self {
        Error::Status(status)
    }
}

/// The path of a Unix domain socket address, `unix:PATH` or `unix:///ABS/PATH` (gRPC's names for one); `None`
/// for a `HOST:PORT`.
pub fn unix_socket_path(address: &str) -> Option<&str> {
    let rest = address.strip_prefix("unix:")?;
    Some(rest.strip_prefix("//").unwrap_or(rest))
}

/// A channel to `address`: `HOST:PORT` over TCP, or `unix:/PATH` over a Unix domain socket (how a sandboxed bot
/// with no network reaches its referee).
pub async fn connect(address: &str) -> Result<Channel, Error> {
    let failed = |error| Error::Connect { address: address.to_string(), error };
    match unix_socket_path(address) {
        Some(path) => {
            let path = path.to_string();
            // The URI is only a placeholder for HTTP/2's authority: the connector dials the socket.
            Endpoint::from_static("http://localhost")
                .connect_with_connector(tower::service_fn(move |_: Uri| {
                    let path = path.clone();
                    async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?)) }
                }))
                .await
                .map_err(failed)
        }
        None => Endpoint::from_shared(format!("http://{address}")).map_err(failed)?.connect().await.map_err(failed),
    }
}

/// Plays until the referee closes the stream (bot-token mode) or the one match ends (seat mode); returns the
/// results of the matches played. [`Error::Connect`] when no referee answers at `options.referee`.
pub async fn run<B: Bot + ?Sized>(bot: &mut B, options: &Options) -> Result<Vec<MatchResult>, Error> {
    let channel = connect(&options.referee).await?;
    let mut client = RefereeServiceClient::new(channel);
    let (outbox, outgoing) = mpsc::unbounded_channel();
    let send = |body: Outgoing| {
        // The receiver lives as long as the call; a send fails only once the stream is over.
        let _ = outbox.send(PlayRequest { body: Some(body) });
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

/// Runs `bot` with this process's command line until the referee is done with it: exit 0 then (and, with a bot
/// token, when the referee goes away), 2 on a bad command line, 1 on an error; with no referee at the address,
/// 1 and one line naming it.
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
    let name = options.name.as_deref().unwrap_or(bot.name()).to_string();
    let bot_token = matches!(options.credential, Credential::BotToken(_));
    match runtime.block_on(run(bot, options)) {
        Ok(_) => ExitCode::SUCCESS,
        // The referee shutting down or hanging up ends a bot-token session (a tournament ends by stopping it), as
        // in the other SDKs; a seat whose match did not end has failed.
        Err(Error::Status(status)) if bot_token && matches!(status.code(), Code::Unavailable | Code::Cancelled) => {
            ExitCode::SUCCESS
        }
        Err(error @ Error::Connect { .. }) => {
            eprintln!("{name}: {error}");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("{name}: {error} (referee {})", options.referee);
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_addresses_name_a_socket_path() {
        assert_eq!(unix_socket_path("unix:/run/rummy/referee.sock"), Some("/run/rummy/referee.sock"));
        assert_eq!(unix_socket_path("unix:///run/rummy/referee.sock"), Some("/run/rummy/referee.sock"));
        assert_eq!(unix_socket_path("unix:ref.sock"), Some("ref.sock"));
        assert_eq!(unix_socket_path("127.0.0.1:50051"), None);
        assert_eq!(unix_socket_path("[::1]:50051"), None);
    }

    #[test]
    fn nothing_listening_is_a_one_line_error_naming_the_address() {
        let dir = std::env::temp_dir().join(format!("rummy-rust-{}", std::process::id()));
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        for address in [format!("unix:{}/none.sock", dir.display()), closed] {
            let error = runtime.block_on(connect(&address)).unwrap_err();
            let text = error.to_string();
            assert!(matches!(error, Error::Connect { .. }), "{address}: {text}");
            assert!(text.starts_with(&format!("cannot reach the referee at {address}: ")), "{text}");
            assert!(!text.contains('\n'), "{text}");
        }
    }
}
