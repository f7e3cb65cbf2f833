// What a document's card says about it: its early results (the job's
// partial result, streamed while it runs and kept after), its fields once
// analysed, and its error in plain words.

// resultRows lists [label, value] pairs of a document: its fields, or,
// while they are not there yet, the early results that have arrived
// (pipeline.Early: the same names, fewer of them). Only what has a value.
export function resultRows(early, fields, warnings) {
  const rows = [];
  const add = (k, v) => { if (v != null && v !== "" && !(Array.isArray(v) && v.length === 0)) rows.push([k, String(v)]); };
  const f = Object.assign({}, early || {}, fields || {});
  add("Pages", f.page_count);
  add("Words", f.word_count);
  add("Title", f.title);
  add("Language", f.language);
  add("Chunks", f.chunk_count);
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
