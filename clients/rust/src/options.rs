//! The command line every bot takes, with the environment the tournament runner sets as a fallback.

use std::fmt;

/// Printed for `--help` and after a bad command line.
pub const USAGE: &str = "usage: BOT [--referee HOST:PORT] (--bot-token T | --match ID --token T) [--name N] [--seed S]
           [--reconnect-forever] [--tls] [--tls-root-cert PEM] [--tls-client-cert PEM --tls-client-key PEM]
  --referee ADDRESS    the referee, HOST:PORT or unix:/PATH (RUMMY_REFEREE; default 127.0.0.1:50051)
  --bot-token T        play match after match over one connection (RUMMY_BOT_TOKEN)
  --match ID           play one seat of one match (RUMMY_MATCH), with
  --token T            that seat's token (RUMMY_SEAT_TOKEN)
  --name N             the name the referee logs for this bot
  --seed S             seed for the bot's own random choices (RUMMY_BOT_SEED)
  --reconnect-forever  with a bot token: once welcomed, join again without end when the referee goes away (a
                       ladder's restart), 0.25 s doubling to 30 s (RUMMY_RECONNECT=forever)
  --tls                connect with TLS, trusting the system's roots (RUMMY_TLS=1)
  --tls-root-cert PEM  connect with TLS, trusting this CA (RUMMY_TLS_ROOT_CERT)
  --tls-client-cert PEM, --tls-client-key PEM
                       mutual TLS: this bot's certificate and key (RUMMY_TLS_CLIENT_CERT, RUMMY_TLS_CLIENT_KEY)
The tournament runner passes tokens only in the environment: a flag is readable by every process on the host.";

/// The variable read for `--reconnect-forever`: "forever" reconnects without end, unset or empty does not.
pub const RECONNECT_ENV: &str = "RUMMY_RECONNECT";

/// `RUMMY_RECONNECT`'s value: "forever" is true, unset or empty false; anything else is an error naming the
/// variable, so that a typo is told rather than taken for "no" (a bot that quietly gives up when the ladder
/// restarts).
pub fn reconnect_forever_from_env(value: Option<&str>) -> Result<bool, String> {
    let text = value.unwrap_or("").trim().to_lowercase();
    match text.as_str() {
        "" => Ok(false),
        "forever" => Ok(true),
        _ => Err(format!("{RECONNECT_ENV} is 'forever' or unset, not {:?}", value.unwrap_or(""))),
    }
}

/// How to reach the referee over TLS (`--tls`, `--tls-root-cert`): `None` in [`Options::tls`] is plaintext.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tls {
    /// A PEM file of the CA that signed the referee's certificate; `None`: the system's roots.
    pub root_cert: Option<String>,
    /// Mutual TLS: this bot's certificate and private key (PEM files), for a referee that asks for one.
    pub client_cert: Option<String>,
    pub client_key: Option<String>,
}

const DEFAULT_REFEREE: &str = "127.0.0.1:50051";

/// How the bot joins: one bot token for many matches, or one seat's token. Its `Debug` hides the tokens, so
/// logging the options never leaks a credential.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    BotToken(String),
    Seat { match_id: String, token: String },
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::BotToken(_) => f.write_str("BotToken(***)"),
            Credential::Seat { match_id, .. } => write!(f, "Seat {{ match_id: {match_id:?}, token: *** }}"),
        }
    }
}

/// What a bot was asked to do on its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `HOST:PORT` of the referee, or `unix:/PATH` for a Unix domain socket.
    pub referee: String,
    pub credential: Credential,
    /// Overrides [`crate::Bot::name`] in the Join.
    pub name: Option<String>,
    pub seed: Option<u64>,
    /// With a bot token: once a referee welcomed the bot, join again without end when the stream drops.
    pub reconnect_forever: bool,
    /// TLS to the referee; `None`: plaintext.
    pub tls: Option<Tls>,
}

/// A command line that does not say how to play, or asks for help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionsError {
    Help,
    Invalid(String),
}

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionsError::Help => f.write_str(USAGE),
            OptionsError::Invalid(why) => write!(f, "{why}\n{USAGE}"),
        }
    }
}

impl std::error::Error for OptionsError {}

impl Options {
    /// This process's arguments, falling back to its environment.
    pub fn from_env() -> Result<Self, OptionsError> {
        Self::parse(std::env::args().skip(1), |key| std::env::var(key).ok())
    }

