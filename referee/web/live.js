// The live page: follow a running match as a spectator (public information only), drawn by the replay's code.
import { drawFrame } from "./table.js";

const root = document.getElementById("table");
const message = document.getElementById("message");
const position = document.getElementById("position");
const matchId = decodeURIComponent(location.pathname.split("/")[2] || "");

let match = null;
let latest = null;
let frames = 0;
let pending = false;
const scores = [];

function say(text) {
  message.textContent = text || "";
  message.hidden = !text;
}

function draw() {
  pending = false;
  if (!match || !latest) return;
  drawFrame(root, match, latest, { perspective: "spectator", scores });
  position.textContent = `${frames} moves so far \u00b7 hand ${latest.hand}`;
}

const source = new EventSource(`/api/live/${encodeURIComponent(matchId)}/frames`);
source.addEventListener("meta", (e) => {
  match = JSON.parse(e.data);
  document.title = `live \u00b7 ${match.variant} \u00b7 ${match.match_id}`;
  document.getElementById("title").textContent = `Live: ${match.variant} \u00b7 ${match.seat_names.join(" vs ")}`;
  say("following the match as a spectator: public information only");
});
source.addEventListener("frame", (e) => {
  latest = JSON.parse(e.data);
  frames += 1;
  if (latest.score) scores.push({ hand: latest.hand, ...latest.score });
  if (!pending) {
    pending = true;
    requestAnimationFrame(draw);  // many frames at once (joining late) draw once
  }
});
source.addEventListener("end", (e) => {
  const end = JSON.parse(e.data);
  source.close();
  draw();
  root.dataset.ended = "1";
  say(end.complete ? "The match is over." : end.aborted ? `The match was aborted: ${end.aborted}` : "The match ended.");
  const link = document.getElementById("replay-link");
  link.href = `/replay/${encodeURIComponent(matchId)}`;
  link.hidden = false;
});
source.addEventListener("error", (e) => {
  if (e.data) {
    say(JSON.parse(e.data).error);
    source.close();
  } else if (source.readyState === EventSource.CLOSED) {
    say("The referee closed the stream.");
  }
});
