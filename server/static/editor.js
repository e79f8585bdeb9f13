// The zonekeep arena editor (the GM's home opens it, issue 35): upload a battle map,
// draw zones over it (rectangles and polygons), name and size them, drag a link from
// one zone to another and set how it is crossed, place assets with their tags and the
// data their plugins' schemas take, and see every problem `check_arena` finds at its
// place on the map (debounced). A drawn zone is moved by dragging it (or with the arrow
// keys on the map, Shift for 10 pixels), a rectangle resized by its corner handle (or
// Alt with the arrow keys). Undo and redo; save to the server's library (the GM's
// key owns it); export and import one file holding the arena and its image
// (docs/arenas.md, "Exported arenas").
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const SIZES = ["Small", "Medium", "Large"];
  const DIRECTIONS = ["beside", "above", "below"];
  const MODES = ["walk", "climb", "swim", "fly"];
  const KINDS = ["prop", "element", "terrain"];
  const EXPORT_FORMAT = "zonekeep.arena-export";
  const CHECK_MS = 400;
  const DRAFT = "zonekeep.editor.draft";

  const blank = () => ({ id: "new_arena", name: "New arena", zones: [], links: [], assets: [] });

  const ed = {
    conn: null,
    hooks: null,
    box: null,
    arena: blank(),
    past: [], // JSON texts of earlier arenas (undo)
    future: [], // JSON texts undone (redo)
    tool: "select",
    selected: null, // {kind: "zone"|"link"|"asset", index}
    polygon: [], // the points of the polygon being drawn
    drag: null, // {from: [x, y], to: [x, y], mode: "rect"|"link"|"move"|"resize", zone, before, shape}
    problems: [],
    checkTimer: null,
    checkSeq: 0,
  };

  const $ = (id) => document.getElementById(id);
  const el = (...args) => window.zonekeepHome.el(...args);

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    return node;
  }

  /** Replace `node`'s children (arrays flattened; null, undefined and false left out). */
  function put(node, ...children) {
    node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  }

  function message(text, kind = "status") {
    const node = $("editor-message");
    if (!node) return;
    node.textContent = text || "";
    node.className = kind === "error" ? "error" : "muted";
  }

  // ---------------------------------------------------------------------------------
  // Changes, undo and redo.

  /** Keep the arena in the browser: a reload or a closed tab loses nothing. */
  function keepDraft() {
    try {
      localStorage.setItem(DRAFT, JSON.stringify(ed.arena));
    } catch { /* private mode or full: the draft lives in this page only */ }
  }

  function loadDraft() {
    try {
      const data = JSON.parse(localStorage.getItem(DRAFT) || "null");
      if (data && typeof data === "object" && !Array.isArray(data)) {
        return { ...blank(), ...data, zones: data.zones || [], links: data.links || [], assets: data.assets || [] };
      }
    } catch { /* a broken draft is dropped */ }
    return null;
  }

  /** Change the arena: `fn` edits it in place; the arena before goes on the undo stack. */
  function change(fn, { rerender = true } = {}) {
    ed.past.push(JSON.stringify(ed.arena));
    if (ed.past.length > 200) ed.past.shift();
    ed.future = [];
    fn(ed.arena);
    keepDraft();
    if (rerender) render();
    else renderMap();
    scheduleCheck();
  }

  function undo() {
    if (!ed.past.length) return;
    ed.future.push(JSON.stringify(ed.arena));
    ed.arena = JSON.parse(ed.past.pop());
    keepDraft();
    ed.selected = null;
    render();
    scheduleCheck();
  }

  function redo() {
    if (!ed.future.length) return;
    ed.past.push(JSON.stringify(ed.arena));
    ed.arena = JSON.parse(ed.future.pop());
    keepDraft();
    ed.selected = null;
    render();
    scheduleCheck();
  }

  /** The arena as the server reads it: empty optional lists and fields left out. */
  function cleaned(arena) {
    const out = JSON.parse(JSON.stringify(arena));
    if (!out.links.length) delete out.links;
    if (!out.assets.length) delete out.assets;
    for (const asset of out.assets || []) {
      if (!asset.tags?.length) delete asset.tags;
      if (!asset.data || !Object.keys(asset.data).length) delete asset.data;
    }
    return out;
  }

  // ---------------------------------------------------------------------------------
  // Problems: check_arena, debounced; each shown at its place.

  function scheduleCheck() {
    clearTimeout(ed.checkTimer);
    ed.checkTimer = setTimeout(check, CHECK_MS);
  }

  /** A problem when the request would be larger than a frame may be, else null: the
   * server answers such a frame with an error no request waits for. */
  function tooLarge(method, params) {
    const limit = ed.conn?.welcome?.limits?.max_message_bytes;
    if (!limit) return null;
    const size = new TextEncoder().encode(JSON.stringify({ id: 0, method, params })).length + 32;
    if (size <= limit) return null;
    return { path: "", message: `The arena is about ${size} bytes: more than this server takes in one message (max_message_bytes, ${limit}). Use fewer polygon points or fewer zones, or ask the operator to raise the limit.` };
  }

  async function check() {
    const seq = ++ed.checkSeq;
    const big = tooLarge("check_arena", { arena: cleaned(ed.arena) });
    if (big) {
      ed.problems = [big];
      renderProblems();
      renderItemProblems();
      renderMap();
      return;
    }
    try {
      const result = await ed.conn.request("check_arena", { arena: cleaned(ed.arena) });
      if (seq !== ed.checkSeq) return; // a later check is on its way
      ed.problems = result.problems;
    } catch (err) {
      if (seq !== ed.checkSeq) return;
      ed.problems = [{ path: "", message: err.message }];
    }
    renderProblems();
    renderItemProblems();
    renderMap();
  }

  /** Each item's own problems under its fields, in place (the fields keep focus). */
  function renderItemProblems() {
    for (const kind of ["zone", "link", "asset"]) {
      const items = ed.arena[`${kind}s`] || [];
      items.forEach((_, index) => {
        const box = $(`editor-${kind}-${index}`);
        if (!box) return;
        box.querySelector(":scope > .ed-item-problems")?.remove();
        const note = problemNote(kind, index);
        if (note) box.append(note);
      });
    }
  }

  /** Where a problem's path points: {kind, index} or null (the whole arena). */
  function placeOf(path) {
    const found = /^(zones|links|assets)\[(\d+)\]/.exec(path || "");
    if (!found) return null;
    return { kind: found[1].slice(0, -1), index: Number(found[2]) };
  }

  function problemsAt(kind, index) {
    return ed.problems.filter((p) => {
      const place = placeOf(p.path);
      return place && place.kind === kind && place.index === index;
    });
  }

  // ---------------------------------------------------------------------------------
  // Geometry in the image's pixels.

  function bounds(shape) {
    if (shape.rect) {
      const [x, y, w, h] = shape.rect;
      return { x, y, w, h, cx: x + w / 2, cy: y + h / 2 };
    }
    const xs = shape.polygon.map((p) => p[0]);
    const ys = shape.polygon.map((p) => p[1]);
    const x = Math.min(...xs);
    const y = Math.min(...ys);
    const w = Math.max(...xs) - x;
    const h = Math.max(...ys) - y;
    return { x, y, w, h, cx: x + w / 2, cy: y + h / 2 };
  }

  const clamp = (value, low, high) => Math.max(low, Math.min(high, value));

  /** `shape` moved by (dx, dy), kept inside the map (a copy). */
  function movedShape(shape, dx, dy) {
    const { width, height } = ed.arena.map;
    const b = bounds(shape);
    const mx = clamp(dx, -b.x, width - b.x - b.w);
    const my = clamp(dy, -b.y, height - b.y - b.h);
    if (shape.rect) {
      const [x, y, w, h] = shape.rect;
      return { rect: [x + mx, y + my, w, h] };
    }
    return { polygon: shape.polygon.map(([x, y]) => [x + mx, y + my]) };
  }

  /** The rectangle `shape` with its bottom-right corner moved by (dw, dh): at least
   * 1 pixel on a side, inside the map (a copy). */
  function resizedShape(shape, dw, dh) {
    const { width, height } = ed.arena.map;
    const [x, y, w, h] = shape.rect;
    return { rect: [x, y, clamp(w + dw, 1, width - x), clamp(h + dh, 1, height - y)] };
  }

  /** Commit an edit made while dragging: the arena before it (`before`, a JSON text) goes
   * on the undo stack, as `change` does. */
  function commitDrag(before) {
    if (before === JSON.stringify(ed.arena)) {
      render();
      return;
    }
    ed.past.push(before);
    if (ed.past.length > 200) ed.past.shift();
    ed.future = [];
    keepDraft();
    render();
    scheduleCheck();
  }

  function zoneCentre(zone, index) {
    if (zone.shape) return bounds(zone.shape);
    const map = ed.arena.map || { width: 480, height: 360 };
    return { cx: 24 + (index * 60) % Math.max(60, map.width - 48), cy: 24 };
  }

  /** The pointer's place on the map, in the image's pixels (clamped into it). */
  function pointAt(ev) {
    const svgNode = $("editor-shapes");
    const box = svgNode.getBoundingClientRect();
    const { width, height } = ed.arena.map;
    const x = Math.round(((ev.clientX - box.left) / box.width) * width);
    const y = Math.round(((ev.clientY - box.top) / box.height) * height);
    return [Math.max(0, Math.min(width, x)), Math.max(0, Math.min(height, y))];
  }

  function zoneAtPoint(ev) {
    const node = document.elementFromPoint(ev.clientX, ev.clientY);
    const shape = node && node.closest ? node.closest("[data-zone-index]") : null;
    return shape ? Number(shape.dataset.zoneIndex) : null;
  }

  function freshId(prefix, taken) {
    for (let n = taken.length + 1; ; n += 1) {
      if (!taken.includes(`${prefix}_${n}`)) return `${prefix}_${n}`;
    }
  }

  function addZone(shape, focus = true) {
    change((a) => {
      const id = freshId("zone", a.zones.map((z) => z.id));
      const zone = { id, name: `Zone ${a.zones.length + 1}`, size: "Medium" };
      if (shape) zone.shape = shape;
      a.zones.push(zone);
      ed.selected = { kind: "zone", index: a.zones.length - 1 };
    });
    if (focus) focusSelected(); // drawn with the pointer: the map stays where it is
  }

  function addLink(a, b, focus = true) {
    change((arena) => {
      arena.links.push({ a: arena.zones[a].id, b: arena.zones[b].id, direction: "beside" });
      ed.selected = { kind: "link", index: arena.links.length - 1 };
    });
    if (focus) focusSelected();
  }

  function focusSelected() {
    if (!ed.selected) return;
    const node = $(`editor-${ed.selected.kind}-${ed.selected.index}`);
    if (node) {
      node.scrollIntoView({ block: "nearest" });
      const first = node.querySelector("input, select, button");
      if (first) first.focus({ preventScroll: true });
    }
  }

  // ---------------------------------------------------------------------------------
  // Drawing on the map.

  function onPointerDown(ev) {
    if (!ed.arena.map || ev.button > 0) return;
    const at = pointAt(ev);
    if (ed.tool === "rect") {
      ed.drag = { mode: "rect", from: at, to: at };
    } else if (ed.tool === "link") {
      const zone = zoneAtPoint(ev);
      if (zone === null) return;
      ed.drag = { mode: "link", from: at, to: at, zone };
    } else if (ed.tool === "polygon") {
      ed.polygon.push(at);
      renderMap();
      renderTools();
      return;
    } else {
      const handle = ev.target?.closest ? ev.target.closest("[data-handle]") : null;
      const zone = handle ? Number(handle.dataset.handle) : zoneAtPoint(ev);
      if (zone === null) return;
      const shape = ed.arena.zones[zone]?.shape;
      ed.selected = { kind: "zone", index: zone };
      if (shape && (shape.rect || shape.polygon)) {
        ed.drag = { mode: handle && shape.rect ? "resize" : "move", from: at, to: at, zone, shape, before: JSON.stringify(ed.arena) };
      } else {
        render();
        focusSelected();
        return;
      }
      renderMap();
    }
    ev.preventDefault();
    ev.currentTarget.setPointerCapture?.(ev.pointerId);
  }

  /** While moving or resizing: the zone's shape follows the pointer (committed on
   * release, as one step of undo). */
  function dragShape(drag) {
    const zone = ed.arena.zones[drag.zone];
    if (!zone) return;
    const dx = drag.to[0] - drag.from[0];
    const dy = drag.to[1] - drag.from[1];
    zone.shape = drag.mode === "resize" ? resizedShape(drag.shape, dx, dy) : movedShape(drag.shape, dx, dy);
  }

  function onPointerMove(ev) {
    if (!ed.drag) return;
    ed.drag.to = pointAt(ev);
    if (ed.drag.mode === "move" || ed.drag.mode === "resize") dragShape(ed.drag);
    renderMap();
  }

  function onPointerUp(ev) {
    const drag = ed.drag;
    ed.drag = null;
    if (!drag) return;
    drag.to = pointAt(ev);
    if (drag.mode === "move" || drag.mode === "resize") {
      dragShape(drag);
      const moved = drag.before !== JSON.stringify(ed.arena);
      commitDrag(drag.before);
      if (!moved) focusSelected(); // a click: the zone's form, as before
      return;
    }
    if (drag.mode === "rect") {
      const x = Math.min(drag.from[0], drag.to[0]);
      const y = Math.min(drag.from[1], drag.to[1]);
      const w = Math.abs(drag.to[0] - drag.from[0]);
      const h = Math.abs(drag.to[1] - drag.from[1]);
      if (w < 4 || h < 4) {
        renderMap();
        return;
      }
      addZone({ rect: [x, y, w, h] }, false);
    } else {
      const target = zoneAtPoint(ev);
      if (target === null || target === drag.zone) {
        renderMap();
        message("A link goes from one zone to another: let go over a different zone.", "error");
        return;
      }
      addLink(drag.zone, target, false);
    }
  }

  function finishPolygon() {
    if (ed.polygon.length < 3) {
      message("A polygon needs at least 3 points: click on the map to add them.", "error");
      return;
    }
    const points = ed.polygon;
    ed.polygon = [];
    addZone({ polygon: points }, false);
  }

  /** Arrow keys on the map move the selected zone (Shift: 10 pixels); with Alt they
   * resize a rectangle. Each press is one step of undo. */
  function onMapKey(ev) {
    const steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const step = steps[ev.key];
    if (!step || ev.ctrlKey || ev.metaKey || !ed.arena.map) return;
    ev.preventDefault();
    const index = ed.selected?.kind === "zone" ? ed.selected.index : -1;
    const shape = ed.arena.zones[index]?.shape;
    if (!shape) {
      message("Select a zone drawn on the map first (click it, or its form below), then move it with the arrow keys.", "error");
      return;
    }
    const by = ev.shiftKey ? 10 : 1;
    const [dx, dy] = [step[0] * by, step[1] * by];
    if (ev.altKey && !shape.rect) {
      message("Only a rectangle is resized; move a polygon's corners by drawing it again.", "error");
      return;
    }
    const next = ev.altKey ? resizedShape(shape, dx, dy) : movedShape(shape, dx, dy);
    if (JSON.stringify(next) === JSON.stringify(shape)) return; // at the map's edge
    change((a) => { a.zones[index].shape = next; });
    const zone = ed.arena.zones[index];
    message(`${zone.name || zone.id}: ${zone.shape.rect ? `rectangle ${zone.shape.rect.join(", ")}` : `polygon at ${bounds(zone.shape).x}, ${bounds(zone.shape).y}`}.`);
  }

  function setTool(tool) {
    ed.tool = tool;
    ed.polygon = [];
    ed.drag = null;
    renderTools();
    renderMap();
  }

  // ---------------------------------------------------------------------------------
  // Images: upload, export, import.

  async function postImage(blob) {
    const key = ed.hooks.key ? ed.hooks.key() : null;
    const headers = { "Content-Type": "application/octet-stream" };
    if (key) headers.Authorization = `Bearer ${key}`;
    const response = await fetch(new URL("../images", location.href), { method: "POST", headers, body: blob });
    let body = null;
    try {
      body = await response.json();
    } catch { /* not JSON: said below */ }
    if (!response.ok) {
      throw new Error(body?.error?.message || `The server refused the image (HTTP ${response.status}).`);
    }
    return body;
  }

  async function uploadMap(ev) {
    const file = ev.target.files[0];
    ev.target.value = "";
    if (!file) return;
    message(`Uploading ${file.name}…`);
    try {
      const image = await postImage(file);
      change((a) => {
        a.map = { image: image.id, width: image.width, height: image.height };
      });
      message(`Map uploaded: ${image.width} by ${image.height} pixels.`);
    } catch (err) {
      message(err.message, "error");
    }
  }

  function imageUrl(id) {
    return new URL(`../images/${id}`, location.href).href;
  }

  function dataUrlOf(blob) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(blob);
    });
  }

  function blobOfDataUrl(text) {
    const found = /^data:(image\/(?:png|jpeg|webp));base64,([A-Za-z0-9+/=\s]+)$/.exec(text);
    if (!found) throw new Error("The file's image is not a PNG, JPEG or WebP data URL.");
    const bytes = atob(found[2].replace(/\s/g, ""));
    const out = new Uint8Array(bytes.length);
    for (let i = 0; i < bytes.length; i += 1) out[i] = bytes.charCodeAt(i);
    return new Blob([out], { type: found[1] });
  }

  async function exportArena() {
    try {
      const file = { format: EXPORT_FORMAT, version: 1, arena: cleaned(ed.arena), image: null };
      if (ed.arena.map) {
        const response = await fetch(imageUrl(ed.arena.map.image));
        if (!response.ok) throw new Error(`The map image could not be read (HTTP ${response.status}).`);
        file.image = await dataUrlOf(await response.blob());
      }
      const blob = new Blob([JSON.stringify(file, null, 2)], { type: "application/json" });
      const link = el("a", { href: URL.createObjectURL(blob), download: `${ed.arena.id || "arena"}.arena.json`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
      message(`Exported ${ed.arena.id}.arena.json.`);
    } catch (err) {
      message(err.message, "error");
    }
  }

  async function importArena(ev) {
    const file = ev.target.files[0];
    ev.target.value = "";
    if (!file) return;
    try {
      let data;
      try {
        data = JSON.parse(await file.text());
      } catch {
        throw new Error(`${file.name} is not JSON.`);
      }
      if (!data || typeof data !== "object" || Array.isArray(data)) throw new Error(`${file.name} is not an arena.`);
      let arena = data;
      if (data.format === EXPORT_FORMAT) {
        if (!data.arena || typeof data.arena !== "object") throw new Error(`${file.name} holds no arena.`);
        arena = data.arena;
        if (typeof data.image === "string" && arena.map) {
          message("Uploading the map image…");
          const image = await postImage(blobOfDataUrl(data.image));
          arena = { ...arena, map: { image: image.id, width: image.width, height: image.height } };
        }
      }
      change((a) => {
        Object.keys(a).forEach((k) => delete a[k]);
        Object.assign(a, { zones: [], links: [], assets: [] }, arena);
      });
      ed.selected = null;
      message(`Imported ${file.name}.`);
      await saveArena();
    } catch (err) {
      message(err.message, "error");
    }
  }

  async function saveArena() {
    const big = tooLarge("save_arena", { arena: cleaned(ed.arena) });
    if (big) {
      message(big.message, "error");
      return;
    }
    try {
      const result = await ed.conn.request("save_arena", { arena: cleaned(ed.arena) });
      if (result.saved) {
        message(`Saved “${ed.arena.name}” in the library as ${result.name}${result.replaced ? " (replaced)" : ""}.`);
        ed.hooks.saved?.(result.name);
        loadLibrary().catch(() => {});
      } else {
        ed.problems = result.problems;
        renderProblems();
        renderItemProblems();
        renderMap();
        message(`Not saved: ${result.problems.length} problem(s), listed below.`, "error");
      }
    } catch (err) {
      message(err.message, "error");
    }
  }

  // ---------------------------------------------------------------------------------
  // Rendering.

  function render() {
    renderTools();
    renderMap();
    renderLists();
    renderProblems();
  }

  function renderTools() {
    const box = $("editor-tools");
    if (!box) return;
    const tools = [["select", "Select"], ["rect", "Rectangle zone"], ["polygon", "Polygon zone"], ["link", "Link zones"]];
    put(box,
      el("fieldset", { class: "ed-toolset" },
        el("legend", {}, "Tool"),
        tools.map(([id, label]) => el("label", { class: "ed-tool" },
          el("input", { type: "radio", name: "editor-tool", value: id, checked: ed.tool === id, onchange: () => setTool(id) }),
          ` ${label}`))),
      ed.tool === "polygon"
        ? el("span", {}, el("button", { type: "button", id: "editor-finish-polygon", onclick: finishPolygon }, `Finish polygon (${ed.polygon.length} points)`),
          " ", el("button", { type: "button", onclick: () => setTool("polygon") }, "Start over"))
        : null,
      el("button", { type: "button", id: "editor-add-zone", onclick: () => addZone(defaultShape()) }, "Add zone"),
      el("button", { type: "button", id: "editor-undo", disabled: !ed.past.length, onclick: undo, "aria-keyshortcuts": "Control+Z" }, "Undo"),
      el("button", { type: "button", id: "editor-redo", disabled: !ed.future.length, onclick: redo, "aria-keyshortcuts": "Control+Y" }, "Redo"));
  }

  function defaultShape() {
    const map = ed.arena.map;
    if (!map) return null;
    const w = Math.max(1, Math.round(map.width / 4));
    const h = Math.max(1, Math.round(map.height / 4));
    const n = ed.arena.zones.length % 4;
    return { rect: [Math.min(map.width - w, n * w), Math.min(map.height - h, n * h), w, h] };
  }

  function renderMap() {
    const stage = $("editor-stage");
    if (!stage) return;
    const map = ed.arena.map;
    if (!map) {
      stage.replaceChildren(el("p", { class: "muted" }, "Upload a map image to draw zones over it. Without one, add zones with “Add zone”."));
      return;
    }
    let img = stage.querySelector("img.ed-image");
    if (!img || img.dataset.image !== map.image) {
      img = el("img", { class: "ed-image", alt: `Battle map of ${ed.arena.name}`, src: imageUrl(map.image), dataset: { image: map.image } });
      const layer = svg("svg", {
        id: "editor-shapes", class: "ed-shapes", role: "application", tabindex: 0,
        "aria-label": "Zones, links and problems drawn on the map. With a zone selected, the arrow keys move it (Shift: 10 pixels) and Alt with the arrow keys resizes a rectangle.",
      });
      layer.addEventListener("pointerdown", onPointerDown);
      layer.addEventListener("keydown", onMapKey);
      layer.addEventListener("pointermove", onPointerMove);
      layer.addEventListener("pointerup", onPointerUp);
      const frame = el("div", { class: "ed-frame" }, img, layer);
      // The whole map fits the window's height, so that every corner can be drawn on.
      frame.style.maxWidth = `calc((100vh - 5rem) * ${map.width / map.height})`;
      stage.replaceChildren(frame);
    }
    const layer = $("editor-shapes");
    layer.setAttribute("viewBox", `0 0 ${map.width} ${map.height}`);
    layer.dataset.tool = ed.tool;
    layer.replaceChildren();
    const zones = ed.arena.zones;
    zones.forEach((zone, index) => {
      if (!zone.shape) return;
      const bad = problemsAt("zone", index).length > 0;
      const selected = ed.selected?.kind === "zone" && ed.selected.index === index;
      const attrs = { class: `ed-zone${bad ? " ed-bad" : ""}${selected ? " ed-selected" : ""}`, "data-zone-index": index, "data-zone": zone.id };
      let node;
      try {
        node = zone.shape.rect
          ? svg("rect", { ...attrs, x: zone.shape.rect[0], y: zone.shape.rect[1], width: zone.shape.rect[2], height: zone.shape.rect[3] })
          : svg("polygon", { ...attrs, points: zone.shape.polygon.map((p) => p.join(",")).join(" ") });
      } catch {
        return; // a shape the checker will name
      }
      layer.append(node);
      const b = bounds(zone.shape);
      const label = svg("text", { x: b.x + 4, y: b.y + 14, class: "ed-label" });
      label.textContent = zone.name || zone.id;
      layer.append(label);
    });
    const chosen = ed.selected?.kind === "zone" ? zones[ed.selected.index] : null;
    if (chosen?.shape?.rect && ed.tool === "select") {
      // The selected rectangle's resize handle, at its bottom-right corner.
      const [x, y, w, h] = chosen.shape.rect;
      const r = Math.max(5, Math.round(Math.min(map.width, map.height) / 60));
      layer.append(svg("rect", { class: "ed-handle", x: x + w - r, y: y + h - r, width: 2 * r, height: 2 * r, "data-handle": ed.selected.index }));
    }
    ed.arena.links.forEach((link, index) => {
      const ia = zones.findIndex((z) => z.id === link.a);
      const ib = zones.findIndex((z) => z.id === link.b);
      if (ia < 0 || ib < 0) return;
      const a = zoneCentre(zones[ia], ia);
      const b = zoneCentre(zones[ib], ib);
      const bad = problemsAt("link", index).length > 0;
      layer.append(svg("line", {
        x1: a.cx, y1: a.cy, x2: b.cx, y2: b.cy, "data-link": index,
        class: `ed-link${link.clear === false ? " ed-blocked" : ""}${bad ? " ed-bad" : ""}`,
      }));
      const tag = svg("text", { x: (a.cx + b.cx) / 2, y: (a.cy + b.cy) / 2 - 4, class: "ed-link-label" });
      tag.textContent = `${link.direction}${link.clear === false ? " ✕" : ""}`;
      layer.append(tag);
    });
    ed.arena.assets.forEach((asset, index) => {
      const iz = zones.findIndex((z) => z.id === asset.zone);
      if (iz < 0) return;
      const c = zoneCentre(zones[iz], iz);
      const bad = problemsAt("asset", index).length > 0;
      const offset = (index % 5) * 16 - 32;
      layer.append(svg("circle", { cx: c.cx + offset, cy: c.cy + 12, r: 7, class: `ed-asset ed-${asset.kind}${bad ? " ed-bad" : ""}`, "data-asset": index }));
    });
    // Each problem at its place: a numbered badge.
    ed.problems.forEach((problem, n) => {
      const place = placeOf(problem.path);
      let at = null;
      if (place?.kind === "zone" && zones[place.index]) at = zoneCentre(zones[place.index], place.index);
      if (place?.kind === "link") {
        const link = ed.arena.links[place.index];
        const ia = zones.findIndex((z) => z.id === link?.a);
        const ib = zones.findIndex((z) => z.id === link?.b);
        if (ia >= 0 && ib >= 0) {
          const a = zoneCentre(zones[ia], ia);
          const b = zoneCentre(zones[ib], ib);
          at = { cx: (a.cx + b.cx) / 2, cy: (a.cy + b.cy) / 2 };
        } else if (ia >= 0 || ib >= 0) at = zoneCentre(zones[Math.max(ia, ib)], Math.max(ia, ib));
      }
      if (place?.kind === "asset") {
        const asset = ed.arena.assets[place.index];
        const iz = zones.findIndex((z) => z.id === asset?.zone);
        if (iz >= 0) at = zoneCentre(zones[iz], iz);
      }
      if (!at) at = { cx: 14 + n * 22, cy: map.height - 14 };
      const badge = svg("g", { class: "ed-problem", "data-problem": n, "data-path": problem.path });
      badge.append(svg("circle", { cx: at.cx + 10, cy: at.cy - 10, r: 9 }));
      const text = svg("text", { x: at.cx + 10, y: at.cy - 6 });
      text.textContent = String(n + 1);
      const title = svg("title", {});
      title.textContent = `${problem.path || "arena"}: ${problem.message}`;
      badge.append(text, title);
      layer.append(badge);
    });
    if (ed.drag?.mode === "rect") {
      const [x1, y1] = ed.drag.from;
      const [x2, y2] = ed.drag.to;
      layer.append(svg("rect", { class: "ed-draft", x: Math.min(x1, x2), y: Math.min(y1, y2), width: Math.abs(x2 - x1), height: Math.abs(y2 - y1) }));
    } else if (ed.drag?.mode === "link") {
      const a = zoneCentre(zones[ed.drag.zone], ed.drag.zone);
      layer.append(svg("line", { class: "ed-draft", x1: a.cx, y1: a.cy, x2: ed.drag.to[0], y2: ed.drag.to[1] }));
    }
    if (ed.polygon.length) {
      layer.append(svg("polyline", { class: "ed-draft", points: ed.polygon.map((p) => p.join(",")).join(" ") }));
      for (const [x, y] of ed.polygon) layer.append(svg("circle", { class: "ed-draft-point", cx: x, cy: y, r: 3 }));
    }
  }

  function field(label, input) {
    return el("label", { class: "zk-field" }, el("span", {}, label), input);
  }

  function text(value, onchange, attrs = {}) {
    return el("input", { value: value ?? "", ...attrs, onchange: (ev) => onchange(ev.target.value) });
  }

  function select(value, options, onchange, attrs = {}) {
    return el("select", { ...attrs, onchange: (ev) => onchange(ev.target.value) },
      options.map(([v, label]) => el("option", { value: v, selected: v === value }, label)));
  }

  function checkbox(value, label, onchange, attrs = {}) {
    return el("label", { class: "ed-check" },
      el("input", { type: "checkbox", checked: Boolean(value), ...attrs, onchange: (ev) => onchange(ev.target.checked) }), ` ${label}`);
  }

  function problemNote(kind, index) {
    const found = problemsAt(kind, index);
    if (!found.length) return null;
    return el("ul", { class: "ed-item-problems error" }, found.map((p) => el("li", {}, `${p.path}: ${p.message}`)));
  }

  function renderLists() {
    const a = ed.arena;
    const idField = $("editor-id");
    if (idField && document.activeElement !== idField) idField.value = a.id ?? "";
    const nameField = $("editor-name");
    if (nameField && document.activeElement !== nameField) nameField.value = a.name ?? "";
    const zoneOptions = a.zones.map((z) => [z.id, `${z.name || z.id} (${z.id})`]);
    put($("editor-zones"),
      a.zones.length ? null : el("p", { class: "muted" }, "No zones yet: draw one on the map."),
      a.zones.map((zone, i) => el("fieldset", { id: `editor-zone-${i}`, class: `ed-item${ed.selected?.kind === "zone" && ed.selected.index === i ? " ed-selected" : ""}`, "data-zone": zone.id,
        onfocusin: () => selectZone(i) },
        el("legend", {}, `Zone ${i + 1}`),
        field("Id", text(zone.id, (v) => change((x) => { renameZone(x, x.zones[i].id, v.trim()); }), { name: "zone_id", autocomplete: "off" })),
        field("Name", text(zone.name, (v) => change((x) => { x.zones[i].name = v; }), { name: "zone_name", autocomplete: "off" })),
        field("Size", select(SIZES.includes(zone.size) ? zone.size : "feet", [...SIZES.map((s) => [s, s]), ["feet", "Feet…"]],
          (v) => change((x) => { x.zones[i].size = v === "feet" ? 30 : v; }), { name: "zone_size" })),
        SIZES.includes(zone.size) ? null
          : field("Feet", text(zone.size, (v) => change((x) => { x.zones[i].size = /^\d+$/.test(v) ? Number(v) : v; }), { name: "zone_feet", inputmode: "numeric" })),
        checkbox(zone.difficult, "Difficult terrain", (v) => change((x) => { if (v) x.zones[i].difficult = true; else delete x.zones[i].difficult; })),
        el("span", { class: "muted ed-shape" }, zone.shape ? (zone.shape.rect ? `rectangle ${zone.shape.rect.join(", ")}` : `polygon of ${zone.shape.polygon.length} points`) : "not on the map"),
        el("button", { type: "button", class: "ed-delete", "aria-label": `Delete zone ${zone.name || zone.id}`, onclick: () => change((x) => {
          const [gone] = x.zones.splice(i, 1);
          x.links = x.links.filter((l) => l.a !== gone.id && l.b !== gone.id);
          ed.selected = null;
        }) }, "Delete"),
        problemNote("zone", i))));
    put($("editor-links"),
      a.links.length ? null : el("p", { class: "muted" }, "No links yet: with “Link zones”, drag from one zone to another."),
      a.links.map((link, i) => el("fieldset", { id: `editor-link-${i}`, class: "ed-item", "data-link": i },
        el("legend", {}, `Link ${i + 1}`),
        field("From", select(link.a, zoneOptions, (v) => change((x) => { x.links[i].a = v; }), { name: "link_a" })),
        field("Direction (where the second zone is)", select(link.direction, DIRECTIONS.map((d) => [d, d]), (v) => change((x) => { x.links[i].direction = v; }), { name: "link_direction" })),
        field("To", select(link.b, zoneOptions, (v) => change((x) => { x.links[i].b = v; }), { name: "link_b" })),
        field("Movement", select(link.mode || "walk", MODES.map((m) => [m, m]), (v) => change((x) => { if (v === "walk") delete x.links[i].mode; else x.links[i].mode = v; }), { name: "link_mode" })),
        checkbox(link.clear !== false, "Clear path", (v) => change((x) => { if (v) delete x.links[i].clear; else x.links[i].clear = false; }), { name: "link_clear" }),
        checkbox(link.blocks_sight, "Blocks line of sight", (v) => change((x) => { if (v) x.links[i].blocks_sight = true; else delete x.links[i].blocks_sight; }), { name: "link_blocks_sight" }),
        el("button", { type: "button", class: "ed-delete", "aria-label": `Delete link ${i + 1}`, onclick: () => change((x) => { x.links.splice(i, 1); }) }, "Delete"),
        problemNote("link", i))));
    const tags = ed.conn?.welcome?.capabilities?.asset_tags || [];
    put($("editor-assets"),
      a.assets.map((asset, i) => el("fieldset", { id: `editor-asset-${i}`, class: "ed-item", "data-asset": asset.id },
        el("legend", {}, `Asset ${i + 1}`),
        field("Id", text(asset.id, (v) => change((x) => { x.assets[i].id = v.trim(); }), { name: "asset_id", autocomplete: "off" })),
        field("Name", text(asset.name, (v) => change((x) => { x.assets[i].name = v; }), { name: "asset_name", autocomplete: "off" })),
        field("Kind", select(asset.kind, KINDS.map((k) => [k, k]), (v) => change((x) => { x.assets[i].kind = v; }), { name: "asset_kind" })),
        field("Zone", select(asset.zone, zoneOptions, (v) => change((x) => { x.assets[i].zone = v; }), { name: "asset_zone" })),
        tags.length
          ? el("fieldset", { class: "ed-tags" }, el("legend", {}, "Tags"),
            tags.map((tag) => checkbox((asset.tags || []).includes(tag.id), tag.id, (v) => change((x) => {
              const list = (x.assets[i].tags || []).filter((t) => t !== tag.id);
              if (v) list.push(tag.id);
              x.assets[i].tags = list;
            }), { name: "asset_tag", value: tag.id, title: tag.summary })))
          : null,
        dataFields(asset, i, tags),
        el("button", { type: "button", class: "ed-delete", "aria-label": `Delete asset ${asset.name || asset.id}`, onclick: () => change((x) => { x.assets.splice(i, 1); }) }, "Delete"),
        problemNote("asset", i))),
      el("div", { class: "zk-row" },
        field("New asset", select("prop", KINDS.map((k) => [k, k]), () => {}, { id: "editor-asset-kind" })),
        el("button", { type: "button", id: "editor-add-asset", disabled: !a.zones.length, onclick: () => change((x) => {
          const kind = $("editor-asset-kind").value;
          const id = freshId(kind, x.assets.map((s) => s.id));
          const zone = ed.selected?.kind === "zone" && x.zones[ed.selected.index] ? x.zones[ed.selected.index].id : x.zones[0].id;
          x.assets.push({ id, name: `${kind[0].toUpperCase()}${kind.slice(1)} ${x.assets.length + 1}`, kind, zone });
          ed.selected = { kind: "asset", index: x.assets.length - 1 };
        }) }, "Place asset")));
  }

  /** The data fields of an asset's tags, from the schemas their plugins declare. */
  function dataFields(asset, i, tags) {
    const fields = [];
    for (const id of asset.tags || []) {
      const tag = tags.find((t) => t.id === id);
      const props = tag?.data_schema?.properties || {};
      for (const [name, schema] of Object.entries(props)) {
        if (fields.some((f) => f.name === name)) continue;
        fields.push({ name, schema });
      }
    }
    if (!fields.length) return null;
    return el("fieldset", { class: "ed-data" }, el("legend", {}, "Data"),
      fields.map(({ name, schema }) => {
        const value = asset.data?.[name];
        const set = (v) => change((x) => {
          const data = { ...(x.assets[i].data || {}) };
          if (v === "" || v === undefined) delete data[name];
          else data[name] = v;
          x.assets[i].data = data;
        });
        const hint = [schema.description, schema.default !== undefined ? `default ${schema.default}` : null].filter(Boolean).join("; ");
        if (schema.type === "boolean") return checkbox(value, `${name}${hint ? ` (${hint})` : ""}`, set, { name: `data_${name}` });
        const numeric = schema.type === "integer" || schema.type === "number";
        return field(`${name}${hint ? ` (${hint})` : ""}`, text(typeof value === "object" && value !== null ? JSON.stringify(value) : value,
          (v) => set(numeric && v.trim() !== "" && !Number.isNaN(Number(v)) ? Number(v) : v),
          { name: `data_${name}`, inputmode: numeric ? "decimal" : undefined, autocomplete: "off" }));
      }));
  }

  /** Select zone `i` (its form took focus): marked on the map and in the list, the
   * form left as it is (its field keeps focus). */
  function selectZone(i) {
    if (ed.selected?.kind === "zone" && ed.selected.index === i) return;
    ed.selected = { kind: "zone", index: i };
    document.querySelectorAll("#editor-zones > .ed-item").forEach((node, n) => node.classList.toggle("ed-selected", n === i));
    renderMap();
  }

  function renameZone(arena, from, to) {
    for (const zone of arena.zones) if (zone.id === from) zone.id = to;
    for (const link of arena.links) {
      if (link.a === from) link.a = to;
      if (link.b === from) link.b = to;
    }
    for (const asset of arena.assets) {
      if (asset.zone === from) asset.zone = to;
      if (asset.crossing) asset.crossing = asset.crossing.map((z) => (z === from ? to : z));
    }
    if (arena.straight_lines) arena.straight_lines = arena.straight_lines.map((line) => line.map((z) => (z === from ? to : z)));
  }

  function renderProblems() {
    const box = $("editor-problems");
    if (!box) return;
    put(box,
      ed.problems.length
        ? el("ol", {}, ed.problems.map((p, n) => el("li", { "data-path": p.path },
          el("button", { type: "button", class: "ed-problem-link", onclick: () => {
            const place = placeOf(p.path);
            if (!place) return;
            ed.selected = place;
            render();
            focusSelected();
          } }, `${n + 1}. ${p.path || "arena"}`), `: ${p.message}`)))
        : el("p", { id: "editor-valid", class: "muted" }, "No problems: the arena is valid."));
    $("editor-problems-title").textContent = ed.problems.length ? `Problems (${ed.problems.length})` : "Problems";
  }

  function onKey(ev) {
    if (!(ev.ctrlKey || ev.metaKey)) return;
    const tag = ev.target.tagName;
    if (tag === "INPUT" && ev.target.type !== "checkbox" && ev.target.type !== "radio") return; // the field's own undo
    const key = ev.key.toLowerCase();
    if (key === "z" && !ev.shiftKey) {
      ev.preventDefault();
      undo();
    } else if (key === "y" || (key === "z" && ev.shiftKey)) {
      ev.preventDefault();
      redo();
    }
  }

  /** The library arenas this GM may replace, to edit one. */
  async function loadLibrary() {
    const select = $("editor-library");
    if (!select) return;
    const mine = [];
    for (let offset = 0; ; offset += 20) {
      const page = await ed.conn.request("list_arenas", { offset, limit: 20 });
      for (const item of page.arenas) if (item.yours) mine.push(item);
      if (offset + 20 >= page.total) break;
    }
    ed.library = new Map(mine.map((item) => [item.name, item.arena]));
    put(select, el("option", { value: "" }, mine.length ? "— choose —" : "— none saved yet —"),
      mine.map((item) => el("option", { value: item.name }, `${item.arena.name} (${item.name})`)));
  }

  function openFromLibrary(ev) {
    const arena = ed.library?.get(ev.target.value);
    if (!arena) return;
    change((a) => {
      Object.keys(a).forEach((k) => delete a[k]);
      Object.assign(a, { zones: [], links: [], assets: [] }, JSON.parse(JSON.stringify(arena)));
    });
    ed.selected = null;
    message(`Opened “${arena.name}” from the library.`);
  }

  async function open(box, conn, hooks) {
    if (!ed.conn) ed.arena = loadDraft() || ed.arena; // the page's first open: the kept draft
    ed.box = box;
    ed.conn = conn;
    ed.hooks = hooks;
    put(box,
      el("div", { class: "zk-head" },
        el("h2", {}, "Arena editor"),
        el("button", { type: "button", id: "editor-close", onclick: () => hooks.close() }, "Close")),
      el("p", { id: "editor-message", class: "muted", role: "status", "aria-live": "polite" }),
      el("div", { class: "zk-row" },
        field("Arena id", el("input", { id: "editor-id", autocomplete: "off", value: ed.arena.id, onchange: (ev) => change((a) => { a.id = ev.target.value.trim(); }) })),
        field("Arena name", el("input", { id: "editor-name", autocomplete: "off", value: ed.arena.name, onchange: (ev) => change((a) => { a.name = ev.target.value; }) })),
        field("Map image (PNG, JPEG or WebP)", el("input", { type: "file", id: "editor-image", accept: "image/png,image/jpeg,image/webp", onchange: uploadMap }))),
      el("div", { class: "zk-row" },
        field("Open from the library", el("select", { id: "editor-library", onchange: openFromLibrary })),
        el("button", { type: "button", id: "editor-new", onclick: () => change((a) => {
          Object.keys(a).forEach((k) => delete a[k]);
          Object.assign(a, blank());
        }) }, "New arena"),
        el("button", { type: "button", id: "editor-save", onclick: saveArena }, "Save to library"),
        el("button", { type: "button", id: "editor-export", onclick: exportArena }, "Export file"),
        field("Import file", el("input", { type: "file", id: "editor-import", accept: ".json,application/json", onchange: importArena }))),
      el("div", { id: "editor-tools", class: "ed-tools" }),
      el("div", { class: "ed-layout" },
        el("div", { id: "editor-stage", class: "ed-stage" }),
        el("section", { class: "ed-problems", "aria-labelledby": "editor-problems-title" },
          el("h3", { id: "editor-problems-title" }, "Problems"),
          el("div", { id: "editor-problems", "aria-live": "polite" }))),
      el("h3", {}, "Zones"), el("div", { id: "editor-zones", class: "ed-list" }),
      el("h3", {}, "Links"), el("div", { id: "editor-links", class: "ed-list" }),
      el("h3", {}, "Assets"), el("div", { id: "editor-assets", class: "ed-list" }));
    box.removeEventListener("keydown", onKey);
    box.addEventListener("keydown", onKey);
    render();
    scheduleCheck();
    loadLibrary().catch((err) => message(err.message, "error"));
    box.scrollIntoView({ block: "start" });
  }

  window.zonekeepEditor = { open, state: ed };
})();
