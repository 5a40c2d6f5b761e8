// kg-rag explorer: draws bounded subgraphs the server returns. All text goes through textContent (data, never HTML).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const nodes = new vis.DataSet();
  const edges = new vis.DataSet();
  const state = { view: null, target: null, pageEdges: 1000, busy: false, lastResponse: null };
  const palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  const typeColour = {};
  const colourOf = (t) => typeColour[t] || (typeColour[t] = palette[Object.keys(typeColour).length % palette.length]);

  const network = new vis.Network($("graph"), { nodes, edges }, {
    edges: { arrows: { to: { enabled: true, scaleFactor: 0.8 } }, font: { size: 13, align: "middle", strokeWidth: 3 }, smooth: { enabled: true, type: "dynamic" } },
    nodes: { shape: "dot", size: 12, font: { size: 16 } },
    physics: { stabilization: { iterations: 200, fit: true }, barnesHut: { gravitationalConstant: -9000, springLength: 170, avoidOverlap: 0.3 } },
    interaction: { hover: true, tooltipDelay: 150 },
  });

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function status(text, isError) {
    $("status").textContent = text;
    $("status").className = isError ? "error" : "";
  }
  function names(text) {  // comma-separated; a name holding a comma is written in double quotes: "Stockholm, Sweden", Oslo
    const out = [];
    for (const m of (text || "").matchAll(/"([^"]*)"|([^,]+)/g)) { const n = (m[1] ?? m[2]).trim(); if (n) out.push(n); }
    return out;
  }
  function filters() {
    const f = {};
    const allow = names($("f-edge-types").value), deny = names($("f-exclude-edge-types").value);
    if (allow.length) f.edge_types = allow;
    if (deny.length) f.exclude_edge_types = deny;
    if ($("f-direction").value) f.direction = $("f-direction").value;
    if ($("f-max-hops").value !== "") f.max_hops = Number($("f-max-hops").value);
    const inc = names($("f-include-entities").value), exc = names($("f-exclude-entities").value);
    if (inc.length) f.include_entities = inc;
    if (exc.length) f.exclude_entities = exc;
    return f;
  }
  async function call(method, url, body) {
    const opts = { method, headers: { "Content-Type": "application/json" } };
    if (body) opts.body = JSON.stringify(body);
    const res = await fetch(url, opts);
    const data = await res.json().catch(() => ({ error: res.statusText }));
    if (!res.ok) throw new Error(data.error || res.statusText);
    return data;
  }

  // ------------------------------------------------------------------ drawing
  function visNode(n) {
    return { id: n.id, label: n.name, title: n.entity_type ? `${n.name} [${n.entity_type}]` : n.name,
             color: n.seed ? "#e15759" : (n.selected ? "#4e79a7" : "#9aa7b5"), size: n.seed ? 16 : 12 };
  }
  function visEdge(e, onPath) {
    return { id: e.id, from: e.source, to: e.target, label: e.relation_type, relation_type: e.relation_type,
             title: `${e.source_name} -[${e.relation_type}]-> ${e.target_name}` + (e.description ? `\n${e.description}` : ""),
             color: { color: colourOf(e.relation_type) }, width: onPath ? 3.5 : 1.2, dashes: e.in_context === false && !onPath };
  }
  function spreadParallel() {  // several edges between one pair: fan them out so each arrow and label shows
    const groups = {};
    edges.forEach((e) => { const k = [e.from, e.to].sort().join("\u0000"); (groups[k] = groups[k] || []).push(e); });
    const updates = [];
    Object.values(groups).forEach((g) => g.forEach((e, i) => {
      const smooth = g.length > 1 ? { enabled: true, type: i % 2 ? "curvedCCW" : "curvedCW", roundness: 0.15 + 0.12 * Math.floor(i / 2) } : { enabled: true, type: "dynamic" };
      updates.push({ id: e.id, smooth });
    }));
    edges.update(updates);
  }
  function draw(view, replace) {
    if (replace) { nodes.clear(); edges.clear(); }
    const onPath = new Set();
    (view.paths || []).forEach((p) => { if (p.context_order !== null) p.edges.forEach((id) => onPath.add(id)); });
    nodes.update(view.nodes.map(visNode));
    edges.update(view.edges.map((e) => visEdge(e, onPath.has(e.id))));
    spreadParallel();
    window.kgExplorer.settled = false;
    network.stabilize(200);  // lay out before showing; "settled" once done and fitted to the view
    window.kgExplorer.drawn += 1;
  }
  network.on("stabilizationIterationsDone", () => { network.fit(); window.kgExplorer.settled = true; });

  // ------------------------------------------------------------------ panels
  function clearPanel(title) {
    const d = $("details");
    d.replaceChildren(el("h2", title));
    return d;
  }
  function edgeLine(e) {
    const li = el("li");
    li.appendChild(el("span", `${e.source_name} -[${e.relation_type}]-> ${e.target_name}`, "edge-line"));
    (e.evidence || []).forEach((q) => li.appendChild(el("div", `“${q}”`, "quote")));
    return li;
  }
  function showQuestion(view) {
    const d = clearPanel("Retrieved for the question");
    (view.warnings || []).forEach((w) => d.appendChild(el("p", `warning: ${w}`, "warn")));
    d.appendChild(el("h3", "Paths of the context, in order"));
    const ol = el("ol");
    view.paths.filter((p) => p.context_order !== null).forEach((p) => {
      const li = el("li", p.text, "path");
      li.dataset.index = p.index;
      li.onclick = () => { document.querySelectorAll(".path.active").forEach((x) => x.classList.remove("active"));
        li.classList.add("active"); network.selectEdges(p.edges); };
      ol.appendChild(li);
    });
    if (!ol.children.length) d.appendChild(el("p", "(no path)", "hint")); else d.appendChild(ol);
    d.appendChild(el("h3", "Relationships"));
    const table = el("table"); table.id = "relations";
    const head = el("tr"); ["source", "type", "target", "weight", "rank"].forEach((h) => head.appendChild(el("th", h)));
    table.appendChild(head);
    view.relations.forEach((r) => {
      const tr = el("tr"); tr.dataset.id = r.id;
      [r.source_name, r.relation_type, r.target_name, r.weight.toFixed(1), r.rank].forEach((v) => tr.appendChild(el("td", String(v))));
      tr.onclick = () => network.selectEdges([r.id]);
      table.appendChild(tr);
    });
    d.appendChild(table);
    d.appendChild(el("h3", "Source passages"));
    view.chunks.forEach((c) => {
      const p = el("div", null, "passage");
      p.appendChild(el("div", `${c.id} · ${c.doc_id} · score ${c.score.toFixed(3)} (graph ${c.graph_score.toFixed(3)}, dense ${c.dense_score.toFixed(3)})`, "meta"));
      p.appendChild(el("div", c.text));
      d.appendChild(p);
    });
    const toggle = el("a", "Show the text context the answer model reads"); toggle.id = "show-context";
    const pre = el("pre", view.context); pre.id = "context"; pre.hidden = true;
    toggle.onclick = () => { pre.hidden = !pre.hidden; };
    d.appendChild(el("h3", "Context")); d.appendChild(toggle); d.appendChild(pre);
  }
  function showEntity(view) {
    const e = view.entity;
    const d = clearPanel(`${e.name} [${e.entity_type}]`);
    d.id = "details";
    e.descriptions.forEach((t) => d.appendChild(el("p", t)));
    const more = view.truncated ? ` (the ${view.edges.length} heaviest of ${view.total_edges})` : "";
    d.appendChild(el("h3", `Out-edges (${e.out_edges.length})${more}`));
    const out = el("ul"); out.id = "out-edges"; e.out_edges.forEach((x) => out.appendChild(edgeLine(x))); d.appendChild(out);
    d.appendChild(el("h3", `In-edges (${e.in_edges.length})`));
    const inn = el("ul"); inn.id = "in-edges"; e.in_edges.forEach((x) => inn.appendChild(edgeLine(x))); d.appendChild(inn);
    d.appendChild(el("h3", `Documents (${e.documents.length}; mentioned in ${e.mentions} passages)`));
    const docs = el("ul"); e.documents.forEach((x) => docs.appendChild(el("li", x))); d.appendChild(docs);
    e.passages.slice(0, 5).forEach((c) => { const p = el("div", null, "passage"); p.appendChild(el("div", c.id, "meta")); p.appendChild(el("div", c.text)); d.appendChild(p); });
    d.appendChild(el("h3", "Community"));
    if (e.community) {
      d.appendChild(el("p", `${e.community.title || e.community.id} (level ${e.community.level}, ${e.community.size} entities)`));
      if (e.community.report) d.appendChild(el("pre", e.community.report));
    } else d.appendChild(el("p", "(none: run kg-rag communities)", "hint"));
  }

  // ------------------------------------------------------------------ actions
  async function run(label, fn) {
    state.busy = true; window.kgExplorer.busy = true;
    status(label + "…");
    try { await fn(); } catch (err) { status(err.message, true); window.kgExplorer.lastError = err.message; }
    finally { state.busy = false; window.kgExplorer.busy = false; }
  }
  async function ask(question) {
    await run("Retrieving", async () => {
      const view = await call("POST", "/api/query", { question, ...filters() });
      state.view = "question"; state.target = question; state.lastResponse = view;
      window.kgExplorer.lastError = null;
      draw(view, true); showQuestion(view);
      status(`${view.edges.length} edges, ${view.nodes.length} entities` + (view.truncated ? ` (cut to ${view.bound})` : ""));
    });
  }
  async function openEntity(id, expand) {
    await run(expand ? "Expanding" : "Loading entity", async () => {
      const view = await call("POST", "/api/entity", { entity: id, ...filters() });
      window.kgExplorer.lastError = null;
      if (expand) {
        if (edges.length + view.edges.length > state.pageEdges) throw new Error(`the page holds at most ${state.pageEdges} edges: ask again or search to start a new view`);
        draw(view, false);
      } else if (state.view !== "question") { state.view = "entity"; state.target = id; draw(view, true); }
      state.lastEntity = view;
      showEntity(view);
      status(`${view.entity.name}: ${view.total_edges} edges` + (view.truncated ? `, the ${view.edges.length} heaviest shown` : ""));
    });
  }
  network.on("click", (p) => { if (p.nodes.length) openEntity(p.nodes[0], false); });
  network.on("doubleClick", (p) => { if (p.nodes.length) openEntity(p.nodes[0], true); });

  $("ask").onsubmit = (ev) => { ev.preventDefault(); const q = $("question").value.trim(); if (q) ask(q); };
  $("find").onsubmit = async (ev) => {
    ev.preventDefault();
    const q = $("search").value.trim(); if (!q) return;
    await run("Searching", async () => {
      const hits = await call("GET", `/api/search?q=${encodeURIComponent(q)}`);
      const ul = $("hits"); ul.replaceChildren();
      hits.forEach((h) => { const li = el("li"); const a = el("a", `${h.name} [${h.entity_type}]`);
        a.onclick = () => { state.view = "entity"; state.target = h.id; nodes.clear(); edges.clear(); openEntity(h.id, true); };
        li.appendChild(a); ul.appendChild(li); });
      status(`${hits.length} entities`);
    });
  };
  $("apply").onclick = () => {
    if (state.view === "question") ask(state.target);
    else if (state.view === "entity") { nodes.clear(); edges.clear(); openEntity(state.target, true); }
  };

  async function loadOverview() {
    try {
      const o = await call("GET", "/api/overview");
      const c = o.counts;
      $("counts").textContent = `${c.entities} entities · ${c.relations} relations · ${c.chunks} passages · ${c.documents} documents · ${c.communities} communities`;
      const types = $("types"); types.replaceChildren();
      o.relation_types.forEach((t) => { const li = el("li", `${t.type} (${t.count})`); li.style.color = colourOf(t.type); types.appendChild(li); });
      const comms = $("communities"); comms.replaceChildren();
      o.communities.forEach((m) => comms.appendChild(el("li", `${m.title} — ${m.size} entities (level ${m.level})`)));
      state.pageEdges = o.bounds.page_edges;
    } catch (err) { status(err.message, true); }
  }

  window.kgExplorer = { nodes, edges, network, state, ask, openEntity, busy: false, drawn: 0, settled: true, lastError: null };
  loadOverview();
})();
