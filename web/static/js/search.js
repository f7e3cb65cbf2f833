// Search over the tenant's documents; each hit names its file and pages and
// shows the passage with the matching words highlighted.

import { api, problem } from "./api.js";
import { $, el, setText, plural } from "./dom.js";

export async function search(q, filename) {
  const list = $("results");
  list.replaceChildren();
  setText($("searchmsg"), "Searching…");
  const res = await api("/v1/search?k=10&q=" + encodeURIComponent(q));
  if (!res.ok) { setText($("searchmsg"), await problem(res)); return; }
  const { results } = await res.json();
  setText($("searchmsg"), results.length === 0 ? "No matches." : plural(results.length, "passage"));
  for (const r of results) {
    const name = r.filename || filename(r.document_id) || `document ${r.document_id}`;
    const pages = r.page_start === r.page_end ? `page ${r.page_start}` : `pages ${r.page_start}–${r.page_end}`;
    const head = el("div", { class: "muted", text: `${name} · ${pages} · score ${r.score.toFixed(3)}` });
    list.appendChild(el("li", {}, head, el("p", { class: "snippet" }, ...marked(r.snippet || r.text.slice(0, 400)))));
  }
}

const ENTITIES = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&#39;": "'", "&#34;": "\"", "&quot;": "\"" };
const unescape = (s) => s.replace(/&(lt|gt|amp|#39|#34|quot);/g, (m) => ENTITIES[m]);

// marked turns the API's snippet (escaped text with <mark> around the
// matching words) into text nodes and mark elements: no HTML is parsed.
function marked(snippet) {
  const out = [];
  const parts = snippet.split(/<\/?mark>/);
  parts.forEach((p, i) => {
    if (!p) return;
    const text = unescape(p);
    out.push(i % 2 === 1 ? el("mark", { text }) : document.createTextNode(text));
  });
  return out;
}
