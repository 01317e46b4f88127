package io.rummyreferee.bot;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.StreamObserver;
import io.rummyreferee.referee.v1.Action;
import io.rummyreferee.referee.v1.ActionMessage;
import io.rummyreferee.referee.v1.ActionRejected;
import io.rummyreferee.referee.v1.Join;
import io.rummyreferee.referee.v1.MatchEvent;
import io.rummyreferee.referee.v1.MatchResult;
import io.rummyreferee.referee.v1.PlayRequest;
import io.rummyreferee.referee.v1.RefereeServiceGrpc;
import io.rummyreferee.referee.v1.PlayResponse;
import io.rummyreferee.referee.v1.ResumePoint;
import io.rummyreferee.referee.v1.SeatCredential;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Connects a {@link Bot} to a referee and plays: {@link #main} for a bot's {@code main}, {@link #play} to embed.
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *     RummyBot.main(args, (view, legal, request) -> legal.get(0));
 * }
 * }</pre>
 */
public final class RummyBot {

    /** Sent in the Join, for the referee's logs. */
    public static final String SDK_VERSION = "java/0.1.0";

    /**
     * grpc-java sets SO_KEEPALIVE on every Netty channel and a Unix domain socket has no such option, so Netty's
     * bootstrap warns (two lines on stderr) at every connection to a {@code unix:} referee. Held here: a logger
     * nobody references may be collected, and its level with it.
     */
    private static final Logger NETTY_BOOTSTRAP = Logger.getLogger("io.grpc.netty.shaded.io.netty.bootstrap");

    private RummyBot() {}

    /**
     * Parses the command line ({@link BotOptions}), {@linkplain #play plays} until the referee is done with the
     * bot, and exits: 0 when it is, 2 on a bad command line, 1 when the stream failed (with one line naming the
     * referee's address, e.g. when no referee answers there).
     */
    public static void main(String[] args, Bot bot) {
        main(args, options -> bot);
    }

    /** As {@link #main(String[], Bot)}, for a bot built from the options (e.g. seeded with {@code --seed}). */
    public static void main(String[] args, Function<BotOptions, ? extends Bot> makeBot) {
        BotOptions options;
        try {
            options = BotOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Bot bot = makeBot.apply(options);
        String name = options.name().orElse(bot.name());
        int code = 0;
        try {
            play(bot, options);
        } catch (RefereeUnreachableException e) {
            System.err.println(name + ": " + e.getMessage());
            code = 1;
        } catch (StatusRuntimeException e) {
            System.err.println(name + ": " + e.getStatus().getCode() + ": " + oneLine(e.getStatus().getDescription())
                    + " (referee " + options.referee() + ")");
            code = 1;
        } catch (UncheckedIOException e) {
            System.err.println(name + ": " + e.getMessage());
            code = 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            code = 1;
        }
        System.exit(code);
    }

    /** The waits between joins when reconnecting forever: 0.25 s doubling to 30 s. */
    public static final long RECONNECT_INITIAL_MS = 250;

    public static final long RECONNECT_CAP_MS = 30_000;

    /** The attempt-th wait (from 1) before jitter: {@code firstMs} doubling to {@code capMs}. */
    public static long backoffCeilingMs(long firstMs, long capMs, int attempt) {
        int doublings = Math.min(Math.max(attempt - 1, 0), 30);
        return Math.min(capMs, firstMs << doublings);
    }

    /**
     * The attempt-th wait: {@link #backoffCeilingMs}, then a random part (half to all) of it, so that the bots of a
     * ladder that restarted do not all knock at once.
     */
    public static long backoffMs(long firstMs, long capMs, int attempt) {
        long ceiling = backoffCeilingMs(firstMs, capMs, attempt);
        return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling - ceiling / 2 + 1);
    }

    /**
     * Worth joining again (reconnecting forever, after a welcome): the stream dropped (the network, a referee
     * restarting: {@code UNAVAILABLE}, or {@code INTERNAL}), or a referee's limit was hit (every bot of a ladder
     * joining at once after its restart). Anything else (a revoked key) is final.
     */
    static boolean retryable(Status status) {
        return switch (status.getCode()) {
            case UNAVAILABLE, INTERNAL, RESOURCE_EXHAUSTED -> true;
            default -> false;
        };
    }

