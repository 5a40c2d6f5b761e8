// kg-rag explorer: draws bounded subgraphs the server returns. All text goes through textContent (data, never HTML).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const nodes = new vis.DataSet();
  const edges = new vis.DataSet();
  const state = { view: null, target: null, pageEdges: 1000, busy: false, lastResponse: null, hiddenTypes: new Set() };
  // colours by relation family (the server names each edge's family): a handful a reader can tell apart, where
  // thousands of extracted types shared ten colours before; the first path of the context is red
  const FAMILY_COLOURS = { rules: "#8e44ad", hierarchy: "#1f77b4", place: "#2ca02c", creation: "#ff7f0e",
    people: "#e377c2", events: "#bcbd22", other: "#7f7f7f", related: "#c7c7c7" };
  const FIRST_PATH = "#d62728";
  const familyOf = {};  // relation type -> family, from the overview and every view
  const colourOf = (t, family) => FAMILY_COLOURS[family || familyOf[t] || "other"] || FAMILY_COLOURS.other;
  const LABEL_PX = { node: 13, edge: 12 };  // on-screen label sizes kept at every zoom
  const pathRole = {};  // edge id -> "first" | "path" (edges on a path of the context)

  const network = new vis.Network($("graph"), { nodes, edges }, {
    edges: { arrows: { to: { enabled: true, scaleFactor: 0.8 } }, font: { size: LABEL_PX.edge, align: "middle", strokeWidth: 3 }, smooth: { enabled: true, type: "dynamic" } },
    nodes: { shape: "dot", size: 12, font: { size: LABEL_PX.node, strokeWidth: 3, strokeColor: "#ffffff" } },
    physics: { stabilization: { iterations: 200, fit: true }, barnesHut: { gravitationalConstant: -9000, springLength: 170, avoidOverlap: 0.3 } },
    interaction: { hover: true, tooltipDelay: 150 },
  });
  function hideTooltips() {  // vis-network leaves its hover tooltip up when the data under it changes
    document.querySelectorAll(".vis-tooltip").forEach((t) => { t.style.visibility = "hidden"; });
  }
  function scaleLabels() {  // labels keep their on-screen size whatever the zoom (6 px at fit-to-view before)
    const scale = network.getScale() || 1;
    const size = (px) => Math.max(4, Math.min(80, px / scale));
    network.setOptions({ nodes: { font: { size: size(LABEL_PX.node) } }, edges: { font: { size: size(LABEL_PX.edge) } } });
    window.kgExplorer.labelScale = scale;
  }

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
             color: n.seed ? "#f4a3a3" : (n.selected ? "#4e79a7" : "#9aa7b5"), size: n.seed ? 16 : 12 };
  }
  function visEdge(e) {
    if (e.family) familyOf[e.relation_type] = e.family;
    const role = pathRole[e.id];  // only the context's paths are labelled: the rest say their type on hover
    const colour = role === "first" ? FIRST_PATH : colourOf(e.relation_type, e.family);
    return { id: e.id, from: e.source, to: e.target, label: role ? e.relation_type : undefined,
             relation_type: e.relation_type, family: e.family || familyOf[e.relation_type] || "other",
             title: `${e.source_name} -[${e.relation_type}]-> ${e.target_name}` + (e.description ? `\n${e.description}` : ""),
             color: { color: colour, highlight: colour, hover: colour, opacity: role ? 1 : 0.75 },
             width: role === "first" ? 5 : (role ? 3 : 1.2), dashes: e.in_context === false && !role };
  }
  function showTypes() {  // the view's types, by family, each with a box that hides (or shows) its edges
    const box = $("view-types");
    box.replaceChildren(el("span", "Types in this view (untick to hide):", "legend-title"));
    const counts = {};
    edges.forEach((e) => { counts[e.relation_type] = (counts[e.relation_type] || 0) + 1; });
    Object.keys(counts).sort((a, b) => counts[b] - counts[a] || a.localeCompare(b)).forEach((t) => {
      const label = el("label"); label.dataset.type = t;
      const tick = el("input"); tick.type = "checkbox"; tick.checked = !state.hiddenTypes.has(t);
      tick.onchange = () => { if (tick.checked) state.hiddenTypes.delete(t); else state.hiddenTypes.add(t); applyTypes(); };
      const swatch = el("span", null, "swatch"); swatch.style.background = colourOf(t);
      label.append(tick, swatch, el("span", `${t} (${counts[t]})`));
      box.appendChild(label);
    });
  }
  function applyTypes() {  // hide the unticked types' edges; an entity stays while a kept edge or the view needs it
    const kept = new Set();
    const edgeUpdates = [];
    edges.forEach((e) => {
      const hidden = state.hiddenTypes.has(e.relation_type);
      edgeUpdates.push({ id: e.id, hidden });
      if (!hidden) { kept.add(e.from); kept.add(e.to); }
    });
    edges.update(edgeUpdates);
    nodes.update(nodes.get().map((n) => ({ id: n.id, hidden: !(kept.has(n.id) || n.keep) })));
  }
  function showFamilies(list) {
    const box = $("families");
    box.replaceChildren(el("span", "Colours:", "legend-title"));
    const first = el("span"); const sw = el("span", null, "swatch"); sw.style.background = FIRST_PATH;
    first.append(sw, el("span", "first path of the context")); box.appendChild(first);
    list.forEach((f) => { const item = el("span"); item.dataset.family = f.family; item.title = f.examples;
      const swatch = el("span", null, "swatch"); swatch.style.background = FAMILY_COLOURS[f.family] || FAMILY_COLOURS.other;
      item.append(swatch, el("span", `${f.family} (${f.examples})`)); box.appendChild(item); });
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
    hideTooltips();
    if (replace) { nodes.clear(); edges.clear(); state.hiddenTypes.clear(); Object.keys(pathRole).forEach((k) => delete pathRole[k]); }
    const inContext = (view.paths || []).filter((p) => p.context_order !== null);
    inContext.forEach((p) => p.edges.forEach((id) => { if (!pathRole[id]) pathRole[id] = p.context_order === 0 ? "first" : "path"; }));
    const drawnNodes = view.nodes.map(visNode);
    const known = new Set([...nodes.getIds(), ...drawnNodes.map((n) => n.id)]);
    view.edges.forEach((e) => {  // both ends of every edge are drawn, whatever the view listed
      [[e.source, e.source_name], [e.target, e.target_name]].forEach(([id, name]) => {
        if (!known.has(id)) { known.add(id); drawnNodes.push(visNode({ id, name })); }
      });
    });
    drawnNodes.forEach((n) => { n.keep = view.nodes.some((m) => m.id === n.id && (m.seed || m.selected)); });
    nodes.update(drawnNodes);
    // drawn in order: other edges, the context's paths, the first path last (on top)
    const rank = (e) => ({ first: 2, path: 1 }[pathRole[e.id]] || 0);
    edges.update([...view.edges].sort((a, b) => rank(a) - rank(b)).map(visEdge));
    spreadParallel();
    showTypes(); applyTypes();
    window.kgExplorer.settled = false;
    network.setOptions({ physics: { enabled: true } });
    network.stabilize(200);  // lay out before showing; "settled" once done and fitted to the view
    window.kgExplorer.drawn += 1;
  }
  network.on("stabilizationIterationsDone", () => {
    network.setOptions({ physics: { enabled: false } });  // laid out: zooming and label sizes move nothing
    network.fit(); scaleLabels(); window.kgExplorer.settled = true;
  });
  network.on("zoom", () => { hideTooltips(); scaleLabels(); });
  network.on("dragStart", hideTooltips);
  $("graph").addEventListener("mouseleave", hideTooltips);
  window.addEventListener("resize", () => { if (window.kgExplorer.settled) { network.fit(); scaleLabels(); } });

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
      const li = el("li", p.text, p.context_order === 0 ? "path first active" : "path");
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
      tr.children[1].style.color = colourOf(r.relation_type, r.family);
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
    hideTooltips();
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
      o.relation_types.forEach((t) => { familyOf[t.type] = t.family;
        const li = el("li", `${t.type} (${t.count})`); li.style.color = colourOf(t.type, t.family); types.appendChild(li); });
      showFamilies(o.families || []);
      const comms = $("communities"); comms.replaceChildren();
      o.communities.forEach((m) => comms.appendChild(el("li", `${m.title} — ${m.size} entities (level ${m.level})`)));
      state.pageEdges = o.bounds.page_edges;
    } catch (err) { status(err.message, true); }
  }

  window.kgExplorer = { nodes, edges, network, state, ask, openEntity, busy: false, drawn: 0, settled: true, lastError: null,
    labelScale: 1, LABEL_PX, FIRST_PATH, pathRole, hideTooltips,
    labelPx: () => ({ node: network.getScale() * network.body.nodes[nodes.getIds()[0]]?.options.font.size || 0,
                      edge: network.getScale() * (network.body.edges[edges.getIds()[0]]?.options.font.size || 0) }),
    setTypeShown: (t, shown) => { if (shown) state.hiddenTypes.delete(t); else state.hiddenTypes.add(t); showTypes(); applyTypes(); } };
  loadOverview();
})();
