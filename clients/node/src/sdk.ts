/**
 * The Node bot SDK: connect to a referee, be seated, answer decisions.
 *
 * A bot is any object with `decide(view, legal, request) => Action` (may return a Promise). `view` is the seat's
 * SeatView, `legal` the actions the referee knows to be legal: returning one of them is always accepted.
 * `run(bot, { referee, botToken })` plays match after match over one connection; `run(bot, { referee, matchId,
 * token })` plays one seat of one match. `main(bot)` does the same from the command line. The referee's address is
 * HOST:PORT or a Unix domain socket, `unix:/abs/path` (how a sandboxed bot reaches it).
 */
import { parseArgs } from "node:util";
import { status, type ServiceError } from "@grpc/grpc-js";
import {
  refereeClient,
  type Action,
  type DecisionRequest,
  type HandResult,
  type Join,
  type MatchEvent,
  type MatchResult,
  type PlayResponse,
  type SeatView,
  type Seated,
} from "./protocol";
import type { Phase__Output as Phase } from "./generated/rummy/referee/v1/Phase";

export const SDK_VERSION = "node/0.1.0";
export const DEFAULT_REFEREE = "127.0.0.1:50051";

/** One decision: which match and seat, the phase, the time left, and what the referee sent. */
export interface Request {
  readonly match_id: string;
  /** uint64 on the wire, kept as a decimal string so it is echoed exactly. */
  readonly request_id: string;
  readonly seat: number;
  readonly phase: Phase;
  readonly time_left_ms: number;
  readonly view: SeatView;
  readonly legal: readonly Action[];
  readonly raw: DecisionRequest;
}

/** A bot: `decide` is required, every hook is optional. */
export interface Bot {
  /** Sent in the Join (`--name` overrides it). */
  name?: string;
  decide(view: SeatView, legal: readonly Action[], request: Request): Action | Promise<Action>;
  /** A new match starts for this bot. */
  onSeated?(seated: Seated): void;
  /** Something happened that this seat may see. */
  onEvent?(event: MatchEvent): void;
  /** A hand ended (the match may go on). */
  onHandResult?(result: HandResult): void;
  /**
   * The referee rejected the answer to `request`: return another action to send, or nothing to let the deadline
   * rule apply. Without this hook the SDK prints `rejected CODE: message` to stderr and sends nothing.
   */
  onRejected?(code: string, message: string, request: Request): Action | undefined | Promise<Action | undefined>;
  /** A match ended. */
  onMatchResult?(result: MatchResult): void;
}

/** Where to connect and how to join: a bot token (match after match), or a match id and its seat token. */
export interface RunOptions {
  /** HOST:PORT, or `unix:/abs/path` for a Unix domain socket. */
  referee: string;
  botToken?: string;
  matchId?: string;
  token?: string;
  /** Overrides `bot.name` in the Join. */
  botName?: string;
  /** Stop after this many match results (bot-token mode). */
  maxMatches?: number;
}

/**
 * No referee answered at `address`: the stream failed before its first message. Its message is one line naming
 * the address (never a token); `code` is the gRPC status (UNAVAILABLE).
 */
export class RefereeUnreachableError extends Error {
  readonly code: number;
  constructor(readonly address: string, readonly cause: ServiceError) {
    super(`cannot reach the referee at ${address}: ${oneLine(cause.details || cause.message)}`);
    this.name = "RefereeUnreachableError";
    this.code = cause.code;
  }
}

function oneLine(text: string): string {
  return text.split(/\s+/).filter(Boolean).join(" ");
}

/** What the default `onRejected` does: tell the bot's author, send nothing. */
export function reportRejection(code: string, message: string): void {
  process.stderr.write(`rejected ${code}: ${message}\n`);
}

/** `match ID ended: ranking [[0], [1]] totals [12, 80] (REASON)`. */
export function describeResult(result: MatchResult): string {
  const ranking = result.ranking.map((place) => `[${place.seats.join(", ")}]`).join(", ");
  return `match ${result.match_id} ended: ranking [${ranking}] totals [${result.totals.join(", ")}] (${result.reason})`;
}

