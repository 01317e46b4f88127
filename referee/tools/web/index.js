// The list of records to replay, and of matches running on this referee to follow live.
import { getJSON } from "./table.js";

function cell(row, text, href) {
  const td = document.createElement("td");
  if (href) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    td.append(a);
  } else {
    td.textContent = text;
  }
  row.append(td);
}

const PAGE = 100;
let wanted = PAGE;  // records shown: the newest first, a page more per click on "more"

async function loadRecords() {
  // the listing is paged (?limit=&after=): walk the pages until `wanted` rows
  const records = [];
  let after = null;
  let total = 0;
  do {
    const q = new URLSearchParams({ limit: String(Math.min(500, wanted - records.length)) });
    if (after) q.set("after", after);
    const page = await getJSON(`/api/records?${q}`);
    records.push(...page.records);
    total = page.total;
    after = page.next;
  } while (after && records.length < wanted);
  return { records, total, more: Boolean(after) };
}

async function refresh() {
  try {
    const [{ records, total, more }, { live }] = await Promise.all([loadRecords(), getJSON("/api/live")]);
    const liveBody = document.getElementById("live");
    liveBody.replaceChildren();
    for (const m of live) {
      const row = document.createElement("tr");
      cell(row, m.match_id, m.recorded ? `/live/${encodeURIComponent(m.match_id)}` : null);
      cell(row, m.variant);
      cell(row, m.seat_names.join(" vs "));
      cell(row, m.hands_played == null ? "playing" : `${m.hands_played} hands played`);
      liveBody.append(row);
    }
    document.getElementById("no-live").hidden = live.length > 0;
    const body = document.getElementById("records");
    body.replaceChildren();
    for (const r of records) {
      const row = document.createElement("tr");
      cell(row, r.match_id, `/replay/${encodeURIComponent(r.match_id)}`);
      cell(row, r.variant);
      cell(row, r.seat_names.join(" vs "));
      cell(row, r.complete ? "finished" : r.aborted ? "aborted" : "no result yet");
      cell(row, new Date(r.modified * 1000).toLocaleString());
      body.append(row);
    }
    document.getElementById("no-records").hidden = records.length > 0;
    document.getElementById("more").hidden = !more;
    document.getElementById("count").textContent = records.length ? `${records.length} of ${total} records` : "";
  } catch (err) {
    document.getElementById("message").textContent = String(err.message || err);
  }
}

document.getElementById("more").addEventListener("click", () => {
  wanted += PAGE;
  refresh();
});
refresh();
setInterval(refresh, 3000);
