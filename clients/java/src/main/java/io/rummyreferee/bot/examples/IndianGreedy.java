package io.rummyreferee.bot.examples;

import io.rummyreferee.referee.v1.Action;
import io.rummyreferee.referee.v1.Card;
import io.rummyreferee.referee.v1.Rank;
import io.rummyreferee.referee.v1.SeatView;
import io.rummyreferee.referee.v1.Suit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A greedy Indian rummy (13 cards) policy, a port of the Python SDK's {@code referee.rules.policies.indian}: keep
 * melds and near-melds, take the open card when it builds one, discard the dead card least worth keeping,
 * declare as soon as the referee lists a valid declaration, never drop.
 *
 * <p>It reads only the seat's view: the hand, the wild ranks (the wild joker's rank and printed jokers) and the
 * open deck's top card. Sequences weigh more than sets, since a declaration needs two (one pure).
 */
public final class IndianGreedy {

    private static final Set<Rank> HIGH = EnumSet.of(Rank.RANK_ACE, Rank.RANK_JACK, Rank.RANK_QUEEN, Rank.RANK_KING);
    private static final double IN_RUN = 100; // a card of a pure sequence already made
    private static final double IN_SET = 60; // a card of a set already made
    private static final double WILD = 1000; // a joker is never thrown
    /** How much a drawn open card must be worth keeping before it is taken instead of a closed card. */
    private static final double TAKE_THRESHOLD = 2.5;

    private IndianGreedy() {}

    /**
     * Declares when a declaration is listed; in the draw phase takes the open card if it is wild or joins a meld
     * or near-meld worth keeping, else draws from the closed deck; in the play phase discards the card least
     * worth keeping. Falls back to the first legal action.
     */
    public static Action choose(SeatView view, List<Action> legal) {
        Set<Rank> wilds = wildRanks(view);
        Optional<Action> declare = first(legal, Action.KindCase.DECLARE);
        if (declare.isPresent()) {
            return declare.get();
        }
        Optional<Action> take = first(legal, Action.KindCase.TAKE_DISCARDS);
        Optional<Action> draw = first(legal, Action.KindCase.DRAW_STOCK);
        if (take.isPresent() || draw.isPresent()) {
            if (take.isPresent() && view.getDiscardPileCount() > 0 && worthTaking(view, wilds)) {
                return take.get();
            }
            return draw.orElseGet(take::get);
        }
        List<Action> discards = legal.stream().filter(a -> a.getKindCase() == Action.KindCase.DISCARD).toList();
        if (!discards.isEmpty()) {
            Card worst = worst(view.getHandList(), wilds);
            return discards.stream()
                    .filter(a -> a.getDiscard().getCard().equals(worst))
                    .findFirst()
                    .orElse(discards.get(0));
        }
        return legal.get(0);
    }

    /** The open card is wild, or would join the hand as more than its least useful card. */
    private static boolean worthTaking(SeatView view, Set<Rank> wilds) {
        Card top = view.getDiscardPile(view.getDiscardPileCount() - 1);
        if (wilds.contains(top.getRank())) {
            return true;
        }
        List<Card> after = new ArrayList<>(view.getHandList());
        after.add(top);
        Map<Card, Double> values = keepValues(after, wilds);
        return !worst(after, wilds).equals(top) && values.get(top) >= TAKE_THRESHOLD;
    }

