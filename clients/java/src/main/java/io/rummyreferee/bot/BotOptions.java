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
 */
public record BotOptions(
        String referee,
        Optional<String> botToken,
        Optional<String> matchId,
        Optional<String> seatToken,
        Optional<String> name,
        OptionalLong seed) {

    public static final String DEFAULT_REFEREE = "127.0.0.1:50051";

    public static final String USAGE = String.join("\n",
            "usage: BOT [--referee ADDRESS] (--bot-token T | --match ID --token T) [--name N] [--seed S]",
            "  --referee ADDRESS    the referee, HOST:PORT or unix:/PATH (env RUMMY_REFEREE, default "
                    + DEFAULT_REFEREE + ")",
            "  --bot-token T        play match after match over one connection (env RUMMY_BOT_TOKEN)",
            "  --match ID           play one seat of this match (env RUMMY_MATCH) ...",
            "  --token T            ... with this seat token (env RUMMY_SEAT_TOKEN)",
            "  --name N             the bot's name in the referee's logs",
            "  --seed S             seed for the bot's own random choices (env RUMMY_BOT_SEED)",
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
                + ", name=" + name + ", seed=" + seed + "]";
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
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            String value;
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
                default -> throw new IllegalArgumentException("unknown flag " + flag + "\n" + USAGE);
            }
        }
        boolean seat = present(matchId);
        return new BotOptions(
                referee,
                seat ? Optional.empty() : nonEmpty(botToken), // a seat given on the command line wins
                nonEmpty(matchId),
                seat ? nonEmpty(seatToken) : Optional.empty(),
                nonEmpty(name),
                parseSeed(seed));
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
