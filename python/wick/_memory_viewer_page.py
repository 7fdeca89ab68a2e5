"""The memory viewer's page: styles and hand-written JavaScript drawing SVG, all inline, so the
one HTML file works offline (no CDN, no network at view time). _memory_viewer.py fills in DATA.

The script replays the history forwards from the state before its first entry, which is the
snapshot with every entry undone (Note [memory history] in core/memory/history.h), so a window
that dropped its oldest entries still shows every moment it covers correctly."""

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 20px 28px; color: #222; max-width: 1000px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 22px 0 6px; }
.meta { color: #666; } table.summary td { padding: 2px 14px 2px 0; }
.num { font-weight: 600; font-variant-numeric: tabular-nums; }
.legend span { display: inline-block; margin: 2px 12px 2px 0; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.side { display: flex; gap: 16px; } .side > div { flex: 1; }
svg text { font: 11px system-ui, sans-serif; fill: #444; }
input[type=range] { width: 900px; }
"""

SCRIPT = r"""
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const T = D.snapshot.device_traces.length ? D.snapshot.device_traces[0] : [];
const BEFORE = "(before the history)";
const COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                "#ff9da7", "#9c755f"];
const OTHER = "#bab0ac", BEFORE_COLOR = "#d9d9d9";

function fmt(b) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (Math.abs(b) >= 1024 && i < units.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(1) : String(b)) + " " + units[i];
}
function esc(s) {
  return String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
}
function ownerOf(e) {
  const op = e.op || "", mod = e.module || "";
  return mod ? (op ? mod + " \u00b7 " + op : mod) : (op || "(unknown)");
}
function setText(id, text) { document.getElementById(id).textContent = text; }

// The state before the first entry: the snapshot with the history undone, newest first.
function initialState() {
  const segs = new Map(), blocks = new Map();
  for (const s of D.snapshot.segments) {
    segs.set(s.address, s.total_size);
    for (const b of s.blocks)
      if (b.state === "active_allocated") blocks.set(b.address, {size: b.size, owner: BEFORE});
  }
  for (let i = T.length - 1; i >= 0; i--) {
    const e = T[i];
    if (e.action === "alloc") blocks.delete(e.addr);
    else if (e.action === "free") blocks.set(e.addr, {size: e.size, owner: BEFORE});
    else if (e.action === "segment_alloc") segs.delete(e.addr);
    else if (e.action === "segment_free") segs.set(e.addr, e.size);
  }
  return {segs, blocks};
}

function total(map, key) { let t = 0; for (const v of map.values()) t += key ? v[key] : v; return t; }

// Applies entry e to a state; keeps allocated/reserved totals and bytes per owner.
function apply(st, e) {
  if (e.action === "alloc") {
    const owner = ownerOf(e);
    st.blocks.set(e.addr, {size: e.size, owner});
    st.allocated += e.size;
    st.owners.set(owner, (st.owners.get(owner) || 0) + e.size);
  } else if (e.action === "free") {
    const b = st.blocks.get(e.addr);
    const size = b ? b.size : e.size, owner = b ? b.owner : BEFORE;
    st.blocks.delete(e.addr);
    st.allocated -= size;
    st.owners.set(owner, (st.owners.get(owner) || 0) - size);
  } else if (e.action === "segment_alloc") {
    st.segs.set(e.addr, e.size);
    st.reserved += e.size;
  } else if (e.action === "segment_free") {
    st.segs.delete(e.addr);
    st.reserved -= e.size;
  }
}

function freshState() {
  const init = initialState();
  const st = {segs: init.segs, blocks: init.blocks, owners: new Map()};
  st.allocated = total(st.blocks, "size");
  st.reserved = total(st.segs);
  if (st.allocated) st.owners.set(BEFORE, st.allocated);
  return st;
}

// One pass over the history: peaks at every entry, and about 800 samples for the chart.
function series() {
  const st = freshState();
  const step = Math.max(1, Math.ceil(T.length / 800));
  const samples = [];
  let peakA = st.allocated, peakR = st.reserved, peakAt = 0;
  const sample = k => samples.push({k, allocated: st.allocated, reserved: st.reserved,
                                    owners: new Map(st.owners)});
  sample(0);
  for (let i = 0; i < T.length; i++) {
    apply(st, T[i]);
    if (st.allocated > peakA) { peakA = st.allocated; peakAt = i + 1; sample(i + 1); }
    else if ((i + 1) % step === 0 || i === T.length - 1) sample(i + 1);
    if (st.reserved > peakR) peakR = st.reserved;
  }
  return {samples, peakA, peakR, peakAt};
}

function ownerColors(samples) {
  const most = new Map();
  for (const s of samples)
    for (const [o, v] of s.owners) most.set(o, Math.max(most.get(o) || 0, v));
  const ranked = [...most.entries()].filter(([o, v]) => v > 0 && o !== BEFORE)
    .sort((a, b) => b[1] - a[1]).map(([o]) => o);
  const colors = new Map();
  ranked.slice(0, COLORS.length).forEach((o, i) => colors.set(o, COLORS[i]));
  const layers = [...(most.get(BEFORE) > 0 ? [BEFORE] : []), ...colors.keys()];
  if (ranked.length > COLORS.length) layers.push("other");
  colors.set(BEFORE, BEFORE_COLOR).set("other", OTHER);
  return {colors, layers};
}

function axes(w, h, pad, ymax, xlabel) {
  let out = `<line x1="${pad}" y1="${h - 20}" x2="${w - 8}" y2="${h - 20}" stroke="#999"/>`;
  for (let i = 0; i <= 4; i++) {
    const y = h - 20 - (h - 30) * i / 4;
    out += `<line x1="${pad}" y1="${y}" x2="${w - 8}" y2="${y}" stroke="#eee"/>` +
           `<text x="${pad - 4}" y="${y + 4}" text-anchor="end">${fmt(Math.round(ymax * i / 4))}</text>`;
  }
  return out + `<text x="${w - 8}" y="${h - 5}" text-anchor="end">${esc(xlabel)}</text>`;
}

function drawTimeline(s, oc) {
  const w = 960, h = 300, pad = 70, n = Math.max(1, T.length), ymax = Math.max(1, s.peakR, s.peakA);
  const X = k => pad + (w - 8 - pad) * k / n, Y = v => h - 20 - (h - 30) * v / ymax;
  let svg = axes(w, h, pad, ymax, "history entry");
  const lower = s.samples.map(() => 0);
  for (const layer of oc.layers) {
    const val = s.samples.map(p => layer === "other"
      ? [...p.owners].filter(([o]) => !oc.colors.has(o) || o === "other").reduce((a, [, v]) => a + v, 0)
      : (p.owners.get(layer) || 0));
    const upper = val.map((v, i) => lower[i] + Math.max(0, v));
    let d = s.samples.map((p, i) => `${i ? "L" : "M"}${X(p.k).toFixed(1)},${Y(upper[i]).toFixed(1)}`).join("");
    for (let i = s.samples.length - 1; i >= 0; i--) d += `L${X(s.samples[i].k).toFixed(1)},${Y(lower[i]).toFixed(1)}`;
    svg += `<path d="${d}Z" fill="${oc.colors.get(layer)}"><title>${esc(layer)}</title></path>`;
    upper.forEach((v, i) => { lower[i] = v; });
  }
  const line = key => s.samples.map((p, i) => `${i ? "L" : "M"}${X(p.k).toFixed(1)},${Y(p[key]).toFixed(1)}`).join("");
  svg += `<path d="${line("reserved")}" fill="none" stroke="#222" stroke-width="1.5"><title>reserved</title></path>`;
  svg += `<line id="cursor" x1="0" x2="0" y1="10" y2="${h - 20}" stroke="#c00" stroke-dasharray="3,3"/>`;
  const el = document.getElementById("timeline");
  el.setAttribute("viewBox", `0 0 ${w} ${h}`);
  el.innerHTML = svg;
  el.dataset.x0 = pad; el.dataset.x1 = w - 8;
  document.getElementById("legend").innerHTML =
    `<span><i style="background:none;border-top:2px solid #222;height:0"></i>reserved</span>` +
    oc.layers.map(o => `<span><i style="background:${oc.colors.get(o)}"></i>${esc(o)}</span>`).join("");
}

function drawSegments(k, colors) {
  const st = freshState();
  for (let i = 0; i < k && i < T.length; i++) apply(st, T[i]);
  const segs = [...st.segs.entries()].sort((a, b) => a[0] - b[0]);
  const blocks = [...st.blocks.entries()].sort((a, b) => a[0] - b[0]);
  const w = 960, row = 18, left = 8, bar = 760;
  const biggest = Math.max(1, ...segs.map(([, size]) => size));
  let svg = "", j = 0;
  segs.forEach(([addr, size], r) => {
    const y = 4 + r * row, scale = bar / biggest;
    svg += `<rect x="${left}" y="${y}" width="${Math.max(1, size * scale).toFixed(1)}" height="${row - 5}" fill="#eee" stroke="#bbb"><title>segment 0x${addr.toString(16)}: ${fmt(size)}</title></rect>`;
    let used = 0;
    while (j < blocks.length && blocks[j][0] < addr) j++;
    for (let b = j; b < blocks.length && blocks[b][0] < addr + size; b++) {
      const [baddr, blk] = blocks[b];
      used += blk.size;
      const color = colors.get(blk.owner) || OTHER;
      svg += `<rect x="${(left + (baddr - addr) * scale).toFixed(1)}" y="${y}" width="${Math.max(0.5, blk.size * scale).toFixed(1)}" height="${row - 5}" fill="${color}"><title>${esc(blk.owner)}: ${fmt(blk.size)} at 0x${baddr.toString(16)}</title></rect>`;
    }
    svg += `<text x="${left + bar + 8}" y="${y + row - 7}">${fmt(used)} used of ${fmt(size)}</text>`;
  });
  const el = document.getElementById("segmap");
  el.setAttribute("viewBox", `0 0 ${w} ${Math.max(row, segs.length * row + 8)}`);
  el.setAttribute("height", Math.max(row, segs.length * row + 8));
  el.innerHTML = svg;
  setText("slider-pos", String(k));
  setText("slider-segments", String(segs.length));
  setText("slider-allocated", fmt(st.allocated));
  setText("slider-reserved", fmt(st.reserved));
  const tl = document.getElementById("timeline");
  const x = +tl.dataset.x0 + (+tl.dataset.x1 - +tl.dataset.x0) * k / Math.max(1, T.length);
  const cursor = document.getElementById("cursor");
  cursor.setAttribute("x1", x); cursor.setAttribute("x2", x);
}

function drawCompare() {
  const box = document.getElementById("compare");
  if (!D.compare.length) { box.textContent = "(no allocations in the history to replay)"; return; }
  const ymax = Math.max(1, ...D.compare.map(c => c.peak_reserved));
  const w = 470, h = 220, pad = 62;
  box.innerHTML = D.compare.map((c, i) => {
    const n = Math.max(1, c.t_us.length - 1);
    const X = k => pad + (w - 8 - pad) * k / n, Y = v => h - 20 - (h - 30) * v / ymax;
    const line = key => c[key].map((v, k) => `${k ? "L" : "M"}${X(k).toFixed(1)},${Y(v).toFixed(1)}`).join("");
    return `<div><h3 id="cmp-${i}-policy">${esc(c.policy)}</h3>
      <svg viewBox="0 0 ${w} ${h}" width="100%">${axes(w, h, pad, ymax, "event")}
      <path d="${line("reserved")}L${X(n)},${Y(0)}L${X(0)},${Y(0)}Z" fill="#9ecae1" opacity="0.6"><title>reserved</title></path>
      <path d="${line("allocated")}" fill="none" stroke="#08519c" stroke-width="1.5"><title>allocated</title></path></svg>
      <div>peak reserved <span class="num" id="cmp-${i}-peak-reserved">${c.peak_reserved}</span> bytes
      (${fmt(c.peak_reserved)}), peak allocated <span class="num" id="cmp-${i}-peak-allocated">${c.peak_allocated}</span>
      bytes (${fmt(c.peak_allocated)}), device mallocs <span class="num" id="cmp-${i}-device-mallocs">${c.device_mallocs}</span></div></div>`;
  }).join("");
}

function main() {
  const snap = D.snapshot;
  setText("meta", `${snap.device || "?"}, policy ${snap.policy || "?"}: ${T.length} history entries` +
    (snap.dropped_entries ? ` (${snap.dropped_entries} older ones dropped: max_entries ${snap.max_entries})` : ""));
  const s = series();
  setText("peak-allocated", String(s.peakA)); setText("peak-allocated-h", fmt(s.peakA));
  setText("peak-reserved", String(s.peakR)); setText("peak-reserved-h", fmt(s.peakR));
  setText("num-segments", String(snap.segments.length));
  setText("num-events", String(T.length));
  const oc = ownerColors(s.samples);
  drawTimeline(s, oc);
  const slider = document.getElementById("slider");
  slider.max = String(T.length);
  slider.value = String(s.peakAt);
  slider.addEventListener("input", () => drawSegments(+slider.value, oc.colors));
  drawSegments(s.peakAt, oc.colors);
  drawCompare();
  setText("status", "ok");
}
main();
"""

BODY = """
<h1>{title}</h1>
<div class="meta" id="meta"></div>
<table class="summary"><tr>
<td>peak allocated <span class="num" id="peak-allocated"></span> bytes (<span id="peak-allocated-h"></span>)</td>
<td>peak reserved <span class="num" id="peak-reserved"></span> bytes (<span id="peak-reserved-h"></span>)</td>
<td>segments now <span class="num" id="num-segments"></span></td>
<td>history entries <span class="num" id="num-events"></span></td></tr></table>
<h2>Allocated memory by owner, and reserved memory, over the history</h2>
<svg id="timeline" width="100%"></svg>
<div class="legend" id="legend"></div>
<h2>Segments after entry <span id="slider-pos"></span>: <span id="slider-segments"></span> segments,
<span id="slider-allocated"></span> allocated of <span id="slider-reserved"></span> reserved</h2>
<input type="range" id="slider" min="0" value="0">
<div><svg id="segmap" width="100%"></svg></div>
<h2>The same allocations replayed under two policies</h2>
<div class="side" id="compare"></div>
<p class="meta">Drawn by wick.memory.viewer; status: <span id="status">running</span></p>
"""