    /// Parses `args` (without the program name); `env` looks up the fallback variables.
    pub fn parse<I, S>(args: I, env: impl Fn(&str) -> Option<String>) -> Result<Self, OptionsError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut flags = Flags::default();
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            if arg == "-h" || arg == "--help" {
                return Err(OptionsError::Help);
            }
            match arg.as_str() {
                "--reconnect-forever" => {
                    flags.reconnect_forever = true;
                    continue;
                }
                "--tls" => {
                    flags.tls = true;
                    continue;
                }
                _ => {}
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_string(), Some(value.to_string())),
                None => (arg, None),
            };
            let slot = match flag.as_str() {
                "--referee" => &mut flags.referee,
                "--bot-token" => &mut flags.bot_token,
                "--match" => &mut flags.match_id,
                "--token" => &mut flags.token,
                "--name" => &mut flags.name,
                "--seed" => &mut flags.seed,
                "--tls-root-cert" => &mut flags.tls_root_cert,
                "--tls-client-cert" => &mut flags.tls_client_cert,
                "--tls-client-key" => &mut flags.tls_client_key,
                _ => return Err(OptionsError::Invalid(format!("unknown argument {flag:?}"))),
            };
            let value = inline.or_else(|| args.next());
            *slot = Some(value.ok_or_else(|| OptionsError::Invalid(format!("{flag} needs a value")))?);
        }

        let credential = match (flags.match_id, flags.bot_token) {
            (Some(match_id), _) => {
                let token = flags.token.or_else(|| env("RUMMY_SEAT_TOKEN"));
                let token = token.ok_or_else(|| OptionsError::Invalid("--match needs --token".into()))?;
                Credential::Seat { match_id, token }
            }
            (None, Some(token)) => Credential::BotToken(token),
            (None, None) => match (env("RUMMY_MATCH"), env("RUMMY_SEAT_TOKEN"), env("RUMMY_BOT_TOKEN")) {
                (Some(match_id), Some(token), _) => Credential::Seat { match_id, token },
                (_, _, Some(token)) => Credential::BotToken(token),
                _ => return Err(OptionsError::Invalid("give --bot-token T, or --match ID and --token T".into())),
            },
        };
        let seed = match flags.seed {
            Some(text) => {
                Some(text.parse().map_err(|_| OptionsError::Invalid(format!("--seed {text:?} is not a number")))?)
            }
            // The runner always sets RUMMY_BOT_SEED; a value that is not a number is ignored, as the Python SDK does.
            None => env("RUMMY_BOT_SEED").and_then(|text| text.parse().ok()),
        };
        let reconnect_forever = flags.reconnect_forever
            | reconnect_forever_from_env(env(RECONNECT_ENV).as_deref()).map_err(OptionsError::Invalid)?;
        let nonempty = |key: &str| env(key).filter(|value| !value.is_empty());
        let tls = Tls {
            root_cert: flags.tls_root_cert.or_else(|| nonempty("RUMMY_TLS_ROOT_CERT")),
            client_cert: flags.tls_client_cert.or_else(|| nonempty("RUMMY_TLS_CLIENT_CERT")),
            client_key: flags.tls_client_key.or_else(|| nonempty("RUMMY_TLS_CLIENT_KEY")),
        };
        if tls.client_cert.is_some() != tls.client_key.is_some() {
            return Err(OptionsError::Invalid("a client certificate and its key go together".into()));
        }
        let tls_wanted =
            flags.tls || nonempty("RUMMY_TLS").is_some() || tls.root_cert.is_some() || tls.client_cert.is_some();
        Ok(Options {
            referee: flags.referee.or_else(|| env("RUMMY_REFEREE")).unwrap_or_else(|| DEFAULT_REFEREE.into()),
            credential,
            name: flags.name,
            seed,
            reconnect_forever,
            tls: tls_wanted.then_some(tls),
        })
    }
}

#[derive(Default)]
struct Flags {
    referee: Option<String>,
    bot_token: Option<String>,
    match_id: Option<String>,
    token: Option<String>,
    name: Option<String>,
    seed: Option<String>,
    reconnect_forever: bool,
    tls: bool,
    tls_root_cert: Option<String>,
    tls_client_cert: Option<String>,
    tls_client_key: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn reads_the_runner_command_line() {
        let options = Options::parse(["--referee", "127.0.0.1:6000", "--bot-token", "b1"], no_env).unwrap();
        assert_eq!(options.referee, "127.0.0.1:6000");
        assert_eq!(options.credential, Credential::BotToken("b1".into()));
    }

    #[test]
    fn a_match_id_means_one_seat_even_with_a_bot_token() {
        let options = Options::parse(["--match=m1", "--token", "t1", "--bot-token", "b1", "--seed", "7"], no_env);
        let options = options.unwrap();
        assert_eq!(options.credential, Credential::Seat { match_id: "m1".into(), token: "t1".into() });
        assert_eq!((options.referee.as_str(), options.seed), (DEFAULT_REFEREE, Some(7)));
    }

