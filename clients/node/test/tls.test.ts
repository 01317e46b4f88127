import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import {
  channelCredentials,
  parseBotArgs,
  refereePackage,
  run,
  RefereeUnreachableError,
  TlsFileError,
  tlsFromEnv,
  type Bot,
  type TlsOptions,
} from "../src";

const firstLegal: Bot = { name: "t", decide: (_view, legal) => legal[0]! };

test("plaintext unless asked; RUMMY_TLS trusts the default roots; a CA or a client certificate means TLS", () => {
  assert.equal(tlsFromEnv({}, {}), undefined);
  assert.deepEqual(tlsFromEnv({}, { RUMMY_TLS: "1" }), {});
  assert.deepEqual(tlsFromEnv({ tls: true }, {}), {});
  assert.deepEqual(tlsFromEnv({}, { RUMMY_TLS_ROOT_CERT: "/etc/ca.pem" }), { rootCert: "/etc/ca.pem" });
  assert.deepEqual(tlsFromEnv({ rootCert: "mine.pem" }, { RUMMY_TLS_ROOT_CERT: "/etc/ca.pem" }), { rootCert: "mine.pem" });
  assert.deepEqual(tlsFromEnv({ clientCert: "bot.crt" }, { RUMMY_TLS_CLIENT_KEY: "bot.key" }),
    { clientCert: "bot.crt", clientKey: "bot.key" });
  assert.equal(tlsFromEnv({}, { RUMMY_TLS: "", RUMMY_TLS_ROOT_CERT: "" }), undefined, "empty is unset");
  assert.throws(() => tlsFromEnv({}, { RUMMY_TLS_CLIENT_CERT: "bot.crt" }), /go together/);
  assert.throws(() => tlsFromEnv({ clientKey: "bot.key" }, {}), /go together/);
});

test("parseBotArgs reads the TLS flags and variables, a flag winning over its variable", () => {
  const env = { RUMMY_BOT_TOKEN: "b" };
  assert.equal(parseBotArgs([], [], env).tls, undefined);
  assert.deepEqual(parseBotArgs(["--tls"], [], env).tls, {});
  assert.deepEqual(parseBotArgs(["--tls-root-cert", "mine.pem"], [], { ...env, RUMMY_TLS_ROOT_CERT: "ca.pem" }).tls,
    { rootCert: "mine.pem" });
  assert.deepEqual(
    parseBotArgs(["--tls-client-cert", "bot.crt", "--tls-client-key", "bot.key"], [], { ...env, RUMMY_TLS_ROOT_CERT: "ca.pem" }).tls,
    { rootCert: "ca.pem", clientCert: "bot.crt", clientKey: "bot.key" },
  );
  assert.throws(() => parseBotArgs(["--tls-client-cert", "bot.crt"], [], env), /go together/);
});

