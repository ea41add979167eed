// The ripples dashboard: polls the run's JSON API and draws it with uPlot. Served by `--http`;
// needs nothing from another host.
"use strict";

(function () {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const MAX_POINTS = 2000;
  const WINDOW = 100;
  const data = { epoch: [], rate: [], p50: [], p99: [], behind: [], memory: [] };
  const recent = [];
  let next = 0;
  let charts = null;
  let finished = false;

  const $ = (id) => document.getElementById(id);
  const fmt = (x) => x >= 1e6 ? (x / 1e6).toFixed(2) + " M" : x >= 1e3 ? (x / 1e3).toFixed(1) + " k" : String(Math.round(x * 100) / 100);
  const ms = (x) => x >= 1 ? x.toFixed(2) + " ms" : (x * 1000).toFixed(0) + " µs";

  async function get(path) {
    const r = await fetch(path, { headers, cache: "no-store" });
    if (!r.ok) throw new Error(path + ": " + r.status);
    return r.json();
  }

  function chart(id, series, yLabel) {
    const el = $(id);
    const opts = {
      width: Math.max(480, el.clientWidth || 480),
      height: 220,
      scales: { x: { time: false } },
      axes: [{ label: "epoch" }, { label: yLabel, size: 80 }],
      series: [{ label: "epoch" }].concat(series.map((s) => ({ label: s[0], stroke: s[1], width: 1.5 }))),
    };
    return new uPlot(opts, [[]].concat(series.map(() => [])), el);
  }

  function quantile(sorted, q) {
    if (!sorted.length) return 0;
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  }

  function addEpoch(e) {
    const busy = e.busy_ms != null ? e.busy_ms : e.latency_ms;
    recent.push(e);
    if (recent.length > WINDOW) recent.shift();
    const lat = recent.map((r) => r.latency_ms).sort((a, b) => a - b);
    data.epoch.push(e.epoch);
    data.rate.push(busy > 0 && e.epoch > 0 ? e.updates / (busy / 1000) : null);
    data.p50.push(quantile(lat, 0.5));
    data.p99.push(quantile(lat, 0.99));
    data.behind.push(e.epochs_behind != null ? e.epochs_behind : 0);
    data.memory.push(e.rss_bytes / (1 << 20));
    for (const k in data) if (data[k].length > MAX_POINTS) data[k].shift();
  }

  function redraw() {
    if (!charts) return;
    charts.throughput.setData([data.epoch, data.rate]);
    charts.latency.setData([data.epoch, data.p50, data.p99]);
    charts.behind.setData([data.epoch, data.behind]);
    charts.memory.setData([data.epoch, data.memory]);
    for (const id of ["chart-throughput", "chart-latency", "chart-behind", "chart-memory"]) {
      $(id).dataset.points = String(data.epoch.length);
    }
    const upd = recent.filter((r) => r.epoch > 0);
    const busy = upd.reduce((s, r) => s + (r.busy_ms != null ? r.busy_ms : r.latency_ms), 0);
    const n = upd.reduce((s, r) => s + r.updates, 0);
    $("rate").textContent = busy > 0 ? fmt(n / (busy / 1000)) : "–";
    const lat = recent.map((r) => r.latency_ms).sort((a, b) => a - b);
    $("p50").textContent = lat.length ? ms(quantile(lat, 0.5)) : "–";
    $("p99").textContent = lat.length ? ms(quantile(lat, 0.99)) : "–";
    const last = recent[recent.length - 1];
    if (last) {
      $("memory").textContent = fmt(last.rss_bytes / (1 << 20)) + " MiB";
      $("behind").textContent = last.epochs_behind != null ? String(last.epochs_behind) : "–";
    }
  }

  async function pollEpochs() {
    const epochs = await get("api/epochs?since=" + next);
    for (const e of epochs) {
      addEpoch(e);
      next = e.epoch + 1;
    }
    if (epochs.length) redraw();
  }

  async function pollStatus() {
    const s = await get("api/status");
    $("epoch").textContent = s.current_epoch != null ? String(s.current_epoch) : "–";
    $("epochs").textContent = fmt(s.totals.epochs_completed);
    $("updates").textContent = fmt(s.totals.updates);
    const what = (s.outputs || []).join(", ");
    finished = s.finished;
    $("state").textContent = (s.finished ? "finished" : "running") + (what ? " · " + what : "") + " · ripples " + s.version;
    return s;
  }

  function cell(row, text) {
    const td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  async function pollProfile() {
    let p;
    try { p = await get("api/profile"); } catch (e) { return; }
    const busy = p.workers.reduce((s, w) => s + w.busy_seconds, 0);
    $("profile-note").textContent = p.workers.length + " worker(s), " + busy.toFixed(2) + " s busy, " + p.operators.length + " operator instances.";
    const by = new Map();
    for (const op of p.operators) {
      const key = op.addr.join(".");
      const t = by.get(key) || { addr: key, name: op.name, self: 0, incl: 0, inv: 0, rin: 0, rout: 0 };
      t.self += op.self_seconds; t.incl += op.inclusive_seconds; t.inv += op.invocations;
      t.rin += op.records_in; t.rout += op.records_out;
      by.set(key, t);
    }
    const ops = Array.from(by.values()).sort((a, b) => b.self - a.self);
    const body = $("operators").tBodies[0];
    body.replaceChildren();
    for (const t of ops) {
      const row = document.createElement("tr");
      cell(row, t.addr);
      cell(row, t.name);
      const share = busy > 0 ? t.self / busy : 0;
      const td = cell(row, (100 * share).toFixed(1) + "%");
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = Math.round(120 * share) + "px";
      td.prepend(bar);
      cell(row, t.self.toFixed(3));
      cell(row, t.incl.toFixed(3));
      cell(row, fmt(t.inv));
      cell(row, fmt(t.rin));
      cell(row, fmt(t.rout));
      body.appendChild(row);
    }
    drawGraph(p, busy);
    const names = new Map(ops.map((o) => [o.addr, o.name]));
    const ch = new Map();
    for (const c of p.channels) {
      const key = c.source.join(".") + ">" + c.target.join(".");
      const t = ch.get(key) || { from: c.source.join("."), to: c.target.join("."), records: 0, messages: 0 };
      t.records += c.records; t.messages += c.messages;
      ch.set(key, t);
    }
    const cbody = $("channels").tBodies[0];
    cbody.replaceChildren();
    for (const t of Array.from(ch.values()).sort((a, b) => b.records - a.records).slice(0, 200)) {
      const row = document.createElement("tr");
      cell(row, t.from + " " + (names.get(t.from) || ""));
      cell(row, t.to + " " + (names.get(t.to) || ""));
      cell(row, fmt(t.records));
      cell(row, fmt(t.messages));
      cbody.appendChild(row);
    }
  }

  // The busiest dataflow as a graph: its operators in layers (longest path from its inputs),
  // each shaded by its share of the busy time, the channels between them by records carried.
  const SVG = "http://www.w3.org/2000/svg";
  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function drawGraph(p, busy) {
    const svg = $("graph");
    svg.replaceChildren();
    const top = new Map();
    for (const op of p.operators) {
      if (op.addr.length === 1) top.set(op.addr[0], (top.get(op.addr[0]) || 0) + op.inclusive_seconds);
    }
    if (!top.size) return;
    const d = Array.from(top.entries()).sort((a, b) => b[1] - a[1])[0][0];
    const nodes = new Map();
    for (const op of p.operators) {
      if (op.addr.length !== 2 || op.addr[0] !== d) continue;
      const n = nodes.get(op.addr[1]) || { index: op.addr[1], name: op.name, self: 0, incl: 0 };
      n.self += op.self_seconds; n.incl += op.inclusive_seconds;
      nodes.set(op.addr[1], n);
    }
    const edges = new Map();
    for (const c of p.channels) {
      if (c.source.length !== 2 || c.target.length !== 2 || c.source[0] !== d || c.target[0] !== d) continue;
      const key = c.source[1] + ">" + c.target[1];
      edges.set(key, { from: c.source[1], to: c.target[1], records: (edges.get(key) || { records: 0 }).records + c.records });
    }
    // Layers: longest path from the operators nothing feeds (back edges ignored).
    const layer = new Map();
    const order = Array.from(nodes.keys()).sort((a, b) => a - b);
    for (const i of order) layer.set(i, 0);
    for (let round = 0; round < order.length; round++) {
      let changed = false;
      for (const e of edges.values()) {
        if (e.from < e.to && nodes.has(e.from) && nodes.has(e.to) && layer.get(e.to) < layer.get(e.from) + 1) {
          layer.set(e.to, layer.get(e.from) + 1);
          changed = true;
        }
      }
      if (!changed) break;
    }
    const rows = new Map();
    const pos = new Map();
    const W = 190, H = 46;
    for (const i of order) {
      const l = layer.get(i);
      const r = rows.get(l) || 0;
      rows.set(l, r + 1);
      pos.set(i, { x: 10 + l * W, y: 10 + r * H });
    }
    const width = 20 + (Math.max(...layer.values()) + 1) * W;
    const height = 20 + Math.max(...rows.values()) * H;
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    const maxRecords = Math.max(1, ...Array.from(edges.values()).map((e) => e.records));
    for (const e of edges.values()) {
      const a = pos.get(e.from), b = pos.get(e.to);
      if (!a || !b) continue;
      el("line", { x1: a.x + 160, y1: a.y + 16, x2: b.x, y2: b.y + 16, stroke: "#999",
        "stroke-width": 0.5 + 3 * Math.log1p(e.records) / Math.log1p(maxRecords) }, svg);
    }
    for (const [i, n] of nodes) {
      const { x, y } = pos.get(i);
      const share = busy > 0 ? n.self / busy : 0;
      const g = el("g", { class: "op" }, svg);
      el("rect", { x, y, width: 160, height: 32, rx: 4, fill: "#4a7bd0", "fill-opacity": 0.08 + 0.9 * Math.min(1, share * 2), stroke: "#4a7bd0" }, g);
      const t = el("text", { x: x + 6, y: y + 13 }, g);
      t.textContent = n.name.length > 24 ? n.name.slice(0, 23) + "…" : n.name;
      const s = el("text", { x: x + 6, y: y + 27 }, g);
      s.textContent = "[" + d + "." + i + "] " + (100 * share).toFixed(1) + "%";
      el("title", {}, g).textContent = n.name + ": " + n.self.toFixed(3) + " s self, " + n.incl.toFixed(3) + " s inclusive";
    }
    $("graph-note").textContent = "Dataflow " + d + " (the busiest): " + nodes.size + " operators, " + edges.size + " channels.";
  }

  async function pollComponents() {
    let c;
    try { c = await get("api/components"); } catch (e) { return; }
    $("components-note").textContent = c.components + (c.components === 1 ? " component" : " components") + " over " + c.vertices + " vertices.";
    // Sizes in powers of two: [1], [2,3], [4,7], ...
    const buckets = [];
    for (const [size, count] of c.distribution) {
      const b = Math.floor(Math.log2(size));
      buckets[b] = (buckets[b] || 0) + count;
    }
    const max = Math.max(1, ...buckets.filter((x) => x));
    const el = $("components");
    el.replaceChildren();
    buckets.forEach((count, b) => {
      if (!count) return;
      const row = document.createElement("div");
      row.className = "row";
      const label = document.createElement("span");
      label.className = "label";
      const lo = 1 << b, hi = (1 << (b + 1)) - 1;
      label.textContent = lo === hi ? "size " + lo : "size " + lo + "–" + hi;
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = Math.max(2, Math.round(300 * Math.log1p(count) / Math.log1p(max))) + "px";
      const n = document.createElement("span");
      n.textContent = String(count);
      row.append(label, bar, n);
      el.appendChild(row);
    });
  }

  async function tick(every) {
    try {
      await pollStatus();
      await pollEpochs();
    } catch (e) {
      $("state").textContent = "cannot reach the run (" + e.message + ")";
    }
    if (every % 3 === 0) {
      await pollProfile();
      await pollComponents();
    }
    setTimeout(() => tick(every + 1), finished ? 5000 : 1000);
  }

  window.addEventListener("load", () => {
    charts = {
      throughput: chart("chart-throughput", [["updates/s", "#2b6cb0"]], "updates/s"),
      latency: chart("chart-latency", [["p50", "#2f855a"], ["p99", "#c05621"]], "ms"),
      behind: chart("chart-behind", [["behind", "#6b46c1"]], "epochs"),
      memory: chart("chart-memory", [["MiB", "#718096"]], "MiB"),
    };
    tick(0);
  });
})();
