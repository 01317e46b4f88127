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
let scores = [];

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
// the stream sends `meta` (the match and its scored hands so far) and the last frame on joining, then a frame per
// step; when many steps come at once (or the page fell behind) a fresh `meta` and the last frame again
source.addEventListener("meta", (e) => {
  match = JSON.parse(e.data);
  frames = match.frame_count;
  scores = match.hands.filter((h) => h.score).map((h) => ({ hand: h.hand, ...h.score }));
  document.title = `live \u00b7 ${match.variant} \u00b7 ${match.match_id}`;
  document.getElementById("title").textContent = `Live: ${match.variant} \u00b7 ${match.seat_names.join(" vs ")}`;
  say("following the match as a spectator: public information only");
});
source.addEventListener("frame", (e) => {
  latest = JSON.parse(e.data);
  frames = Math.max(frames, latest.index + 1);
  if (latest.score && !scores.some((s) => s.hand === latest.hand)) scores.push({ hand: latest.hand, ...latest.score });
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
    say(JSON.parse(e.data).error);  // (with a reason code: SLOW_READER, DOES_NOT_REPLAY, ...)
    source.close();
  } else if (source.readyState === EventSource.CLOSED) {
    say("The referee closed the stream.");
  }
});
