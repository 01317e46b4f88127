//! The Play stream: join, then hand each referee message to the bot's hooks and send its answers.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::Code;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity, Uri};

use crate::options::{Credential, Options, OptionsError, Tls};
use crate::proto::join::Credential as JoinCredential;
use crate::proto::play_request::Body as Outgoing;
use crate::proto::play_response::Body as Incoming;
use crate::proto::referee_service_client::RefereeServiceClient;
use crate::proto::{
    Action, ActionMessage, DecisionRequest, HandResult, Join, MatchEvent, MatchResult, Phase, PlayRequest, ResumePoint,
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
    /// A connection was made but no referee answered on it (a TLS referee spoken to in plaintext, or one whose
    /// certificate is not trusted; something else on the port). Shown as one line naming the address.
    Unreachable { address: String, status: tonic::Status },
    /// The TLS options cannot be used: a certificate file that cannot be read. Shown as one line naming it.
    Tls(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connect { address, error } => {
                write!(f, "cannot reach the referee at {address}: {}", error_chain(error))
            }
            Error::Status(status) => write!(f, "{:?}: {}", status.code(), status.message()),
            Error::Unreachable { address, status } => {
                write!(f, "cannot reach the referee at {address}: {}", one_line(status.message()))
            }
            Error::Tls(why) => f.write_str(why),
        }
    }
}

/// tonic's own text is only "transport error": the cause (refused, bad address, a certificate not trusted) is in
/// the sources.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
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
/// with no network reaches its referee). Plaintext; [`connect_with`] speaks TLS.
pub async fn connect(address: &str) -> Result<Channel, Error> {
    connect_with(address, None).await
}

/// [`connect`], over TLS when `tls` is given: the referee's certificate is checked against `tls.root_cert` (a PEM
/// CA file) or, without one, the system's roots, and must name the address's host.
pub async fn connect_with(address: &str, tls: Option<&Tls>) -> Result<Channel, Error> {
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
        None => {
            let scheme = if tls.is_some() { "https" } else { "http" };
            let mut endpoint = Endpoint::from_shared(format!("{scheme}://{address}")).map_err(failed)?;
            if let Some(tls) = tls {
                endpoint = endpoint.tls_config(tls_config(address, tls)?).map_err(failed)?;
            }
            endpoint.connect().await.map_err(failed)
        }
    }
}

fn tls_config(address: &str, tls: &Tls) -> Result<ClientTlsConfig, Error> {
    let read = |path: &str| {
        std::fs::read(path).map_err(|error| Error::Tls(format!("cannot read the TLS file {path}: {error}")))
    };
    // The name the certificate must carry: the address's host (an IP address too, as the referee's test
    // certificates name 127.0.0.1).
    let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
    let mut config = ClientTlsConfig::new().domain_name(host.trim_start_matches('[').trim_end_matches(']'));
    config = match &tls.root_cert {
        Some(path) => config.ca_certificate(Certificate::from_pem(read(path)?)),
        None => config.with_native_roots(),
    };
    if let (Some(cert), Some(key)) = (&tls.client_cert, &tls.client_key) {
        config = config.identity(Identity::from_pem(read(cert)?, read(key)?));
    }
    Ok(config)
}

/// The waits between joins when reconnecting forever: 0.25 s doubling to 30 s.
pub const RECONNECT_INITIAL: Duration = Duration::from_millis(250);
pub const RECONNECT_CAP: Duration = Duration::from_secs(30);

/// The attempt-th wait (from 1) before jitter: `first` doubling to `cap`.
pub fn backoff_ceiling(first: Duration, cap: Duration, attempt: u32) -> Duration {
    let doublings = attempt.saturating_sub(1).min(30);
    first.saturating_mul(1 << doublings).min(cap)
}

/// The attempt-th wait: [`backoff_ceiling`], then a random part (half to all) of it, so that the bots of a ladder
/// that restarted do not all knock at once.
pub fn backoff(first: Duration, cap: Duration, attempt: u32) -> Duration {
    let ceiling = backoff_ceiling(first, cap, attempt);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos());
    let fraction = (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64; // uniform in [0, 1)
    ceiling / 2 + ceiling.mul_f64(fraction / 2.0)
}