    /**
     * How much each distinct card of {@code hand} is worth keeping: wilds most, then cards of made pure
     * sequences, then of made sets, then cards with neighbours (same suit one or two apart, same rank in another
     * suit), less a little for high points so that high dead cards go first.
     */
    public static Map<Card, Double> keepValues(List<Card> hand, Set<Rank> wilds) {
        Map<Card, Integer> have = new LinkedHashMap<>(); // naturals, with how many copies (two packs)
        Map<Suit, Set<Integer>> bySuit = new HashMap<>();
        Map<Card, Double> value = new HashMap<>();
        for (Card c : hand) {
            if (wilds.contains(c.getRank())) {
                value.put(c, WILD);
            } else {
                have.merge(c, 1, Integer::sum);
                bySuit.computeIfAbsent(c.getSuit(), s -> new HashSet<>()).addAll(positions(c));
            }
        }
        Set<Card> inRun = new HashSet<>();
        bySuit.forEach((suit, pos) -> {
            for (int p : pos) {
                // in a made sequence: two neighbours in a row, on either side or both, in its suit
                if (pos.contains(p - 1) && pos.contains(p + 1)
                        || pos.contains(p + 1) && pos.contains(p + 2)
                        || pos.contains(p - 2) && pos.contains(p - 1)) {
                    Rank rank = p == 1 || p == 14 ? Rank.RANK_ACE : Rank.forNumber(p);
                    inRun.add(Card.newBuilder().setRank(rank).setSuit(suit).build());
                }
            }
        });
        Map<Rank, Set<Suit>> byRank = new HashMap<>(); // suits of each rank, outside made sequences
        for (Card c : have.keySet()) {
            if (!inRun.contains(c)) {
                byRank.computeIfAbsent(c.getRank(), r -> new HashSet<>()).add(c.getSuit());
            }
        }
        have.forEach((c, copies) -> {
            if (inRun.contains(c)) {
                value.put(c, IN_RUN);
                return;
            }
            int suits = byRank.get(c.getRank()).size();
            if (suits >= 3) {
                value.put(c, IN_SET);
                return;
            }
            Set<Integer> pos = bySuit.get(c.getSuit());
            double near = 0;
            for (int p : positions(c)) {
                near += 3.0 * (count(pos, p - 1) + count(pos, p + 1)) + 2.0 * (count(pos, p - 2) + count(pos, p + 2));
            }
            near += 2.5 * (suits - 1);
            near += 0.5 * (copies - 1); // a duplicate can go in two groups
            value.put(c, near - points(c, wilds) / 20.0);
        });
        return value;
    }

    /** The card least worth keeping; among equals the one with the most points, then the lowest card. */
    static Card worst(List<Card> hand, Set<Rank> wilds) {
        Map<Card, Double> values = keepValues(hand, wilds);
        Comparator<Card> order = Comparator.<Card>comparingDouble(values::get)
                .thenComparingInt(c -> -points(c, wilds))
                .thenComparingInt(c -> order(c.getRank()))
                .thenComparingInt(Card::getSuitValue);
        return hand.stream().min(order).orElseThrow();
    }

    /** A rank's place in the referee's card order: a printed joker (RANK_JOKER, 14 on the wire) first, as 0. */
    static int order(Rank rank) {
        return rank == Rank.RANK_JOKER ? 0 : rank.getNumber();
    }

    /** IND-3: J, Q, K and A count 10, number cards their face value, wilds (and printed jokers) 0. */
    static int points(Card card, Set<Rank> wilds) {
        if (wilds.contains(card.getRank()) || card.getRank() == Rank.RANK_JOKER) {
            return 0;
        }
        return HIGH.contains(card.getRank()) ? 10 : card.getRankValue();
    }

    /** Run positions of a card: an ace is low (1) or high (14). */
    private static List<Integer> positions(Card card) {
        return card.getRank() == Rank.RANK_ACE ? List.of(1, 14) : List.of(order(card.getRank()));
    }

    private static int count(Set<Integer> positions, int p) {
        return positions.contains(p) ? 1 : 0;
    }

    private static Set<Rank> wildRanks(SeatView view) {
        Set<Rank> wilds = EnumSet.noneOf(Rank.class);
        for (Rank r : view.getWildRanksList()) {
            if (r != Rank.UNRECOGNIZED) {
                wilds.add(r);
            }
        }
        return wilds;
    }

    private static Optional<Action> first(List<Action> legal, Action.KindCase kind) {
        return legal.stream().filter(a -> a.getKindCase() == kind).findFirst();
    }
}
