// Small DOM helpers. Text goes in with textContent only, never as HTML.

export const $ = (id) => document.getElementById(id);

// el makes an element: props sets its class ("class"), text ("text"),
// attributes (aria-*, data-*, role, for, id, type, title) and other
// properties; children are appended.
export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v == null) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = String(v);
    else if (/^(aria-|data-)/.test(k) || ["role", "for", "id", "type", "title"].includes(k)) e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...children);
  return e;
}

// setText changes an element's text only when it differs (no needless
// mutations while a ticker runs).
export function setText(e, text) {
  const s = text == null ? "" : String(text);
  if (e.textContent !== s) e.textContent = s;
}

// clock formats seconds as m:ss or h:mm:ss.
export function clock(secs) {
  secs = Math.max(0, Math.round(secs));
  const h = Math.floor(secs / 3600), m = Math.floor((secs % 3600) / 60), s = secs % 60;
  const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
  return (h > 0 ? h + ":" : "") + mm + ":" + String(s).padStart(2, "0");
}

// about formats a duration in words, rounded: "5 s", "2 min", "1 h 5 min".
export function about(ms) {
  const s = Math.max(1, Math.round(ms / 1000));
  if (s < 60) return s + " s";
  const m = Math.round(s / 60);
  if (m < 60) return m + " min";
  return Math.floor(m / 60) + " h " + (m % 60) + " min";
}

// plural: "1 document", "2 documents".
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