    /**
     * Plays until the referee closes the stream or goes away after welcoming the bot (bot-token mode: a
     * tournament ends by stopping its referee), or until the one match ends (seat mode), and returns the results
     * of the matches played.
     *
     * <p>With {@link BotOptions#reconnectForever()} (bot-token mode; {@code RUMMY_RECONNECT=forever} or {@code
     * --reconnect-forever}), a stream that drops after a referee welcomed the bot is joined again without end,
     * waiting 0.25 s doubling to 30 s, each wait a random part (half to all) of that; the Join names each match's
     * last event seen, so the bot sees each event once and each decision once. A referee that never answered still
     * fails at once, and a final answer (a revoked key) still ends it. Each reconnect is one line on stderr, naming
     * the address, never the token.
     *
     * @throws RefereeUnreachableException when no referee answers at {@code options.referee()} ({@code HOST:PORT},
     *     or {@code unix:/PATH}: a Unix domain socket, through grpc-netty-shaded's epoll transport)
     * @throws StatusRuntimeException when the stream fails otherwise (wrong token, a seat's match cut short, ...)
     * @throws java.io.UncheckedIOException when a TLS file cannot be read
     */
    public static List<MatchResult> play(Bot bot, BotOptions options) throws InterruptedException {
        if (options.referee().startsWith("unix:")) {
            NETTY_BOOTSTRAP.setLevel(Level.SEVERE);
        }
        ChannelCredentials credentials = credentials(options);
        boolean forever = options.reconnectForever() && !options.seatMode();
        String name = options.name().orElse(bot.name());
        Session session = new Session(bot, options);
        int attempt = 0;
        while (true) {
            // A channel of its own each join: an old one's connection backoff (up to 120 s) would outlast the restart.
            ManagedChannel channel = Grpc.newChannelBuilder(options.referee(), credentials).build();
            Status closed;
            try {
                closed = session.stream(RefereeServiceGrpc.newStub(channel));
            } finally {
                channel.shutdownNow();
                channel.awaitTermination(5, TimeUnit.SECONDS);
            }
            if (closed == null) {
                return session.results;
            }
            attempt = session.joined ? 1 : attempt + 1; // a welcomed stream's drop waits from the start again
            if (!forever || !session.welcomed || !retryable(closed)) {
                return session.end(closed);
            }
            long wait = backoffMs(RECONNECT_INITIAL_MS, RECONNECT_CAP_MS, attempt);
            System.err.println(name + ": no stream to the referee at " + options.referee() + " (" + closed.getCode()
                    + ": " + oneLine(closed.getDescription()) + "); joining again in "
                    + String.format(Locale.ROOT, "%.1f", wait / 1000.0) + " s (try " + attempt + ")");
            Thread.sleep(wait);
        }
    }