/// Worth joining again (reconnecting forever, after a welcome): the stream dropped (the network, a referee
/// restarting: `Unavailable`, or `Internal`), no connection could be made, or a referee's limit was hit (every
/// bot of a ladder joining at once after its restart). Anything else (a revoked key) is final.
fn retryable(error: &Error) -> bool {
    match error {
        Error::Connect { .. } => true,
        Error::Status(status) => matches!(status.code(), Code::Unavailable | Code::Internal | Code::ResourceExhausted),
        Error::Unreachable { .. } | Error::Tls(_) => false,
    }
}

/// What a bot's streams share: across reconnects, what was seen (each match's last event, the matches seated and
/// finished) and what was answered, so the bot hears each message once.
#[derive(Default)]
struct Session {
    /// Answered but not yet accepted, by (match, request): a rejection is handed back with its request.
    open: HashMap<(String, u64), Request>,
    /// The answer sent to each open request: sent again when the referee asks again after a rejoin.
    sent: HashMap<(String, u64), Action>,
    last_seq: HashMap<String, u64>,
    seated: HashSet<String>,
    finished: HashSet<String>,
    results: Vec<MatchResult>,
    /// A referee answered at least once: a later drop means it went away, not that none was there.
    welcomed: bool,
}

impl Session {
    fn resume_points(&self) -> Vec<ResumePoint> {
        let mut open: Vec<&String> = self.seated.difference(&self.finished).collect();
        open.sort();
        open.into_iter()
            .map(|m| ResumePoint { match_id: m.clone(), last_seq: self.last_seq.get(m).copied().unwrap_or(0) })
            .collect()
    }
}

/// Plays until the referee closes the stream (bot-token mode) or the one match ends (seat mode); returns the
/// results of the matches played. [`Error::Connect`] when no referee answers at `options.referee`.
///
/// With `options.reconnect_forever` (bot-token mode; RUMMY_RECONNECT=forever or --reconnect-forever from
/// [`main`]), a stream that drops after a referee welcomed the bot is joined again without end, waiting
/// [`RECONNECT_INITIAL`] doubling to [`RECONNECT_CAP`], each wait a random part (half to all) of that; the Join
/// names each match's last event seen, so the bot sees each event once and each decision once. A referee that
/// never answered still fails at once, and a final answer (a revoked key) still ends it. Each reconnect is one
/// line on stderr, naming the address, never the token.
pub async fn run<B: Bot + ?Sized>(bot: &mut B, options: &Options) -> Result<Vec<MatchResult>, Error> {
    let forever = options.reconnect_forever && matches!(options.credential, Credential::BotToken(_));
    let name = options.name.clone().unwrap_or_else(|| bot.name().to_string());
    let mut session = Session::default();
    let mut attempt: u32 = 0;
    loop {
        let (outcome, joined) = play_stream(bot, options, &name, &mut session).await;
        let error = match outcome {
            Ok(()) => return Ok(session.results),
            Err(error) => error,
        };
        let error = match error {
            // before any welcome, a dropped stream means no referee was there (Go's and Python's UnreachableError)
            Error::Status(status) if !session.welcomed && status.code() == Code::Unavailable => {
                Error::Unreachable { address: options.referee.clone(), status }
            }
            other => other,
        };
        attempt = if joined { 1 } else { attempt + 1 }; // a welcomed stream's drop waits from the start again
        if !forever || !session.welcomed || !retryable(&error) {
            return Err(error);
        }
        let wait = backoff(RECONNECT_INITIAL, RECONNECT_CAP, attempt);
        let why = match &error {
            Error::Status(status) => format!("{:?}: {}", status.code(), one_line(status.message())),
            Error::Connect { error, .. } => format!("Unavailable: {}", one_line(&error_chain(error))),
            other => one_line(&other.to_string()),
        };
        eprintln!(
            "{name}: no stream to the referee at {} ({why}); joining again in {:.1} s (try {attempt})",
            options.referee,
            wait.as_secs_f64()
        );
        tokio::time::sleep(wait).await;
    }
}

