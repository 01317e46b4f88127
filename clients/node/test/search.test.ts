import assert from "node:assert/strict";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { RolloutPolicy, Search, parseCards, points, searchPackage, type Action } from "../src";

/** A fake referee: records what the client sent, answers like the real Search service would. */
async function fakeSearch(): Promise<{ address: string; seen: Record<string, unknown>[]; stop: () => void }> {
  const seen: Record<string, unknown>[] = [];
  const server = new grpc.Server();
  server.addService(searchPackage().SearchService.service, {
    SampleDeals: (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
      seen.push({ call: "SampleDeals", ...call.request });
      if (call.request.seat.token !== "seat-secret") {
        cb({ code: grpc.status.PERMISSION_DENIED, details: "BAD_SEAT_TOKEN: that token is not a seat of this match" });
        return;
      }
      const samples = Array.from({ length: call.request.n }, (_, i) => ({
        token: `rs1.sample${i}`, hands: [{ cards: parseCards("AH 2H") }, { cards: parseCards("KS QS") }], stock: parseCards("7D"),
      }));
      cb(null, { samples, variant: "indian", seat: 0, unseen_cards: 3 });
    },
    Simulate: (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
      seen.push({ call: "Simulate", ...call.request });
      const over = call.request.rollout.policy === RolloutPolicy.ROLLOUT_POLICY_GREEDY;
      cb(null, {
        token: `${call.request.token}+${call.request.actions.length}`, applied: call.request.actions.length,
        position: { hand_over: over, to_act: 1, scores: over ? ["0", "42"] : [] }, provisional: ["12", "30"],
      });
    },
    LegalActions: (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
      seen.push({ call: "LegalActions", ...call.request });
      cb(null, { position: { to_act: 0, legal_actions: [{ draw_stock: {} }] } });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return { address: `127.0.0.1:${port}`, seen, stop: () => server.forceShutdown() };
}

test("sampleDeals sends the seat's credential and reads the samples", async () => {
  const fake = await fakeSearch();
  const search = new Search(fake.address, "seat-secret");
  try {
    const res = await search.sampleDeals("m1", 3, "seed-1");
    assert.equal(res.samples.length, 3);
    assert.equal(res.samples[1].token, "rs1.sample1");
    assert.equal(res.samples[0].hands[1].cards.length, 2);
    assert.deepEqual(fake.seen[0], { call: "SampleDeals", seat: { match_id: "m1", token: "seat-secret" }, n: 3, seed: "seed-1" });
    const refused = new Search(fake.address, "wrong");
    await assert.rejects(refused.sampleDeals("m1", 1), (err: grpc.ServiceError) => err.code === grpc.status.PERMISSION_DENIED);
    refused.close();
  } finally {
    search.close();
    fake.stop();
  }
});

test("simulate sends actions and the rollout; points are final or provisional", async () => {
  const fake = await fakeSearch();
  const search = new Search(fake.address, "seat-secret");
  try {
    const discard: Action = { kind: "discard", discard: { card: parseCards("KS")[0] } };
    const sim = await search.simulate("rs1.t", [discard], { rollout: "greedy", maxDecisions: 8, evaluate: true });
    assert.equal(sim.token, "rs1.t+1");
    assert.deepEqual(points(sim), [0, 42]);
    const sent = fake.seen[0] as { rollout: { policy: number; max_decisions: number }; actions: unknown[]; evaluate: boolean };
    assert.equal(sent.rollout.policy, RolloutPolicy.ROLLOUT_POLICY_GREEDY);
    assert.equal(sent.rollout.max_decisions, 8);
    assert.equal(sent.actions.length, 1);
    assert.equal(sent.evaluate, true);
    const plain = await search.simulate("rs1.t");
    assert.deepEqual(points(plain), [12, 30]);
    const live = await search.legalActions({ matchId: "m1" });
    assert.equal(live.legal_actions[0].kind, "draw_stock");
    assert.deepEqual((fake.seen[2] as { seat: unknown }).seat, { match_id: "m1", token: "seat-secret" });
  } finally {
    search.close();
    fake.stop();
  }
});
