// Draws one frame of a match into a page: the same code for the replay viewer and the live page.
// It draws only the JSON it is given (referee/tools/timeline.py chose what the perspective may see) and builds every
// node with textContent, so text from a record (seat names, notes) is never read as HTML.

export const SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const CARD_IN_TEXT = /(?<![A-Za-z0-9])((?:10|[2-9TJQKA])[SHDC]|JK)(?![A-Za-z0-9])/g;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function rankText(rank) {
  return rank === "T" ? "10" : rank;
}

/** A card face: rank and suit symbol, red or black; a joker is marked as one; a wild shows what it stands for. */
export function cardElement(code, { standsFor = null, small = false } = {}) {
  const card = el("span", "card" + (small ? " small" : ""));
  card.dataset.card = code;
  if (code === "JK") {
    card.classList.add("joker");
    card.title = "joker (JK)";
    const corner = el("span", "corner");
    corner.append(el("span", "rank", "\u2605"));
    card.append(corner, el("span", "suit", "JOKER"));
  } else {
    const rank = code.slice(0, -1);
    const suit = code.slice(-1);
    card.classList.add(suit === "H" || suit === "D" ? "red" : "black");
    card.title = `${rankText(rank)} of ${SUIT_NAME[suit]} (${code})`;
    const corner = el("span", "corner");  // rank and suit in the corner, as printed: a fanned pile still reads
    corner.append(el("span", "rank", rankText(rank)), el("span", "pip", SUIT_SYMBOL[suit]));
    card.append(corner, el("span", "suit", SUIT_SYMBOL[suit]));
  }
  if (standsFor) {
    card.classList.add("wild");
    card.append(el("span", "stands-for", "=" + standsForText(standsFor)));
  }
  return card;
}

function standsForText(as) {
  if (as === "joker") return "joker";
  const suit = as.slice(-1);
  return SUIT_SYMBOL[suit] ? rankText(as.slice(0, -1)) + SUIT_SYMBOL[suit] : rankText(as);
}

export function cardBack() {
  const back = el("span", "card back");
  back.setAttribute("aria-hidden", "true");
  return back;
}