/** A throwaway CA, a server certificate for 127.0.0.1 and localhost and a client certificate, made by openssl. */
function makePki(dir: string): Record<string, string> | undefined {
  const openssl = (...args: string[]): boolean => spawnSync("openssl", args, { cwd: dir, stdio: "ignore" }).status === 0;
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  if (!openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=rummy test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=keyCertSign")) return undefined;
  const exts = {
    server: "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    client: "extendedKeyUsage=clientAuth\n",
  };
  for (const [name, ext] of Object.entries(exts)) {
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    if (!openssl("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`)
      || !openssl("x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "1", "-extfile", `${name}.ext`, "-out", `${name}.crt`)) return undefined;
  }
  return Object.fromEntries(["ca", "server", "client"].flatMap((name) => [
    [`${name}.crt`, path.join(dir, `${name}.crt`)], [`${name}.key`, path.join(dir, `${name}.key`)],
  ]));
}

/** A fake referee serving TLS on 127.0.0.1: welcomes the join, sends match m1's result; `mutual` asks for a client
 * certificate the CA signed. */
async function tlsReferee(files: Record<string, string>, mutual: boolean): Promise<{ address: string; stop: () => void }> {
  const server = new grpc.Server();
  server.addService(refereePackage().RefereeService.service, {
    Play: (call: grpc.ServerDuplexStream<any, any>) => {
      call.once("data", () => {
        call.write({ welcome: { bot_name: "t" } });
        call.write({ match_result: { match_id: "m1", status: 2, ranking: [], totals: [] } });
      });
      call.on("end", () => call.end());
      call.on("error", () => undefined);
    },
  });
  const creds = grpc.ServerCredentials.createSsl(
    mutual ? fs.readFileSync(files["ca.crt"]!) : null,
    [{ cert_chain: fs.readFileSync(files["server.crt"]!), private_key: fs.readFileSync(files["server.key"]!) }],
    mutual,
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

let dir = "";
let files: Record<string, string> | undefined;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rummy-node-tls-"));
  files = makePki(dir);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const NO_OPENSSL = "openssl could not make the throwaway CA";

test("the credentials follow the options; a file that cannot be used is one line naming it", (t) => {
  if (files === undefined) return t.skip(NO_OPENSSL);
  assert.equal(channelCredentials(undefined)._isSecure(), false);
  for (const tls of [{}, { rootCert: files["ca.crt"] }, { rootCert: files["ca.crt"], clientCert: files["client.crt"], clientKey: files["client.key"] }]) {
    assert.equal(channelCredentials(tls)._isSecure(), true, JSON.stringify(tls));
  }
  const missing = path.join(dir, "none.pem");
  const bad: [TlsOptions, string][] = [
    [{ rootCert: missing }, missing],
    [{ clientCert: files["client.crt"], clientKey: missing }, missing],
    [{ clientCert: files["client.crt"], clientKey: files["server.key"] }, files["client.crt"]!], // not its key
  ];
  for (const [tls, named] of bad) {
    assert.throws(() => channelCredentials(tls), (err: unknown) =>
      err instanceof TlsFileError && err.message.startsWith(`cannot read the TLS file ${named}`) && !err.message.includes("\n"));
  }
  assert.throws(() => channelCredentials({ clientCert: files!["client.crt"] }), /go together/);
});

test("given the referee's CA the bot plays over TLS; in plaintext or trusting only the default roots it cannot reach it", async (t) => {
  if (files === undefined) return t.skip(NO_OPENSSL);
  const referee = await tlsReferee(files, false);
  try {
    const results = await run(firstLegal, { referee: referee.address, matchId: "m1", token: "seat-7f3a", tls: { rootCert: files["ca.crt"] } });
    assert.deepEqual(results.map((r) => r.match_id), ["m1"]);
    for (const tls of [undefined, {}]) {
      const error = await run(firstLegal, { referee: referee.address, matchId: "m1", token: "seat-7f3a", tls }).then(
        () => assert.fail(`run resolved with tls ${JSON.stringify(tls)}`),
        (err: unknown) => err,
      );
      assert.ok(error instanceof RefereeUnreachableError, String(error));
      assert.ok(error.message.startsWith(`cannot reach the referee at ${referee.address}: `), error.message);
      assert.ok(!error.message.includes("\n") && !error.message.includes("seat-7f3a"), error.message);
    }
  } finally {
    referee.stop();
  }
});

test("a referee asking for mutual TLS seats the bot showing a certificate its CA signed, and no other", async (t) => {
  if (files === undefined) return t.skip(NO_OPENSSL);
  const referee = await tlsReferee(files, true);
  try {
    const tls = { rootCert: files["ca.crt"], clientCert: files["client.crt"], clientKey: files["client.key"] };
    const results = await run(firstLegal, { referee: referee.address, matchId: "m1", token: "s", tls });
    assert.deepEqual(results.map((r) => r.match_id), ["m1"]);
    await assert.rejects(run(firstLegal, { referee: referee.address, matchId: "m1", token: "s", tls: { rootCert: files["ca.crt"] } }));
  } finally {
    referee.stop();
  }
});

test("the example bot told RUMMY_TLS=1 by a referee it does not trust exits 1 in one line", async (t) => {
  if (files === undefined) return t.skip(NO_OPENSSL);
  const referee = await tlsReferee(files, false);
  try {
    for (const env of [{ RUMMY_TLS: "1" }, { RUMMY_TLS_ROOT_CERT: path.join(dir, "none.pem") }]) {
      const out = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        // asynchronously: the referee runs in this process
        const child = spawn(process.execPath, [path.join(__dirname, "..", "examples", "greedy.js")], {
          env: { ...process.env, RUMMY_REFEREE: referee.address, RUMMY_BOT_TOKEN: "tok-7f3a", ...env },
          stdio: ["ignore", "ignore", "pipe"],
        });
        let stderr = "";
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
        child.on("close", (status) => resolve({ status, stderr }));
      });
      assert.equal(out.status, 1, out.stderr);
      const lines = out.stderr.trim().split("\n");
      assert.equal(lines.length, 1, out.stderr);
      assert.ok(!out.stderr.includes("tok-7f3a"));
      const why = env.RUMMY_TLS ? `cannot reach the referee at ${referee.address}: ` : "cannot read the TLS file ";
      assert.ok(lines[0]!.startsWith(`node-greedy: ${why}`), out.stderr);
    }
  } finally {
    referee.stop();
  }
});
