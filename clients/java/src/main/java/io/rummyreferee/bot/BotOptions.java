package io.rummyreferee.bot;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where and how a bot connects: the command line every bot takes, the same as the Python SDK's. With a match id
 * (and its seat token) the bot plays that one seat; otherwise it joins with a bot token and is seated in match
 * after match. Every flag falls back to the environment: the tournament runner passes {@code --referee ADDRESS} (and
 * {@code RUMMY_REFEREE}) and the token only in the environment ({@code RUMMY_BOT_TOKEN}, or {@code RUMMY_MATCH} and
 * {@code RUMMY_SEAT_TOKEN}), since a flag is readable by every process on the host. {@link #toString} hides the
 * tokens.
 *
 * @param referee the referee's {@code HOST:PORT}, or {@code unix:/PATH} for a Unix domain socket (any gRPC target)
 * @param seed a seed for the bot's own random choices, if it makes any
 * @param reconnectForever with a bot token: once a referee welcomed the bot, join again without end when the stream
 *     drops (a ladder's restart); {@code --reconnect-forever} or {@code RUMMY_RECONNECT=forever}
 * @param tls how to speak TLS to the referee; empty: plaintext
 */
public record BotOptions(
        String referee,
        Optional<String> botToken,
        Optional<String> matchId,
        Optional<String> seatToken,
        Optional<String> name,
        OptionalLong seed,
        boolean reconnectForever,
        Optional<Tls> tls) {

    public static final String DEFAULT_REFEREE = "127.0.0.1:50051";

    /** The variable read for {@code --reconnect-forever}: "forever" reconnects without end, unset or empty not. */
    public static final String RECONNECT_ENV = "RUMMY_RECONNECT";

    /**
     * TLS to the referee ({@code --tls}, {@code --tls-root-cert PEM}).
     *
     * @param rootCert a PEM file of the CA that signed the referee's certificate; empty: the system's roots
     * @param clientCert mutual TLS: this bot's certificate (PEM), with {@code clientKey}, its private key
     */
    public record Tls(Optional<String> rootCert, Optional<String> clientCert, Optional<String> clientKey) {
        public Tls {
            if (clientCert.isPresent() != clientKey.isPresent()) {
                throw new IllegalArgumentException("a client certificate and its key go together\n" + USAGE);
            }
        }

        /** TLS trusting the system's roots. */
        public static Tls systemRoots() {
            return new Tls(Optional.empty(), Optional.empty(), Optional.empty());
        }
    }

    /** Plaintext, not reconnecting forever: the options as they were before those two. */
    public BotOptions(String referee, Optional<String> botToken, Optional<String> matchId, Optional<String> seatToken,
            Optional<String> name, OptionalLong seed) {
        this(referee, botToken, matchId, seatToken, name, seed, false, Optional.empty());
    }

    public static final String USAGE = String.join("\n",
            "usage: BOT [--referee ADDRESS] (--bot-token T | --match ID --token T) [--name N] [--seed S]",
            "           [--reconnect-forever] [--tls] [--tls-root-cert PEM] [--tls-client-cert PEM --tls-client-key PEM]",
            "  --referee ADDRESS    the referee, HOST:PORT or unix:/PATH (env RUMMY_REFEREE, default "
                    + DEFAULT_REFEREE + ")",
            "  --bot-token T        play match after match over one connection (env RUMMY_BOT_TOKEN)",
            "  --match ID           play one seat of this match (env RUMMY_MATCH) ...",
            "  --token T            ... with this seat token (env RUMMY_SEAT_TOKEN)",
            "  --name N             the bot's name in the referee's logs",
            "  --seed S             seed for the bot's own random choices (env RUMMY_BOT_SEED)",
            "  --reconnect-forever  with a bot token: once welcomed, join again without end when the referee goes away",
            "                       (a ladder's restart), 0.25 s doubling to 30 s (env RUMMY_RECONNECT=forever)",
            "  --tls                connect with TLS, trusting the system's roots (env RUMMY_TLS=1)",
            "  --tls-root-cert PEM  connect with TLS, trusting this CA (env RUMMY_TLS_ROOT_CERT)",
            "  --tls-client-cert PEM, --tls-client-key PEM",
            "                       mutual TLS: this bot's certificate and key (env RUMMY_TLS_CLIENT_CERT, _KEY)",
            "The tournament runner passes tokens only in the environment: a flag is readable by every process.");

    public BotOptions {
        if (matchId.isPresent() != seatToken.isPresent()) {
            throw new IllegalArgumentException("--match and --token go together\n" + USAGE);
        }
        if (matchId.isEmpty() && botToken.isEmpty()) {
            throw new IllegalArgumentException("give --bot-token T, or --match ID --token T\n" + USAGE);
        }
    }

    /** The options with their tokens hidden: printing them never leaks a credential. */
    @Override
    public String toString() {
        return "BotOptions[referee=" + referee + ", botToken=" + botToken.map(t -> "***")
                + ", matchId=" + matchId + ", seatToken=" + seatToken.map(t -> "***")
                + ", name=" + name + ", seed=" + seed + ", reconnectForever=" + reconnectForever + ", tls=" + tls + "]";
    }

    /** True when playing one seat of one match, false when joined with a bot token. */
    public boolean seatMode() {
        return matchId.isPresent();
    }

    /** Parses {@code args} with the process environment as fallback. */
    public static BotOptions parse(String[] args) {
        return parse(args, System.getenv());
    }

    /**
     * Parses {@code --flag value} or {@code --flag=value} pairs, falling back to {@code env}.
     *
     * @throws IllegalArgumentException on an unknown flag, a missing value or a missing credential; its message
     *     ends with the usage text
     */
    public static BotOptions parse(String[] args, Map<String, String> env) {
        String referee = env.getOrDefault("RUMMY_REFEREE", DEFAULT_REFEREE);
        String botToken = env.get("RUMMY_BOT_TOKEN");
        String matchId = env.get("RUMMY_MATCH");
        String seatToken = env.get("RUMMY_SEAT_TOKEN");
        String name = null;
        String seed = env.get("RUMMY_BOT_SEED");
        boolean forever = false;
        boolean tls = present(env.get("RUMMY_TLS"));
        String rootCert = env.get("RUMMY_TLS_ROOT_CERT");
        String clientCert = env.get("RUMMY_TLS_CLIENT_CERT");
        String clientKey = env.get("RUMMY_TLS_CLIENT_KEY");
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            String value;
            if (flag.equals("--reconnect-forever")) {
                forever = true;
                continue;
            }
            if (flag.equals("--tls")) {
                tls = true;
                continue;
            }
            int eq = flag.indexOf('=');
            if (flag.startsWith("--") && eq > 0) {
                value = flag.substring(eq + 1);
                flag = flag.substring(0, eq);
            } else if (flag.equals("-h") || flag.equals("--help")) {
                throw new IllegalArgumentException(USAGE);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException(flag + " needs a value\n" + USAGE);
            }
            switch (flag) {
                case "--referee" -> referee = value;
                case "--bot-token" -> botToken = value;
                case "--match" -> matchId = value;
                case "--token" -> seatToken = value;
                case "--name" -> name = value;
                case "--seed" -> seed = value;
                case "--tls-root-cert" -> rootCert = value;
                case "--tls-client-cert" -> clientCert = value;
                case "--tls-client-key" -> clientKey = value;
                default -> throw new IllegalArgumentException("unknown flag " + flag + "\n" + USAGE);
            }
        }
        boolean seat = present(matchId);
        forever |= reconnectForeverFromEnv(env.get(RECONNECT_ENV));
        Optional<Tls> tlsOptions = tls || present(rootCert) || present(clientCert) || present(clientKey)
                ? Optional.of(new Tls(nonEmpty(rootCert), nonEmpty(clientCert), nonEmpty(clientKey)))
                : Optional.empty();
        return new BotOptions(
                referee,
                seat ? Optional.empty() : nonEmpty(botToken), // a seat given on the command line wins
                nonEmpty(matchId),
                seat ? nonEmpty(seatToken) : Optional.empty(),
                nonEmpty(name),
                parseSeed(seed),
                forever,
                tlsOptions);
    }

    /**
     * {@code RUMMY_RECONNECT}'s value: "forever" is true, unset or empty false.
     *
     * @throws IllegalArgumentException for anything else, naming the variable: a typo is told rather than taken
     *     for "no" (a bot that quietly gives up when the ladder restarts)
     */
    public static boolean reconnectForeverFromEnv(String value) {
        String text = value == null ? "" : value.strip().toLowerCase(java.util.Locale.ROOT);
        if (text.isEmpty()) {
            return false;
        }
        if (text.equals("forever")) {
            return true;
        }
        throw new IllegalArgumentException(RECONNECT_ENV + " is 'forever' or unset, not \"" + value + "\"\n" + USAGE);
    }

    private static boolean present(String value) {
        return value != null && !value.isEmpty();
    }

    private static Optional<String> nonEmpty(String value) {
        return present(value) ? Optional.of(value) : Optional.empty();
    }

    private static OptionalLong parseSeed(String seed) {
        if (!present(seed)) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(seed.strip()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--seed must be an integer, not \"" + seed + "\"\n" + USAGE, e);
        }
    }
}
