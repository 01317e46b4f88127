package io.rummyreferee.bot.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rummyreferee.bot.Cards;
import io.rummyreferee.referee.v1.Action;
import io.rummyreferee.referee.v1.Card;
import io.rummyreferee.referee.v1.Declare;
import io.rummyreferee.referee.v1.Discard;
import io.rummyreferee.referee.v1.DrawStock;
import io.rummyreferee.referee.v1.Drop;
import io.rummyreferee.referee.v1.Rank;
import io.rummyreferee.referee.v1.SeatView;
import io.rummyreferee.referee.v1.TakeDiscards;
import java.util.List;
import org.junit.jupiter.api.Test;

class IndianGreedyTest {

    private static final Action DRAW = Action.newBuilder().setDrawStock(DrawStock.getDefaultInstance()).build();
    private static final Action TAKE =
            Action.newBuilder().setTakeDiscards(TakeDiscards.newBuilder().setCount(1)).build();
    private static final Action DROP = Action.newBuilder().setDrop(Drop.getDefaultInstance()).build();

    /** A view with the seven of any suit wild (and printed jokers). */
    private static SeatView view(String hand, String openCard) {
        SeatView.Builder view = SeatView.newBuilder().setVariant("indian").addAllHand(Cards.parseAll(hand))
                .addWildRanks(Rank.RANK_SEVEN).addWildRanks(Rank.RANK_JOKER);
        if (!openCard.isEmpty()) {
            view.addDiscardPile(Cards.parse(openCard));
        }
        return view.build();
    }

    private static List<Action> discards(SeatView view) {
        return view.getHandList().stream()
                .map(c -> Action.newBuilder().setDiscard(Discard.newBuilder().setCard(c)).build())
                .toList();
    }

    private static Card discarded(SeatView view) {
        return IndianGreedy.choose(view, discards(view)).getDiscard().getCard();
    }

    @Test
    void discardsTheHighDeadCardAndKeepsMeldsAndWilds() {
        SeatView v = view("AH 2H 3H 5S 6S 8S 9C 9D 9H KD 4C 7C JK JC", "");
        assertEquals(Cards.parse("KD"), discarded(v));
    }

    @Test
    void takesAWildOrAUsefulOpenCardElseDraws() {
        String hand = "AH 2H 3H 5S 6S 9C 9D KD 4C JK QC 2D TH";
        assertEquals(TAKE, IndianGreedy.choose(view(hand, "7D"), List.of(DRAW, TAKE, DROP)));
        assertEquals(TAKE, IndianGreedy.choose(view(hand, "4S"), List.of(DRAW, TAKE, DROP)));
        assertEquals(DRAW, IndianGreedy.choose(view(hand, "JS"), List.of(DRAW, TAKE, DROP)));
    }

    @Test
    void declaresWhenListed() {
        Action declare = Action.newBuilder().setDeclare(Declare.getDefaultInstance()).build();
        SeatView v = view("AH 2H 3H", "");
        assertEquals(declare, IndianGreedy.choose(v, List.of(discards(v).get(0), declare)));
    }
}
