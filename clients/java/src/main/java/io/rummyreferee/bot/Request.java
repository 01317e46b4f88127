package io.rummyreferee.bot;

import io.rummyreferee.referee.v1.Action;
import io.rummyreferee.referee.v1.DecisionRequest;
import io.rummyreferee.referee.v1.Phase;
import io.rummyreferee.referee.v1.SeatView;
import java.util.List;

/**
 * One decision the referee asked for: which match and seat, the phase, the time left, and the view and legal
 * actions it came with (so {@link Bot#onRejected} can choose again).
 *
 * @param decision the message as received, for fields not lifted out here (e.g. {@code bank_left_ms})
 */
public record Request(
        String matchId,
        long requestId,
        int seat,
        Phase phase,
        int timeLeftMs,
        SeatView view,
        List<Action> legalActions,
        DecisionRequest decision) {

    /** Lifts the common fields out of a {@link DecisionRequest}. */
    public static Request of(DecisionRequest decision) {
        return new Request(
                decision.getMatchId(),
                decision.getRequestId(),
                decision.getView().getSeat(),
                decision.getPhase(),
                decision.getTimeLeftMs(),
                decision.getView(),
                List.copyOf(decision.getLegalActionsList()),
                decision);
    }
}
