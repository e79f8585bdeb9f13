// The zonekeep web table: a browser client written from protocol/SPEC.md alone.
// Plain JavaScript, no framework, no build step; it talks only to the server that
// served it. Every address is relative to the page (``<prefix>/table/``), so the table
// works at a site's root and under a reverse proxy's path prefix alike: the websocket is
// ``<prefix>/ws`` (wss: on an https page). The link carries the seat: #encounter=ID&token=TOKEN.
"use strict";

(() => {
  const PROTOCOL = "1.1";
  const CLIENT = { name: "zonekeep-web-table", version: "0.1.0" };

  // ---------------------------------------------------------------------------------
  // Small DOM helpers

  const $ = (id) => document.getElementById(id);

  /** el("div", {class: "x", onclick: f}, child, "text", ...) */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key === "value") node.value = value;
      else if (key === "checked") node.checked = Boolean(value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function fragmentParams() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    return { encounter: params.get("encounter"), token: params.get("token") };
  }

  // ---------------------------------------------------------------------------------
  // The client's state

  const seat = fragmentParams();
  const app = {
    ws: null,
    nextId: 1,
    inFlight: new Map(), // id -> {resolve, reject, method}
    welcome: null,
    commands: new Map(), // command id -> capability entry
    role: null,
    player: null,
    state: null, // the last snapshot (the server's truth)
    lastSeq: 0,
    joined: false,
    prompts: new Map(), // decision id -> {decision, deadlineAt}
    turnTimer: null, // {creature, round, deadlineAt} of the last turn_timer notification
    attempts: 0,
    fatal: false,
    refreshing: false,
    refreshAgain: false,
    actions: null, // {creature, actions: [...]} for the active creature, when ours
    commandsKey: null,
    nextSendAt: 0,
    pingTimer: null,
  };
  window.zonekeepTable = app; // for debugging (and tests) in the browser's console

  // ---------------------------------------------------------------------------------
  // Connection: requests matched by id, notifications by method, automatic reconnection

  function setStatus(text, kind) {
    const node = $("status");
    node.textContent = text;
    node.className = `status status-${kind}`;
  }

  function showError(message) {
    const node = $("error");
    node.textContent = message;
    node.hidden = false;
  }

  function clearError() {
    $("error").hidden = true;
    $("error").textContent = "";
  }

  class ServerError extends Error {
    constructor(error) {
      super(error.message);
      this.code = error.code;
      this.wireName = error.name;
    }
  }

  function request(method, params = {}) {
    const ws = app.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new Error("Not connected to the server; reconnecting."));
    }
    const id = app.nextId++;
    const text = JSON.stringify({ id, method, params });
    const limits = app.welcome?.limits;
    if (limits && new TextEncoder().encode(text).length > limits.max_message_bytes) {
      return Promise.reject(new Error(`That ${method} request is too large to send.`));
    }
    // Stay under rate_per_second (announced in the hello result).
    const interval = limits ? 1000 / limits.rate_per_second : 0;
    const now = Date.now();
    const sendAt = Math.max(now, app.nextSendAt);
    app.nextSendAt = sendAt + interval;
    return new Promise((resolve, reject) => {
      app.inFlight.set(id, { resolve, reject, method });
      const send = () => (ws.readyState === WebSocket.OPEN ? ws.send(text) : null);
      if (sendAt > now) setTimeout(send, sendAt - now);
      else send();
    });
  }

  /** Send a request; show the server's sentence if it is refused. */
  async function act(method, params) {
    clearError();
    try {
      return await request(method, params);
    } catch (err) {
      showError(err.message);
      return null;
    }
  }

  function command(type, params) {
    return act("command", { encounter: seat.encounter, type, params });
  }

  // The websocket beside the page: <prefix>/table/ -> <prefix>/ws, ws: or wss: as the page.
  function socketUrl() {
    const url = new URL("../ws", location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    url.search = "";
    url.hash = "";
    return url.href;
  }

  function connect() {
    if (app.fatal) return;
    setStatus(app.attempts ? `Reconnecting (attempt ${app.attempts + 1})…` : "Connecting…", "connecting");
    const ws = new WebSocket(socketUrl());
    app.ws = ws;
    ws.addEventListener("open", () => greet(ws));
    ws.addEventListener("message", (msg) => {
      if (typeof msg.data !== "string") return;
      let message;
      try {
        message = JSON.parse(msg.data);
      } catch {
        return;
      }
      dispatch(message);
    });
    ws.addEventListener("close", (ev) => {
      if (app.ws !== ws) return;
      app.joined = false;
      clearInterval(app.pingTimer);
      for (const pending of app.inFlight.values()) {
        pending.reject(new Error("The connection to the server was lost."));
      }
      app.inFlight.clear();
      if (app.fatal) return;
      app.attempts += 1;
      const delay = Math.min(10, 0.5 * 2 ** Math.min(app.attempts - 1, 5));
      const why = ev.reason ? ` (${ev.reason})` : "";
      setStatus(`Disconnected${why}: reconnecting in ${delay} s…`, "offline");
      setTimeout(connect, delay * 1000);
    });
  }

  async function greet(ws) {
    try {
      const welcome = await request("hello", { protocol: PROTOCOL, client: CLIENT });
      if (String(welcome.protocol).split(".")[0] !== PROTOCOL.split(".")[0]) {
        throw new Error(`The server speaks protocol ${welcome.protocol}, not ${PROTOCOL}.`);
      }
      app.welcome = welcome;
      app.commands = new Map(welcome.capabilities.commands.map((c) => [c.id, c]));
      const params = { encounter: seat.encounter, token: seat.token };
      if (app.state !== null) params.last_seq = app.lastSeq;
      app.prompts.clear(); // open decisions are sent again right after the reply
      const joined = await request("join", params);
      app.role = joined.role;
      app.player = joined.player;
      app.joined = true;
      app.attempts = 0;
      if (joined.snapshot) {
        const first = app.state === null;
        app.state = joined.snapshot;
        app.lastSeq = joined.seq;
        if (first) logNote(`Joined “${joined.snapshot.name}” at event ${joined.seq}.`);
        else logNote(`Rejoined at event ${joined.seq} (fresh snapshot).`);
      } else {
        const base = params.last_seq;
        (joined.events || []).forEach((event, i) => logEvent(base + 1 + i, event));
        app.lastSeq = joined.seq;
        logNote(`Reconnected; caught up to event ${joined.seq}.`);
        scheduleRefresh();
      }
      const who = app.role === "player" ? `player ${app.player}` : app.role === "gm" ? "GM" : "spectator";
      setStatus(`Connected as ${who}`, "online");
      startPing(ws);
      render();
    } catch (err) {
      if (err instanceof ServerError) {
        showError(err.message);
        if (["bad_token", "unknown_encounter", "unsupported_version"].includes(err.wireName)) {
          app.fatal = true;
          setStatus("Not connected", "offline");
          ws.close(1000);
        }
      }
    }
  }

  function startPing(ws) {
    clearInterval(app.pingTimer);
    const idle = app.welcome?.limits?.idle_timeout_seconds ?? 300;
    app.pingTimer = setInterval(() => {
      if (app.ws === ws && ws.readyState === WebSocket.OPEN) request("ping").catch(() => {});
    }, Math.max(5, idle / 3) * 1000);
  }

  function dispatch(message) {
    if ("id" in message) {
      const pending = app.inFlight.get(message.id);
      if (pending === undefined) {
        if (message.error) showError(message.error.message);
        return;
      }
      app.inFlight.delete(message.id);
      if ("error" in message) pending.reject(new ServerError(message.error));
      else pending.resolve(message.result);
      return;
    }
    const params = message.params || {};
    switch (message.method) {
      case "event":
        if (params.encounter === seat.encounter) onEvent(params.seq, params.event);
        break;
      case "prompt":
        if (params.encounter === seat.encounter) {
          app.prompts.set(params.decision.id, {
            decision: params.decision,
            deadlineAt: Date.now() + params.deadline_seconds * 1000,
          });
          renderPrompts();
        }
        break;
      case "turn_timer":
        if (params.encounter === seat.encounter) {
          app.turnTimer = { creature: params.creature, round: params.round,
            deadlineAt: Date.now() + params.deadline_seconds * 1000 };
          if (app.state) renderTracker();
        }
        break;
      case "snapshot":
        if (params.encounter === seat.encounter) {
          app.state = params.snapshot;
          app.lastSeq = Math.max(app.lastSeq, params.seq);
          render();
        }
        break;
      case "encounter_error":
        showError(params.message);
        break;
      case "closing":
        setStatus(`Server closing: ${params.reason}`, "offline");
        break;
      default:
        break; // unknown notifications are ignored (a newer MINOR version may add some)
    }
  }

  function onEvent(seq, event) {
    if (!app.joined) return;
    if (seq <= app.lastSeq) return; // already applied
    if (seq !== app.lastSeq + 1) {
      // A gap: join again from the last event we have.
      logNote(`Missed events ${app.lastSeq + 1}–${seq - 1}; catching up.`);
      app.joined = false;
      greetAgain();
      return;
    }
    app.lastSeq = seq;
    logEvent(seq, event);
    if (event.type === "decision_resolved" && app.prompts.delete(event.decision)) renderPrompts();
    scheduleRefresh();
  }

  async function greetAgain() {
    try {
      const joined = await request("join", {
        encounter: seat.encounter, token: seat.token, last_seq: app.lastSeq,
      });
      if (joined.snapshot) app.state = joined.snapshot;
      else (joined.events || []).forEach((e, i) => logEvent(app.lastSeq + 1 + i, e));
      app.lastSeq = joined.seq;
      app.joined = true;
      scheduleRefresh();
    } catch (err) {
      showError(err.message);
    }
  }

  /** Fetch the seat's snapshot after a burst of events (the server's state is the truth). */
  function scheduleRefresh() {
    if (app.refreshing) {
      app.refreshAgain = true;
      return;
    }
    app.refreshing = true;
    setTimeout(async () => {
      try {
        const result = await request("snapshot", { encounter: seat.encounter });
        if (result.seq >= app.lastSeq || app.state === null) app.state = result.snapshot;
        if (result.seq < app.lastSeq) app.refreshAgain = true;
        await refreshActions();
        render();
      } catch {
        // the connection dropped: the rejoin brings a fresh state
      } finally {
        app.refreshing = false;
        if (app.refreshAgain) {
          app.refreshAgain = false;
          scheduleRefresh();
        }
      }
    }, 25);
  }

  async function refreshActions() {
    const s = app.state;
    app.actions = null;
    if (!s || s.phase !== "turns" || !s.active || !isMine(s.active)) return;
    try {
      const result = await request("actions", { encounter: seat.encounter, creature: s.active });
      app.actions = result;
    } catch {
      app.actions = null;
    }
  }

  // ---------------------------------------------------------------------------------
  // Reading the state

  const OUT = ["dead", "unconscious", "dying", "defeated", "surrendered", "escaped"];

  function creature(id) {
    return app.state?.creatures?.[id];
  }

  function name(id) {
    return creature(id)?.name ?? (id === "gm" ? "the GM" : id);
  }

  function zoneName(id) {
    const zone = app.state?.arena?.zones?.find((z) => z.id === id);
    return zone ? zone.name : id;
  }

  function assetName(id) {
    const s = app.state;
    const asset = s?.arena?.assets?.find((a) => a.id === id) ?? s?.effects?.[id];
    return asset ? asset.name : id;
  }

  function isMine(cid) {
    const c = creature(cid);
    if (!c || app.role === "spectator") return false;
    return app.role === "gm" || c.controller === app.player;
  }

  function partners(pairs, cid) {
    return (pairs || []).filter((p) => p.includes(cid)).map((p) => (p[0] === cid ? p[1] : p[0]));
  }

  function neighbours(zoneId) {
    const found = new Set();
    for (const link of app.state?.arena?.links || []) {
      if (link.a === zoneId) found.add(link.b);
      if (link.b === zoneId) found.add(link.a);
    }
    return found;
  }

  function isOut(c) {
    return c.hp === "down" || c.hp <= 0 || c.conditions.some((x) => OUT.includes(x));
  }

  // An enemy's hit points reach players and spectators as a word (max_hp is null then).
  function hpText(c) {
    return typeof c.hp === "string" ? `HP ${c.hp}` : `HP ${c.hp}/${c.max_hp}`;
  }

  // ---------------------------------------------------------------------------------
  // Events in plain words

  const rollText = (r) => (r ? `${r.total}` : "?");
  const list = (ids) => (ids.length ? ids.map(name).join(", ") : "nobody");

  const DESCRIBE = {
    action_taken: (e) => (e.action === "attack" || e.action === "opportunity_attack" ? null
      : `${name(e.creature)} uses ${e.action.replaceAll("_", " ")} (${e.cost}).`),
    adjacency_ended: (e) => `${name(e.creature)} is no longer beside ${name(e.ally)}.`,
    adjacency_taken: (e) => `${name(e.creature)} stands ${e.back_to_back ? "back-to-back with" : "beside"} ${name(e.ally)}.`,
    attack_made: (e) => `${name(e.attacker)} attacks ${name(e.target)} with ${e.attack}${e.reaction ? " (opportunity attack)" : ""}: ${rollText(e.roll)} against AC ${e.target_ac}, ${e.critical ? "a critical hit" : e.hit ? "a hit" : "a miss"}.`,
    communicated: (e) => `${name(e.creature)} says: “${e.text}”`,
    condition_applied: (e) => `${name(e.creature)} is ${e.condition}.`,
    condition_effect_applied: (e) => `${name(e.effect.creature)} is ${e.effect.condition}${e.effect.rounds ? ` for ${e.effect.rounds} round(s)` : ""}.`,
    condition_effect_ended: (e) => `${name(e.creature)}'s ${e.condition} ends${e.reason ? ` (${e.reason})` : ""}.`,
    condition_effect_ticked: (e) => `${name(e.creature)}: ${e.rounds} round(s) left.`,
    condition_removed: (e) => `${name(e.creature)} is no longer ${e.condition}.`,
    contest_rolled: (e) => `${name(e.creature)} (${rollText(e.roll)}) against ${name(e.target)} (${rollText(e.target_roll)}): ${e.won ? "wins" : "loses"}.`,
    creature_added: (e) => `${e.creature.name} joins the fight.`,
    damaged: (e) => `${name(e.creature)} takes ${e.amount}${e.damage_type ? ` ${e.damage_type}` : ""} damage (HP ${e.hp}).`,
    dashed: (e) => `${name(e.creature)} dashes.`,
    decision_opened: (e) => `Waiting on ${e.decision.controller === "gm" ? "the GM" : e.decision.controller}: ${e.decision.prompt}`,
    decision_resolved: (e) => `Decided${e.defaulted ? " by default" : ` by ${e.by === "gm" ? "the GM" : e.by}`}: ${e.choice.join(", ")}.`,
    disengaged: (e) => `${name(e.creature)} disengages.`,
    effect_created: (e) => `${e.asset.name} fills ${zoneName(e.asset.zone)}.`,
    effect_ended: (e) => `${assetName(e.asset)} ends${e.reason ? ` (${e.reason})` : ""}.`,
    encounter_continued: () => "The GM keeps the encounter going.",
    encounter_created: (e) => `Encounter “${e.name}” begins.`,
    encounter_ended: (e) => `The encounter ends: ${e.reason}.`,
    engagement_ended: (e) => `${name(e.creature)} and ${name(e.enemy)} are no longer engaged.`,
    engagement_started: (e) => `${name(e.creature)} engages ${name(e.enemy)}.`,
    group_order_set: (e) => `Group ${e.group} acts in the order ${list(e.members)}.`,
    hazard_added: (e) => `Hazard: ${e.hazard.name}.`,
    hazard_removed: (e) => `Hazard ${e.hazard} is gone.`,
    healed: (e) => `${name(e.creature)} heals ${e.amount} (HP ${e.hp}).`,
    initiative_rolled: (e) => `Initiative: ${e.entries.map((x) => `${list(x.members)} ${x.total}`).join(", ")}.`,
    interacted: (e) => `${name(e.creature)} interacts with ${e.object}.`,
    maneuver_ended: () => null,
    maneuver_started: () => null,
    maneuver_updated: () => null,
    moved: (e) => `${name(e.creature)} moves ${e.feet} ft (${e.mode}).`,
    movement_spent: (e) => `${name(e.creature)} spends ${e.feet} ft of movement (${e.reason}).`,
    note_added: (e) => `Note: ${e.note.text}`,
    note_removed: () => "A note was removed.",
    override_applied: (e) => `The GM sets ${name(e.creature)}'s ${e.field} to ${JSON.stringify(e.value)}.`,
    plugin_error: (e) => `Plugin ${e.plugin} failed in ${e.hook}: ${e.error}`,
    position_left: (e) => `${name(e.creature)} leaves ${assetName(e.asset)}.`,
    position_taken: (e) => `${name(e.creature)} takes position at ${assetName(e.asset)}.`,
    positions_established: (e) => `Positions: ${Object.entries(e.positions).map(([c, z]) => `${name(c)} in ${zoneName(z)}`).join(", ")}.`,
    readied: (e) => `${name(e.creature)} readies ${e.attack} against ${name(e.target)}.`,
    readied_cleared: (e) => `${name(e.creature)}'s readied attack is gone (${e.reason}).`,
    rewound: (e) => `The GM rewound the encounter to event ${e.to_seq}.`,
    round_ended: (e) => `Round ${e.round} ends.`,
    round_started: (e) => `— Round ${e.round} —`,
    save_made: (e) => `${name(e.creature)} ${e.ability.toUpperCase()} save: ${rollText(e.roll)} against DC ${e.dc}, ${e.success ? "success" : "failure"}.`,
    space_shared: (e) => `${name(e.creature)} is in ${name(e.other)}'s space.`,
    sprinted: (e) => `${name(e.creature)} sprints.`,
    surprise_determined: (e) => (e.surprised.length ? `Surprised: ${list(e.surprised)}.` : "Nobody is surprised."),
    surprise_ended: (e) => `${name(e.creature)} is no longer surprised.`,
    tumble_attempted: (e) => `${name(e.creature)} tumbles: ${rollText(e.roll)} against DC ${e.dc}, ${e.success ? "success" : "failure"}.`,
    turn_ended: (e) => `${name(e.creature)} ends its turn.`,
    turn_skipped: (e) => `${name(e.creature)}'s turn is skipped (${e.reason}).`,
    turn_started: (e) => `${name(e.creature)}'s turn.`,
    zone_entered: (e) => `${name(e.creature)} enters ${zoneName(e.to_zone)} from ${zoneName(e.from_zone)}${e.forced ? " (forced)" : ""}.`,
    hidden: () => "Something happens out of sight.",
  };

  function describe(event) {
    const fn = DESCRIBE[event.type];
    if (!fn) return event.type; // unknown event types are shown as their type
    try {
      return fn(event);
    } catch {
      return event.type;
    }
  }

  function logLine(item) {
    const log = $("log");
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 30;
    log.append(item);
    while (log.children.length > 500) log.firstChild.remove();
    if (atBottom) log.scrollTop = log.scrollHeight;
  }

  function logEvent(seq, event) {
    const text = describe(event);
    if (text === null) return;
    logLine(el("li", { dataset: { seq: String(seq), type: event.type } },
      el("span", { class: "seq" }, `#${seq}`), " ", text));
  }

  function logNote(text) {
    logLine(el("li", { class: "note" }, text));
  }

  // ---------------------------------------------------------------------------------
  // Rendering

  function render() {
    const s = app.state;
    if (!s) return;
    $("table").hidden = false;
    $("encounter-name").textContent = s.name;
    document.title = `${s.name} — zonekeep`;
    renderMap();
    renderTracker();
    renderTurn();
    renderPrompts();
    renderGm();
  }

  /** Grid cells for the zones: a breadth-first walk of the links (above/below stack
   * vertically, beside goes side by side); a taken cell pushes the zone further out. */
  function layout(arena) {
    const cells = new Map();
    const taken = new Set();
    const key = (x, y) => `${x},${y}`;
    const place = (id, x, y, dx, dy) => {
      let cx = x;
      let cy = y;
      for (let i = 0; taken.has(key(cx, cy)); i++) {
        if (dx !== 0 || i % 2 === 0) cx += dx || 1;
        else cy += dy;
      }
      cells.set(id, [cx, cy]);
      taken.add(key(cx, cy));
    };
    const step = (dir, forward) => {
      const sign = forward ? 1 : -1;
      if (dir === "above") return [0, -sign];
      if (dir === "below") return [0, sign];
      return [sign, 0];
    };
    let originX = 0;
    for (const zone of arena.zones) {
      if (cells.has(zone.id)) continue;
      const maxX = Math.max(-1, ...[...cells.values()].map(([x]) => x));
      originX = cells.size ? maxX + 1 : 0;
      place(zone.id, originX, 0, 1, 0);
      const queue = [zone.id];
      while (queue.length) {
        const at = queue.shift();
        const [x, y] = cells.get(at);
        for (const link of arena.links) {
          let other = null;
          let d = null;
          if (link.a === at) { other = link.b; d = step(link.direction, true); }
          else if (link.b === at) { other = link.a; d = step(link.direction, false); }
          if (other === null || cells.has(other)) continue;
          place(other, x + d[0], y + d[1], d[0], d[1] || 1);
          queue.push(other);
        }
      }
    }
    const xs = [...cells.values()].map(([x]) => x);
    const ys = [...cells.values()].map(([, y]) => y);
    const minX = Math.min(...xs);
    const minY = Math.min(...ys);
    for (const [id, [x, y]] of cells) cells.set(id, [x - minX + 1, y - minY + 1]);
    return cells;
  }

  function activeZone() {
    const s = app.state;
    if (!s || s.phase !== "turns" || !s.active || !isMine(s.active)) return null;
    return creature(s.active)?.zone ?? null;
  }

  function renderMap() {
    const s = app.state;
    const arena = s.arena;
    $("arena-name").textContent = arena.name;
    const cells = layout(arena);
    const sides = [...new Set(Object.values(s.creatures).map((c) => c.side))];
    const here = activeZone();
    const reachable = here ? neighbours(here) : new Set();
    const map = $("map");
    map.replaceChildren();
    for (const zone of arena.zones) {
      const [col, row] = cells.get(zone.id);
      const classes = ["zone"];
      if (zone.difficult) classes.push("difficult");
      if (zone.id === here) classes.push("current");
      const canEnter = reachable.has(zone.id);
      if (canEnter) classes.push("reachable");
      const linkText = arena.links
        .filter((l) => l.a === zone.id || l.b === zone.id)
        .map((l) => {
          const other = l.a === zone.id ? l.b : l.a;
          let dir = l.direction;
          if (l.b === zone.id && dir !== "beside") dir = dir === "above" ? "below" : "above";
          return `${dir} ${zoneName(other)}${l.clear ? "" : " (blocked)"}${l.mode !== "walk" ? ` (${l.mode})` : ""}`;
        });
      const assets = [...arena.assets, ...Object.values(s.effects || {})].filter((a) => a.zone === zone.id);
      const tokens = Object.values(s.creatures).filter((c) => c.zone === zone.id);
      const box = el("div", {
        class: classes.join(" "),
        dataset: { zone: zone.id },
        title: zone.description || zone.name,
        onclick: canEnter ? () => enterZone(zone.id) : null,
      },
      el("div", { class: "zone-head" },
        el("span", { class: "zone-name" }, zone.name),
        el("span", { class: "zone-size" }, `${zone.size} ft · cap ${zone.capacity}${zone.difficult ? " · difficult" : ""}`)),
      el("div", { class: "zone-links" }, linkText.join(" · ")),
      assets.length ? el("ul", { class: "assets" }, assets.map((a) => el("li", { title: a.description || "" }, `${a.name} (${a.kind})`))) : null,
      el("div", { class: "tokens" }, tokens.map((c) => renderToken(c, sides))),
      canEnter ? el("div", { class: "zone-hint" }, `Click to enter with ${name(s.active)}`) : null);
      box.style.gridColumn = String(col); // CSSOM, not a style attribute (the CSP forbids those)
      box.style.gridRow = String(row);
      map.append(box);
    }
    const unplaced = Object.values(s.creatures).filter((c) => !c.zone);
    $("unplaced").textContent = unplaced.length ? `Not placed yet: ${unplaced.map((c) => c.name).join(", ")}` : "";
  }

  function renderToken(c, sides) {
    const s = app.state;
    const details = [];
    const engaged = partners(s.engagements, c.id);
    if (engaged.length) details.push(`⚔ engaged with ${engaged.map(name).join(", ")}`);
    const beside = partners(s.adjacent, c.id);
    if (beside.length) details.push(`beside ${beside.map(name).join(", ")}`);
    const backs = partners(s.back_to_back, c.id);
    if (backs.length) details.push(`back-to-back with ${backs.map(name).join(", ")}`);
    if (c.position) details.push(`at ${assetName(c.position)}`);
    if (c.conditions.length) details.push(c.conditions.join(", "));
    if (c.hidden) details.push("hidden from players");
    const classes = ["token", `side-${sides.indexOf(c.side) % 2}`];
    if (s.active === c.id) classes.push("active");
    if (c.hidden) classes.push("hidden");
    if (isOut(c)) classes.push("out");
    return el("div", { class: classes.join(" "), dataset: { creature: c.id } },
      el("span", { class: "name" }, c.name), ` ${hpText(c)}`,
      details.map((d) => el("span", { class: "detail" }, d)));
  }

  function enterZone(zoneId) {
    const s = app.state;
    if (!s?.active) return;
    command("enter", { creature: s.active, zones: [zoneId] });
  }

  function renderTracker() {
    const s = app.state;
    const node = $("tracker");
    const phaseText = { surprise: "Setting up: surprise", positions: "Setting up: positions",
      initiative: "Rolling initiative", turns: `Round ${s.round}`, ended: "The encounter has ended" };
    // The turn timer counts down only for the turn it was sent for.
    const timer = app.turnTimer;
    const timed = timer && s.phase === "turns" && timer.creature === s.active && timer.round === s.round;
    const head = el("div", { class: "tracker-head" },
      el("span", { class: "round" }, phaseText[s.phase] ?? s.phase),
      s.phase === "turns" ? el("span", { class: "whose-turn" },
        s.active ? `${name(s.active)}'s turn` : "Between turns") : null,
      timed ? el("span", { class: "countdown turn-timer", title: "The server ends this turn when the time is up",
        dataset: { deadline: String(timer.deadlineAt) } }, countdownText(timer.deadlineAt)) : null);
    const member = (cid) => {
      const c = creature(cid);
      if (!c) return null;
      return el("div", { class: "member", dataset: { creature: cid } },
        el("span", {}, c.name, isOut(c) ? " (out)" : "", s.surprised.includes(cid) ? " (surprised)" : ""),
        el("span", { class: "hp" }, hpText(c)));
    };
    let body;
    if (s.initiative.length) {
      body = el("ol", { class: "order" }, s.initiative.map((entry) =>
        el("li", { class: entry.members.includes(s.active) ? "active" : "", dataset: { slot: entry.slot } },
          el("span", { class: "muted" }, `${entry.total} `),
          entry.members.length > 1 ? el("span", { class: "muted" }, `${entry.slot}: `) : null,
          entry.members.map(member))));
    } else {
      body = el("div", {}, el("div", { class: "muted" }, "No initiative yet."),
        Object.keys(s.creatures).map(member));
    }
    const ended = s.phase === "ended" && s.ended_reason ? el("div", { class: "muted" }, s.ended_reason) : null;
    node.replaceChildren(...[head, body, ended].filter(Boolean));
  }

  // -- the turn panel: resources and the creature commands ---------------------------

  function renderTurn() {
    const s = app.state;
    const panel = $("turn-panel");
    const active = s.phase === "turns" ? s.active : null;
    if (!active || !isMine(active)) {
      panel.hidden = true;
      app.commandsKey = null;
      return;
    }
    panel.hidden = false;
    const c = creature(active);
    $("turn-title").textContent = app.role === "gm" && c.controller !== "gm"
      ? `${c.name}'s turn (${c.controller})` : `Your turn: ${c.name}`;
    const r = s.resources;
    const res = $("resources");
    if (r) {
      const speed = Math.max(0, ...Object.values(c.speeds || {}), 0);
      const walk = c.speeds?.walk ?? speed;
      const left = Math.max(0, walk * (1 + r.dashes) - r.movement_spent);
      const reaction = s.reactions_used.includes(active) ? 0 : 1;
      const row = (k, v) => [el("dt", {}, k), el("dd", { dataset: { resource: k.toLowerCase() } }, v)];
      res.replaceChildren(el("dl", { class: "resources" },
        row("Movement", `${left} ft left`),
        row("Action", r.actions > 0 ? `${r.actions} left` : "used"),
        row("Bonus", r.bonus_actions > 0 ? `${r.bonus_actions} left` : "used"),
        row("Interaction", r.interactions > 0 ? `${r.interactions} left` : "used"),
        row("Reaction", reaction ? "1 left" : "used"),
        r.disengaged ? row("Disengaged", "yes") : null));
    } else {
      res.replaceChildren();
    }
    // Rebuild the forms when the turn changes or anyone moves or falls, so that the
    // offered targets and zones stay the legal ones.
    const where = Object.values(s.creatures).map((x) => `${x.id}:${x.zone}:${isOut(x)}`).join(",");
    const key = `${active}|${s.phase}|${app.role}|${where}`;
    if (app.commandsKey !== key) {
      app.commandsKey = key;
      const specs = [...app.commands.values()].filter((spec) => spec.who === "creature" && spec.phases.includes("turns"));
      $("commands").replaceChildren(
        el("div", { class: "quick" },
          el("button", { type: "button", dataset: { quick: "end_turn" }, onclick: () => command("end_turn", { creature: active }) }, "End turn")),
        ...specs.map((spec) => commandForm(spec, { creature: active })));
    }
    const available = new Set(app.actions?.creature === active ? app.actions.actions : []);
    for (const details of $("commands").querySelectorAll("details.command")) {
      details.classList.toggle("unavailable", app.actions !== null && !available.has(details.dataset.command));
    }
  }

  /** A form for one command, built from its capability entry (params and schema). */
  function commandForm(spec, fixed = {}) {
    const inputs = [];
    const form = el("form", { onsubmit: (ev) => {
      ev.preventDefault();
      const params = { ...fixed };
      for (const read of inputs) {
        const [k, v] = read();
        if (v !== undefined) params[k] = v;
      }
      command(spec.id, params);
    } });
    form.append(el("div", { class: "summary" }, spec.summary));
    const properties = spec.schema?.properties || {};
    for (const [pname, p] of Object.entries(spec.params || {})) {
      if (pname in fixed) continue;
      const description = p.description || properties[pname]?.description || "";
      const labelText = `${pname}${p.required ? "" : " (optional)"}: ${description}`;
      const field = paramInput(pname, p.type, p.required, legalChoices(spec.id, pname, fixed.creature));
      inputs.push(field.read);
      form.append(el("label", { class: field.check ? "param check" : "param" }, field.check ? [field.node, labelText] : [labelText, field.node]));
    }
    form.append(el("button", { type: "submit" }, "Send"));
    return el("details", { class: "command", dataset: { command: spec.id } },
      el("summary", {}, spec.id.replaceAll("_", " ")), form);
  }

  // Commands whose target must stand in the actor's zone (melee reach, shoving,
  // engaging); the server still decides, this only keeps the choices sensible.
  const SAME_ZONE = new Set(["engage", "withdraw", "shove", "shove_into", "move_adjacent"]);

  /** The creatures or zones worth offering for one parameter, or null for all. */
  function legalChoices(commandId, pname, actorId) {
    const s = app.state;
    const actor = actorId ? s.creatures[actorId] : null;
    if (!actor) return null;
    const others = Object.values(s.creatures).filter((c) => c.id !== actor.id && !isOut(c));
    if (pname === "target") {
      const foes = others.filter((c) => c.side !== actor.side);
      return SAME_ZONE.has(commandId) ? foes.filter((c) => c.zone === actor.zone) : foes;
    }
    if (pname === "ally") {
      return others.filter((c) => c.side === actor.side && c.zone === actor.zone);
    }
    if (pname === "zone" && commandId === "enter") {
      return [...neighbours(actor.zone)];
    }
    return null;
  }

  function paramInput(pname, type, required, legal = null) {
    const s = app.state;
    const creatures = legal && type === "creature" ? legal : Object.values(s.creatures);
    const opt = (value, text) => el("option", { value }, text);
    const emptyOption = required ? null : opt("", "—");
    switch (type) {
      case "creature": {
        const node = el("select", { name: pname }, emptyOption, creatures.map((c) => opt(c.id, c.name)));
        return { node, read: () => [pname, node.value || undefined] };
      }
      case "zone": {
        const zones = legal ? s.arena.zones.filter((z) => legal.includes(z.id)) : s.arena.zones;
        const node = el("select", { name: pname }, emptyOption, zones.map((z) => opt(z.id, z.name)));
        return { node, read: () => [pname, node.value || undefined] };
      }
      case "boolean": {
        const node = el("input", { type: "checkbox", name: pname });
        return { node, check: true, read: () => [pname, node.checked ? true : required ? false : undefined] };
      }
      case "integer": {
        const node = el("input", { type: "number", step: "1", name: pname });
        return { node, read: () => [pname, node.value === "" ? undefined : Number.parseInt(node.value, 10)] };
      }
      case "creatures": {
        const boxes = creatures.map((c) => el("input", { type: "checkbox", value: c.id }));
        const node = el("span", { class: "choices", dataset: { name: pname } },
          creatures.map((c, i) => el("label", {}, boxes[i], c.name)));
        return { node, read: () => {
          const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
          return [pname, chosen.length || required ? chosen : undefined];
        } };
      }
      case "strings": {
        const node = el("input", { type: "text", name: pname, placeholder: "comma-separated" });
        return { node, read: () => {
          const parts = node.value.split(",").map((x) => x.trim()).filter(Boolean);
          return [pname, parts.length || required ? parts : undefined];
        } };
      }
      case "object":
      case "any": {
        const node = el("input", { type: "text", name: pname, placeholder: "JSON" });
        return { node, read: () => {
          if (node.value.trim() === "") return [pname, undefined];
          try {
            return [pname, JSON.parse(node.value)];
          } catch {
            return [pname, node.value];
          }
        } };
      }
      default: {
        const node = el("input", { type: "text", name: pname });
        return { node, read: () => [pname, node.value === "" ? undefined : node.value] };
      }
    }
  }

  // -- prompts ---------------------------------------------------------------------

  function renderPrompts() {
    const s = app.state;
    if (s) {
      const open = new Set(s.pending.map((d) => d.id));
      // A prompt whose decision is gone from a fresh snapshot was answered or expired.
      for (const id of app.prompts.keys()) if (!open.has(id) && s.seq >= app.lastSeq) app.prompts.delete(id);
    }
    const panel = $("prompts-panel");
    panel.hidden = app.prompts.size === 0;
    const nodes = [];
    for (const entry of app.prompts.values()) {
      const { decision, deadlineAt } = entry;
      const countdown = el("span", { class: "countdown", dataset: { deadline: String(deadlineAt) } }, countdownText(deadlineAt));
      let buttons;
      if (decision.ordering) {
        // Any order: each option moves up or down; the order shown is what is sent.
        entry.order ??= [...decision.options];
        const order = entry.order;
        const move = (i, by) => {
          [order[i], order[i + by]] = [order[i + by], order[i]];
          renderPrompts();
        };
        buttons = el("div", {},
          el("ol", { class: "ordering" }, order.map((o, i) =>
            el("li", { dataset: { option: o } }, o + " ",
              el("button", { type: "button", class: "up", title: `Move ${o} up`, disabled: i === 0,
                onclick: () => move(i, -1) }, "\u2191"),
              el("button", { type: "button", class: "down", title: `Move ${o} down`,
                disabled: i === order.length - 1, onclick: () => move(i, 1) }, "\u2193")))),
          el("div", { class: "buttons" },
            el("button", { type: "button", class: "confirm-order", onclick: () => decide(decision, [...order]) },
              `Confirm this order: ${order.join(", ")}`)));
      } else {
        buttons = el("div", { class: "buttons" }, decision.options.map((o) =>
          el("button", { type: "button", dataset: { choice: o }, onclick: () => decide(decision, [o]) },
            o + (decision.default.includes(o) ? " (default)" : ""))));
      }
      nodes.push(el("div", { class: "prompt", dataset: { decision: decision.id, kind: decision.kind } },
        el("div", {}, decision.prompt),
        el("div", { class: "muted" }, `For ${decision.controller === "gm" ? "the GM" : decision.controller}; `,
          countdown, `; then: ${decision.default.join(", ") || "nothing"}.`),
        buttons));
    }
    $("prompts").replaceChildren(...nodes);
  }

  function countdownText(deadlineAt) {
    const left = Math.max(0, Math.ceil((deadlineAt - Date.now()) / 1000));
    return `${left} s left`;
  }

  setInterval(() => {
    for (const node of document.querySelectorAll(".countdown[data-deadline]")) {
      node.textContent = countdownText(Number(node.dataset.deadline));
    }
  }, 250);

  async function decide(decision, choice) {
    const done = await command("decide", { decision: decision.id, choice });
    if (done !== null) {
      app.prompts.delete(decision.id);
      renderPrompts();
    }
  }

  // -- the GM's controls -------------------------------------------------------------

  function renderGm() {
    const s = app.state;
    const panel = $("gm-panel");
    if (app.role !== "gm") {
      panel.hidden = true;
      return;
    }
    panel.hidden = false;
    const root = $("gm");
    // Rebuilt only when the phase or the roster changes, so half-filled forms survive events.
    const setupPhase = s.phase === "surprise" || s.phase === "positions";
    const key = `${s.phase}|${Object.values(s.creatures).map((c) => `${c.id}:${c.hidden}:${setupPhase ? c.zone : ""}`).join(",")}`;
    if (root.dataset.key === key) {
      const rewind = root.querySelector("input[name=to_seq]");
      if (rewind) rewind.max = String(Math.max(1, app.lastSeq - 1));
      return;
    }
    const keep = app.gmSeats?.querySelector(".seat-links") ?? null;
    root.dataset.key = key;
    const creatures = Object.values(s.creatures);
    const phaseIs = (p) => s.phase === p;

    // Setup: surprise, positions, initiative.
    const surpriseBoxes = creatures.map((c) => el("input", { type: "checkbox", value: c.id }));
    const placeSelects = creatures.map((c) => el("select", { dataset: { creature: c.id } },
      s.arena.zones.map((z) => el("option", { value: z.id, selected: c.zone === z.id }, z.name))));
    const setup = el("div", { class: "setup" },
      el("h3", {}, "Setup"),
      el("div", { class: "gm-row" }, "Surprised:", creatures.map((c, i) => el("label", {}, surpriseBoxes[i], c.name))),
      el("div", { class: "gm-row" },
        el("button", { type: "button", dataset: { setup: "set_surprise" }, disabled: !phaseIs("surprise"),
          onclick: () => command("set_surprise", { surprised: surpriseBoxes.filter((b) => b.checked).map((b) => b.value) }) },
        "Set surprise")),
      el("div", {}, creatures.map((c, i) => el("div", { class: "gm-row" }, el("label", {}, `${c.name} in `, placeSelects[i])))),
      el("div", { class: "gm-row" },
        el("button", { type: "button", dataset: { setup: "place" }, disabled: !phaseIs("positions"),
          onclick: () => command("place", { positions: Object.fromEntries(placeSelects.map((sel) => [sel.dataset.creature, sel.value])) }) },
        "Place creatures"),
        el("button", { type: "button", dataset: { setup: "roll_initiative" }, disabled: !phaseIs("initiative"),
          onclick: () => command("roll_initiative", {}) },
        "Roll initiative")));

    // Hide and reveal.
    const hiding = el("div", {}, el("h3", {}, "Hidden creatures"),
      creatures.map((c) => el("div", { class: "gm-row" },
        `${c.name}: ${c.hidden ? "hidden" : "visible"}`,
        el("button", { type: "button", dataset: { hide: c.id }, disabled: phaseIs("ended"),
          onclick: () => command("override", { creature: c.id, field: "hidden", value: !c.hidden }) },
        c.hidden ? "Reveal" : "Hide"))));

    // Rewind.
    const toSeq = el("input", { type: "number", name: "to_seq", min: "1", max: String(Math.max(1, app.lastSeq - 1)), step: "1" });
    const rewind = el("div", {}, el("h3", {}, "Rewind"),
      el("div", { class: "gm-row" }, el("label", {}, "to event ", toSeq),
        el("button", { type: "button", dataset: { gm: "rewind" }, onclick: () => {
          const n = Number.parseInt(toSeq.value, 10);
          if (Number.isFinite(n)) act("rewind", { encounter: seat.encounter, to_seq: n });
        } }, "Rewind")));

    // Seats: create_seat -> a link to hand to the player. Built once per roster, so a
    // half-typed player id and the links already made survive every other update.
    const rosterKey = creatures.map((c) => c.id).join(",");
    if (!app.gmSeats || app.gmSeats.dataset.roster !== rosterKey) app.gmSeats = seatsSection(creatures, rosterKey, keep);
    const seats = app.gmSeats;

    // Every GM command of the current phase, as forms.
    const gmSpecs = [...app.commands.values()].filter((spec) => spec.who === "gm" && spec.phases.includes(s.phase));
    const gmCommands = el("div", {}, el("h3", {}, "GM commands"), gmSpecs.map((spec) => commandForm(spec)));

    root.replaceChildren(setup, hiding, rewind, seats, gmCommands);
  }

  function seatsSection(creatures, rosterKey, keep) {
    const playerInput = el("input", { type: "text", name: "player", placeholder: "player id, e.g. alice" });
    const seatBoxes = creatures.map((c) => el("input", { type: "checkbox", value: c.id }));
    const links = keep ?? el("div", { class: "seat-links" });
    const linkFor = (token) => `${location.origin}${location.pathname}#encounter=${encodeURIComponent(seat.encounter)}&token=${encodeURIComponent(token)}`;
    const addLink = (label, token) => {
      const href = linkFor(token);
      links.append(el("div", { class: "seat-link", dataset: { seat: label } }, `${label}: `, el("a", { href, target: "_blank", rel: "noopener" }, href)));
    };
    return el("div", { class: "seats", dataset: { roster: rosterKey } }, el("h3", {}, "Seats"),
      el("div", { class: "gm-row" }, playerInput),
      el("div", { class: "gm-row" }, "Creatures:", creatures.map((c, i) => el("label", {}, seatBoxes[i], c.name))),
      el("div", { class: "gm-row" },
        el("button", { type: "button", dataset: { gm: "create_seat" }, onclick: async () => {
          const player = playerInput.value.trim();
          const chosen = seatBoxes.filter((b) => b.checked).map((b) => b.value);
          const result = await act("create_seat", { encounter: seat.encounter, player, creatures: chosen });
          if (result) {
            addLink(result.player, result.token);
            playerInput.value = "";
            for (const b of seatBoxes) b.checked = false;
          }
        } }, "Create seat link"),
        el("button", { type: "button", dataset: { gm: "spectator" }, onclick: async () => {
          const result = await act("create_spectator_link", { encounter: seat.encounter });
          if (result) addLink("spectators", result.token);
        } }, "Spectator link")),
      links);
  }

  // ---------------------------------------------------------------------------------
  // Start

  function start() {
    const watching = new URLSearchParams(location.hash.replace(/^#/, "")).has("watch"); // a public encounter, no token
    if (!seat.encounter || (!seat.token && !watching)) {
      $("no-link").hidden = false;
      setStatus("No table link", "offline");
      $("open-form").addEventListener("submit", (ev) => {
        ev.preventDefault();
        const data = new FormData(ev.target);
        const hash = new URLSearchParams({ encounter: data.get("encounter").trim(), token: data.get("token").trim() });
        location.hash = hash.toString();
        location.reload();
      });
      return;
    }
    window.addEventListener("hashchange", () => location.reload());
    connect();
  }

  start();
})();
