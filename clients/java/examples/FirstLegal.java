import io.rummyreferee.bot.Bot;
import io.rummyreferee.bot.Request;
import io.rummyreferee.bot.RummyBot;
import io.rummyreferee.referee.v1.Action;
import io.rummyreferee.referee.v1.SeatView;
import java.util.List;

/** Plays the first legal action, in any variant. */
public class FirstLegal implements Bot {
    @Override
    public Action decide(SeatView view, List<Action> legal, Request request) {
        return legal.get(0); // any listed action is legal
    }

    public static void main(String[] args) {
        RummyBot.main(args, new FirstLegal()); // --referee HOST:PORT and --bot-token T, or --match ID --token T
    }
}