    #[test]
    fn falls_back_to_the_environment() {
        let env = |key: &str| match key {
            "RUMMY_REFEREE" => Some("127.0.0.2:7000".to_string()),
            "RUMMY_BOT_TOKEN" => Some("b2".to_string()),
            "RUMMY_BOT_SEED" => Some("42".to_string()),
            _ => None,
        };
        let options = Options::parse(Vec::<String>::new(), env).unwrap();
        assert_eq!(options.credential, Credential::BotToken("b2".into()));
        assert_eq!((options.referee.as_str(), options.seed), ("127.0.0.2:7000", Some(42)));
    }

    #[test]
    fn a_seat_from_the_environment_alone() {
        let env = |key: &str| match key {
            "RUMMY_REFEREE" => Some("unix:/run/rummy/referee.sock".to_string()),
            "RUMMY_MATCH" => Some("m9".to_string()),
            "RUMMY_SEAT_TOKEN" => Some("s9".to_string()),
            _ => None,
        };
        let options = Options::parse(Vec::<String>::new(), env).unwrap();
        assert_eq!(options.credential, Credential::Seat { match_id: "m9".into(), token: "s9".into() });
        assert_eq!(options.referee, "unix:/run/rummy/referee.sock");
    }

    #[test]
    fn debug_output_hides_the_tokens() {
        let seat = Options::parse(["--match", "m1", "--token", "seat-secret"], no_env).unwrap();
        let bot = Options::parse(["--bot-token", "bot-secret"], no_env).unwrap();
        for text in [format!("{seat:?}"), format!("{bot:?}"), format!("{:#?}", seat.credential)] {
            assert!(!text.contains("secret"), "{text}");
        }
        assert!(format!("{seat:?}").contains("m1"));
    }

    #[test]
    fn reads_rummy_reconnect() {
        let with = |value: &'static str| {
            move |key: &str| match key {
                "RUMMY_BOT_TOKEN" => Some("b".to_string()),
                "RUMMY_RECONNECT" => Some(value.to_string()),
                _ => None,
            }
        };
        assert!(Options::parse(Vec::<String>::new(), with("forever")).unwrap().reconnect_forever);
        assert!(Options::parse(Vec::<String>::new(), with(" Forever ")).unwrap().reconnect_forever);
        assert!(!Options::parse(Vec::<String>::new(), with("")).unwrap().reconnect_forever);
        assert!(Options::parse(["--reconnect-forever"], with("")).unwrap().reconnect_forever);
        assert!(!Options::parse(["--bot-token", "b"], no_env).unwrap().reconnect_forever, "off by default");
        // a typo is told (exit 2 from main), naming the variable, not taken for "no"
        match Options::parse(Vec::<String>::new(), with("always")) {
            Err(OptionsError::Invalid(why)) => {
                assert!(why.starts_with("RUMMY_RECONNECT is 'forever' or unset, not \"always\""), "{why}")
            }
            other => panic!("RUMMY_RECONNECT=always accepted: {other:?}"),
        }
    }

    #[test]
    fn reads_the_tls_options() {
        assert_eq!(Options::parse(["--bot-token", "b"], no_env).unwrap().tls, None, "plaintext by default");
        let system = Options::parse(["--bot-token", "b", "--tls"], no_env).unwrap();
        assert_eq!(system.tls, Some(Tls::default()));
        let env = |key: &str| match key {
            "RUMMY_BOT_TOKEN" => Some("b".to_string()),
            "RUMMY_TLS_ROOT_CERT" => Some("/etc/ca.pem".to_string()),
            _ => None,
        };
        let ca = Options::parse(Vec::<String>::new(), env).unwrap();
        assert_eq!(ca.tls.unwrap().root_cert.as_deref(), Some("/etc/ca.pem"));
        let env = |key: &str| (key == "RUMMY_TLS").then(|| "1".to_string());
        assert_eq!(Options::parse(["--bot-token", "b"], env).unwrap().tls, Some(Tls::default()));
        let half = Options::parse(["--bot-token", "b", "--tls-client-cert", "bot.pem"], no_env);
        assert!(matches!(half, Err(OptionsError::Invalid(why)) if why.contains("go together")));
    }

    #[test]
    fn refuses_an_incomplete_command_line() {
        assert!(matches!(Options::parse(["--match", "m1"], no_env), Err(OptionsError::Invalid(_))));
        assert!(matches!(Options::parse(["--bot-token"], no_env), Err(OptionsError::Invalid(_))));
        assert!(matches!(Options::parse(["--color", "red"], no_env), Err(OptionsError::Invalid(_))));
        assert_eq!(Options::parse(["--help"], no_env), Err(OptionsError::Help));
    }
}
