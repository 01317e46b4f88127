#!/usr/bin/env node
/**
 * The greedy example bot: the ported greedy policy for Indian rummy, the first legal action for other variants.
 *
 *   node clients/node/dist/examples/greedy.js --referee HOST:PORT --bot-token T    (or --match ID --token T)
 *
 * With --probe-rejection, its first DRAW-phase answer in each match is deliberately illegal (a Discard of a card
 * not in its hand), to show the referee's ActionRejected: it prints `rejected CODE: message` as the SDK's default
 * does, then answers the same request again with the greedy choice and plays on.
 */
import {
  Phase,
  describeResult,
  greedyIndian,
  main,
  naturalCards,
  reportRejection,
  sameCard,
  type Action,
  type Bot,
  type MatchResult,
  type Request,
  type SeatView,
} from "../src";

const POLICIES: Record<string, (view: SeatView, legal: readonly Action[]) => Action> = { indian: greedyIndian };

class GreedyBot implements Bot {
  readonly name = "node-greedy";
  private readonly probed = new Set<string>(); // matches whose illegal probe was already sent

  constructor(private readonly probeRejection: boolean) {}

  decide(view: SeatView, legal: readonly Action[], request: Request): Action {
    if (this.probeRejection && request.phase === Phase.PHASE_DRAW && !this.probed.has(request.match_id)) {
      this.probed.add(request.match_id);
      const card = naturalCards().find((c) => !view.hand.some((h) => sameCard(h, c)))!;
      return { kind: "discard", discard: { card } };
    }
    const policy = POLICIES[view.variant];
    return policy ? policy(view, legal) : legal[0];
  }

  /** Report like the SDK's default; when probing, the rejection was expected, so answer again properly. */
  onRejected(code: string, message: string, request: Request): Action | undefined {
    reportRejection(code, message);
    return this.probeRejection ? this.decide(request.view, request.legal, request) : undefined;
  }

  onMatchResult(result: MatchResult): void {
    this.probed.delete(result.match_id);
    process.stderr.write(`${describeResult(result)}\n`);
  }
}

main((args) => new GreedyBot(args.flags["probe-rejection"]), ["probe-rejection"]);
