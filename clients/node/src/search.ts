/**
 * The referee's search service (rummy.search.v1.SearchService) for Node bots: deals consistent with what a seat has
 * seen, and the referee's own rules as a forward model.
 *
 *   const search = new Search("127.0.0.1:50051", token);        // the seat token, or the bot token
 *   const { samples } = await search.sampleDeals(request.match_id, 8);
 *   const sim = await search.simulate(samples[0].token, [action], { rollout: "greedy", maxDecisions: 8, evaluate: true });
 *   points(sim);                                                 // the hand's points, final or as it stands
 *
 * Each sample is a signed state token plus every hand and the stock as sampled; `simulate` applies actions to a
 * token's state with the full rules (a refused one comes back in `rejected` with its reason code) and returns a
 * new token and where the hand stands; `legalActions` lists what the rules allow for a token or a live seat.
 */
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { LOADER_OPTIONS } from "./protocol";
import type { Action } from "./protocol";
import type { ProtoGrpcType } from "./generated/search";
import type { SearchServiceClient } from "./generated/rummy/search/v1/SearchService";
import type { SampleDealsResponse__Output as SampleDealsResponse } from "./generated/rummy/search/v1/SampleDealsResponse";
import type { SimulateResponse__Output as SimulateResponse } from "./generated/rummy/search/v1/SimulateResponse";
import type { Position__Output as Position } from "./generated/rummy/search/v1/Position";
import { RolloutPolicy } from "./generated/rummy/search/v1/RolloutPolicy";
import type { RolloutPolicy as RolloutPolicyValue } from "./generated/rummy/search/v1/RolloutPolicy";
import type { LegalActionsResponse__Output as LegalActionsResponse } from "./generated/rummy/search/v1/LegalActionsResponse";

export const SEARCH_PROTO_FILE = "rummy/search/v1/search.proto";

export type { SearchServiceClient, SampleDealsResponse, SimulateResponse, Position };
export type { Sample__Output as Sample } from "./generated/rummy/search/v1/Sample";
export { RolloutPolicy };

/** How a simulation goes on after the actions sent: nobody moves, random moves, default moves, the greedy bot. */
export type Rollout = "none" | "random" | "default" | "greedy";

const POLICIES: Record<Rollout, RolloutPolicyValue> = {
  none: RolloutPolicy.ROLLOUT_POLICY_NONE,
  random: RolloutPolicy.ROLLOUT_POLICY_RANDOM,
  default: RolloutPolicy.ROLLOUT_POLICY_DEFAULT,
  greedy: RolloutPolicy.ROLLOUT_POLICY_GREEDY,
};

let loaded: ProtoGrpcType | undefined;

/** The rummy.search.v1 package as grpc-js service constructors (loaded once). */
export function searchPackage(): ProtoGrpcType["rummy"]["search"]["v1"] {
  loaded ??= grpc.loadPackageDefinition(protoLoader.loadSync(SEARCH_PROTO_FILE, LOADER_OPTIONS)) as unknown as ProtoGrpcType;
  return loaded.rummy.search.v1;
}

/** A plaintext client for the Search service at HOST:PORT. */
export function searchClient(address: string): SearchServiceClient {
  return new (searchPackage().SearchService)(address, grpc.credentials.createInsecure());
}

export interface SimulateOptions {
  rollout?: Rollout;
  /** Decisions the rollout plays at most; 0 (the default): to the end of the hand. */
  maxDecisions?: number;
  seed?: string;
  /** Also score the hand as if it stopped now (`provisional`). */
  evaluate?: boolean;
  /** Return the events of the simulation. */
  events?: boolean;
}

function unary<Req, Res>(call: (req: Req, cb: (err: grpc.ServiceError | null, res?: Res) => void) => unknown, req: Req): Promise<Res> {
  return new Promise((resolve, reject) => {
    call(req, (err, res) => (err ? reject(err) : resolve(res as Res)));
  });
}

/** The hand's points if the simulation ended it, else the provisional ones (empty without `evaluate`). */
export function points(sim: SimulateResponse): number[] {
  const scores = sim.position?.hand_over ? sim.position.scores : sim.provisional;
  return scores.map(Number);
}

/** The Search calls for one seat: `token` is its secret (the seat token, or the bot token it was given to). */
export class Search {
  readonly client: SearchServiceClient;

  constructor(referee: string | SearchServiceClient, readonly token: string) {
    this.client = typeof referee === "string" ? searchClient(referee) : referee;
  }

  /** `n` deals consistent with what this seat of `matchId` has seen (the same seed gives the same samples). */
  sampleDeals(matchId: string, n = 8, seed = ""): Promise<SampleDealsResponse> {
    const req = { seat: { match_id: matchId, token: this.token }, n, seed };
    return unary((r: typeof req, cb) => this.client.SampleDeals(r, cb), req);
  }

  /** Apply `actions` to the token's state, then the rollout; a refused action stops there (`rejected`). */
  simulate(token: string, actions: readonly Action[] = [], options: SimulateOptions = {}): Promise<SimulateResponse> {
    const req = {
      token, actions: [...actions],
      rollout: { policy: POLICIES[options.rollout ?? "none"], max_decisions: options.maxDecisions ?? 0, seed: options.seed ?? "" },
      evaluate: options.evaluate ?? false, events: options.events ?? false,
    };
    return unary((r: typeof req, cb) => this.client.Simulate(r, cb), req);
  }

  /** What the rules allow for a state token, or (`matchId`) for this live seat now. */
  async legalActions(source: { token: string } | { matchId: string }): Promise<Position> {
    const req = "token" in source ? { token: source.token } : { seat: { match_id: source.matchId, token: this.token } };
    const res = await unary<typeof req, LegalActionsResponse>((r, cb) => this.client.LegalActions(r, cb), req);
    return res.position!;
  }

  close(): void {
    this.client.close();
  }
}
