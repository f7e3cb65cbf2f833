// What a document's card says about it: early results read from the job's
// progress messages while it runs, its fields once analysed, and its
// error in plain words.

// earlyResults reads the counts the pipeline reports as it goes
// ("parsed 3 of 12 pages", "splitting 12 pages", "embedding 40 chunks").
export function earlyResults(message) {
  const out = {};
  if (!message) return out;
  let m;
  if ((m = /parsed \d+ of (\d+) pages/.exec(message)) || (m = /splitting (\d+) pages/.exec(message))) out.pages = Number(m[1]);
  if ((m = /embedding (\d+) chunks/.exec(message)) || (m = /embedded \d+ of (\d+) chunks/.exec(message))) out.chunks = Number(m[1]);
  return out;
}

// resultRows lists [label, value] pairs: the early counts, then every
// field of a completed document that has a value.
export function resultRows(early, fields, warnings) {
  const rows = [];
  const add = (k, v) => { if (v != null && v !== "" && !(Array.isArray(v) && v.length === 0)) rows.push([k, String(v)]); };
  const f = fields || {};
  add("Pages", f.page_count || early.pages);
  add("Words", f.word_count);
  add("Title", f.title);
  add("Language", f.language);
  add("Chunks", f.chunk_count || early.chunks);
  add("Key phrases", (f.key_phrases || []).slice(0, 8).join(", "));
  add("Dates", (f.dates || []).slice(0, 6).join(", "));
  add("Amounts", (f.amounts || []).slice(0, 6).map((a) => `${a.value} ${a.currency}`).join(", "));
  if (f.active_content) add("Note", "contains active content (scripts or embedded files)");
  add("Warnings", (warnings || []).join("; "));
  return rows;
}

const REASONS = {
  malformed: "the file is damaged or is not the kind of file its contents claim",
  encrypted: "the file is password-protected",
  too_large: "the file is too large to process",
  timeout: "reading the file took too long",
  unsupported_type: "this type of file is not supported",
  invalid: "the file could not be read",
};

// plainError says why a document failed in words a user reads; the
// message as the API gave it stays under "Details".
export function plainError(message) {
  const m = /^rejected_input: ([a-z_]+): /.exec(message);
  if (m) return "This file could not be processed: " + (REASONS[m[1]] || m[1].replace(/_/g, " ")) + ".";
  if (/timed out/i.test(message)) return "Processing took too long and was stopped. Retry to try again.";
  if (/^embed/.test(message)) return "The embedding service failed while indexing this document. Retry to try again.";
  if (/not found/.test(message)) return "The uploaded file is no longer available. Upload it again.";
  return "Processing failed: " + message.split(": ").slice(-1)[0];
}
