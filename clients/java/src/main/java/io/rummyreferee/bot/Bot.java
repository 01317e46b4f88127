package io.rummyreferee.bot;

import io.rummyreferee.referee.v1.Action;
import io.rummyreferee.referee.v1.HandResult;
import io.rummyreferee.referee.v1.MatchEvent;
import io.rummyreferee.referee.v1.MatchResult;
import io.rummyreferee.referee.v1.SeatView;
import io.rummyreferee.referee.v1.Seated;
import java.util.List;
import java.util.Optional;

/**
 * A rummy bot: {@link #decide} answers each decision; every other hook is optional.
 *
 * <p>{@link RummyBot#main} calls the hooks on one thread, in the order the referee's messages arrive, so a bot
 * needs no locking. One connection may carry several matches at once: each message names its match, so keep
 * any per-match state keyed by match id.
 */
public interface Bot {

    /**
     * Chooses the action for one decision. Returning one of {@code legalActions} is always accepted; another
     * action may be legal too, and an illegal one comes back through {@link #onRejected}. Returning
     * {@code null} sends nothing (the referee's deadline rule then plays the variant's default move).
     */
    Action decide(SeatView view, List<Action> legalActions, Request request);

    /** The name sent in the Join (the {@code --name} flag overrides it). */
    default String name() {
        return "java-bot";
    }

    /** A new match starts with this bot in seat {@code seated.getSeat()}. */
    default void onSeated(Seated seated) {}

    /** Something happened that this seat may see. */
    default void onEvent(MatchEvent event) {}

    /** A hand of a match ended. */
    default void onHandResult(HandResult result) {}

    /**
     * The referee rejected the answer to {@code request}; return another action to try again before the
     * deadline. The default prints {@code rejected CODE: message} to stderr and sends nothing more: an SDK
     * that silently swapped in another move would hide the bot's bug.
     */
    default Optional<Action> onRejected(String code, String message, Request request) {
        System.err.println("rejected " + code + ": " + message);
        return Optional.empty();
    }

    /** A match ended (in seat mode the connection closes after this). */
    default void onMatchResult(MatchResult result) {}
}
