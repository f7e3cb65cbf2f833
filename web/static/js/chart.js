// Bar charts drawn as SVG: one slot per hour of the last 24, bars stacked
// from the series given. No library; text goes in with textContent.

const NS = "http://www.w3.org/2000/svg";
const W = 480, H = 120, TOP = 12, BOTTOM = 16, LEFT = 36;

function node(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text != null) e.textContent = text;
  return e;
}

// hours returns the starts of the last 24 hours (UTC), oldest first.
export function hours(now = Date.now()) {
  const h = Math.floor(now / 3600000) * 3600000;
  return Array.from({ length: 24 }, (_, i) => h - (23 - i) * 3600000);
}

// barChart draws series ([{cls, label, values[24], tip?(i)}]) stacked per hour,
// with fmt for the axis and the tooltips, and a summary for screen readers.
export function barChart(svg, slots, series, fmt, summary) {
  const max = Math.max(1e-9, ...slots.map((_, i) => series.reduce((a, s) => a + (s.values[i] || 0), 0)));
  const bw = (W - LEFT) / slots.length;
  const y = (v) => H - BOTTOM - (v / max) * (H - TOP - BOTTOM);
  const kids = [node("title", {}, summary),
    node("line", { x1: LEFT, x2: W, y1: H - BOTTOM, y2: H - BOTTOM, class: "axis" }),
    node("text", { x: LEFT - 4, y: TOP + 4, "text-anchor": "end", class: "tick" }, fmt(max)),
    node("text", { x: LEFT - 4, y: H - BOTTOM, "text-anchor": "end", class: "tick" }, fmt(0))];
  slots.forEach((t, i) => {
    let base = 0;
    const x = LEFT + i * bw + 1;
    for (const s of series) {
      const v = s.values[i] || 0;
      if (v > 0) {
        const r = node("rect", { x, y: y(base + v), width: bw - 2, height: y(base) - y(base + v), class: s.cls });
        r.appendChild(node("title", {}, `${new Date(t).toISOString().slice(11, 16)} UTC: ` + (s.tip ? s.tip(i) : `${s.label} ${fmt(v)}`)));
        kids.push(r);
      }
      base += v;
    }
    if (i % 6 === 0) kids.push(node("text", { x, y: H - 3, class: "tick" }, new Date(t).toISOString().slice(11, 16)));
  });
  svg.setAttribute("aria-label", summary);
  svg.replaceChildren(...kids);
}
