package io.rummyreferee.bot;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.rummyreferee.referee.v1.Action;
import io.rummyreferee.referee.v1.ActionMessage;
import io.rummyreferee.referee.v1.ActionRejected;
import io.rummyreferee.referee.v1.Join;
import io.rummyreferee.referee.v1.MatchResult;
import io.rummyreferee.referee.v1.PlayRequest;
import io.rummyreferee.referee.v1.RefereeServiceGrpc;
import io.rummyreferee.referee.v1.PlayResponse;
import io.rummyreferee.referee.v1.SeatCredential;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            code = 1;
        }
        System.exit(code);
    }

    /**
     * Plays until the referee closes the stream or goes away after welcoming the bot (bot-token mode: a
     * tournament ends by stopping its referee), or until the one match ends (seat mode), and returns the results
     * of the matches played.
     *
     * @throws RefereeUnreachableException when no referee answers at {@code options.referee()} ({@code HOST:PORT},
     *     or {@code unix:/PATH}: a Unix domain socket, through grpc-netty-shaded's epoll transport)
     * @throws StatusRuntimeException when the stream fails otherwise (wrong token, a seat's match cut short, ...)
     */
    public static List<MatchResult> play(Bot bot, BotOptions options) throws InterruptedException {
        if (options.referee().startsWith("unix:")) {
            NETTY_BOOTSTRAP.setLevel(Level.SEVERE);
        }
        ManagedChannel channel = Grpc.newChannelBuilder(options.referee(), InsecureChannelCredentials.create())
                .build();
        try {
            return new Session(bot, options).run(RefereeServiceGrpc.newStub(channel));
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** One Play stream. gRPC delivers messages on its own threads; they are queued and handled on the caller's. */
    private static final class Session {
        private final Bot bot;
        private final BotOptions options;
        private final BlockingQueue<Inbound> inbox = new LinkedBlockingQueue<>();
        /** Decisions answered but not yet accepted, by match id then request id, for retries after a rejection. */
        private final Map<String, Map<Long, Request>> pending = new HashMap<>();
        private final List<MatchResult> results = new ArrayList<>();
        private StreamObserver<PlayRequest> outbox;
        private boolean welcomed;

        Session(Bot bot, BotOptions options) {
            this.bot = bot;
            this.options = options;
        }

        List<MatchResult> run(RefereeServiceGrpc.RefereeServiceStub stub) throws InterruptedException {
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
                    if (closed.status().isOk() || refereeWentAway(closed.status())) {
                        return results;
                    }
                    if (!welcomed && closed.status().getCode() == Status.Code.UNAVAILABLE) {
                        throw new RefereeUnreachableException(options.referee(), closed.status());
                    }
                    throw closed.status().asRuntimeException();
                }
                PlayResponse message = ((Received) next).message();
                welcomed |= message.hasWelcome();
                if (handle(message)) {
                    outbox.onCompleted();
                    return results;
                }
            }
        }

        private boolean refereeWentAway(Status status) {
            Status.Code code = status.getCode();
            return welcomed && !options.seatMode() && (code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED);
        }

        private Join join() {
            Join.Builder join = Join.newBuilder()
                    .setBotName(options.name().orElse(bot.name()))
                    .setSdk(SDK_VERSION);
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
                case SEATED -> bot.onSeated(message.getSeated());
                case EVENT -> bot.onEvent(message.getEvent());
                case DECISION -> {
                    Request request = Request.of(message.getDecision());
                    pending.computeIfAbsent(request.matchId(), id -> new HashMap<>())
                            .put(request.requestId(), request);
                    answer(request, decide(request));
                }
                case REJECTED -> {
                    ActionRejected rejected = message.getRejected();
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
                }
                case HAND_RESULT -> bot.onHandResult(message.getHandResult());
                case MATCH_RESULT -> {
                    MatchResult result = message.getMatchResult();
                    results.add(result);
                    pending.remove(result.getMatchId());
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
