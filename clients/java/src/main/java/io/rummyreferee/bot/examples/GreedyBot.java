package io.rummyreferee.bot.examples;

import io.rummyreferee.bot.Bot;
import io.rummyreferee.bot.Cards;
import io.rummyreferee.bot.Request;
import io.rummyreferee.bot.RummyBot;
import io.rummyreferee.referee.v1.Action;
import io.rummyreferee.referee.v1.Card;
import io.rummyreferee.referee.v1.Discard;
import io.rummyreferee.referee.v1.MatchResult;
import io.rummyreferee.referee.v1.Phase;
import io.rummyreferee.referee.v1.Placement;
import io.rummyreferee.referee.v1.Rank;
import io.rummyreferee.referee.v1.SeatView;
import io.rummyreferee.referee.v1.Suit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The example bot: {@link IndianGreedy} on Indian rummy, the first legal action on every other variant. Prints
 * one line per finished match.
 *
 * <p>With {@code --probe-rejection} it shows how rejections reach a bot: its first draw-phase answer in each
 * match is a Discard of a card it does not hold (illegal twice over). The referee's rejection is printed as
 * {@code rejected CODE: message} by the default {@link Bot#onRejected}, and then, for that probe only, this bot
 * answers the same request again with its greedy choice and plays on normally.
 *
 * <pre>{@code java -jar clients/java/target/rummybot-examples.jar --referee HOST:PORT --bot-token T [--probe-rejection]}</pre>
 */
public final class GreedyBot implements Bot {

    private static final String PROBE_FLAG = "--probe-rejection";

    private final boolean probeRejection;
    /** Matches whose probe has been sent. */
    private final Set<String> probed = new HashSet<>();
    /** The probe's request id in each match whose probe has not been answered yet. */
    private final Map<String, Long> probeRequests = new HashMap<>();

    public GreedyBot(boolean probeRejection) {
        this.probeRejection = probeRejection;
    }

    public static void main(String[] args) {
        List<String> rest = new ArrayList<>(Arrays.asList(args));
        boolean probe = rest.remove(PROBE_FLAG);
        RummyBot.main(rest.toArray(String[]::new), new GreedyBot(probe));
    }

    @Override
    public String name() {
        return "java-greedy";
    }

    @Override
    public Action decide(SeatView view, List<Action> legalActions, Request request) {
        if (probeRejection && request.phase() == Phase.PHASE_DRAW && probed.add(request.matchId())) {
            probeRequests.put(request.matchId(), request.requestId());
            return Action.newBuilder().setDiscard(Discard.newBuilder().setCard(cardNotIn(view))).build();
        }
        return choose(view, legalActions);
    }

    @Override
    public Optional<Action> onRejected(String code, String message, Request request) {
        Optional<Action> retry = Bot.super.onRejected(code, message, request); // prints the rejection
        Long probe = probeRequests.get(request.matchId());
        if (probe != null && probe == request.requestId()) {
            probeRequests.remove(request.matchId());
            return Optional.of(choose(request.view(), request.legalActions()));
        }
        return retry;
    }

    @Override
    public void onMatchResult(MatchResult result) {
        if (probeRejection && !probed.remove(result.getMatchId())) {
            // e.g. the opponent dropped on the first turn: say so, since a rejection line was expected
            System.out.printf("%s: no probe in match %s: it ended before this seat's first draw%n",
                    PROBE_FLAG, result.getMatchId());
        }
        probeRequests.remove(result.getMatchId());
        List<List<Integer>> ranking = result.getRankingList().stream().map(Placement::getSeatsList).toList();
        System.out.printf("match %s ended: ranking %s totals %s (%s)%n",
                result.getMatchId(), ranking, result.getTotalsList(), result.getReason());
    }

    private static Action choose(SeatView view, List<Action> legalActions) {
        return view.getVariant().equals("indian") ? IndianGreedy.choose(view, legalActions) : legalActions.get(0);
    }

    /** The first card of a pack that is not in the hand. */
    private static Card cardNotIn(SeatView view) {
        for (Suit suit : List.of(Suit.SUIT_SPADES, Suit.SUIT_HEARTS, Suit.SUIT_DIAMONDS, Suit.SUIT_CLUBS)) {
            for (int rank = 1; rank <= 13; rank++) {
                Card card = Cards.of(Rank.forNumber(rank), suit);
                if (!view.getHandList().contains(card)) {
                    return card;
                }
            }
        }
        throw new IllegalStateException("the hand holds a whole pack");
    }
}
