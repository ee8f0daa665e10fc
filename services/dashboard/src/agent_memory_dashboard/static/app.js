// agent-memory dashboard: the little JavaScript the server-rendered pages need.
// No library, no build step: plain DOM and fetch, against this origin's /api (which adds the
// signed-in key server-side). Writes carry the x-dashboard header (see security.py).
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
const REFRESH = Number(document.body.dataset.refreshMs || 2000);

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (method !== "GET") init.headers["x-dashboard"] = "1";
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch("/api" + path, init);
  if (r.status === 401) {
    location.href = "/login?next=" + encodeURIComponent(location.pathname + location.search);
    throw new Error("sign in required");
  }
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = text; }
  return { status: r.status, ok: r.ok, data };
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

const when = (ts) => String(ts || "").slice(0, 19).replace("T", " ");

function showJson(target, value) {
  target.replaceChildren(el("pre", { class: "json" }, JSON.stringify(value, null, 2)));
}

function problem(r) {
  if (r.status === 404 || r.status === 405) return "not available on this server";
  return (r.data && r.data.message) || "HTTP " + r.status;
}

// ---- sign in / out ----
function setupLogin() {
  const form = $("#login-form");
  if (!form) return;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const r = await fetch("/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key: $("#login-key").value }),
    });
    if (r.ok) location.href = form.dataset.next || "/";
    else $("#login-error").textContent = (await r.json()).message;
  });
}

function setupLogout() {
  const b = $("#logout");
  if (b) b.addEventListener("click", async () => {
    await fetch("/logout", { method: "POST" });
    location.href = "/login";
  });
}

// ---- live tables (projects, sessions) ----
function setupLive() {
  const table = $("table[data-live]");
  if (!table) return;
  const keyAttr = table.id === "projects" ? "project" : "session";
  const listKey = table.id === "projects" ? "projects" : "sessions";
  const idKey = keyAttr + "_id";
  const tick = async () => {
    const r = await api("GET", table.dataset.live);
    if (!r.ok) return;
    const dot = $("#live-dot");
    if (dot) dot.classList.toggle("beat");
    for (const row of r.data[listKey]) {
      const tr = $$(`tr[data-${keyAttr}]`, table).find((t) => t.dataset[keyAttr] === row[idKey]);
      if (!tr) { location.reload(); return; }  // a new project or session: render it properly
      for (const td of $$("td[data-field]", tr)) {
        const f = td.dataset.field;
        let v = row[f];
        if (Array.isArray(v)) v = v.join(", ");
        else if (f.endsWith("_ts")) v = when(v);
        if (String(v) !== td.textContent) {
          td.textContent = v;
          td.classList.remove("changed"); void td.offsetWidth; td.classList.add("changed");
        }
      }
    }
  };
  setInterval(tick, REFRESH);
}

// ---- pins ----
function setupPins() {
  for (const b of $$("button.pin")) {
    b.addEventListener("click", async () => {
      const pinned = b.dataset.pinned === "true";
      const r = await api("POST", `/v1/memories/${encodeURIComponent(b.dataset.memory)}/${pinned ? "unpin" : "pin"}`);
      if (!r.ok) { alert(problem(r)); return; }
      b.dataset.pinned = String(r.data.pinned);
      b.textContent = r.data.pinned ? "unpin" : "pin";
    });
  }
}

// ---- grips: the exact events a bullet was taken from ----
function setupGrips() {
  for (const b of $$("button.grip-toggle")) {
    b.addEventListener("click", async () => {
      const box = $(".grip-events", b.closest(".grip"));
      if (!box.hidden) { box.hidden = true; b.textContent = b.textContent.replace("▾", "▸"); return; }
      const r = await api("GET", `/v1/grips/${encodeURIComponent(b.dataset.grip)}`);
      if (!r.ok) { box.replaceChildren(problem(r)); box.hidden = false; return; }
      const rows = [];
      for (const [cls, list] of [["before", r.data.before], ["cited", r.data.events], ["after", r.data.after]]) {
        for (const e of list) {
          rows.push(el("tr", { class: "event " + cls, "data-event": e.event_id },
            el("td", {}, when(e.ts)), el("td", {}, e.role), el("td", {}, e.type), el("td", { class: "text" }, e.text)));
        }
      }
      box.replaceChildren(el("table", { class: "grip-table" }, el("tbody", {}, ...rows)));
      box.hidden = false;
      b.textContent = b.textContent.replace("▸", "▾");
    });
  }
}

