// A server-sent event stream read with fetch, so that the key travels in a
// header and never in a URL: the one reconnect loop of the tenant's stream
// (stream.js) and the console's (admin.js). It reconnects after a drop,
// waiting longer after each failure (0.5 s doubling to maxDelay), resumes
// with a Last-Event-ID when the caller keeps one, and tells its state:
// "connecting", "live", "down" (retrying; the caller may poll meanwhile)
// or "refused" (the key was refused: it stops).

export class LiveStream {
  // path: the stream's URL; headers(): the request's headers;
  // onEvent(name, data, id): every event (data parsed as JSON, id "" when
  // the event has none); onState(state, detail): the connection's state as
  // above; resumeFrom(): the Last-Event-ID to send ("" or absent: none);
  // maxDelay: the longest wait between two tries, in ms (15 s).
  constructor({ path, headers, onEvent, onState, resumeFrom = () => "", maxDelay = 15000 }) {
    Object.assign(this, { path, headers, onEvent, onState, resumeFrom, maxDelay });
    this.ctl = null;
  }

  // start (re)connects, dropping any connection this stream had.
  start() {
    this.stop();
    const ctl = new AbortController();
    this.ctl = ctl;
    this.run(ctl.signal);
  }

  stop() {
    if (this.ctl) this.ctl.abort();
    this.ctl = null;
  }

  async run(signal) {
    this.onState("connecting", "");
    for (let delay = 500; !signal.aborted; delay = Math.min(delay * 2, this.maxDelay)) {
      let why = "the connection failed";
      try {
        const headers = Object.assign({}, this.headers());
        const last = this.resumeFrom();
        if (last) headers["Last-Event-ID"] = last;
        const res = await fetch(this.path, { headers, signal, cache: "no-store" });
        if (res.status === 401 || res.status === 403) { this.onState("refused", await detail(res)); return; }
        if (res.ok) {
          this.onState("live", "");
          delay = 500;
          await this.read(res.body.getReader(), signal);
          why = "the connection dropped";
        } else {
          why = await detail(res);
        }
      } catch {
        if (signal.aborted) return;
      }
      if (signal.aborted) return;
      this.onState("down", why);
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  async read(reader, signal) {
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done || signal.aborted) return;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        this.dispatch(block);
      }
    }
  }

  dispatch(block) {
    let name = "message", data = "", id = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
      else if (line.startsWith("id:")) id = line.slice(3).trim();
    }
    if (data || id) this.onEvent(name, data ? JSON.parse(data) : null, id);
  }
}

// detail reads an RFC 9457 problem's detail from a failed answer.
async function detail(res) {
  try { const p = await res.json(); return p.detail || p.title || res.statusText; } catch { return res.statusText; }
}