function joinMessage(bot: Bot, options: RunOptions): Join {
  // batch: the referee may send what it has ready as one PlayResponse.batch (taken apart in `run`)
  const named = { bot_name: options.botName ?? bot.name ?? "node-bot", sdk: SDK_VERSION, batch: true };
  if (options.botToken) return { ...named, bot_token: options.botToken };
  if (options.matchId && options.token) return { ...named, seat: { match_id: options.matchId, token: options.token } };
  throw new Error("give a bot token, or a match id and a seat token");
}

/**
 * Play until the referee closes the stream, the one match ends (seat mode), or `maxMatches` end. Messages are
 * handled one at a time in arrival order; state is kept per match, since one stream may carry several at once.
 * Rejects with a `RefereeUnreachableError` when nothing answers at `options.referee`.
 */
export async function run(bot: Bot, options: RunOptions): Promise<MatchResult[]> {
  const join = joinMessage(bot, options);
  const seatMode = join.seat !== undefined;
  const client = refereeClient(options.referee);
  const call = client.Play();
  const pending = new Map<string, Request>(); // match id -> the decision awaiting an answer
  const results: MatchResult[] = [];

  const send = (request: Request, action: Action): void => {
    call.write({ action: { match_id: request.match_id, request_id: request.request_id, action } });
  };

  const handle = async (msg: PlayResponse): Promise<boolean> => {
    switch (msg.body) {
      case "seated":
        bot.onSeated?.(msg.seated!);
        return false;
      case "event":
        bot.onEvent?.(msg.event!);
        return false;
      case "decision": {
        const d = msg.decision!;
        const view = d.view!;
        const request: Request = {
          match_id: d.match_id, request_id: d.request_id, seat: view.seat, phase: d.phase,
          time_left_ms: d.time_left_ms, view, legal: d.legal_actions, raw: d,
        };
        pending.set(d.match_id, request);
        send(request, await bot.decide(view, d.legal_actions, request));
        return false;
      }
      case "rejected": {
        const r = msg.rejected!;
        const request = pending.get(r.match_id);
        if (request === undefined || request.request_id !== r.request_id || bot.onRejected === undefined) {
          reportRejection(r.code, r.message);
          return false;
        }
        const retry = await bot.onRejected(r.code, r.message, request);
        if (retry !== undefined) send(request, retry);
        return false;
      }
      case "accepted":
        if (pending.get(msg.accepted!.match_id)?.request_id === msg.accepted!.request_id) {
          pending.delete(msg.accepted!.match_id);
        }
        return false;
      case "hand_result":
        bot.onHandResult?.(msg.hand_result!);
        return false;
      case "match_result": {
        const result = msg.match_result!;
        pending.delete(result.match_id);
        results.push(result);
        bot.onMatchResult?.(result);
        return seatMode || (options.maxMatches !== undefined && results.length >= options.maxMatches);
      }
      default:
        return false; // welcome, and bodies newer than this SDK
    }
  };

  return await new Promise<MatchResult[]>((resolve, reject) => {
    let finished = false;
    let received = false; // the referee answered: a later UNAVAILABLE means it went away
    let queue = Promise.resolve();
    const finish = (error?: Error): void => {
      if (finished) return;
      finished = true;
      call.end();
      call.cancel();
      client.close();
      if (error) reject(error);
      else resolve(results);
    };
    call.on("data", (message: PlayResponse) => {
      received = true;
      const messages = message.body === "batch" ? message.batch!.messages : [message];
      for (const msg of messages) {
        queue = queue
          .then(async () => {
            if (!finished && (await handle(msg))) finish();
          })
          .catch((err: unknown) => {
            process.stderr.write(`${join.bot_name}: ${msg.body} failed: ${err instanceof Error ? err.stack : err}\n`);
          });
      }
    });
    call.on("end", () => void queue.then(() => finish()));
    call.on("error", (err: ServiceError) => {
      const error = !received && err.code === status.UNAVAILABLE ? new RefereeUnreachableError(options.referee, err) : err;
      void queue.then(() => finish(error));
    });
    call.write({ join });
  });
}