/** Text with the card codes in it drawn as small cards ("seat 1 discarded KH" shows K of hearts). */
export function textWithCards(text) {
  const out = el("span", "with-cards");
  let last = 0;
  for (const m of text.matchAll(CARD_IN_TEXT)) {
    if (m.index > last) out.append(document.createTextNode(text.slice(last, m.index)));
    out.append(cardElement(m[1], { small: true }));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.append(document.createTextNode(text.slice(last)));
  return out;
}

function cardRow(codes, className) {
  const row = el("div", "cards " + (className || ""));
  for (const code of codes) row.append(cardElement(code));
  return row;
}

function seatName(match, seat) {
  return match.seat_names[seat] || `seat ${seat}`;
}

const STEP_TEXT = { deal: "the deal", move: "a move", hand_end: "the hand ends", forfeit: "a forfeit", stop: "the match is stopped" };

function drawStatus(match, frame, perspective) {
  const box = el("div", "status");
  box.append(el("span", "hand-no", `Hand ${frame.hand}`));
  let what = STEP_TEXT[frame.step] || frame.step;
  if (frame.actor !== null && frame.actor !== undefined) {
    what = `${seatName(match, frame.actor)} (seat ${frame.actor}) moved` + (frame.timed_out ? ", played for it by the referee" : "");
  }
  box.append(el("span", "step", what));
  if (frame.to_act) {
    box.append(el("span", "to-act", `next: seat ${frame.to_act.seat} to ${frame.to_act.phase.toLowerCase()}`));
  } else if (frame.over) {
    box.append(el("span", "to-act", "the match is over"));
  }
  const who = perspective === "spectator" ? "as a spectator (public information only)"
    : perspective === "all" ? "everything (the match is over)" : `as seat ${perspective} saw it`;
  box.append(el("span", "perspective", who));
  return box;
}

function drawSeat(match, frame, seat, perspective) {
  const t = frame.table;
  const box = el("section", "seat");
  box.dataset.seat = seat;
  if (frame.to_act && frame.to_act.seat === seat) box.classList.add("acting");
  if (perspective === seat) box.classList.add("you");
  if (t.active && t.active[seat] === false) box.classList.add("out");
  const head = el("h3", null, seatName(match, seat));
  const facts = [`seat ${seat}`];
  if (match.teams && new Set(match.teams).size < match.teams.length) facts.push(`team ${match.teams[seat]}`);
  if (t.dealer === seat) facts.push("dealer");
  if (perspective === seat) facts.push("you");
  head.append(el("small", null, " " + facts.join(" \u00b7 ")));
  const total = el("span", "total", `total ${frame.totals[seat]}`);
  total.dataset.totalSeat = seat;
  head.append(total);
  box.append(head);
  const cards = frame.hands[seat];
  const size = t.hand_sizes ? t.hand_sizes[seat] : (cards ? cards.length : 0);
  const hand = el("div", "cards hand" + (cards ? "" : " hidden"));
  hand.dataset.seat = seat;
  hand.dataset.size = size;
  if (cards) {
    for (const code of cards) hand.append(cardElement(code));
  } else {
    for (let i = 0; i < size; i++) hand.append(cardBack());
  }
  box.append(hand, el("div", "count", `${size} card${size === 1 ? "" : "s"} in hand` + (cards ? "" : " (face down)")));
  const front = t.in_front && t.in_front[seat];
  if (front && front.length) {
    box.append(el("div", "label", "in front"), cardRow(front, "in-front"));
  }
  const received = perspective === seat ? frame.received : frame.received_by_seat ? frame.received_by_seat[seat] : [];
  if (received && received.length) {
    box.append(el("div", "label", "passed face down (known to this seat)"), cardRow(received, "received"));
  }
  return box;
}

function drawBoard(frame) {
  const t = frame.table;
  const board = el("section", "board");
  const stock = el("div", "stock");
  stock.dataset.count = t.stock_size;
  stock.append(t.stock_size ? cardBack() : el("span", "empty", "empty"), el("div", "label", `stock: ${t.stock_size}`));
  board.append(stock);
  const pile = el("div", "pile");
  pile.dataset.view = t.pile;
  pile.dataset.size = t.discard_size;
  if (t.pile === "NONE") {
    pile.append(el("div", "label", "no discard pile in this game"));
  } else {
    const cards = el("div", "cards" + (t.pile === "FANNED" ? " fanned" : ""));
    for (const code of t.discard_pile) cards.append(cardElement(code));
    if (!t.discard_pile.length) cards.append(el("span", "empty", "empty"));
    const how = t.pile === "FANNED" ? "discard pile, fanned (bottom to top)" : "discard pile, top card";
    pile.append(cards, el("div", "label", `${how}: ${t.discard_size} card${t.discard_size === 1 ? "" : "s"}`));
  }
  board.append(pile);
  if (t.face_up && t.face_up.length) {
    const up = el("div", "face-up");
    up.append(cardRow(t.face_up), el("div", "label", "face up"));
    board.append(up);
  }
  if (t.wild_ranks && t.wild_ranks.length) {
    board.append(el("div", "wilds", "wild: " + t.wild_ranks.map(rankText).join(", ")));
  }
  if (t.offer) {
    const offer = el("div", "offer");
    offer.append(cardElement(t.offer), el("div", "label", "on offer"));
    board.append(offer);
  }
  if (frame.stock) {
    const all = el("div", "stock-cards");
    all.append(el("div", "label", "the stock, top first"), cardRow(frame.stock, "small-row"));
    board.append(all);
  }
  return board;
}

function drawMelds(match, frame) {
  const box = el("section", "melds");
  box.append(el("h2", null, "On the table"));
  const melds = frame.table.melds || [];
  if (!melds.length) box.append(el("p", "empty", "no melds yet"));
  for (const m of melds) {
    const meld = el("div", "meld");
    meld.dataset.meld = m.id;
    meld.dataset.owner = m.owner;
    const kind = (m.label || m.kind).toLowerCase().replace("_", " ");
    meld.append(el("span", "meld-label", `${kind} #${m.id} \u00b7 ${seatName(match, m.owner)}`));
    const cards = el("div", "cards");
    for (const p of m.cards) cards.append(cardElement(p.card, { standsFor: p.wild ? p.as : null }));
    meld.append(cards);
    box.append(meld);
  }
  return box;
}

function drawEvents(frame) {
  const box = el("section", "events");
  box.append(el("h2", null, "What happened"));
  const list = el("ol");
  for (const e of frame.events) {
    if (e.kind === "HAND_REVEALED") continue;  // the hands themselves are drawn on the seats
    const item = el("li", e.private ? "private" : "");
    item.dataset.kind = e.kind;
    item.append(textWithCards(e.text || e.kind));
    list.append(item);
  }
  if (!list.children.length) list.append(el("li", "empty", "nothing visible"));
  box.append(list);
  return box;
}

function drawScores(match, frame, scores) {
  const box = el("section", "scores");
  box.append(el("h2", null, "Scores"));
  const table = el("table");
  const head = el("tr");
  head.append(el("th", null, "hand"));
  for (let s = 0; s < match.seats; s++) {
    const th = el("th", null, `seat ${s}`);
    th.title = seatName(match, s);
    head.append(th);
  }
  table.append(head);
  for (const sc of scores) {
    const row = el("tr");
    row.append(el("td", null, sc.hand));
    for (let s = 0; s < match.seats; s++) {
      const cell = el("td", null, `${sc.points[s] >= 0 ? "+" : ""}${sc.points[s]}`);
      cell.title = sc.reason;
      row.append(cell);
    }
    table.append(row);
  }
  const totals = el("tr", "totals");
  totals.append(el("th", null, "total"));
  for (let s = 0; s < match.seats; s++) {
    const cell = el("th", null, frame.totals[s]);
    cell.dataset.totalSeat = s;
    totals.append(cell);
  }
  table.append(totals);
  box.append(table);
  if (frame.result) {
    const places = frame.result.ranking.map((group, i) => `${i + 1}. ${group.map((s) => seatName(match, s)).join(" = ")}`);
    box.append(el("p", "result", `Result: ${places.join(", ")} (${frame.result.reason})`));
  }
  return box;
}

function drawNotes(frame) {
  const notes = frame.table.notes || [];
  const box = el("section", "notes");
  if (!notes.length) return box;
  box.append(el("h2", null, "Notes"));
  const dl = el("dl");
  for (const [key, value] of notes) {
    if (!value) continue;
    dl.append(el("dt", null, key.replaceAll("_", " ")), el("dd", null, value));
  }
  box.append(dl);
  return box;
}

/**
 * Draw `frame` of `match` (the timeline's metadata) into `root`.
 * `scores`: the hands already scored by this frame, each {hand, points, reason}.
 */
export function drawFrame(root, match, frame, { perspective = "spectator", scores = [] } = {}) {
  const seats = el("div", "seats");
  for (let s = 0; s < match.seats; s++) seats.append(drawSeat(match, frame, s, perspective));
  const main = el("div", "felt");
  main.append(drawStatus(match, frame, perspective), seats, drawBoard(frame), drawMelds(match, frame));
  const side = el("aside", "side");
  side.append(drawEvents(frame), drawScores(match, frame, scores), drawNotes(frame));
  root.replaceChildren(main, side);
  root.dataset.frame = frame.index;
  root.dataset.hand = frame.hand;
  root.dataset.perspective = String(perspective);
}

export async function getJSON(url) {
  const resp = await fetch(url);
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(body.error || `${resp.status} ${resp.statusText}`);
  return body;
}