// ---- pipeline: backlog, rate, live chart ----
function setupPipeline() {
  const chart = $("#backlog-chart");
  if (!chart) return;
  const history = [];
  let last = null;
  const tick = async () => {
    const r = await api("GET", "/v1/status");
    if (!r.ok) return;
    const now = Date.now();
    let backlog = 0;
    for (const c of r.data.consumers) {
      const tr = $(`tr[data-consumer="${CSS.escape(c.name)}"]`);
      if (!tr) continue;
      const set = (f, v) => { const td = $(`td[data-field="${f}"]`, tr); if (td) td.textContent = v; };
      for (const f of ["pending", "ack_pending", "redelivered", "dead_letters"]) set(f, c[f] ?? "–");
      set("state", !c.exists ? "missing" : c.caught_up ? "caught up" : "working");
      backlog += (c.pending || 0) + (c.ack_pending || 0);
      if (last && last.consumers[c.name] !== undefined && c.ack_floor !== undefined) {
        const rate = (c.ack_floor - last.consumers[c.name]) / ((now - last.t) / 1000);
        set("rate", rate.toFixed(1));
      }
    }
    last = { t: now, consumers: Object.fromEntries(r.data.consumers.map((c) => [c.name, c.ack_floor])) };
    $("#events-stored").textContent = r.data.events_stored;
    const d = $("#drained");
    d.textContent = r.data.drained ? "drained" : "working";
    d.className = r.data.drained ? "ok" : "busy";
    history.push(backlog);
    if (history.length > 120) history.shift();
    drawChart(chart, history);
  };
  tick();
  setInterval(tick, Math.min(REFRESH, 1000));
}

function drawChart(svg, values) {
  const W = 600, H = 120, pad = 4;
  const max = Math.max(1, ...values);
  const step = (W - 2 * pad) / 119;
  const pts = values.map((v, i) => `${pad + i * step},${H - pad - (v / max) * (H - 2 * pad)}`);
  const ns = "http://www.w3.org/2000/svg";
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", pts.join(" "));
  line.setAttribute("class", "chart-line");
  const label = document.createElementNS(ns, "text");
  label.setAttribute("x", W - 6); label.setAttribute("y", 14); label.setAttribute("text-anchor", "end");
  label.textContent = `backlog ${values[values.length - 1]} (max ${max})`;
  svg.replaceChildren(line, label);
}

// ---- topic graph: circles sized by importance, edges by relatedness ----
async function setupTopics() {
  const svg = $("#topic-graph");
  if (!svg) return;
  const topics = JSON.parse(svg.dataset.topics || "[]");
  const ns = "http://www.w3.org/2000/svg";
  const W = 640, H = 480, cx = W / 2, cy = H / 2;
  const maxImp = Math.max(1e-9, ...topics.map((t) => t.importance || 0));
  const pos = {};
  topics.forEach((t, i) => {
    const a = (2 * Math.PI * i) / Math.max(1, topics.length);
    const r = topics.length > 1 ? 180 : 0;
    pos[t.topic_id] = [cx + r * Math.cos(a), cy + r * Math.sin(a)];
  });
  const details = {};
  await Promise.all(topics.map(async (t) => {
    const r = await api("GET", `/v1/topics/${encodeURIComponent(t.topic_id)}`);
    if (r.ok) details[t.topic_id] = r.data;
  }));
  const edges = [];
  for (const t of topics) {
    for (const rel of (details[t.topic_id] || {}).related || []) {
      if (pos[rel.topic_id] && t.topic_id < rel.topic_id) edges.push([t.topic_id, rel.topic_id, rel.weight || 0]);
    }
  }
  const nodes = [];
  for (const [a, b, w] of edges) {
    const line = document.createElementNS(ns, "line");
    line.setAttribute("x1", pos[a][0]); line.setAttribute("y1", pos[a][1]);
    line.setAttribute("x2", pos[b][0]); line.setAttribute("y2", pos[b][1]);
    line.setAttribute("stroke-width", String(1 + 6 * w));
    line.setAttribute("class", "edge");
    nodes.push(line);
  }
  for (const t of topics) {
    const g = document.createElementNS(ns, "g");
    g.setAttribute("class", "topic");
    g.dataset.topic = t.topic_id;
    const c = document.createElementNS(ns, "circle");
    c.setAttribute("cx", pos[t.topic_id][0]); c.setAttribute("cy", pos[t.topic_id][1]);
    c.setAttribute("r", String(10 + 30 * Math.sqrt((t.importance || 0) / maxImp)));
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", pos[t.topic_id][0]); label.setAttribute("y", pos[t.topic_id][1] + 4);
    label.setAttribute("text-anchor", "middle");
    label.textContent = (t.label || t.topic_id).slice(0, 28);
    g.append(c, label);
    g.addEventListener("click", () => showTopic(details[t.topic_id] || t));
    nodes.push(g);
  }
  svg.replaceChildren(...nodes);
}

