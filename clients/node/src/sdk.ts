/**
 * The Node bot SDK: connect to a referee, be seated, answer decisions.
 *
 * A bot is any object with `decide(view, legal, request) => Action` (may return a Promise). `view` is the seat's
 * SeatView, `legal` the actions the referee knows to be legal: returning one of them is always accepted.
 * `run(bot, { referee, botToken })` plays match after match over one connection; `run(bot, { referee, matchId,
 * token })` plays one seat of one match. `main(bot)` does the same from the command line. The referee's address is
 * HOST:PORT or a Unix domain socket, `unix:/abs/path` (how a sandboxed bot reaches it).
 */
import * as fs from "node:fs";
import { parseArgs } from "node:util";
import { credentials, status, type ChannelCredentials, type ServiceError } from "@grpc/grpc-js";
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
  /**
   * Bot-token mode: once a referee welcomed the bot, join again without end when the stream drops (a ladder's
   * restart), waiting `backoffMs` (250) doubling to `backoffCapMs` (30000), each wait a random half-to-all of it.
   */
  reconnectForever?: boolean;
  backoffMs?: number;
  backoffCapMs?: number;
  /** One line per reconnect (default: stderr). */
  log?: (line: string) => void;
  /** TLS to the referee (`--tls`, `--tls-root-cert` ... in `main`); undefined: plaintext. */
  tls?: TlsOptions;
}

/**
 * How to reach a referee run with `--tls-cert`. Its certificate is checked against `rootCert`, a PEM CA file, or
 * without one against Node's default roots, and must name the host of the referee's address (a DNS name, or the IP
 * address itself). `clientCert` and `clientKey` (PEM files, both or neither) are this bot's own, for a referee that
 * asks for mutual TLS (`--tls-client-ca`).
 */
export interface TlsOptions {
  rootCert?: string;
  clientCert?: string;
  clientKey?: string;
}

/** A file the TLS options name cannot be used (missing, unreadable). Its message is one line naming the file. */
export class TlsFileError extends Error {
  constructor(readonly path: string, cause: unknown) {
    super(`cannot read the TLS file ${path}: ${oneLine(cause instanceof Error ? cause.message : String(cause))}`);
    this.name = "TlsFileError";
  }
}

/**
 * The gRPC credentials for `tls`: plaintext when undefined, else TLS as it says. The files are read here, once, so
 * a bad path is told before any connection is tried.
 */
export function channelCredentials(tls: TlsOptions | undefined): ChannelCredentials {
  if (tls === undefined) return credentials.createInsecure();
  if (Boolean(tls.clientCert) !== Boolean(tls.clientKey)) throw new Error(CLIENT_PAIR);
  const read = (file: string | undefined): Buffer | null => {
    if (!file) return null;
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new TlsFileError(file, err);
    }
  };
  const root = read(tls.rootCert);
  const key = read(tls.clientKey);
  const cert = read(tls.clientCert);
  try {
    return credentials.createSsl(root, key, cert);
  } catch (err) { // grpc-js parses the PEM files here: a key that is not one, a CA that is not PEM
    const files = [tls.rootCert, tls.clientCert, tls.clientKey].filter(Boolean).join(", ");
    throw new TlsFileError(files, err);
  }
}

const CLIENT_PAIR = "a client certificate and its key go together " +
  "(--tls-client-cert and --tls-client-key, or RUMMY_TLS_CLIENT_CERT and RUMMY_TLS_CLIENT_KEY)";

/**
 * The TLS options as every SDK reads them: RUMMY_TLS (any non-empty value: the default roots), RUMMY_TLS_ROOT_CERT,
 * RUMMY_TLS_CLIENT_CERT and RUMMY_TLS_CLIENT_KEY, each overridden by its flag when given. Undefined: plaintext. A
 * client certificate without its key (or the other way round) throws.
 */
export function tlsFromEnv(
  flags: { tls?: boolean; rootCert?: string; clientCert?: string; clientKey?: string },
  env: NodeJS.ProcessEnv = process.env,
): TlsOptions | undefined {
  const pick = (flag: string | undefined, key: string): string | undefined => flag || env[key] || undefined;
  const tls: TlsOptions = {
    rootCert: pick(flags.rootCert, "RUMMY_TLS_ROOT_CERT"),
    clientCert: pick(flags.clientCert, "RUMMY_TLS_CLIENT_CERT"),
    clientKey: pick(flags.clientKey, "RUMMY_TLS_CLIENT_KEY"),
  };
  if (Boolean(tls.clientCert) !== Boolean(tls.clientKey)) throw new Error(CLIENT_PAIR);
  if (!(flags.tls || env.RUMMY_TLS || tls.rootCert || tls.clientCert)) return undefined;
  return Object.fromEntries(Object.entries(tls).filter(([, value]) => value !== undefined)) as TlsOptions;
}

export const RECONNECT_ENV = "RUMMY_RECONNECT";

