package io.rummyreferee.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rummyreferee.referee.v1.Card;
import io.rummyreferee.referee.v1.Rank;
import io.rummyreferee.referee.v1.Suit;
import java.util.List;
import org.junit.jupiter.api.Test;

class CardsTest {

    @Test
    void everyCardRoundTrips() {
        for (Suit suit : List.of(Suit.SUIT_SPADES, Suit.SUIT_HEARTS, Suit.SUIT_DIAMONDS, Suit.SUIT_CLUBS)) {
            for (int rank = 1; rank <= 13; rank++) {
                Card card = Cards.of(Rank.forNumber(rank), suit);
                assertEquals(card, Cards.parse(Cards.text(card)));
            }
        }
        Card joker = Cards.of(Rank.RANK_JOKER, Suit.SUIT_NONE);
        assertEquals(Cards.JOKER, Cards.text(joker));
        assertEquals(joker, Cards.parse("JK"));
    }

    @Test
    void textIsRankThenSuit() {
        assertEquals("QS", Cards.text(Cards.of(Rank.RANK_QUEEN, Suit.SUIT_SPADES)));
        assertEquals("TH", Cards.text(Cards.of(Rank.RANK_TEN, Suit.SUIT_HEARTS)));
        assertEquals("2C", Cards.text(Cards.of(Rank.RANK_TWO, Suit.SUIT_CLUBS)));
        assertEquals("AD", Cards.text(Cards.of(Rank.RANK_ACE, Suit.SUIT_DIAMONDS)));
    }

    @Test
    void parsesTensLowerCaseAndLists() {
        assertEquals(Cards.parse("TH"), Cards.parse("10h"));
        assertEquals("AH 2H 3H JK", Cards.text(Cards.parseAll(" ah, 2H 3h  jk ")));
    }

    @Test
    void refusesWhatIsNotACard() {
        for (String bad : List.of("", "Q", "1S", "QX", "11H", "JKS")) {
            assertThrows(IllegalArgumentException.class, () -> Cards.parse(bad), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> Cards.text(Cards.of(Rank.RANK_QUEEN, Suit.SUIT_NONE)));
    }
}
