//! The command line every bot takes, with the environment the tournament runner sets as a fallback.

use std::fmt;

/// Printed for `--help` and after a bad command line.
pub const USAGE: &str = "usage: BOT [--referee HOST:PORT] (--bot-token T | --match ID --token T) [--name N] [--seed S]
  --referee ADDRESS    the referee, HOST:PORT or unix:/PATH (RUMMY_REFEREE; default 127.0.0.1:50051)
  --bot-token T        play match after match over one connection (RUMMY_BOT_TOKEN)
  --match ID           play one seat of one match (RUMMY_MATCH), with
  --token T            that seat's token (RUMMY_SEAT_TOKEN)
  --name N             the name the referee logs for this bot
  --seed S             seed for the bot's own random choices (RUMMY_BOT_SEED)
The tournament runner passes tokens only in the environment: a flag is readable by every process on the host.";

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
        Ok(Options {
            referee: flags.referee.or_else(|| env("RUMMY_REFEREE")).unwrap_or_else(|| DEFAULT_REFEREE.into()),
            credential,
            name: flags.name,
            seed,
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
    fn refuses_an_incomplete_command_line() {
        assert!(matches!(Options::parse(["--match", "m1"], no_env), Err(OptionsError::Invalid(_))));
        assert!(matches!(Options::parse(["--bot-token"], no_env), Err(OptionsError::Invalid(_))));
        assert!(matches!(Options::parse(["--color", "red"], no_env), Err(OptionsError::Invalid(_))));
        assert_eq!(Options::parse(["--help"], no_env), Err(OptionsError::Help));
    }
}