/// A connection that broke under the stream (the referee killed, the network gone) comes from tonic as `Unknown`
/// ("error reading a body from connection"), where gRPC's other implementations say `Unavailable`: it is told
/// apart from a status the referee sent by its source, the transport's own error.
fn dropped_is_unavailable(status: tonic::Status) -> tonic::Status {
    if status.code() == Code::Unknown && std::error::Error::source(&status).is_some() {
        let cause = std::error::Error::source(&status).map(error_chain).unwrap_or_default();
        return tonic::Status::unavailable(format!("the connection broke: {cause}"));
    }
    status
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(160).collect()
}

/// One Play stream on a connection of its own; `Ok` when the bot is done (the referee closed the stream, or the
/// seat's match ended), with whether this stream was welcomed.
async fn play_stream<B: Bot + ?Sized>(
    bot: &mut B,
    options: &Options,
    name: &str,
    session: &mut Session,
) -> (Result<(), Error>, bool) {
    let mut joined = false;
    let outcome = async {
        let channel = connect_with(&options.referee, options.tls.as_ref()).await?;
        let mut client = RefereeServiceClient::new(channel);
        let (outbox, outgoing) = mpsc::unbounded_channel();
        let send = |body: Outgoing| {
            // The receiver lives as long as the call; a send fails only once the stream is over.
            let _ = outbox.send(PlayRequest { body: Some(body) });
        };
        send(Outgoing::Join(join(options, name, session.resume_points())));
        let mut incoming =
            client.play(UnboundedReceiverStream::new(outgoing)).await.map_err(dropped_is_unavailable)?.into_inner();

        let seat_match = match &options.credential {
            Credential::Seat { match_id, .. } => Some(match_id.as_str()),
            Credential::BotToken(_) => None,
        };
        let answer = |session: &mut Session, request: &Request, action: Action| {
            session.sent.insert((request.match_id.clone(), request.request_id), action.clone());
            send(Outgoing::Action(ActionMessage {
                match_id: request.match_id.clone(),
                request_id: request.request_id,
                action: Some(action),
            }))
        };
        while let Some(message) = incoming.message().await.map_err(dropped_is_unavailable)? {
            match message.body {
                Some(Incoming::Welcome(_)) => {
                    joined = true;
                    session.welcomed = true;
                }
                Some(Incoming::Decision(decision)) => {
                    let key = (decision.match_id.clone(), decision.request_id);
                    if let (Some(action), Some(request)) = (session.sent.get(&key), session.open.get(&key)) {
                        // asked again after a rejoin: the answer never arrived
                        let (action, request) = (action.clone(), request.clone());
                        answer(session, &request, action);
                        continue;
                    }
                    let request = Request::from(decision);
                    let action = bot.decide(&request.view, &request.legal_actions, &request);
                    answer(session, &request, action);
                    session.open.insert(key, request);
                }
                Some(Incoming::Rejected(rejected)) => {
                    let key = (rejected.match_id, rejected.request_id);
                    session.sent.remove(&key);
                    match session.open.get(&key).cloned() {
                        Some(request) => {
                            if let Some(retry) = bot.on_rejected(&rejected.code, &rejected.message, &request) {
                                answer(session, &request, retry);
                            }
                        }
                        None => eprintln!("rejected {}: {}", rejected.code, rejected.message),
                    }
                }
                Some(Incoming::Accepted(accepted)) => {
                    let key = (accepted.match_id, accepted.request_id);
                    session.open.remove(&key);
                    session.sent.remove(&key);
                }
                Some(Incoming::Seated(seated)) => {
                    // a rejoin seats it again: the bot hears of it once
                    if session.seated.insert(seated.match_id.clone()) {
                        bot.on_seated(&seated);
                    }
                }
                Some(Incoming::Event(event)) => {
                    // `seq`: this seat's n-th event of the match, the same across reconnects (Join.resume names it)
                    if event.seq > 0 {
                        let seen = session.last_seq.entry(event.match_id.clone()).or_insert(0);
                        if event.seq <= *seen {
                            continue; // resent after a rejoin, and seen before it
                        }
                        *seen = event.seq;
                    }
                    bot.on_event(&event);
                }
                Some(Incoming::HandResult(result)) => bot.on_hand_result(&result),
                Some(Incoming::MatchResult(result)) => {
                    if !session.finished.insert(result.match_id.clone()) {
                        continue;
                    }
                    session.open.retain(|(match_id, _), _| *match_id != result.match_id);
                    session.sent.retain(|(match_id, _), _| *match_id != result.match_id);
                    session.last_seq.remove(&result.match_id);
                    bot.on_match_result(&result);
                    let done = seat_match == Some(result.match_id.as_str());
                    session.results.push(result);
                    if done {
                        break;
                    }
                }
                // a batch comes only to a client whose Join set `batch`, which this SDK does not
                Some(Incoming::Batch(_)) | None => {}
            }
        }
        Ok(())
    }
    .await;
    (outcome, joined)
}