function showTopic(t) {
  const box = $("#topic-detail");
  const members = (t.members || []).map((m) =>
    el("li", {}, el("a", { href: "/toc/nodes/" + encodeURIComponent(m.node_id) }, m.title || m.node_id),
      ` · ${(m.event_ids || []).length} events`));
  box.replaceChildren(
    el("h2", {}, t.label || t.topic_id),
    el("p", { class: "muted" }, `importance ${Number(t.importance || 0).toFixed(2)} · ${t.size ?? members.length} members`),
    el("p", {}, (t.keywords || []).join(", ")),
    el("ul", { id: "topic-members" }, ...members));
}

// ---- admin: retention dry run, erasure, keys ----
function setupAdmin() {
  const dry = $("#cleanup-dry-run");
  if (dry) dry.addEventListener("click", async () => {
    const r = await api("POST", "/v1/admin/cleanup", { dry_run: true, project_id: dry.dataset.project || undefined });
    const out = $("#cleanup-report");
    if (r.ok) showJson(out, r.data); else out.textContent = problem(r);
  });

  const erase = $("#erasure-form");
  if (erase) erase.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const project = $("#erase-project").value, session = $("#erase-session").value;
    if (!confirm(`Erase every trace of session ${session} in ${project}? This cannot be undone.`)) return;
    const r = await api("POST", "/v1/erasures", { project_id: project, scope: { session_id: session } });
    const out = $("#erasure-receipt");
    if (!r.ok) { out.textContent = problem(r); return; }
    const id = r.data.erasure_id;
    const poll = async () => {
      const s = await api("GET", `/v1/erasures/${encodeURIComponent(id)}`);
      showJson(out, s.data);
      if (s.ok && !(s.data && s.data.receipt && s.data.receipt.verified)) setTimeout(poll, 1000);
    };
    poll();
  });

  const recall = $("#recall-toggle");
  if (recall) recall.addEventListener("click", async () => {
    const project = recall.dataset.project, injection = recall.dataset.injection;
    const r = await api("PUT", `/v1/projects/${encodeURIComponent(project)}/recall`, { injection });
    if (r.ok) location.reload(); else $("#recall-toggle-result").textContent = problem(r);
  });

  const key = $("#key-form");
  if (key) key.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { role: $("#key-role").value };
    for (const [f, id] of [["label", "#key-label"], ["agent_id", "#key-agent"], ["user_id", "#key-user"], ["expires", "#key-expires"]]) {
      if ($(id).value) body[f] = $(id).value;
    }
    if ($("#key-projects").value) body.projects = $("#key-projects").value.split(",").map((s) => s.trim());
    const r = await api("POST", "/v1/keys", body);
    const out = $("#key-created");
    if (r.ok) { showJson(out, r.data); out.prepend(el("p", { class: "notice" }, "Copy the key now: it is shown only once.")); }
    else out.textContent = problem(r);
  });
  const revoke = $("#revoke-form");
  if (revoke) revoke.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const r = await api("DELETE", `/v1/keys/${encodeURIComponent($("#revoke-id").value)}`);
    if (r.ok) location.reload(); else alert(problem(r));
  });
}

document.addEventListener("DOMContentLoaded", () => {
  setupLogin(); setupLogout(); setupLive(); setupPins(); setupGrips();
  setupPipeline(); setupTopics(); setupAdmin();
});
