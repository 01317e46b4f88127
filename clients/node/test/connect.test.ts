import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { RefereeUnreachableError, refereePackage, run, type Bot } from "../src";

const firstLegal: Bot = { name: "t", decide: (_view, legal) => legal[0]! };

/** A short temp folder: a Unix socket's path has at most 107 bytes. */
function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "rummy-node-"));
}

/** A fake referee on a Unix socket: welcomes the join, sends match m1's result, records the joins. */
async function fakeReferee(socket: string): Promise<{ joins: any[]; stop: () => void }> {
  const joins: any[] = [];
  const server = new grpc.Server();
  server.addService(refereePackage().RefereeService.service, {
    Play: (call: grpc.ServerDuplexStream<any, any>) => {
      call.once("data", (msg: any) => {
        joins.push(msg.join);
        call.write({ welcome: { bot_name: "t" } });
        call.write({ match_result: { match_id: "m1", status: 2, ranking: [], totals: [] } });
      });
      call.on("end", () => call.end());
    },
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  return { joins, stop: () => server.forceShutdown() };
}

test("a unix: address reaches a referee on a Unix socket, written either way", async () => {
  const dir = tempDir();
  const socket = path.join(dir, "ref.sock");
  const referee = await fakeReferee(socket);
  try {
    for (const address of [`unix:${socket}`, `unix://${socket}`]) {
      const results = await run(firstLegal, { referee: address, matchId: "m1", token: "seat-secret" });
      assert.deepEqual(results.map((r) => r.match_id), ["m1"]);
    }
    assert.deepEqual(referee.joins.map((j) => j.seat.token), ["seat-secret", "seat-secret"]);
  } finally {
    referee.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("with nothing listening, run rejects with one line naming the address", async () => {
  const dir = tempDir();
  try {
    for (const address of [`unix:${path.join(dir, "none.sock")}`, "127.0.0.1:1"]) {
      const error = await run(firstLegal, { referee: address, botToken: "tok-7f3a" }).then(
        () => assert.fail("run resolved"),
        (err: unknown) => err,
      );
      assert.ok(error instanceof RefereeUnreachableError, String(error));
      assert.equal(error.address, address);
      assert.equal(error.code, grpc.status.UNAVAILABLE);
      assert.ok(error.message.startsWith(`cannot reach the referee at ${address}: `), error.message);
      assert.ok(!error.message.includes("\n") && !error.message.includes("tok-7f3a"), error.message);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the example bot exits 1 naming the address when no referee is there, the token only in its environment", () => {
  const dir = tempDir();
  const address = `unix:${path.join(dir, "none.sock")}`;
  try {
    const out = spawnSync(process.execPath, [path.join(__dirname, "..", "examples", "greedy.js")], {
      env: { ...process.env, RUMMY_REFEREE: address, RUMMY_BOT_TOKEN: "tok-7f3a" },
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(out.status, 1, out.stderr);
    const lines = out.stderr.trim().split("\n");
    assert.equal(lines.length, 1, out.stderr);
    assert.ok(lines[0]!.includes(`cannot reach the referee at ${address}`), out.stderr);
    assert.ok(!(out.stdout + out.stderr).includes("tok-7f3a"));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
