// The API client: the tenant's key travels in the Authorization header,
// never in a URL, and is kept for this tab's session only (sessionStorage).

const KEY = "docket_key";
let key = sessionStorage.getItem(KEY) || "";

export const session = {
  get key() { return key; },
  set(k) { key = k; sessionStorage.setItem(KEY, k); },
  forget() { key = ""; sessionStorage.clear(); },
};

export function api(path, opts = {}) {
  opts.headers = Object.assign({ Authorization: "Bearer " + key }, opts.headers || {});
  return fetch(path, opts);
}

// getJSON returns the body of a 200 answer, or null.
export async function getJSON(path) {
  const res = await api(path);
  return res.ok ? res.json() : null;
}

// problem reads an RFC 9457 problem's detail from a failed answer.
export async function problem(res) {
  try { const p = await res.json(); return p.detail || p.title || res.statusText; } catch { return res.statusText; }
}

// upload posts one file as multipart field "file" with XMLHttpRequest,
// which, unlike fetch, reports the request body's progress. It resolves
// with {status, body, retryAfter} and rejects only when the request could
// not be sent.
export function upload(file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/documents");
    xhr.setRequestHeader("Authorization", "Bearer " + key);
    xhr.responseType = "json";
    xhr.upload.addEventListener("progress", (ev) => {
      if (ev.lengthComputable) onProgress(ev.loaded / ev.total);
    });
    xhr.addEventListener("load", () => resolve({
      status: xhr.status,
      body: xhr.response,
      retryAfter: Number(xhr.getResponseHeader("Retry-After")) || 0,
    }));
    xhr.addEventListener("error", () => reject(new Error("the connection failed")));
    xhr.addEventListener("abort", () => reject(new Error("the upload was aborted")));
    const form = new FormData();
    form.append("file", file);
    xhr.send(form);
  });
}
