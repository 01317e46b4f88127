package io.rummyreferee.bot;

import io.rummyreferee.referee.v1.Card;
import io.rummyreferee.referee.v1.Rank;
import io.rummyreferee.referee.v1.Suit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The card text notation of logs, records and the CLI: rank then suit, ranks {@code A23456789TJQK} and suits
 * {@code SHDC} ("QS", "TH", "2C"); {@value #JOKER} is a printed joker ({@link Rank#RANK_JOKER}).
 */
public final class Cards {

    /** The text of a printed joker. */
    public static final String JOKER = "JK";

    private static final String RANKS = "A23456789TJQK"; // index + 1 is the Rank number
    private static final String SUITS = "SHDC"; // index + 1 is the Suit number

    private Cards() {}

    /** A card of {@code rank} and {@code suit}. */
    public static Card of(Rank rank, Suit suit) {
        return Card.newBuilder().setRank(rank).setSuit(suit).build();
    }

    /** The text of {@code card}, e.g. "QS" or "JK". */
    public static String text(Card card) {
        if (card.getRank() == Rank.RANK_JOKER && card.getSuit() == Suit.SUIT_NONE) {
            return JOKER;
        }
        int rank = card.getRankValue();
        int suit = card.getSuitValue();
        if (rank < 1 || rank > RANKS.length() || suit < 1 || suit > SUITS.length()) {
            throw new IllegalArgumentException("no text for a card of rank " + card.getRank() + " and suit "
                    + card.getSuit() + " (a joker has no suit and every other card has one)");
        }
        return "" + RANKS.charAt(rank - 1) + SUITS.charAt(suit - 1);
    }

    /** The cards' texts separated by spaces, e.g. "AH 2H 3H". */
    public static String text(Collection<Card> cards) {
        return cards.stream().map(Cards::text).collect(Collectors.joining(" "));
    }

    /** Reads one card: "QS", "th", "10H" or "JK". */
    public static Card parse(String text) {
        String t = text.strip().toUpperCase(Locale.ROOT);
        if (t.equals(JOKER)) {
            return of(Rank.RANK_JOKER, Suit.SUIT_NONE);
        }
        if (t.length() >= 2) {
            String rankText = t.substring(0, t.length() - 1);
            int rank = rankText.equals("10") ? 10 : rankText.length() == 1 ? RANKS.indexOf(rankText.charAt(0)) + 1 : 0;
            int suit = SUITS.indexOf(t.charAt(t.length() - 1)) + 1;
            if (rank > 0 && suit > 0) {
                return of(Rank.forNumber(rank), Suit.forNumber(suit));
            }
        }
        throw new IllegalArgumentException(
                "not a card: \"" + text + "\" (write rank then suit, e.g. QS, TH, 2C, or JK)");
    }

    /** Reads cards separated by spaces or commas: "AH 2H 3H". */
    public static List<Card> parseAll(String text) {
        List<Card> cards = new ArrayList<>();
        for (String token : text.replace(',', ' ').strip().split("\\s+")) {
            if (!token.isEmpty()) {
                cards.add(parse(token));
            }
        }
        return cards;
    }
}
