/** The smallest bot: always the first legal action. */
import { describeResult, main, type Action, type Bot, type MatchResult, type SeatView } from "../src";

class FirstLegal implements Bot {
  readonly name = "first-legal";

  decide(_view: SeatView, legal: readonly Action[]): Action {
    return legal[0]; // any listed action is legal
  }

  onMatchResult(result: MatchResult): void {
    console.log(describeResult(result));
  }
}

main(new FirstLegal());
