#!/usr/bin/env node
// A Node bot for the stdio bridge with no dependencies: declare when the referee lists a declaration,
// otherwise play the first legal action; report rejections and results on stderr.
//   referee-bridge --referee 127.0.0.1:50051 --bot-token T -- node declare_or_first.js
"use strict";
const readline = require("readline");

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (text) => {
  const line = JSON.parse(text);
  switch (line.type) {
    case "decision": {
      const legal = line.decision.legal_actions;
      const declare = legal.findIndex((action) => "declare" in action);
      const answer = { request_id: line.decision.request_id, legal_index: declare >= 0 ? declare : 0 };
      process.stdout.write(JSON.stringify(answer) + "\n");
      break;
    }
    case "rejected":
      console.error(`rejected ${line.rejected.code}: ${line.rejected.message}`);
      break;
    case "match_result": {
      const r = line.match_result;
      console.error(`match ${r.match_id} ended: ${r.reason}`);
      break;
    }
  }
});
