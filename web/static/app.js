// Docket dashboard: plain DOM and small ES modules, no framework. Text goes
// in with textContent only.

import { getJSON, session, problem, api } from "./js/api.js";
import { $, setText } from "./js/dom.js";
import { DocList } from "./js/docs.js";
import { EventStream } from "./js/stream.js";
import { Uploads } from "./js/upload.js";
import { search } from "./js/search.js";

const docs = new DocList($("doclist"), $("docsempty"), (text) => setText($("searchmsg"), text));
const uploads = new Uploads(({ document, job }) => {
  docs.putDocument(document);
  docs.putJob(job, false);
});
// A job the page did not know is an upload or a retry, from this page or
// elsewhere (another tab, the API): it took a slot of the upload window.
const stream = new EventStream((job) => { if (docs.putJob(job, true)) uploads.refreshSoon(); }, setStatus);

function setStatus(text, bad) {
  setText($("conn"), text);
  $("conn").classList.toggle("bad", !!bad);
}

// loadDocuments reads the newest documents, then the newest jobs: how each
// document ended is its job's (when its last attempt ran, where it failed,
// whether a retry can help). A document whose job is not among them (an
// old one, or one retried often) shows what the document alone tells.
async function loadDocuments() {
  const res = await getJSON("/v1/documents?limit=100");
  if (!res) return;
  docs.putDocuments(res.documents);
  const jobs = await getJSON("/v1/jobs?limit=100");
  if (jobs) docs.putJobs(jobs.jobs);
}

// connect starts the session with the key typed (or kept): nothing of a
// previous key's tenant stays on the page.
async function connect(ev) {
  if (ev) ev.preventDefault();
  const typed = $("key").value.trim();
  if (typed && typed !== session.key) { session.set(typed); EventStream.forget(); }
  if (!session.key) return;
  reset();
  // The key is checked once before the stream starts, so a wrong one is
  // said plainly and nothing else is asked with it.
  setStatus("connecting…");
  const res = await api("/v1/rate-limit");
  if (!res.ok) {
    setStatus(await problem(res), true);
    if (res.status === 401) session.forget(); // not kept for a reload
    uploads.tick();
    return;
  }
  uploads.tick();
  stream.start();
  uploads.refreshSoon();
  loadDocuments();
}

function reset() {
  stream.stop();
  docs.clear();
  uploads.clear();
  $("results").replaceChildren();
  setText($("searchmsg"), "");
}

function forget() {
  session.forget();
  reset();
  $("key").value = "";
  uploads.tick();
  setStatus("not connected");
}

$("keyform").addEventListener("submit", connect);
$("forget").addEventListener("click", forget);
$("searchform").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const q = $("q").value.trim();
  if (q && session.key) search(q, (id) => docs.filename(id));
});
setInterval(() => { docs.tick(); uploads.tick(); }, 1000);
uploads.tick();
if (session.key) { $("key").value = session.key; connect(); }
