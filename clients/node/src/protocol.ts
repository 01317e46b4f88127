/**
 * The wire contract, loaded at run time from its .proto files with @grpc/proto-loader (PROTO_DIR); the
 * TypeScript types come from the same file via proto-loader-gen-types (src/generated, made by `npm run build`).
 * Loader options and generator flags must agree: keepCase (field names as in the proto), longs as strings
 * (uint64 request ids round-trip exactly), enums as numbers, defaults, arrays and oneof names (`body`, `kind`).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "./generated/referee";
import type { RefereeServiceClient } from "./generated/rummy/referee/v1/RefereeService";

/**
 * The wire contract's folder: the copy the build puts beside the compiled SDK (dist/protos), so the package needs
 * nothing outside itself (a sandboxed bot sees only its package), else protos/ of the repository (this file runs
 * from clients/node/dist/src).
 */
export const PROTO_DIR = [path.resolve(__dirname, "..", "protos"), path.resolve(__dirname, "..", "..", "..", "..", "protos")]
  .find((dir) => fs.existsSync(path.join(dir, "rummy", "referee", "v1", "referee.proto")))
  ?? path.resolve(__dirname, "..", "..", "..", "..", "protos");
export const PROTO_FILE = "rummy/referee/v1/referee.proto";

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: Number,
  defaults: true,
  arrays: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

let loaded: ProtoGrpcType | undefined;

/** The rummy.referee.v1 package as grpc-js service constructors (loaded once). */
export function refereePackage(): ProtoGrpcType["rummy"]["referee"]["v1"] {
  loaded ??= grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS)) as unknown as ProtoGrpcType;
  return loaded.rummy.referee.v1;
}

/**
 * A client for the Referee service at HOST:PORT, plaintext unless `credentials` say otherwise (TLS:
 * `channelCredentials` in the SDK), with subchannels of its own: grpc-js's shared pool would hand a new client (a
 * bot joining again) the old connection in its backoff, up to 120 s after a referee restart.
 */
export function refereeClient(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
): RefereeServiceClient {
  return new (refereePackage().RefereeService)(address, credentials, {
    "grpc.use_local_subchannel_pool": 1,
  });
}

export type { RefereeServiceClient };
export type { Action__Output as Action } from "./generated/rummy/referee/v1/Action";
export type { ActionRejected__Output as ActionRejected } from "./generated/rummy/referee/v1/ActionRejected";
export type { Card__Output as Card } from "./generated/rummy/referee/v1/Card";
export type { DecisionRequest__Output as DecisionRequest } from "./generated/rummy/referee/v1/DecisionRequest";
export type { Group__Output as Group } from "./generated/rummy/referee/v1/Group";
export type { HandResult__Output as HandResult } from "./generated/rummy/referee/v1/HandResult";
export type { Join } from "./generated/rummy/referee/v1/Join";
export type { MatchEvent__Output as MatchEvent } from "./generated/rummy/referee/v1/MatchEvent";
export type { MatchResult__Output as MatchResult } from "./generated/rummy/referee/v1/MatchResult";
export type { PlayRequest } from "./generated/rummy/referee/v1/PlayRequest";
export type { PlayResponse__Output as PlayResponse } from "./generated/rummy/referee/v1/PlayResponse";
export type { SeatView__Output as SeatView } from "./generated/rummy/referee/v1/SeatView";
export type { Seated__Output as Seated } from "./generated/rummy/referee/v1/Seated";
export type { TableMeld__Output as TableMeld } from "./generated/rummy/referee/v1/TableMeld";
export { Phase } from "./generated/rummy/referee/v1/Phase";
export { Rank } from "./generated/rummy/referee/v1/Rank";
export { Suit } from "./generated/rummy/referee/v1/Suit";
