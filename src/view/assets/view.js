// mcp-cassette view: draws the cassette embedded in this page (docs/view.md).
//
// Safety: every string from the cassette reaches the document through textContent,
// createTextNode or a data attribute, never as markup, and the only links made point at
// "#row=<number>". The page's Content-Security-Policy allows this script alone to run.
//
// Speed: the timeline is virtualised. Only the rows in view (and a few either side) exist as
// elements; scrolling re-draws that window, so 50,000 rows cost what 60 do. A frame is parsed
// only when its row is opened.
(function () {
  "use strict";

  var ROW_H = 22;
  var OVERSCAN = 4;
  var PLACEHOLDER = /\[REDACTED:[a-z]+:[0-9a-f]{8}\]/g;
  var KIND_NAMES = {
    req: "request", note: "notify", res: "result", err: "error", frame: "frame",
    raw: "raw line", stream: "stream", unknown: "unknown"
  };
  var root = document.documentElement;

  var data;
  try {
    data = JSON.parse(document.getElementById("mc-data").textContent);
  } catch (e) {
    document.body.textContent = "The embedded cassette could not be read: " + e;
    return;
  }
  var tParsed = performance.now();
  var rows = data.rows;
  var header = {};
  try { header = JSON.parse(data.header); } catch (e) { header = {}; }

  // --- index: answers, groups, the values the filters offer -------------------------------
  var answerOf = new Int32Array(rows.length).fill(-1);
  var methods = new Map();
  var tools = new Map();
  var groups = new Map();
  var i, r;
  for (i = 0; i < rows.length; i++) {
    r = rows[i];
    if (r.re !== undefined && rows[r.re]) {
      var q = rows[r.re];
      // A streamed answer links to its stream until the chunk holding the result comes.
      if (r.k === "res" || r.k === "err" || answerOf[r.re] < 0) answerOf[r.re] = i;
      // A task is named by the answer that created it: the request belongs to it too.
      if (r.g && !q.g) q.g = r.g;
    }
  }
  for (i = 0; i < rows.length; i++) {
    r = rows[i];
    if (r.m && r.k !== "stream") methods.set(r.m, (methods.get(r.m) || 0) + 1);
    if (r.tool) tools.set(r.tool, (tools.get(r.tool) || 0) + 1);
    if (r.g) {
      var g = groups.get(r.g);
      if (!g) { g = { first: i, count: 0 }; groups.set(r.g, g); }
      g.count++;
    }
  }

  // --- elements ----------------------------------------------------------------------------
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // Text with each redaction placeholder shown as a badge.
  function withBadges(parent, text) {
    PLACEHOLDER.lastIndex = 0;
    var at = 0, m;
    while ((m = PLACEHOLDER.exec(text)) !== null) {
      if (m.index > at) parent.appendChild(document.createTextNode(text.slice(at, m.index)));
      var badge = el("span", "redacted", m[0]);
      badge.title = "redacted: rule " + m[0].split(":")[1];
      parent.appendChild(badge);
      at = m.index + m[0].length;
    }
    if (at < text.length) parent.appendChild(document.createTextNode(text.slice(at)));
    return parent;
  }
  function option(select, value, label) {
    var o = el("option", null, label);
    o.value = value;
    select.appendChild(o);
    return o;
  }
  function sorted(map) {
    return Array.from(map.keys()).sort();
  }

  var head = el("header");
  head.appendChild(el("h1", null, "mcp-cassette view"));
  var metaText = [data.name, header.transport, header.startedAt, header.recorder]
    .filter(function (x) { return typeof x === "string" && x; }).join(" · ");
  head.appendChild(el("span", "meta", metaText));
  var redaction = header.redaction && header.redaction.applied === true ? "redacted" :
    header.redaction && header.redaction.applied === false ? "NOT redacted" : "";
  if (redaction) head.appendChild(el("span", "meta", " · " + redaction));

  var bar = el("div", "filters");
  function labelled(text, control) {
    var l = el("label", null, text + " ");
    l.appendChild(control);
    bar.appendChild(l);
    return control;
  }
  var fDir = labelled("direction", el("select"));
  fDir.id = "f-dir";
  option(fDir, "", "both");
  option(fDir, "c2s", "client → server");
  option(fDir, "s2c", "server → client");
  var fMethod = labelled("method", el("select"));
  fMethod.id = "f-method";
  option(fMethod, "", "all (" + methods.size + ")");
  sorted(methods).forEach(function (m) { option(fMethod, m, m + " (" + methods.get(m) + ")"); });
  var fTool = labelled("tool", el("select"));
  fTool.id = "f-tool";
  option(fTool, "", "all (" + tools.size + ")");
  sorted(tools).forEach(function (t) { option(fTool, t, t + " (" + tools.get(t) + ")"); });
  var fGroup = labelled("task / stream", el("select"));
  fGroup.id = "f-group";
  option(fGroup, "", "all (" + groups.size + ")");
  sorted(groups).forEach(function (g) { option(fGroup, g, g + " (" + groups.get(g).count + ")"); });
  var clear = el("button", null, "clear");
  clear.type = "button";
  bar.appendChild(clear);
  var count = el("span", "count");
  count.id = "count";
  bar.appendChild(count);

  var main = el("main");
  var list = el("div");
  list.id = "list";
  list.setAttribute("role", "list");
  var sizer = el("div");
  sizer.id = "sizer";
  list.appendChild(sizer);
  var detail = el("section");
  detail.id = "detail";
  main.appendChild(list);
  main.appendChild(detail);
  var status = el("div");
  status.id = "status";

  document.body.appendChild(head);
  document.body.appendChild(bar);
  document.body.appendChild(main);
  document.body.appendChild(status);
  if (data.name) document.title = data.name + " — mcp-cassette view";

  // --- filtering ---------------------------------------------------------------------------
  var filter = { dir: "", method: "", tool: "", group: "" };
  var visible = new Int32Array(0);
  var positionOf = new Int32Array(rows.length);
  var selected = -1;
  var highlighted = [];

  function methodMatches(want, m) {
    if (!want) return true;
    if (!m) return false;
    if (want.charAt(want.length - 1) === "*") return m.indexOf(want.slice(0, -1)) === 0;
    return m === want;
  }
  function applyFilter() {
    var out = new Int32Array(rows.length);
    var n = 0;
    positionOf.fill(-1);
    for (var j = 0; j < rows.length; j++) {
      var row = rows[j];
      if (filter.dir && row.d !== filter.dir) continue;
      if (filter.method && !methodMatches(filter.method, row.m)) continue;
      if (filter.tool && row.tool !== filter.tool) continue;
      if (filter.group && row.g !== filter.group) continue;
      positionOf[j] = n;
      out[n++] = j;
    }
    visible = out.subarray(0, n);
    sizer.style.height = (n * ROW_H) + "px";
    count.textContent = n + " of " + rows.length + " rows";
    root.dataset.visible = String(n);
  }
  function ensureOption(select, value) {
    if (!value) return;
    for (var j = 0; j < select.options.length; j++) if (select.options[j].value === value) return;
    option(select, value, value);
  }
  function syncControls() {
    ensureOption(fMethod, filter.method);
    ensureOption(fTool, filter.tool);
    ensureOption(fGroup, filter.group);
    fDir.value = filter.dir;
    fMethod.value = filter.method;
    fTool.value = filter.tool;
    fGroup.value = filter.group;
  }

  // --- the location fragment: #dir=c2s&method=tools/call&tool=x&group=task:1&row=12 --------
  // (also #filter=method:tools/call, repeatable). Filters and the opened row live there so a
  // view can be linked to, and a headless browser can be pointed at one.
  function readFragment() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var next = { dir: "", method: "", tool: "", group: "" };
    params.forEach(function (value, key) {
      if (key === "filter") {
        var at = value.indexOf(":");
        if (at > 0) { key = value.slice(0, at); value = value.slice(at + 1); }
      }
      if (Object.prototype.hasOwnProperty.call(next, key)) next[key] = value;
    });
    if (next.dir !== "c2s" && next.dir !== "s2c") next.dir = "";
    filter = next;
    var row = parseInt(params.get("row"), 10);
    return { row: isNaN(row) ? -1 : row, bench: params.get("bench") };
  }
  function writeFragment() {
    var params = new URLSearchParams();
    Object.keys(filter).forEach(function (k) { if (filter[k]) params.set(k, filter[k]); });
    if (selected >= 0) params.set("row", String(selected));
    var text = params.toString();
    history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }

  // --- the timeline ------------------------------------------------------------------------
  function formatTime(ms) {
    return "+" + (ms / 1000).toFixed(3) + "s";
  }
  function preview(row) {
    var text = row.f || "";
    if (text.length > 160) text = text.slice(0, 160) + "…";
    return text.replace(/^\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*/, "{");
  }
  function link(target, label) {
    var a = el("a", "link", label);
    a.href = "#row=" + target;
    a.dataset.go = String(target);
    return a;
  }
  function drawRow(index) {
    var row = rows[index];
    var e = el("div", "row kind-" + row.k + (row.d ? " dir-" + row.d : ""));
    if (row.p !== undefined) e.className += " chunk";
    if (index === selected) e.className += " selected";
    if (highlighted.indexOf(index) >= 0) e.className += " highlight";
    e.setAttribute("role", "listitem");
    e.dataset.row = String(index);
    e.style.top = (positionOf[index] * ROW_H) + "px";
    e.appendChild(el("span", "idx", "#" + index));
    e.appendChild(el("span", "time", formatTime(row.t)));
    e.appendChild(el("span", "dir", row.d === "c2s" ? "C → S" : row.d === "s2c" ? "S → C" : ""));
    e.appendChild(el("span", "kind", KIND_NAMES[row.k] || row.k));
    if (row.m) e.appendChild(el("span", "method", row.m));
    if (row.tool) e.appendChild(el("span", "tool", row.tool));
    if (row.id !== undefined) e.appendChild(el("span", "id", "id " + row.id));
    if (row.re !== undefined) e.appendChild(link(row.re, "↩ #" + row.re));
    if (answerOf[index] >= 0) e.appendChild(link(answerOf[index], "→ #" + answerOf[index]));
    if (row.g) e.appendChild(el("span", "group", row.g));
    if (row.r) e.appendChild(el("span", "redacted", "REDACTED ×" + row.r));
    e.appendChild(withBadges(el("span", "preview"), preview(row)));
    return e;
  }
  // Rows already drawn, by row number: a scroll keeps the ones still in view and draws only
  // those that came into it. A forced draw (filters, selection) starts afresh.
  var drawn = "";
  var drawnRows = new Map();
  function render(force) {
    var height = list.clientHeight || 600;
    var first = Math.max(0, Math.floor(list.scrollTop / ROW_H) - OVERSCAN);
    var last = Math.min(visible.length, Math.ceil((list.scrollTop + height) / ROW_H) + OVERSCAN);
    var key = first + ":" + last;
    if (!force && key === drawn) return;
    drawn = key;
    if (force) {
      drawnRows = new Map();
      sizer.replaceChildren();
    }
    var kept = new Map();
    var frag = document.createDocumentFragment();
    for (var p = first; p < last; p++) {
      var index = visible[p];
      var e = drawnRows.get(index);
      if (e) {
        drawnRows.delete(index);
      } else {
        e = drawRow(index);
        frag.appendChild(e);
      }
      kept.set(index, e);
    }
    drawnRows.forEach(function (gone) { gone.remove(); });
    sizer.appendChild(frag);
    drawnRows = kept;
  }
  var pending = false;
  list.addEventListener("scroll", function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; render(false); });
  });
  // A taller window shows more rows (a headless browser may size its window after the load).
  window.addEventListener("resize", function () { render(false); });
  function scrollToRow(index) {
    var pos = positionOf[index];
    if (pos < 0) return;
    var top = pos * ROW_H;
    if (top < list.scrollTop || top + ROW_H > list.scrollTop + list.clientHeight) {
      list.scrollTop = Math.max(0, top - list.clientHeight / 2);
    }
  }

  // --- the opened row ----------------------------------------------------------------------
  function escapeToken(key) {
    return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
  }
  function copyPointer(pointer) {
    status.textContent = "JSON Pointer: " + (pointer === "" ? "\"\" (the whole frame)" : pointer);
    var done = function () { status.textContent = "copied JSON Pointer " + (pointer || "\"\""); };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(pointer).then(done, function () {});
    }
  }
  function pointerButton(pointer) {
    var b = el("button", "ptr", "ptr");
    b.type = "button";
    b.title = "copy JSON Pointer " + (pointer || "(whole frame)");
    b.dataset.pointer = pointer;
    return b;
  }
  function keyLabel(parent, key) {
    if (key === null) return;
    parent.appendChild(el("span", "key", typeof key === "number" ? key + ": " : JSON.stringify(key) + ": "));
  }
  function leaf(value, key, pointer) {
    var e = el("div", "leaf");
    keyLabel(e, key);
    if (typeof value === "string") {
      withBadges(e.appendChild(el("span", "str")), JSON.stringify(value));
    } else if (typeof value === "number") {
      e.appendChild(el("span", "num", String(value)));
    } else {
      e.appendChild(el("span", "lit", String(value)));
    }
    e.appendChild(pointerButton(pointer));
    return e;
  }
  function tree(value, key, pointer, depth) {
    if (value === null || typeof value !== "object") return leaf(value, key, pointer);
    var isArray = Array.isArray(value);
    var keys = isArray ? null : Object.keys(value);
    var size = isArray ? value.length : keys.length;
    var d = el("details");
    d.dataset.pointer = pointer;
    var s = el("summary");
    keyLabel(s, key);
    s.appendChild(el("span", "type", isArray ? "[" + size + "]" : "{" + size + "}"));
    s.appendChild(pointerButton(pointer));
    d.appendChild(s);
    var built = false;
    function build() {
      if (built) return;
      built = true;
      var children = el("div", "children");
      for (var j = 0; j < size; j++) {
        var k = isArray ? j : keys[j];
        children.appendChild(tree(value[k], k, pointer + "/" + escapeToken(k), depth + 1));
      }
      d.appendChild(children);
    }
    // Children are made when first opened, so a huge answer costs nothing until it is read.
    if (depth < 4 && size <= 200) { d.open = true; build(); }
    d.addEventListener("toggle", function () { if (d.open) build(); });
    return d;
  }
  function describe(dl, term, value) {
    dl.appendChild(el("dt", null, term));
    var dd = el("dd");
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = value;
    dl.appendChild(dd);
  }
  function showOverview() {
    var box = document.createDocumentFragment();
    box.appendChild(el("h2", null, "Cassette"));
    var dl = el("dl");
    describe(dl, "file", data.name || "");
    describe(dl, "rows", String(rows.length));
    ["transport", "startedAt", "recorder", "era"].forEach(function (k) {
      if (typeof header[k] === "string") describe(dl, k, header[k]);
    });
    if (Array.isArray(header.command)) describe(dl, "command", withBadges(el("span"), header.command.join(" ")));
    if (typeof header.url === "string") describe(dl, "url", withBadges(el("span"), header.url));
    if (redaction) describe(dl, "redaction", redaction);
    box.appendChild(dl);
    box.appendChild(el("h2", null, "Tasks and listen streams"));
    var ul = el("ul", "groups");
    sorted(groups).forEach(function (g) {
      var li = el("li", null, g + " — " + groups.get(g).count + " rows from #" + groups.get(g).first);
      li.dataset.group = g;
      ul.appendChild(li);
    });
    if (!groups.size) ul.appendChild(el("li", null, "none"));
    box.appendChild(ul);
    box.appendChild(el("p", "meta", "Click a row to open it; the ptr button beside a value copies its JSON Pointer."));
    detail.replaceChildren(box);
  }
  function showRow(index) {
    var row = rows[index];
    var box = document.createDocumentFragment();
    var title = "#" + index + " " + (KIND_NAMES[row.k] || row.k) + (row.m ? " " + row.m : "");
    box.appendChild(el("h2", null, title));
    var dl = el("dl");
    describe(dl, "line", data.name + ":" + row.l);
    describe(dl, "time", formatTime(row.t));
    if (row.d) describe(dl, "direction", row.d === "c2s" ? "client → server" : "server → client");
    if (row.id !== undefined) describe(dl, "id", row.id);
    if (row.tool) describe(dl, "tool", row.tool);
    if (row.g) describe(dl, "group", row.g);
    if (row.re !== undefined) describe(dl, "request", link(row.re, "#" + row.re + " " + (rows[row.re].m || "")));
    if (answerOf[index] >= 0) describe(dl, "answer", link(answerOf[index], "#" + answerOf[index] + " " + (KIND_NAMES[rows[answerOf[index]].k] || "")));
    if (row.p !== undefined) describe(dl, "stream", link(row.p, "#" + row.p));
    if (row.r) describe(dl, "redacted", row.r + " placeholder" + (row.r > 1 ? "s" : ""));
    box.appendChild(dl);
    if (row.k === "stream") {
      var ul = el("ul");
      for (var j = index + 1; j < rows.length && rows[j].p === index; j++) {
        var li = el("li");
        li.appendChild(link(j, "#" + j + " " + (rows[j].m || KIND_NAMES[rows[j].k])));
        ul.appendChild(li);
      }
      box.appendChild(ul);
    } else if (row.k !== "raw") {
      var parsed;
      var ok = true;
      try { parsed = JSON.parse(row.f); } catch (e) { ok = false; }
      if (ok) {
        var json = el("div", "json");
        json.appendChild(tree(parsed, null, "", 0));
        box.appendChild(json);
      }
    }
    var raw = el("details", "raw");
    if (row.k === "raw") raw.open = true;
    raw.appendChild(el("summary", null, row.k === "raw" ? "line as recorded" : "text as recorded"));
    raw.appendChild(withBadges(el("pre"), row.f || ""));
    box.appendChild(raw);
    detail.replaceChildren(box);
    detail.scrollTop = 0;
  }
  function select(index, scroll) {
    if (index < 0 || index >= rows.length) { selected = -1; showOverview(); render(true); return; }
    selected = index;
    if (positionOf[index] < 0) {
      // Opening a row the filters hide: drop the filters rather than show it out of place.
      filter = { dir: "", method: "", tool: "", group: "" };
      syncControls();
      applyFilter();
    }
    showRow(index);
    if (scroll) scrollToRow(index);
    render(true);
  }
  function go(index, from) {
    highlighted = from >= 0 ? [from, index] : [index];
    select(index, true);
    writeFragment();
  }

  // --- events ------------------------------------------------------------------------------
  function onFilterChange() {
    filter = { dir: fDir.value, method: fMethod.value, tool: fTool.value, group: fGroup.value };
    applyFilter();
    list.scrollTop = 0;
    render(true);
    writeFragment();
  }
  [fDir, fMethod, fTool, fGroup].forEach(function (s) { s.addEventListener("change", onFilterChange); });
  clear.addEventListener("click", function () {
    fDir.value = fMethod.value = fTool.value = fGroup.value = "";
    onFilterChange();
  });
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var b = t.closest("button.ptr");
    if (b) { ev.preventDefault(); ev.stopPropagation(); copyPointer(b.dataset.pointer); return; }
    var a = t.closest("a[data-go]");
    if (a) {
      ev.preventDefault();
      var from = a.closest(".row");
      go(parseInt(a.dataset.go, 10), from ? parseInt(from.dataset.row, 10) : selected);
      return;
    }
    var li = t.closest("li[data-group]");
    if (li) { fGroup.value = li.dataset.group; onFilterChange(); return; }
    var rowEl = t.closest(".row");
    if (rowEl) { highlighted = []; select(parseInt(rowEl.dataset.row, 10), false); writeFragment(); }
  });
  window.addEventListener("hashchange", function () {
    var state = readFragment();
    syncControls();
    applyFilter();
    select(state.row, true);
  });

  // --- first draw --------------------------------------------------------------------------
  var state = readFragment();
  syncControls();
  applyFilter();
  if (state.row >= 0 && state.row < rows.length) {
    select(state.row, true);
  } else {
    showOverview();
    render(true);
  }
  var tRendered = performance.now();
  root.dataset.rows = String(rows.length);
  root.dataset.tParse = tParsed.toFixed(1);
  root.dataset.tRender = tRendered.toFixed(1);

  // #bench=scroll: scroll the whole timeline in 100 steps, drawing and laying out each, and
  // record how long it took (scripts/bench-view.sh reads it from the dumped DOM).
  if (state.bench === "scroll") {
    var start = performance.now();
    var max = Math.max(0, visible.length * ROW_H - list.clientHeight);
    for (var step = 1; step <= 100; step++) {
      list.scrollTop = Math.round(max * step / 100);
      render(false);
      if (sizer.lastChild) sizer.lastChild.getBoundingClientRect();
    }
    root.dataset.tScroll = (performance.now() - start).toFixed(1);
    root.dataset.scrollTop = String(list.scrollTop);
  }
})();