/** RUMMY_RECONNECT's value: "forever" is true, unset or empty false; anything else throws (a typo is told). */
export function reconnectForeverFromEnv(value: string | undefined): boolean {
  const text = (value ?? "").trim().toLowerCase();
  if (text !== "" && text !== "forever") throw new Error(`${RECONNECT_ENV} is 'forever' or unset, not ${JSON.stringify(value)}`);
  return text === "forever";
}

/** The attempt-th wait: `firstMs` doubling to `capMs`, then a random half-to-all of it. */
export function backoffMs(firstMs: number, capMs: number, attempt: number): number {
  const full = Math.min(capMs, firstMs * 2 ** Math.min(attempt - 1, 30));
  return full / 2 + Math.random() * (full / 2);
}

/** Worth joining again: the stream dropped (UNAVAILABLE, INTERNAL) or a referee's limit was hit. */
function retryable(code: number | undefined): boolean {
  return code === status.UNAVAILABLE || code === status.INTERNAL || code === status.RESOURCE_EXHAUSTED;
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

/** What a bot's streams share: results, open decisions, and across reconnects what was seen and answered. */
interface Session {
  pending: Map<string, Request>; // match id -> the decision awaiting an answer
  results: MatchResult[];
  welcomed: boolean; // a referee answered at least once: a later UNAVAILABLE means it went away
  seated: Set<string>;
  finished: Set<string>;
  lastSeq: Map<string, bigint>;
  sent: Map<string, Action>; // "match/request" -> an answer not yet accepted: sent again when asked again
}

/**
 * Play until the referee closes the stream, the one match ends (seat mode), or `maxMatches` end. Messages are
 * handled one at a time in arrival order; state is kept per match, since one stream may carry several at once.
 * Rejects with a `RefereeUnreachableError` when nothing answers at `options.referee` (also a TLS referee spoken to
 * in plaintext, or one whose certificate `options.tls` does not trust), a `TlsFileError` when a TLS file cannot be
 * used. With `reconnectForever`
 * (bot-token mode; RUMMY_RECONNECT=forever in `main`) a stream that drops after a welcome is joined again without
 * end, naming each match's last event seen, so the bot sees each event and each decision once; a final answer (a
 * revoked key) still ends it.
 */
export async function run(bot: Bot, options: RunOptions): Promise<MatchResult[]> {
  const join = joinMessage(bot, options);
  const creds = channelCredentials(options.tls);
  const forever = options.reconnectForever === true && join.seat === undefined;
  const session: Session = {
    pending: new Map(), results: [], welcomed: false, seated: new Set(), finished: new Set(), lastSeq: new Map(),
    sent: new Map(),
  };
  const say = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  for (let attempt = 1; ; attempt++) {
    const resume = [...session.seated].filter((m) => !session.finished.has(m)).sort()
      .map((m) => ({ match_id: m, last_seq: String(session.lastSeq.get(m) ?? 0n) }));
    const { error, joined } = await playStream(bot, options, creds, { ...join, resume }, session);
    if (error === undefined) return session.results;
    if (joined) attempt = 1; // this stream was welcomed: its drop waits from the start again
    const code = (error as Partial<ServiceError>).code;
    if (!forever || !session.welcomed || !retryable(code)) {
      if (!session.welcomed && code === status.UNAVAILABLE) throw new RefereeUnreachableError(options.referee, error as ServiceError);
      throw error;
    }
    const wait = backoffMs(options.backoffMs ?? 250, options.backoffCapMs ?? 30_000, attempt);
    const why = oneLine((error as Partial<ServiceError>).details || error.message).slice(0, 160);
    say(`${join.bot_name}: no stream to the referee at ${options.referee} (${status[code ?? status.UNKNOWN]}: ${why}); ` +
      `joining again in ${(wait / 1000).toFixed(1)} s (try ${attempt})`);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** One Play stream on a client of its own; `error` undefined: the bot is done. */
function playStream(
  bot: Bot, options: RunOptions, creds: ChannelCredentials, join: Join, session: Session,
): Promise<{ error?: Error; joined: boolean }> {
  const seatMode = join.seat !== undefined;
  const client = refereeClient(options.referee, creds);
  const call = client.Play();
  const { pending, results } = session;
  let joined = false;

  const send = (request: Request, action: Action): void => {
    session.sent.set(`${request.match_id}/${request.request_id}`, action);
    call.write({ action: { match_id: request.match_id, request_id: request.request_id, action } });
  };

  const handle = async (msg: PlayResponse): Promise<boolean> => {
    switch (msg.body) {
      case "welcome":
        session.welcomed = joined = true;
        return false;
      case "seated":
        if (session.seated.has(msg.seated!.match_id)) return false; // a rejoin seats it again: heard of once
        session.seated.add(msg.seated!.match_id);
        bot.onSeated?.(msg.seated!);
        return false;
      case "event": {
        const e = msg.event!;
        const seq = BigInt(e.seq || 0);
        if (seq > 0n) {
          if (seq <= (session.lastSeq.get(e.match_id) ?? 0n)) return false; // resent after a rejoin, seen before
          session.lastSeq.set(e.match_id, seq);
        }
        bot.onEvent?.(e);
        return false;
      }
      case "decision": {
        const d = msg.decision!;
        const view = d.view!;
        const request: Request = {
          match_id: d.match_id, request_id: d.request_id, seat: view.seat, phase: d.phase,
          time_left_ms: d.time_left_ms, view, legal: d.legal_actions, raw: d,
        };
        pending.set(d.match_id, request);
        const before = session.sent.get(`${d.match_id}/${d.request_id}`);
        send(request, before ?? (await bot.decide(view, d.legal_actions, request))); // asked again: same answer
        return false;
      }
      case "rejected": {
        const r = msg.rejected!;
        session.sent.delete(`${r.match_id}/${r.request_id}`);
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
        session.sent.delete(`${msg.accepted!.match_id}/${msg.accepted!.request_id}`);
        if (pending.get(msg.accepted!.match_id)?.request_id === msg.accepted!.request_id) {
          pending.delete(msg.accepted!.match_id);
        }
        return false;
      case "hand_result":
        bot.onHandResult?.(msg.hand_result!);
        return false;
      case "match_result": {
        const result = msg.match_result!;
        if (session.finished.has(result.match_id)) return false;
        session.finished.add(result.match_id);
        pending.delete(result.match_id);
        for (const key of [...session.sent.keys()]) if (key.startsWith(`${result.match_id}/`)) session.sent.delete(key);
        results.push(result);
        bot.onMatchResult?.(result);
        return seatMode || (options.maxMatches !== undefined && results.length >= options.maxMatches);
      }
      default:
        return false; // bodies newer than this SDK
    }
  };

  return new Promise((resolve) => {
    let finished = false;
    let queue = Promise.resolve();
    const finish = (error?: Error): void => {
      if (finished) return;
      finished = true;
      call.end();
      call.cancel();
      client.close();
      resolve({ error, joined });
    };
    call.on("data", (message: PlayResponse) => {
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
    call.on("error", (err: ServiceError) => void queue.then(() => finish(err)));
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
  /** `--reconnect-forever` or RUMMY_RECONNECT=forever. */
  reconnectForever: boolean;
  /** `--tls`, `--tls-root-cert PEM`, `--tls-client-cert PEM --tls-client-key PEM` or their RUMMY_TLS* variables. */
  tls?: TlsOptions;
}

export const USAGE =
  "usage: BOT [--referee HOST:PORT | --referee unix:/PATH] (--bot-token T | --match ID --token T) [--name N] [--seed S]\n" +
  "  [--reconnect-forever] [--tls] [--tls-root-cert PEM] [--tls-client-cert PEM --tls-client-key PEM]\n" +
  "  env: RUMMY_REFEREE, RUMMY_BOT_TOKEN, RUMMY_MATCH, RUMMY_SEAT_TOKEN, RUMMY_BOT_SEED, RUMMY_RECONNECT=forever,\n" +
  "  RUMMY_TLS=1, RUMMY_TLS_ROOT_CERT, RUMMY_TLS_CLIENT_CERT, RUMMY_TLS_CLIENT_KEY\n" +
  "  (the tournament runner passes tokens only in the environment: a flag is readable by every process on the host)";

function parseSeed(text: string | undefined): number | undefined {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

/**
 * Parse `--referee HOST:PORT`, `--bot-token T`, `--match ID`, `--token T`, `--name N`, `--seed S`, the TLS options
 * and `flags`.
 */
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
      "reconnect-forever": { type: "boolean" },
      tls: { type: "boolean" },
      "tls-root-cert": { type: "string" },
      "tls-client-cert": { type: "string" },
      "tls-client-key": { type: "string" },
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
    reconnectForever: values["reconnect-forever"] === true || reconnectForeverFromEnv(env[RECONNECT_ENV]),
    tls: tlsFromEnv({
      tls: values.tls === true, rootCert: text("tls-root-cert"), clientCert: text("tls-client-cert"),
      clientKey: text("tls-client-key"),
    }, env),
  };
}

/**
 * grpc-js names the referee's host as the TLS server name even when it is an IP address, and Node warns once
 * (DEP0123, grpc/grpc-node#1919). It is harmless (the certificate is still checked against that IP address) but it
 * is a second stderr line where a bot says one; `main`, which owns the process, mutes that one warning.
 */
function muteIpServerNameWarning(): void {
  const emit = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const code = typeof rest[0] === "object" && rest[0] !== null ? (rest[0] as { code?: unknown }).code : rest[1];
    if (code === "DEP0123") return;
    Reflect.apply(emit, this, [warning, ...rest]);
  } as typeof process.emitWarning;
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
  if (args.tls !== undefined) muteIpServerNameWarning();
  run(player, {
    referee: args.referee, botToken: args.botToken, matchId: args.matchId, token: args.token, botName: args.name,
    reconnectForever: args.reconnectForever, tls: args.tls,
  })
    .then(() => process.exit(0))
    .catch((err: Partial<ServiceError>) => {
      const name = args.name ?? player.name ?? "node-bot";
      if (err instanceof RefereeUnreachableError || err instanceof TlsFileError) {
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
