// The replay viewer: step through a recorded match move by move and hand by hand, as any seat saw it.
// Keys: left/right a move, up/down (PageUp/PageDown) a hand, Home/End, 0-9 a seat, s spectator, a everything.
import { drawFrame, getJSON } from "./table.js";

const root = document.getElementById("table");
const message = document.getElementById("message");
const select = document.getElementById("perspective");
const position = document.getElementById("position");
const matchId = decodeURIComponent(location.pathname.split("/")[2] || "");
const query = new URLSearchParams(location.search);

let perspective = query.get("seat") || "spectator";
let index = Number(query.get("frame") || 0);
let match = null;
let hands = new Map();  // hand number -> promise of its frames
let ticket = 0;

const api = (path) => `/api/records/${encodeURIComponent(matchId)}${path}?seat=${encodeURIComponent(perspective)}`;

function say(text) {
  message.textContent = text || "";
  message.hidden = !text;
}

function framesOf(hand) {
  if (!hands.has(hand)) hands.set(hand, getJSON(api(`/hands/${hand}`)).then((d) => d.frames));
  return hands.get(hand);
}

function handAt(i) {
  return match.hands.find((h) => h.first <= i && i <= h.last) || match.hands[match.hands.length - 1];
}

async function show(i) {
  const mine = ++ticket;
  i = Math.max(0, Math.min(match.frame_count - 1, i));
  const h = handAt(i);
  let frames;
  try {
    frames = await framesOf(h.hand);
  } catch (err) {
    say(String(err.message || err));
    return;
  }
  if (mine !== ticket) return;  // a later key press won
  index = i;
  const frame = frames[i - h.first];
  const scores = match.hands.filter((x) => x.score && x.score.at <= i).map((x) => ({ hand: x.hand, ...x.score }));
  drawFrame(root, match, frame, { perspective: perspective === "spectator" || perspective === "all" ? perspective : Number(perspective), scores });
  position.textContent = `move ${i + 1} of ${match.frame_count} \u00b7 hand ${h.hand} of ${match.hands.length}`;
  history.replaceState(null, "", `?seat=${encodeURIComponent(perspective)}&frame=${i}`);
  const next = match.hands.find((x) => x.hand === h.hand + 1);
  if (next && i > h.last - 5) framesOf(next.hand);  // near a hand's end: fetch the next one
}

async function load() {
  try {
    match = await getJSON(api(""));
  } catch (err) {
    say(String(err.message || err));
    if (perspective !== "spectator") {
      perspective = "spectator";
      return load();
    }
    return;
  }
  say(match.aborted ? `This match was aborted: ${match.aborted}` : match.complete ? "" : "This match has no result yet: the record ends here.");
  hands = new Map();
  document.title = `${match.variant} \u00b7 ${match.match_id}`;
  document.getElementById("title").textContent = `${match.variant} \u00b7 ${match.seat_names.join(" vs ")}`;
  fillPerspectives();
  await show(index);
}

function fillPerspectives() {
  // a running match shows no seat's hand: seats once it is over (result or abort), everything once it has a result
  const over = match.complete || Boolean(match.aborted);
  const options = [["spectator", "Spectator (public only)"]];
  for (let s = 0; s < match.seats; s++) {
    options.push([String(s), `Seat ${s}: ${match.seat_names[s] || ""}` + (over ? "" : " (once the match is over)"), !over]);
  }
  options.push(["all", match.complete ? "Everything" : "Everything (once the match is over)", !match.complete]);
  select.replaceChildren();
  for (const [value, text, disabled] of options) {
    const opt = document.createElement("option");
    opt.value = value;
    opt.textContent = text;
    opt.disabled = Boolean(disabled);
    select.append(opt);
  }
  select.value = perspective;
}

async function choose(p) {
  if (p === perspective) return;
  if (p === "all" ? !match.complete : p !== "spectator" && !(match.complete || match.aborted)) return;
  perspective = p;
  await load();
}

const firstOf = (hand) => match.hands.find((x) => x.hand === hand);

function stepHand(delta) {
  const h = handAt(index);
  if (delta < 0 && index > h.first) return show(h.first);  // back to this hand's deal first
  const other = firstOf(h.hand + delta);
  if (other) return show(other.first);
  return show(delta < 0 ? 0 : match.frame_count - 1);
}

select.addEventListener("change", () => {
  choose(select.value);
  select.blur();  // the arrow keys go back to stepping
});
document.getElementById("prev").addEventListener("click", () => show(index - 1));
document.getElementById("next").addEventListener("click", () => show(index + 1));
document.getElementById("prev-hand").addEventListener("click", () => stepHand(-1));
document.getElementById("next-hand").addEventListener("click", () => stepHand(1));

document.addEventListener("keydown", (e) => {
  if (!match || e.altKey || e.ctrlKey || e.metaKey || e.target === select) return;
  const keys = {
    ArrowRight: () => show(index + 1), ArrowLeft: () => show(index - 1),
    ArrowDown: () => stepHand(1), PageDown: () => stepHand(1), ArrowUp: () => stepHand(-1), PageUp: () => stepHand(-1),
    Home: () => show(0), End: () => show(match.frame_count - 1),
    s: () => choose("spectator"), a: () => choose("all"),
  };
  let act = keys[e.key];
  if (!act && /^[0-9]$/.test(e.key) && Number(e.key) < match.seats) act = () => choose(e.key);
  if (act) {
    e.preventDefault();
    act();
  }
});

load();
