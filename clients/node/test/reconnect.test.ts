import assert from "node:assert/strict";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { backoffMs, parseBotArgs, reconnectForeverFromEnv, refereePackage, run, RefereeUnreachableError, type Bot } from "../src";

type Script = (call: grpc.ServerDuplexStream<any, any>, join: any) => void;

/** A fake referee on 127.0.0.1:`port` (0: any) that plays each stream with the next script. */
async function referee(port: number, scripts: Script[]): Promise<{ port: number; joins: any[]; stop: () => void }> {
  const joins: any[] = [];
  const server = new grpc.Server();
  server.addService(refereePackage().RefereeService.service, {
    Play: (call: grpc.ServerDuplexStream<any, any>) => {
      call.once("data", (msg: any) => {
        joins.push(msg.join);
        (scripts.length > 1 ? scripts.shift()! : scripts[0]!)(call, msg.join);
      });
      call.on("error", () => undefined);
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port: bound, joins, stop: () => server.forceShutdown() };
}

const decision = { decision: { match_id: "m1", request_id: "7", legal_actions: [{ draw_stock: {} }], view: { seat: 0 } } };
const event = (seq: number) => ({ event: { match_id: "m1", seq: String(seq) } });
const gone = (call: grpc.ServerDuplexStream<any, any>) =>
  call.emit("error", { code: grpc.status.UNAVAILABLE, details: "going away" });
const until = async (what: string, cond: () => boolean, ms = 30_000) => {
  for (const end = Date.now() + ms; !cond(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
  }
};

test("a bot told to reconnect forever outlives its referee's restart, seeing each event and decision once", async () => {
  const answers: any[] = [];
  const first = await referee(0, [
    (call) => {
      for (const m of [{ welcome: { bot_name: "b" } }, { seated: { match_id: "m1" } }, event(1), decision]) call.write(m);
      call.on("data", (a: any) => { answers.push(a); gone(call); });
    },
  ]);
  const lines: string[] = [];
  let decided = 0, seated = 0;
  const events: string[] = [];
  const bot: Bot = {
    name: "b",
    decide: (_v, legal) => { decided += 1; return legal[0]!; },
    onSeated: () => { seated += 1; },
    onEvent: (e) => { events.push(String(e.seq)); },
  };
  const playing = run(bot, { referee: `127.0.0.1:${first.port}`, botToken: "key-s3cret", reconnectForever: true,
    backoffMs: 5, backoffCapMs: 40, log: (l) => lines.push(l) });
  await until("the first answer", () => answers.length === 1);
  first.stop();
  await until("more tries than a bounded count", () => lines.length > 12);
  const second = await referee(first.port, [
    (call) => {
      for (const m of [{ welcome: { bot_name: "b" } }, { seated: { match_id: "m1" } }, event(1), event(2), decision]) call.write(m);
      call.on("data", (a: any) => {
        answers.push(a);
        call.write({ match_result: { match_id: "m1", status: 2, ranking: [], totals: [] } });
        call.end();
      });
    },
  ]);
  try {
    const results = await playing;
    assert.deepEqual(results.map((r) => r.match_id), ["m1"]);
    assert.equal(answers[1].action.request_id, "7"); // asked again: answered again, without deciding again
    assert.deepEqual([decided, seated], [1, 1]);
    assert.deepEqual(events, ["1", "2"]);
    assert.deepEqual(second.joins[0].resume.map((r: any) => [r.match_id, r.last_seq]), [["m1", "1"]]);
    for (const line of lines) {
      assert.ok(!line.includes("s3cret") && !line.includes("\n") && line.includes(`127.0.0.1:${first.port}`), line);
      assert.match(line, /joining again in \d+\.\d s \(try \d+\)$/);
    }
  } finally {
    second.stop();
  }
});

test("a final answer still ends a bot that reconnects forever, and no referee still fails at once", async () => {
  const ref = await referee(0, [
    (call) => { call.write({ welcome: { bot_name: "b" } }); gone(call); },
    (call) => call.emit("error", { code: grpc.status.UNAUTHENTICATED, details: "BOT_TOKEN_UNKNOWN: revoked" }),
  ]);
  const bot: Bot = { name: "b", decide: (_v, legal) => legal[0]! };
  try {
    const error: any = await run(bot, { referee: `127.0.0.1:${ref.port}`, botToken: "k", reconnectForever: true,
      backoffMs: 1, log: () => undefined }).then(() => assert.fail("resolved"), (e: unknown) => e);
    assert.equal(error.code, grpc.status.UNAUTHENTICATED);
    assert.equal(ref.joins.length, 2);
  } finally {
    ref.stop();
  }
  const started = Date.now();
  const error = await run(bot, { referee: "127.0.0.1:1", botToken: "k", reconnectForever: true, log: () => undefined })
    .then(() => assert.fail("resolved"), (e: unknown) => e);
  assert.ok(error instanceof RefereeUnreachableError && Date.now() - started < 10_000, String(error));
});

test("the backoff doubles to its cap, jittered; RUMMY_RECONNECT is read and a typo is told", () => {
  for (let attempt = 1; attempt < 40; attempt++) {
    const full = Math.min(30_000, 250 * 2 ** (attempt - 1));
    const wait = backoffMs(250, 30_000, attempt);
    assert.ok(wait >= full / 2 && wait <= full, `${attempt}: ${wait}`);
  }
  assert.equal(reconnectForeverFromEnv(undefined), false);
  assert.equal(reconnectForeverFromEnv("forever"), true);
  assert.throws(() => reconnectForeverFromEnv("always"), /RUMMY_RECONNECT is 'forever' or unset/);
  assert.equal(parseBotArgs([], [], { RUMMY_RECONNECT: "forever" }).reconnectForever, true);
  assert.equal(parseBotArgs(["--reconnect-forever"], [], {}).reconnectForever, true);
  assert.equal(parseBotArgs([], [], {}).reconnectForever, false);
});