/** The command line every bot takes; each flag falls back to the environment the tournament runner sets. */
export interface BotArgs {
  referee: string;
  botToken?: string;
  matchId?: string;
  token?: string;
  name?: string;
  /** For the bot's own random choices (`--seed` or RUMMY_BOT_SEED). */
  seed?: number;
  /** The bot's own boolean flags (named in `parseBotArgs`), e.g. `--probe-rejection`. */
  flags: Record<string, boolean>;
}

export const USAGE =
  "usage: BOT [--referee HOST:PORT | --referee unix:/PATH] (--bot-token T | --match ID --token T) [--name N] [--seed S]\n" +
  "  env: RUMMY_REFEREE, RUMMY_BOT_TOKEN, RUMMY_MATCH, RUMMY_SEAT_TOKEN, RUMMY_BOT_SEED\n" +
  "  (the tournament runner passes tokens only in the environment: a flag is readable by every process on the host)";

function parseSeed(text: string | undefined): number | undefined {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

/** Parse `--referee HOST:PORT`, `--bot-token T`, `--match ID`, `--token T`, `--name N`, `--seed S` and `flags`. */
export function parseBotArgs(argv: readonly string[], flags: readonly string[] = [], env = process.env): BotArgs {
  const { values }: { values: Record<string, string | boolean | (string | boolean)[] | undefined> } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      referee: { type: "string" },
      "bot-token": { type: "string" },
      match: { type: "string" },
      token: { type: "string" },
      name: { type: "string" },
      seed: { type: "string" },
      ...Object.fromEntries(flags.map((flag) => [flag, { type: "boolean" as const }])),
    },
  });
  const text = (key: string): string | undefined => {
    const value = values[key];
    return typeof value === "string" ? value : undefined;
  };
  const matchId = text("match") ?? env.RUMMY_MATCH;
  const seedText = text("seed");
  if (seedText !== undefined && parseSeed(seedText) === undefined) throw new Error(`--seed wants an integer, got ${seedText}`);
  return {
    referee: text("referee") ?? env.RUMMY_REFEREE ?? DEFAULT_REFEREE,
    botToken: matchId ? undefined : (text("bot-token") ?? env.RUMMY_BOT_TOKEN),
    matchId,
    token: text("token") ?? env.RUMMY_SEAT_TOKEN,
    name: text("name"),
    seed: parseSeed(seedText ?? env.RUMMY_BOT_SEED),
    flags: Object.fromEntries(flags.map((flag) => [flag, values[flag] === true])),
  };
}

/**
 * Run a bot from the command line until the referee is done with it; exits 0 then (and, with a bot token, when the
 * referee goes away after welcoming it), 1 with one line naming the address when no referee answers there or on any
 * other failure, 2 on a bad command line. `bot` may be a factory that reads the parsed arguments (seed, the bot's
 * own `flags`).
 */
export function main(bot: Bot | ((args: BotArgs) => Bot), flags: readonly string[] = []): void {
  let args: BotArgs;
  try {
    args = parseBotArgs(process.argv.slice(2), flags);
    if (!args.botToken && !(args.matchId && args.token)) throw new Error("give a bot token, or a match id and a seat token");
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : err}\n${USAGE}\n`);
    process.exit(2);
  }
  const player = typeof bot === "function" ? bot(args) : bot;
  run(player, { referee: args.referee, botToken: args.botToken, matchId: args.matchId, token: args.token, botName: args.name })
    .then(() => process.exit(0))
    .catch((err: Partial<ServiceError>) => {
      const name = args.name ?? player.name ?? "node-bot";
      if (err instanceof RefereeUnreachableError) {
        process.stderr.write(`${name}: ${err.message}\n`);
        process.exit(1);
      }
      if (err.code === status.CANCELLED) process.exit(0);
      // a referee that goes away ends a bot-token session; a seat that never saw its match end has failed
      const wentAway = err.code === status.UNAVAILABLE && args.matchId === undefined;
      process.stderr.write(`${name}: ${oneLine(err.message ?? String(err))} (referee ${args.referee})\n`);
      process.exit(wentAway ? 0 : 1);
    });
}