fn join(options: &Options, name: &str, resume: Vec<ResumePoint>) -> Join {
    let credential = match &options.credential {
        Credential::BotToken(token) => JoinCredential::BotToken(token.clone()),
        Credential::Seat { match_id, token } => {
            JoinCredential::Seat(SeatCredential { match_id: match_id.clone(), token: token.clone() })
        }
    };
    Join {
        credential: Some(credential),
        bot_name: name.to_string(),
        sdk: SDK_VERSION.to_string(),
        resume,
        ..Default::default() // no batches
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
        Err(error @ (Error::Connect { .. } | Error::Unreachable { .. } | Error::Tls(_))) => {
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
    fn the_wait_doubles_to_its_cap_with_jitter() {
        let ceilings: Vec<u64> =
            (1..=10).map(|n| backoff_ceiling(RECONNECT_INITIAL, RECONNECT_CAP, n).as_millis() as u64).collect();
        assert_eq!(ceilings, [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
        assert_eq!(backoff_ceiling(RECONNECT_INITIAL, RECONNECT_CAP, 5000), RECONNECT_CAP, "no overflow");
        for attempt in [1, 3, 8, 40] {
            let ceiling = backoff_ceiling(RECONNECT_INITIAL, RECONNECT_CAP, attempt);
            let waits: Vec<Duration> = (0..50).map(|_| backoff(RECONNECT_INITIAL, RECONNECT_CAP, attempt)).collect();
            assert!(waits.iter().all(|w| *w >= ceiling / 2 && *w <= ceiling), "{attempt}: {waits:?}");
            assert!(waits.iter().any(|w| *w != waits[0]), "no jitter: {waits:?}");
        }
    }

    #[test]
    fn only_a_dropped_stream_is_worth_joining_again() {
        for code in [Code::Unavailable, Code::Internal, Code::ResourceExhausted] {
            assert!(retryable(&Error::Status(tonic::Status::new(code, "gone"))), "{code:?}");
        }
        for code in [Code::Unauthenticated, Code::PermissionDenied, Code::FailedPrecondition, Code::InvalidArgument] {
            assert!(!retryable(&Error::Status(tonic::Status::new(code, "final"))), "{code:?}");
        }
    }

    #[test]
    fn a_broken_connection_is_unavailable_and_a_referees_unknown_is_not() {
        let broken = tonic::Status::from_error(Box::new(std::io::Error::other("connection reset")));
        assert_eq!(broken.code(), Code::Unknown);
        assert_eq!(dropped_is_unavailable(broken).code(), Code::Unavailable);
        let sent = tonic::Status::new(Code::Unknown, "the referee's own");
        assert_eq!(dropped_is_unavailable(sent).code(), Code::Unknown);
    }

    #[test]
    fn a_resume_point_for_each_match_seated_and_not_finished() {
        let mut session = Session::default();
        for m in ["m2", "m1", "m3"] {
            session.seated.insert(m.to_string());
        }
        session.finished.insert("m3".to_string());
        session.last_seq.insert("m1".to_string(), 17);
        let points: Vec<(String, u64)> =
            session.resume_points().into_iter().map(|p| (p.match_id, p.last_seq)).collect();
        assert_eq!(points, [("m1".to_string(), 17), ("m2".to_string(), 0)]);
    }

    #[test]
    fn an_unreadable_ca_file_is_one_line_naming_it() {
        let tls = Tls { root_cert: Some("/nonexistent/ca.pem".into()), ..Tls::default() };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let error = runtime.block_on(connect_with("127.0.0.1:1", Some(&tls))).unwrap_err();
        assert!(error.to_string().starts_with("cannot read the TLS file /nonexistent/ca.pem: "), "{error}");
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