    /** The channel credentials the options ask for: TLS with the given CA (or the system's roots), or plaintext. */
    static ChannelCredentials credentials(BotOptions options) {
        if (options.tls().isEmpty()) {
            return InsecureChannelCredentials.create();
        }
        BotOptions.Tls tls = options.tls().get();
        TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder();
        try {
            if (tls.rootCert().isPresent()) {
                builder.trustManager(readable(tls.rootCert().get()));
            }
            if (tls.clientCert().isPresent()) {
                builder.keyManager(readable(tls.clientCert().get()), readable(tls.clientKey().orElseThrow()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the TLS files: " + oneLine(e.getMessage()), e);
        }
        return builder.build();
    }

    private static File readable(String path) throws IOException {
        File file = new File(path);
        if (!file.canRead()) {
            throw new IOException("cannot read the TLS file " + path);
        }
        return file;
    }

    /**
     * A bot's Play streams: each stream's messages are queued by gRPC's threads and handled on the caller's; across
     * reconnects, what was seen (each match's last event, the matches seated and finished) and answered.
     */
    private static final class Session {
        private final Bot bot;
        private final BotOptions options;
        /** Decisions answered but not yet accepted, by match id then request id, for retries after a rejection. */
        private final Map<String, Map<Long, Request>> pending = new HashMap<>();
        /** The answer sent to each pending decision: sent again when the referee asks again after a rejoin. */
        private final Map<String, Map<Long, Action>> sent = new HashMap<>();
        private final Map<String, Long> lastSeq = new HashMap<>();
        private final Set<String> seated = new HashSet<>();
        private final Set<String> finished = new HashSet<>();
        private final List<MatchResult> results = new ArrayList<>();
        private StreamObserver<PlayRequest> outbox;
        /** A referee answered at least once: a later UNAVAILABLE means it went away, not that none was there. */
        private boolean welcomed;
        /** The current stream was welcomed. */
        private boolean joined;

        Session(Bot bot, BotOptions options) {
            this.bot = bot;
            this.options = options;
        }

        /** One Play stream: null when the bot is done (the stream ended, or the seat's match did), else its status. */
        Status stream(RefereeServiceGrpc.RefereeServiceStub stub) throws InterruptedException {
            BlockingQueue<Inbound> inbox = new LinkedBlockingQueue<>();
            joined = false;
            outbox = stub.play(new StreamObserver<>() {
                @Override
                public void onNext(PlayResponse message) {
                    inbox.add(new Received(message));
                }

                @Override
                public void onError(Throwable error) {
                    inbox.add(new Closed(Status.fromThrowable(error)));
                }

                @Override
                public void onCompleted() {
                    inbox.add(new Closed(Status.OK));
                }
            });
            outbox.onNext(PlayRequest.newBuilder().setJoin(join()).build());
            while (true) {
                Inbound next = inbox.take();
                if (next instanceof Closed closed) {
                    return closed.status().isOk() ? null : closed.status();
                }
                PlayResponse message = ((Received) next).message();
                if (message.hasWelcome()) {
                    welcomed = true;
                    joined = true;
                }
                if (handle(message)) {
                    outbox.onCompleted();
                    return null;
                }
            }
        }

        /** The end of play on a stream that closed with {@code status}: the results, or the error it means. */
        List<MatchResult> end(Status status) {
            if (refereeWentAway(status)) {
                return results;
            }
            if (!welcomed && status.getCode() == Status.Code.UNAVAILABLE) {
                throw new RefereeUnreachableException(options.referee(), status);
            }
            throw status.asRuntimeException();
        }

        private boolean refereeWentAway(Status status) {
            Status.Code code = status.getCode();
            return welcomed && !options.seatMode() && (code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED);
        }

        private Join join() {
            Join.Builder join = Join.newBuilder()
                    .setBotName(options.name().orElse(bot.name()))
                    .setSdk(SDK_VERSION);
            seated.stream().filter(m -> !finished.contains(m)).sorted().forEach(m -> join.addResume(
                    ResumePoint.newBuilder().setMatchId(m).setLastSeq(lastSeq.getOrDefault(m, 0L))));
            if (options.seatMode()) {
                join.setSeat(SeatCredential.newBuilder()
                        .setMatchId(options.matchId().orElseThrow())
                        .setToken(options.seatToken().orElseThrow()));
            } else {
                join.setBotToken(options.botToken().orElseThrow());
            }
            return join.build();
        }

        /** Handles one message; returns true when the session is over (seat mode: our match ended). */
        private boolean handle(PlayResponse message) {
            switch (message.getBodyCase()) {
                case SEATED -> {
                    if (seated.add(message.getSeated().getMatchId())) { // a rejoin seats it again: told once
                        bot.onSeated(message.getSeated());
                    }
                }
                case EVENT -> {
                    MatchEvent event = message.getEvent();
                    // seq: this seat's n-th event of the match, the same across reconnects (Join.resume names it)
                    if (event.getSeq() > 0) {
                        if (event.getSeq() <= lastSeq.getOrDefault(event.getMatchId(), 0L)) {
                            return false; // resent after a rejoin, and seen before it
                        }
                        lastSeq.put(event.getMatchId(), event.getSeq());
                    }
                    bot.onEvent(event);
                }
                case DECISION -> {
                    Request request = Request.of(message.getDecision());
                    Action again = sent.getOrDefault(request.matchId(), Map.of()).get(request.requestId());
                    if (again != null) { // asked again after a rejoin: the answer never arrived
                        answer(request, again);
                        return false;
                    }
                    pending.computeIfAbsent(request.matchId(), id -> new HashMap<>())
                            .put(request.requestId(), request);
                    answer(request, decide(request));
                }
                case REJECTED -> {
                    ActionRejected rejected = message.getRejected();
                    sent.getOrDefault(rejected.getMatchId(), new HashMap<>()).remove(rejected.getRequestId());
                    Request request = pending.getOrDefault(rejected.getMatchId(), Map.of())
                            .get(rejected.getRequestId());
                    if (request != null) {
                        answer(request, bot.onRejected(rejected.getCode(), rejected.getMessage(), request)
                                .orElse(null));
                    }
                }
                case ACCEPTED -> {
                    Map<Long, Request> open = pending.get(message.getAccepted().getMatchId());
                    if (open != null) {
                        open.remove(message.getAccepted().getRequestId());
                    }
                    Map<Long, Action> answered = sent.get(message.getAccepted().getMatchId());
                    if (answered != null) {
                        answered.remove(message.getAccepted().getRequestId());
                    }
                }
                case HAND_RESULT -> bot.onHandResult(message.getHandResult());
                case MATCH_RESULT -> {
                    MatchResult result = message.getMatchResult();
                    if (!finished.add(result.getMatchId())) {
                        return false; // told again after a rejoin
                    }
                    results.add(result);
                    pending.remove(result.getMatchId());
                    sent.remove(result.getMatchId());
                    lastSeq.remove(result.getMatchId());
                    bot.onMatchResult(result);
                    return options.seatMode() && options.matchId().orElseThrow().equals(result.getMatchId());
                }
                case WELCOME, BODY_NOT_SET -> {}
            }
            return false;
        }

        /** The bot's choice, or null (send nothing) when decide throws: a bug in the bot must not end every match. */
        private Action decide(Request request) {
            try {
                return bot.decide(request.view(), request.legalActions(), request);
            } catch (RuntimeException e) {
                System.err.println("decide failed in match " + request.matchId() + ": " + e);
                e.printStackTrace();
                return null;
            }
        }

        private void answer(Request request, Action action) {
            if (action == null) {
                return;
            }
            sent.computeIfAbsent(request.matchId(), id -> new HashMap<>()).put(request.requestId(), action);
            outbox.onNext(PlayRequest.newBuilder()
                    .setAction(ActionMessage.newBuilder()
                            .setMatchId(request.matchId())
                            .setRequestId(request.requestId())
                            .setAction(action))
                    .build());
        }
    }

    /**
     * No referee answered at {@link #address()}: the stream failed before its first message. The message is one
     * line naming the address and the cause (e.g. {@code Connection refused}); it never holds a token.
     */
    public static final class RefereeUnreachableException extends StatusRuntimeException {
        private static final long serialVersionUID = 1L;
        private final String address;
        private final String reason;

        RefereeUnreachableException(String address, Status status) {
            super(status);
            this.address = address;
            String reason = oneLine(status.getDescription());
            if (status.getCause() != null && status.getCause().getMessage() != null) {
                reason += ": " + oneLine(status.getCause().getMessage());
            }
            this.reason = reason;
        }

        /** The referee's address as the bot was given it. */
        public String address() {
            return address;
        }

        @Override
        public String getMessage() {
            return "cannot reach the referee at " + address + ": " + reason;
        }
    }

    private static String oneLine(String text) {
        return text == null ? "" : text.strip().replaceAll("\\s+", " ");
    }

    private sealed interface Inbound permits Received, Closed {}

    private record Received(PlayResponse message) implements Inbound {}

    private record Closed(Status status) implements Inbound {}
}
