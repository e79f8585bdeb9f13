// The zonekeep web table: a browser client written from protocol/SPEC.md alone.
// Plain JavaScript, no framework, no build step; it talks only to the server that
// served it. Every address is relative to the page (``<prefix>/table/``), so the table
// works at a site's root and under a reverse proxy's path prefix alike: the websocket is
// ``<prefix>/ws`` (wss: on an https page). The link carries the seat: #encounter=ID&token=TOKEN.
"use strict";

(() => {
  const PROTOCOL = "1.1";
  const CLIENT = { name: "zonekeep-web-table", version: "0.2.0" };
  /** How many earlier events a fresh page asks for, to show the recent log. */
  const HISTORY = 200;
  /** Conditions the built-in rules know (docs/rules.md), offered by the GM's picker. */
  const KNOWN_CONDITIONS = [
    "blinded", "charmed", "deafened", "dodging", "frightened", "grappled", "incapacitated",
    "invisible", "paralyzed", "petrified", "poisoned", "prone", "restrained", "squeezing",
    "stunned", "unconscious", "stable", "dying", "defeated", "surrendered", "escaped",
  ];
  /** The conditions to offer: those the server's plugins declare (hello's
   * capabilities.conditions, since protocol 1.4, with their summaries as tooltips),
   * then the familiar labels no plugin declares (charmed, deafened, petrified). */
  function conditionChoices() {
    const declared = app.welcome?.capabilities?.conditions || [];
    const ids = new Set(declared.map((c) => c.id));
    return [
      ...declared.map((c) => ({ id: c.id, title: `${c.name}: ${c.summary}` })),
      ...KNOWN_CONDITIONS.filter((k) => !ids.has(k)).map((k) => ({ id: k, title: "a label the GM rules on" })),
    ];
  }
  const conditionOptions = () => conditionChoices().map((c) => el("option", { value: c.id, title: c.title }, c.id));
  const ABILITIES = ["str", "dex", "con", "int", "wis", "cha"];
  const DAMAGE_TYPES = ["acid", "bludgeoning", "cold", "fire", "force", "lightning", "necrotic",
    "piercing", "poison", "psychic", "radiant", "slashing", "thunder"];
  /** Side markers: a shape as well as a colour (friend and foe differ by more than hue). */
  const SIDE_MARKS = ["●", "▲", "■", "◆"];
  /** A zone holding more tokens than this shows them grouped ("Goblin ×9"). */
  const CROWDED = 6;

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

  /** Rebuild a part of the page, keeping the keyboard focus on the same control (found
   * again by its data- attributes) when it was inside. */
  function keepFocus(root, rebuild) {
    const active = document.activeElement;
    const inside = active && active !== document.body && root.contains(active);
    const data = inside ? { ...active.dataset } : null;
    const fieldName = inside ? active.getAttribute("name") : null;
    rebuild();
    if (!data || root.contains(active)) return;
    const entries = Object.entries(data);
    const match = entries.length
      ? [...root.querySelectorAll("button, input, select, summary, a")].find((node) => entries.every(([k, v]) => node.dataset[k] === v))
      : fieldName ? root.querySelector(`[name="${CSS.escape(fieldName)}"]`) : null;
    if (match) match.focus();
  }

  function svg(tag, attrs) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    return node;
  }

  function parseSeat(text) {
    const hash = text.includes("#") ? text.slice(text.indexOf("#") + 1) : text;
    const params = new URLSearchParams(hash.replace(/^#/, ""));
    return { encounter: params.get("encounter"), token: params.get("token") };
  }

  // ---------------------------------------------------------------------------------
  // The client's state

  const seat = parseSeat(location.hash);
  const app = {
    ws: null,
    nodeUrl: null, // the node "moved" sent us to (several nodes)
    moves: 0,
    nextId: 1,
    inFlight: new Map(), // id -> {resolve, reject, method}
    welcome: null,
    commands: new Map(), // command id -> capability entry
    pluginEvents: new Map(), // plugin event type -> its announcement (hello, since 1.4)
    role: null,
    player: null,
    state: null, // the last snapshot (the server's truth)
    lastSeq: 0,
    joined: false,
    prompts: new Map(), // decision id -> {decision, deadlineAt}
    turnTimer: null, // {creature, round, deadlineAt, seconds} of the last turn_timer notification
    attempts: 0,
    fatal: false,
    refreshing: false,
    refreshAgain: false,
    actions: null, // the `actions` reply for the active creature, when ours
    busy: false, // a command is in flight: further input is ignored until its reply
    sent: [], // the command types sent, in order (the browser tests read it)
    reconnectAt: 0,
    lines: new Map(), // seq -> {node, event} for the events shown in the log
    events: new Map(), // seq -> event: every event this page has seen (undo, undone lines)
    unresolved: new Set(), // seqs whose line named something not known yet
    openGroups: new Set(), // "zone|side|name" of the crowded zones' groups shown open
    floats: new Map(), // creature id -> {text, until}: a roll shown briefly by the token
    gmToken: null, // the creature whose GM actions are open
    attackOpen: null, // the attack whose targets are shown
    featureOpen: null, // the stat-block action whose targets or form are shown
    sound: false,
    waitingKey: "",
    nextSendAt: 0,
    pingTimer: null,
  };
  window.zonekeepTable = app; // for debugging (and tests) in the browser's console
  app.seatName = (by) => seatName(by); // chat.js names seats as the log does

  // ---------------------------------------------------------------------------------
  // Connection: requests matched by id, notifications by method, automatic reconnection

  function setStatus(text, kind) {
    const node = $("status");
    node.textContent = text;
    node.className = `status status-${kind}`;
    document.body.classList.toggle("offline", kind !== "online" && app.state !== null && !app.fatal);
  }

  /** A refusal or a problem: shown until the next change of state (or a new message). */
  function showError(message) {
    const node = $("error");
    node.textContent = message;
    node.hidden = false;
  }

  function clearError() {
    $("error").hidden = true;
    $("error").textContent = "";
    for (const node of document.querySelectorAll(".refusal")) node.remove();
  }

  // -- refusals beside the control that caused them, in a table's words --------------

  /** The control the user last pressed (a button, or the submit of a form): a refusal
   * of what it sent is shown beside it, not at the top of the page. */
  document.addEventListener("click", (ev) => {
    const control = ev.target instanceof Element ? ev.target.closest("button, [role=button], select, input") : null;
    if (control && !control.closest(".refusal")) {
      app.lastControl = control;
      app.lastControlAt = Date.now();
    }
  }, true);
  document.addEventListener("submit", (ev) => {
    app.lastControl = ev.submitter || ev.target.querySelector("button[type=submit]") || ev.target;
    app.lastControlAt = Date.now();
  }, true);

  /** The server's refusal as the table would say it: protocol words taken out. */
  function tableWords(err) {
    let text = err.message || "";
    text = text.replace(/\s*Send (?:it with )?[`']?force[`']?: ?true[^.]*\.?/i, "");
    text = text.replace(/^The encounter cannot end yet: /, "The fight is not over: ");
    const said = {
      not_your_turn: "It is not your turn.",
      decision_pending: "Wait a moment: a reaction or a tie is being decided first.",
      rate_limited: "That was too fast: wait a moment, then try again.",
      spectator_read_only: "Spectators watch: they cannot change anything.",
    }[err.wireName];
    return said || text;
  }

  /** The way out of a refusal, as a button, when there is one. */
  function wayOut(err, method, params) {
    if (method !== "command") return null;
    if (err.wireName === "threat_remains") {
      return { label: "End it anyway", run: () => command(params.type, { ...params.params, force: true }) };
    }
    if (err.wireName === "decision_pending") {
      return { label: "Show the prompt", run: () => $("prompts").scrollIntoView({ block: "nearest" }) };
    }
    if (err.wireName === "rate_limited") {
      return { label: "Try again", run: () => command(params.type, params.params) };
    }
    return null;
  }

  /** Show a refusal beside ``control`` (inside its form, prompt or row), or at the top
   * of the page when the control is gone. */
  function showRefusal(err, method, params, control) {
    const way = wayOut(err, method, params);
    const box = el("div", { class: "refusal", role: "alert", dataset: { error: err.wireName || "" } },
      el("span", {}, tableWords(err)),
      way ? el("button", { type: "button", class: "way-out", onclick: () => { box.remove(); way.run(); } }, way.label) : null,
      el("button", { type: "button", class: "dismiss", "aria-label": "Dismiss", onclick: () => box.remove() }, "×"));
    if (!control || !control.isConnected || control === document.body) {
      showError(tableWords(err));
      return;
    }
    const home = control.closest("form, .prompt, .gm-row, .gm-token-row, li, .turn-actions, .zone");
    if (home) home.append(box);
    else control.after(box);
  }

  class ServerError extends Error {
    constructor(error) {
      super(error.message);
      this.code = error.code;
      this.wireName = error.name;
      this.url = error.url; // "moved": the node that serves the encounter
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

  /** Send a request; if it is refused, say why beside the control that sent it. */
  async function act(method, params) {
    // What the user pressed just now; a request the page sends by itself has no control.
    const control = Date.now() - (app.lastControlAt || 0) < 3000 ? app.lastControl : null;
    clearError();
    try {
      return await request(method, params);
    } catch (err) {
      if (err instanceof ServerError) showRefusal(err, method, params, control);
      else showError(err.message);
      return null;
    }
  }

  /** Send one engine command; while it is in flight every other command is ignored
   * (a double click sends one move, not two). */
  async function command(type, params) {
    if (app.busy) return null;
    app.busy = true;
    document.body.classList.add("busy");
    app.sent.push(type);
    try {
      return await act("command", { encounter: seat.encounter, type, params });
    } finally {
      app.busy = false;
      document.body.classList.remove("busy");
    }
  }

  // The websocket beside the page: <prefix>/table/ -> <prefix>/ws, ws: or wss: as the page.
  function socketUrl() {
    if (app.nodeUrl) return app.nodeUrl; // another node serves the encounter ("moved")
    const url = new URL("../ws", location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    url.search = "";
    url.hash = "";
    return url.href;
  }

  function connect() {
    if (app.fatal) return;
    app.reconnectAt = 0;
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
      // The node it was sent to is gone: the next attempt goes through the page's own
      // node, which takes the encounter over or sends us on again.
      app.nodeUrl = null;
      app.joined = false;
      clearInterval(app.pingTimer);
      for (const pending of app.inFlight.values()) {
        pending.reject(new Error("The connection to the server was lost."));
      }
      app.inFlight.clear();
      if (app.fatal) return;
      app.attempts += 1;
      const delay = Math.min(10, 0.5 * 2 ** Math.min(app.attempts - 1, 5));
      app.reconnectWhy = ev.reason ? ` (${ev.reason})` : "";
      app.reconnectAt = Date.now() + delay * 1000;
      showReconnect();
      setTimeout(connect, delay * 1000);
    });
  }

  /** The offline banner counts down to the next attempt ("Reconnecting in 3 s"). */
  function showReconnect() {
    if (!app.reconnectAt) return;
    const left = Math.max(0, Math.ceil((app.reconnectAt - Date.now()) / 1000));
    const text = `Connection lost. Reconnecting in ${left} s…`;
    if ($("offline-banner").textContent === text) return; // a live region: said once a second at most
    setStatus(`Disconnected${app.reconnectWhy || ""}: reconnecting in ${left} s`, "offline");
    $("offline-banner").textContent = text;
  }

  async function greet(ws) {
    try {
      const welcome = await request("hello", { protocol: PROTOCOL, client: CLIENT });
      if (String(welcome.protocol).split(".")[0] !== PROTOCOL.split(".")[0]) {
        throw new Error(`The server speaks protocol ${welcome.protocol}, not ${PROTOCOL}.`);
      }
      app.welcome = welcome;
      app.commands = new Map(welcome.capabilities.commands.map((c) => [c.id, c]));
      // Plugin event types (protocol 1.4): a readable log line from their template.
      app.pluginEvents = new Map((welcome.capabilities.plugin_events || []).map((e) => [e.id, e]));
      const params = { encounter: seat.encounter, token: seat.token };
      if (app.state !== null) params.last_seq = app.lastSeq;
      app.prompts.clear(); // open decisions are sent again right after the reply
      const joined = await request("join", params);
      app.role = joined.role;
      app.player = joined.player;
      app.joined = true;
      document.dispatchEvent(new CustomEvent("zonekeep:joined", { detail: { role: app.role, player: app.player } }));
      app.attempts = 0;
      app.moves = 0;
      clearError(); // a connection problem has passed
      const who = app.role === "player" ? `player ${app.player}` : app.role === "gm" ? "GM" : "spectator";
      setStatus(`Connected as ${who}`, "online");
      if (joined.snapshot) {
        const first = app.state === null;
        app.state = joined.snapshot;
        app.lastSeq = joined.seq;
        await refreshActions();
        render();
        if (first) {
          logNote(`Joined “${joined.snapshot.name}” at event ${joined.seq}.`);
          await replayHistory(joined.seq);
        } else {
          logNote(`Rejoined at event ${joined.seq} (fresh snapshot).`);
        }
      } else {
        const base = params.last_seq;
        (joined.events || []).forEach((event, i) => logEvent(base + 1 + i, event));
        app.lastSeq = joined.seq;
        logNote(`Reconnected; caught up to event ${joined.seq}.`);
        scheduleRefresh();
      }
      startPing(ws);
      render();
    } catch (err) {
      if (err instanceof ServerError && err.wireName === "moved" && err.url && app.moves < 5) {
        moveTo(err.url, ws); // several nodes: follow it, the player never sees it
        return;
      }
      if (err instanceof ServerError) {
        if (["bad_token", "unknown_encounter", "unsupported_version", "encounter_archived"].includes(err.wireName)) {
          app.fatal = true;
          ws.close(1000);
          showBadLink(err.message);
        } else {
          showError(err.message);
        }
      }
    }
  }

  /** Several nodes (protocol 1.4): connect to ``url`` and join there, then drop ``old``
   * (its close starts no reconnect, as it is no longer ``app.ws``). */
  function moveTo(url, old) {
    app.moves += 1;
    app.nodeUrl = url;
    connect();
    old.close(1000);
  }

  /** The recent log for a fresh page: join again asking for the events after
   * ``seq - HISTORY`` (the server sends only what this seat may see). */
  async function replayHistory(seq) {
    const from = Math.max(0, seq - HISTORY);
    if (seq === 0) return;
    let joined;
    try {
      joined = await request("join", { encounter: seat.encounter, token: seat.token, last_seq: from });
    } catch {
      return;
    }
    if (!joined.events) return;
    const earlier = [];
    joined.events.forEach((event, i) => {
      const at = from + 1 + i;
      if (at <= seq) earlier.push([at, event]);
      else if (at === app.lastSeq + 1) applyEvent(at, event);
    });
    const log = $("log");
    const older = document.createDocumentFragment();
    for (const [at, event] of earlier) {
      if (!app.events.has(at)) appendEvent(older, at, event);
    }
    log.insertBefore(older, log.firstChild);
    markUndone();
    log.scrollTop = log.scrollHeight;
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
            fresh: true,
          });
          if (app.state) renderPrompts();
        }
        break;
      case "turn_timer":
        if (params.encounter === seat.encounter) {
          app.turnTimer = { creature: params.creature, round: params.round,
            deadlineAt: Date.now() + params.deadline_seconds * 1000,
            seconds: app.state?.options?.turn_seconds || params.deadline_seconds };
          if (app.state) renderTracker();
        }
        break;
      case "encounter_closed":
        // "moved": the node lost the encounter's lease; join again (with last_seq),
        // and the "moved" error leads to the node that serves it now.
        if (params.encounter === seat.encounter && params.reason === "moved" && app.ws) {
          app.moves = 0;
          moveTo(socketUrl(), app.ws);
        }
        break;
      case "snapshot":
        if (params.encounter === seat.encounter) {
          app.state = params.snapshot;
          app.lastSeq = Math.max(app.lastSeq, params.seq);
          clearError();
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
    applyEvent(seq, event);
  }

  function applyEvent(seq, event) {
    app.lastSeq = seq;
    logEvent(seq, event);
    if (event.type === "decision_resolved" && app.prompts.delete(event.decision)) renderPrompts();
    clearError(); // a refusal's cause has passed once the state changes
    showRollByToken(event);
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
      app.actions = await request("actions", { encounter: seat.encounter, creature: s.active });
    } catch {
      app.actions = null;
    }
  }

  // ---------------------------------------------------------------------------------
  // Reading the state

  const OUT = ["dead", "unconscious", "dying", "defeated", "surrendered", "escaped"];
  let unknownName = false; // set when a line names a creature this page does not know yet

  function creature(id) {
    return app.state?.creatures?.[id];
  }

  function name(id) {
    const c = creature(id);
    if (c) return c.name;
    if (id === "gm") return "the GM";
    unknownName = true;
    return "someone";
  }

  function zoneName(id) {
    const zone = app.state?.arena?.zones?.find((z) => z.id === id);
    return zone ? zone.name : String(id ?? "somewhere").replaceAll("_", " ");
  }

  function assetName(id) {
    const s = app.state;
    const asset = s?.arena?.assets?.find((a) => a.id === id) ?? s?.effects?.[id];
    return asset ? asset.name : String(id).replaceAll("_", " ");
  }

  function isMine(cid) {
    const c = creature(cid);
    if (!c || app.role === "spectator") return false;
    return app.role === "gm" || c.controller === app.player;
  }

  function isOut(c) {
    return c.hp === "down" || c.hp <= 0 || c.conditions.some((x) => OUT.includes(x));
  }

  function isDying(c) {
    return c.conditions.includes("dying") && !c.conditions.includes("stable");
  }

  /** Engagement partners still in the fight (a dying or defeated creature engages nobody). */
  function partners(pairs, cid) {
    return (pairs || []).filter((p) => p.includes(cid)).map((p) => (p[0] === cid ? p[1] : p[0]))
      .filter((other) => creature(other) && !isOut(creature(other)));
  }

  /** Each neighbouring zone once, with every link to it (two links may join two zones). */
  function linksFrom(zoneId) {
    const found = new Map();
    for (const link of app.state?.arena?.links || []) {
      let other = null;
      let dir = link.direction;
      if (link.a === zoneId) other = link.b;
      else if (link.b === zoneId) {
        other = link.a;
        if (dir !== "beside") dir = dir === "above" ? "below" : "above";
      }
      if (other === null) continue;
      if (!found.has(other)) found.set(other, { zone: other, dir, links: [] });
      found.get(other).links.push(link);
    }
    return [...found.values()];
  }

  // An enemy's hit points reach players and spectators as a word (max_hp is null then).
  function hpText(c) {
    // A word ("unhurt", "bloodied") is said as it is, not as "HP unhurt".
    return typeof c.hp === "string" ? c.hp[0].toUpperCase() + c.hp.slice(1)
      : `HP ${c.hp}/${c.max_hp}${c.temp_hp ? ` +${c.temp_hp} temp` : ""}`;
  }

  function sideIndex(side) {
    const sides = [...new Set(Object.values(app.state?.creatures || {}).map((c) => c.side))];
    return Math.max(0, sides.indexOf(side));
  }

  function sideMark(c) {
    const i = sideIndex(c.side);
    return [el("span", { class: `mark side-${i % 4}`, title: `Side: ${c.side}`, "aria-hidden": "true" }, SIDE_MARKS[i % 4]),
      el("span", { class: "sr-only" }, `${c.side}: `)];
  }

  /** A creature's timed condition effects (rounds left, the save that ends them). */
  function effectsOf(cid) {
    return Object.values(app.state?.condition_effects || {}).filter((e) => e.creature === cid);
  }

  function conditionBadges(c) {
    const effects = effectsOf(c.id);
    const badges = [];
    if (isDying(c)) badges.push(el("span", { class: "badge dying", title: "Dying: at 0 hit points, making death saves" }, "✚ dying"));
    for (const cond of c.conditions) {
      if (cond === "dying" && isDying(c)) continue;
      if (cond === "concentrating" && concentrationOf(c.id)) {
        badges.push(concentrationBadge(c.id));
        continue;
      }
      const effect = effects.find((e) => e.condition === cond);
      const parts = [cond];
      if (effect?.rounds) parts.push(`${effect.rounds} rd${effect.rounds === 1 ? "" : "s"}`);
      if (effect?.until) parts.push(`until ${effect.until} of ${effect.until_creature ? name(effect.until_creature) : "turn"}`);
      if (effect?.save) parts.push(`${effect.save.toUpperCase()} save${effect.save_dc ? ` DC ${effect.save_dc}` : ""}`);
      badges.push(el("span", { class: `badge cond${["defeated", "dead", "escaped", "surrendered"].includes(cond) ? " out" : ""}`,
        dataset: { condition: cond }, title: parts.join(", ") }, parts.join(" · ")));
    }
    return badges;
  }

  // ---------------------------------------------------------------------------------
  // Events in plain words, with their dice

  const rollText = (r) => (r ? `${r.total}${whyText(r)}` : "?");
  /** Why a roll had advantage, disadvantage or an expertise die, in words, from the
   * roll's sources ("advantage:flanking: …", "disadvantage:squeezing"). */
  function whyText(r) {
    const sources = r.sources || [];
    if (!sources.length) return "";
    const said = { advantage: [], disadvantage: [], expertise: [], penalty: [] };
    for (const src of sources) {
      const at = src.indexOf(":");
      const kind = at < 0 ? "" : src.slice(0, at);
      if (kind in said) said[kind].push(src.slice(at + 1).trim());
    }
    const parts = Object.entries(said).filter(([, why]) => why.length).map(([kind, why]) => `${kind}: ${why.join(", ")}`);
    return parts.length ? ` (${parts.join("; ")})` : "";
  }
  /** Why a hit was critical: a natural 20, or a helpless target attacked from close by. */
  const criticalWhy = (e) => (e.roll?.kept?.length === 1 && e.roll.kept[0] === 20 ? "a natural 20"
    : `${name(e.target)} cannot defend itself and is attacked from close by`);
  const list = (ids) => (ids.length ? ids.map(name).join(", ") : "nobody");
  // An option is a creature, an initiative group (said by its members' names, as the
  // tie's prompt says it: never the group's id), or a word.
  const optionText = (o) => {
    if (creature(o)) return creature(o).name;
    const members = Object.values(app.state?.creatures || {}).filter((c) => c.group === o);
    if (members.length) {
      const names = members.map((c) => c.name);
      return names.length <= 3 ? names.join(", ") : `${names.slice(0, 2).join(", ")} and ${names.length - 2} more`;
    }
    return String(o).replaceAll("_", " ");
  };

  const DESCRIBE = {
    action_taken: (e) => (e.action === "attack" || e.action === "opportunity_attack" ? null
      : `${name(e.creature)} uses ${e.action.replaceAll("_", " ")} (${e.cost}).`),
    adjacency_ended: (e) => `${name(e.creature)} is no longer beside ${name(e.ally)}.`,
    adjacency_taken: (e) => `${name(e.creature)} stands ${e.back_to_back ? "back-to-back with" : "beside"} ${name(e.ally)}.`,
    asset_changed: (e) => (e.hidden === true ? `${assetName(e.asset)} is hidden from the players.`
      : e.hidden === false ? `${assetName(e.asset)} is revealed.` : `${assetName(e.asset)} changes.`),
    asset_placed: (e) => `${e.asset.name} appears in ${zoneName(e.asset.zone)}${e.hidden ? " (hidden from the players)" : ""}.`,
    asset_removed: (e) => `${assetName(e.asset)} is gone${e.reason ? ` (${e.reason})` : ""}.`,
    attack_made: (e) => `${name(e.attacker)} attacks ${name(e.target)} with ${e.attack}${e.reaction ? " (opportunity attack)" : ""}: ${rollText(e.roll)} against AC ${e.target_ac}, ${e.critical ? `a critical hit (${criticalWhy(e)})` : e.hit ? "a hit" : "a miss"}.`,
    communicated: (e) => `${name(e.creature)} says: “${e.text}”`,
    condition_applied: (e) => `${name(e.creature)} is ${e.condition}.`,
    condition_effect_applied: (e) => `${name(e.effect.creature)} is ${e.effect.condition}${e.effect.rounds ? ` for ${e.effect.rounds} round(s)` : ""}.`,
    condition_effect_ended: (e) => `${name(e.creature)}'s ${e.condition} ends${e.reason ? ` (${e.reason})` : ""}.`,
    condition_effect_ticked: (e) => `${name(e.creature)}: ${e.rounds} round(s) left.`,
    condition_removed: (e) => `${name(e.creature)} is no longer ${e.condition}.`,
    contest_rolled: (e) => `${name(e.creature)} (${rollText(e.roll)}) against ${name(e.target)} (${rollText(e.target_roll)}): ${e.won ? "wins" : "loses"}.`,
    creature_added: (e) => `${e.creature.name} joins the fight.`,
    damaged: (e) => `${name(e.creature)} takes ${e.amount}${e.damage_type ? ` ${e.damage_type}` : ""} damage${(e.steps || []).length ? ` (${e.raw}${e.raw_type ? ` ${e.raw_type}` : ""}: ${e.steps.map((st) => `${st.kind} ${st.source} → ${st.amount}`).join(", ")})` : ""} (HP ${e.hp}).`,
    condition_prevented: (e) => `${name(e.creature)} is immune to being ${e.condition}.`,
    dashed: (e) => `${name(e.creature)} dashes.`,
    decision_opened: (e) => `Waiting on ${e.decision.controller === "gm" ? "the GM" : e.decision.controller}: ${e.decision.prompt}`,
    decision_resolved: (e) => `Decided${e.defaulted ? " by default" : ` by ${e.by === "gm" ? "the GM" : e.by}`}: ${e.choice.map(optionText).join(", ")}.`,
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
    temp_hp_changed: (e) => `${name(e.creature)} has ${e.temp_hp ?? "some"} temporary hit points${e.source === "damage" ? " left" : ""}.`,
    initiative_rolled: (e) => `Initiative: ${e.entries.map((x) => `${list(x.members)} ${x.total}`).join(", ")}.`,
    interacted: (e) => `${name(e.creature)} interacts with ${e.object}.`,
    maneuver_ended: () => null,
    maneuver_started: () => null,
    maneuver_updated: () => null,
    moved: (e) => `${name(e.creature)} moves ${e.feet} ft (${e.mode}).`,
    movement_spent: (e) => `${name(e.creature)} spends ${e.feet} ft of movement (${e.reason}).`,
    note_added: (e) => `Note: ${e.note.text}`,
    note_removed: () => "A note was removed.",
    override_applied: (e) => {
      if (e.field === "hidden") {
        const c = creature(e.creature);
        return e.value ? `${name(e.creature)} is hidden from the players.`
          : `${name(e.creature)} appears${c?.zone ? ` in ${zoneName(c.zone)}` : ""}.`;
      }
      return `The GM sets ${name(e.creature)}'s ${e.field.replaceAll("_", " ")} to ${typeof e.value === "string" ? e.value : JSON.stringify(e.value)}.`;
    },
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
    zone_affected: (e) => (!e.damage && e.roll
      ? `${e.source || "An effect"} is aimed at ${zoneName(e.zone)}: ${rollText(e.roll)}.`
      : `${zoneName(e.zone)} is hit${e.damage ? `: ${e.damage}${e.damage_type ? ` ${e.damage_type}` : ""} damage${e.roll ? ` (${rollText(e.roll)})` : ""}` : ""}.`),
    zone_entered: (e) => `${name(e.creature)} enters ${zoneName(e.to_zone)} from ${zoneName(e.from_zone)}${e.forced ? " (forced)" : ""}.`,
    hidden: () => "Something happens out of sight.",
    check_rolled: (e) => `${name(e.creature)} ${e.save ? `${e.ability.toUpperCase()} save` : `${e.ability.toUpperCase()}${e.skill ? ` (${e.skill.replaceAll("_", " ")})` : ""} check`}: ${rollText(e.roll)}${e.dc ? ` against DC ${e.dc}, ${e.success ? "success" : "failure"}` : ""}.`,
    chat_sent: (e) => `${seatName(e.by)}${e.to ? ` whispers to ${seatName(e.to)}` : " says"}: “${e.text}”`,
    dice_rolled: (e) => `${seatName(e.by)} rolls${e.label ? ` for ${e.label}` : ""}${e.private ? " (private)" : ""}: ${e.roll.total}.`,
    plugin_disabled: (e) => `Plugin ${e.plugin} is switched off: ${e.reason}`,
    plugin_overran: (e) => `Plugin ${e.plugin} took ${e.ms} ms in ${e.hook} (budget ${e.budget_ms} ms).`,
  };


  /** A plugin event's line, from the template `hello` announced for its type: each
   * {field} is the payload's value (a creature id as its name). */
  function pluginLine(event) {
    const info = app.pluginEvents?.get(event.type);
    const data = event.data || {};
    if (!info || !info.template) return info?.description || event.type;
    return info.template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, field) => {
      if (!(field in data)) return whole;
      const value = data[field];
      if (typeof value !== "string") return JSON.stringify(value);
      return creature(value) ? name(value) : value;
    });
  }

  /** A seat as the table names it: "the GM", or the player id. */
  function seatName(by) {
    return by === "gm" ? "the GM" : String(by);
  }

  function describe(event) {
    const fn = DESCRIBE[event.type];
    if (!fn && event.type.includes(".")) return pluginLine(event);
    if (!fn) return event.type.replaceAll("_", " "); // unknown event types are shown as their type
    try {
      // A sentence that quotes one ending in a full stop ("… a long night.") ends once.
      // (null: an event nobody needs to read, no line at all.)
      const text = fn(event);
      return text === null || text === undefined ? null : String(text).replace(/([^.])\.\.$/, "$1.");
    } catch {
      return event.type.replaceAll("_", " ");
    }
  }

  /** The dice of one roll: every face (the kept one marked when two d20s are rolled),
   * the expertise die, the modifier and the total. */
  function diceNode(roll, label) {
    if (!roll || !Array.isArray(roll.dice)) return null;
    const kept = [...(roll.kept || [])];
    const two = roll.dice.length > kept.length;
    const faces = roll.dice.map((face) => {
      const i = kept.indexOf(face);
      const isKept = i >= 0;
      if (isKept) kept.splice(i, 1);
      return el("span", { class: `die${two ? (isKept ? " kept" : " dropped") : ""}`,
        title: two ? (isKept ? "kept" : "not kept") : "" }, String(face));
    });
    const adv = roll.advantage && roll.advantage !== "none" ? el("span", { class: "adv" }, roll.advantage) : null;
    const expertise = roll.expertise ? el("span", { class: "die expertise", title: `expertise d${roll.expertise}` }, `d${roll.expertise}: ${roll.expertise_roll}`) : null;
    const penalty = roll.penalty ? el("span", { class: "die penalty", title: `penalty d${roll.penalty}` }, `− d${roll.penalty}: ${roll.penalty_roll}`) : null;
    const mod = roll.modifier ? ` ${roll.modifier > 0 ? "+" : "−"} ${Math.abs(roll.modifier)}` : "";
    return el("span", { class: "roll", dataset: { roll: label }, title: roll.expr || "" },
      el("span", { class: "roll-label" }, `${label} ${roll.expr || ""}`), " ", adv, faces, expertise, penalty, mod, ` = ${roll.total}`);
  }

  function rollsOf(event) {
    switch (event.type) {
      case "attack_made": return [["to hit", event.roll]];
      case "damaged": return [["damage", event.roll]];
      case "save_made": return [["save", event.roll]];
      case "tumble_attempted": return [["check", event.roll]];
      case "contest_rolled": return [[name(event.creature), event.roll], [name(event.target), event.target_roll]];
      case "initiative_rolled": return (event.entries || []).map((x) => [list(x.members), x.roll]);
      case "dice_rolled": return [["roll", event.roll]];
      case "check_rolled": return [[event.save ? "save" : "check", event.roll]];
      default: return [];
    }
  }

  function logLine(item) {
    const log = $("log");
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 30;
    log.append(item);
    while (log.children.length > 500) log.firstChild.remove();
    if (atBottom) log.scrollTop = log.scrollHeight;
  }

  /** The list item for one event, or null for events nobody needs to read. */
  function lineFor(seq, event) {
    unknownName = false;
    const text = describe(event);
    if (text === null) return null;
    const rolls = rollsOf(event).map(([label, roll]) => diceNode(roll, label)).filter(Boolean);
    const item = el("li", { dataset: { seq: String(seq), type: event.type } },
      el("span", { class: "seq" }, `#${seq}`), " ", el("span", { class: "text" }, text),
      rolls.length ? el("span", { class: "dice" }, rolls) : null,
      app.role === "gm" ? el("button", { type: "button", class: "rewind-here", dataset: { rewind: String(seq) },
        title: `Rewind the encounter to right after event ${seq}`, "aria-label": `Rewind to event ${seq}`,
        onclick: () => {
          // A rewind from an old line may undo much, on every screen: ask first.
          const later = [...app.events.keys()].filter((s) => s > seq && !undoneSeqs().has(s)).length;
          if (later && window.confirm(`Rewind to #${seq}? This undoes ${later} later event${later === 1 ? "" : "s"} on every screen.`)) rewindTo(seq);
        } }, "↶") : null);
    app.lines.set(seq, { node: item, event });
    if (unknownName) app.unresolved.add(seq);
    return item;
  }

  /** Append one event's line to ``parent`` (the log, or a fragment of older lines);
   * consecutive hidden events collapse into one line ("… out of sight (×5)"). */
  function appendEvent(parent, seq, event) {
    app.events.set(seq, event);
    // Other panels (chat.js) follow the events this page sees, live and replayed.
    document.dispatchEvent(new CustomEvent("zonekeep:event", { detail: { seq, event } }));
    if (event.type === "hidden") {
      const last = parent.lastElementChild;
      if (last && last.dataset.type === "hidden") {
        const count = Number(last.dataset.count || "1") + 1;
        last.dataset.count = String(count);
        last.querySelector(".text").textContent = `Something happens out of sight (×${count}).`;
        app.lines.set(seq, { node: last, event });
        return null;
      }
    }
    const item = lineFor(seq, event);
    if (item !== null) parent.append(item);
    return item;
  }

  function logEvent(seq, event) {
    const log = $("log");
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 30;
    appendEvent(log, seq, event);
    while (log.children.length > 500) log.firstChild.remove();
    if (atBottom) log.scrollTop = log.scrollHeight;
    if (event.type === "rewound") markUndone();
  }

  function logNote(text) {
    logLine(el("li", { class: "note" }, text));
  }

  /** Lines undone by a rewind are struck through (they stay: the log is the audit trail). */
  function markUndone() {
    const undone = undoneSeqs();
    for (const [at, { node }] of app.lines) {
      if (node.dataset.seq !== String(at)) continue; // a collapsed hidden line
      const off = undone.has(at);
      node.classList.toggle("undone", off);
      if (off) node.setAttribute("title", "Undone by a rewind");
      else node.removeAttribute("title");
    }
  }

  /** The seqs a later rewind undid. */
  function undoneSeqs() {
    const undone = new Set();
    const rewinds = [...app.events.entries()].filter(([, e]) => e.type === "rewound").sort((a, b) => b[0] - a[0]);
    for (const [at, event] of rewinds) {
      if (undone.has(at)) continue;
      for (let s = event.to_seq + 1; s < at; s++) undone.add(s);
    }
    return undone;
  }

  /** Lines that named a creature not known yet (a reveal arrives before the snapshot
   * that shows the creature) are worded again once the state knows it. */
  function resolveLines() {
    for (const seq of [...app.unresolved]) {
      const entry = app.lines.get(seq);
      app.unresolved.delete(seq);
      if (!entry) continue;
      unknownName = false;
      const text = describe(entry.event);
      if (text !== null && entry.node.dataset.type !== "hidden") entry.node.querySelector(".text").textContent = text;
      if (unknownName) app.unresolved.add(seq);
    }
  }

  /** A roll shows briefly by the token it concerns. */
  function showRollByToken(event) {
    let who = null;
    let text = null;
    if (event.type === "attack_made") {
      who = event.target;
      text = `🎲 ${event.roll?.total ?? "?"} vs AC ${event.target_ac}: ${event.critical ? "critical!" : event.hit ? "hit" : "miss"}`;
    } else if (event.type === "damaged") {
      who = event.creature;
      text = `−${event.amount}${event.roll ? ` (${event.roll.dice.join("+")})` : ""}`;
    } else if (event.type === "save_made") {
      who = event.creature;
      text = `🎲 ${event.roll?.total ?? "?"} save: ${event.success ? "success" : "failure"}`;
    } else if (event.type === "healed") {
      who = event.creature;
      text = `+${event.amount}`;
    }
    if (!who) return;
    const prior = app.floats.get(who);
    const joined = prior && prior.until > Date.now() ? `${prior.text} · ${text}` : text;
    app.floats.set(who, { text: joined, until: Date.now() + 6000 });
    setTimeout(() => {
      if (app.state) renderMap();
    }, 6100);
  }

  async function rewindTo(seq) {
    if (seq >= app.lastSeq) return;
    await act("rewind", { encounter: seat.encounter, to_seq: seq });
  }

  // Events that begin a step a person took (a command): "Undo last" goes back to just before the latest.
  // Only events a command opens with count (not their consequences: a hit's damage, a
  // defeat, an engagement ended).
  const STEP_START = new Set(["action_taken", "maneuver_started", "turn_ended", "decision_resolved",
    "override_applied", "condition_effect_applied", "surprise_determined", "positions_established",
    "initiative_rolled", "readied", "communicated", "hazard_added", "hazard_removed", "note_added",
    "note_removed", "encounter_continued", "creature_added", "group_order_set"]);

  function undoLast() {
    const undone = undoneSeqs();
    const seqs = [...app.events.keys()].filter((s) => !undone.has(s)).sort((a, b) => b - a);
    for (const s of seqs) {
      const event = app.events.get(s);
      if (event.type === "rewound" || !STEP_START.has(event.type) || s <= 1) continue;
      // Go back over the events of the same step that came right before (an
      // action_taken before its maneuver, a dash before an entry).
      let start = s;
      while (app.events.has(start - 1) && !undone.has(start - 1)
        && ["action_taken", "maneuver_started", "dashed"].includes(app.events.get(start - 1).type)) start -= 1;
      return rewindTo(start - 1);
    }
    return null;
  }

  // ---------------------------------------------------------------------------------
  // Rendering

  function render() {
    const s = app.state;
    if (!s) return;
    $("table").hidden = false;
    $("encounter-name").textContent = s.name;
    $("encounter-name").title = s.name;
    const panel = gmTokenBox();
    const typing = panel.contains(document.activeElement) ? document.activeElement : null;
    renderMap();
    placeGmToken();
    if (typing && !typing.isConnected) typing.focus();
    else if (typing && document.activeElement !== typing) typing.focus();
    renderTracker();
    renderTurn();
    renderPrompts();
    renderGm();
    resolveLines();
    renderWaiting();
    renderDice();
    renderGlance();
  }

  /** At a glance (a phone shows it at the top, in the dock; a wide screen has the
   * tracker beside the map instead): whose turn it is or that the encounter has ended,
   * this seat's own creatures' hit points, and the last line of the log. */
  function renderGlance() {
    const s = app.state;
    const box = $("glance");
    const phase = { surprise: "Setting up", positions: "Setting up", initiative: "Rolling initiative" }[s.phase];
    const turn = s.phase === "ended" ? `The encounter has ended${s.ended_reason ? `: ${s.ended_reason}` : "."}`
      : s.phase === "turns" ? `Round ${s.round} · ${s.active ? `${name(s.active)}'s turn` : "between turns"}` : phase || s.phase;
    const mine = app.role === "player" ? Object.values(s.creatures).filter((c) => c.controller === app.player) : [];
    const lines = [...$("log").querySelectorAll("li[data-seq] .text, li.note")];
    const last = lines.length ? lines[lines.length - 1].textContent : "";
    box.hidden = false;
    // (replaceChildren would write a null as the word "null": the parts left out are dropped.)
    box.replaceChildren(...[
      el("div", { class: `glance-turn${s.phase === "ended" ? " ended" : ""}`, dataset: { glance: "turn" } }, turn),
      mine.length ? el("div", { class: "glance-mine", dataset: { glance: "mine" } },
        mine.map((c) => el("span", { class: "glance-hp" }, `${c.name} ${hpText(c)}`, concentrationOf(c.id) ? [" ", concentrationBadge(c.id)] : null))) : null,
      last ? el("div", { class: "glance-log muted", dataset: { glance: "log" }, title: last }, last) : null].filter(Boolean));
  }

  // -- attention: title, favicon and an optional sound while something waits on this seat

  function favicon(alert) {
    const fill = alert ? "%23b3261e" : "%237b3f1d";
    const mark = alert ? "!" : "z";
    return `data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><circle cx='8' cy='8' r='8' fill='${fill}'/><text x='8' y='12' font-size='11' text-anchor='middle' fill='white' font-family='sans-serif'>${mark}</text></svg>`;
  }

  function beep() {
    try {
      const ctx = new AudioContext();
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = 660;
      gain.gain.value = 0.08;
      osc.connect(gain).connect(ctx.destination);
      osc.start();
      osc.stop(ctx.currentTime + 0.25);
    } catch {
      // no audio here: the title and the favicon still say it
    }
  }

  function renderWaiting() {
    const s = app.state;
    if (!s) return;
    // The GM may answer any decision, but only the GM's own ones wait on the GM.
    const me = app.role === "gm" ? "gm" : app.player;
    const mine = [...app.prompts.values()].filter(({ decision }) => decision.controller === me);
    const myTurn = s.phase === "turns" && s.active && isMine(s.active) && (app.role !== "gm" || creature(s.active)?.controller === "gm");
    let waiting = "";
    if (mine.length) waiting = "Decide";
    else if (myTurn) waiting = `${name(s.active)}'s turn`;
    document.title = waiting ? `(!) ${waiting} — ${s.name}` : `${s.name} — zonekeep`;
    $("favicon").href = favicon(Boolean(waiting));
    document.body.classList.toggle("waiting", Boolean(waiting));
    const key = `${waiting}|${mine.map((p) => p.decision.id).join(",")}|${s.round}`;
    if (waiting && key !== app.waitingKey && app.sound) beep();
    if (waiting && key !== app.waitingKey) {
      // Bring the prompt, or the turn's controls, into view (they are pinned on wide screens).
      const target = mine.length ? $("prompts-panel") : $("turn-panel");
      if (!target.hidden) target.scrollIntoView({ block: "nearest" });
    }
    app.waitingKey = waiting ? key : "";
  }

  // ---------------------------------------------------------------------------------
  // Dice: the snapshot's commitment, and once the seed is revealed this page checks
  // every roll itself (dice.js, Web Crypto) instead of trusting the server.

  function diceBadge(text, kind, title) {
    const node = $("dice");
    node.hidden = false;
    node.textContent = text;
    node.className = `dice-badge dice-${kind}`;
    node.title = title || text; // cut short on a phone: the whole text on hover
  }

  function renderDice() {
    const dice = app.state && app.state.dice;
    if (!dice) {
      $("dice").hidden = true;
      return;
    }
    if (dice.mode === "seeded") {
      diceBadge("seeded dice", "seeded", `Rolls follow the public seed “${dice.seed}”: not fair dice.`);
      return;
    }
    if (!dice.revealed) {
      diceBadge(`Fair dice · commitment ${dice.commitment.slice(0, 12)}…`, "committed",
        `SHA-256 of the secret seed: ${dice.commitment}. The seed is revealed when the encounter ends.`);
      return;
    }
    const key = `${dice.commitment}@${app.lastSeq}`;
    if (app.diceChecked === key) return;
    app.diceChecked = key;
    diceBadge("Checking the dice…", "checking");
    checkDice(key).catch((err) => diceBadge(`Dice not checked: ${err.message}`, "failed"));
  }

  async function checkDice(key) {
    if (!window.zonekeepDice || !(window.crypto && window.crypto.subtle)) {
      diceBadge("Dice not checked: this browser has no Web Crypto here", "failed");
      return;
    }
    // The whole log as this seat may see it: a join from event 0 (the seat stays joined).
    const joined = await request("join", { encounter: seat.encounter, token: seat.token, last_seq: 0 });
    if (!joined.events) {
      diceBadge("Dice not checked: the server no longer keeps the whole log", "failed");
      return;
    }
    const log = joined.events.map((event, i) => [i + 1, event]);
    try {
      const report = await window.zonekeepDice.verifyLog(log, { partial: app.role !== "gm" });
      if (app.diceChecked !== key) return;
      const hidden = report.hidden ? ` (${report.hidden} hidden from this seat)` : "";
      const undone = report.undone.reduce((n, [, c]) => n + c.length, 0);
      diceBadge(`Dice verified: ${report.rolls} rolls${hidden}`, "verified",
        `Every roll recomputed here from the revealed seed(s) and ${report.contributions} ` +
        `contribution(s); ${undone} roll(s) undone by GM rewinds.`);
      app.diceReport = report;
    } catch (err) {
      if (app.diceChecked !== key) return;
      diceBadge(`Dice NOT verified: ${err.message}`, "failed");
      app.diceReport = { error: err.message };
    }
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
    for (const zone of arena.zones) {
      if (cells.has(zone.id)) continue;
      const maxX = Math.max(-1, ...[...cells.values()].map(([x]) => x));
      place(zone.id, cells.size ? maxX + 1 : 0, 0, 1, 0);
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

  /** The creature whose turn it is, when this seat plays it. */
  function myActive() {
    const s = app.state;
    if (!s || s.phase !== "turns" || !s.active || !isMine(s.active)) return null;
    return creature(s.active) ?? null;
  }

  function movementLeft(c) {
    const r = app.state.resources;
    if (!r) return 0;
    const walk = c.speeds?.walk ?? Math.max(0, ...Object.values(c.speeds || {}));
    return Math.max(0, walk * (1 + r.dashes) - r.movement_spent);
  }

  /** Why ``c`` cannot move at all now, or null. */
  function cannotMove(c) {
    if (isOut(c)) return `${c.name} is ${isDying(c) ? "dying" : "out of the fight"}.`;
    if (app.state.surprised.includes(c.id)) return `${c.name} is surprised.`;
    for (const cond of ["grappled", "restrained", "paralyzed", "petrified", "stunned", "unconscious", "incapacitated"]) {
      if (c.conditions.includes(cond)) return `${c.name} is ${cond}.`;
    }
    if (movementLeft(c) <= 0) return `${c.name} has no movement left to enter another zone.`;
    return null;
  }

  /** zone id -> {ok, cost, why} for the creature whose turn this seat plays: from the
   * server's `actions` details when it sends them, else worked out from the snapshot. */
  function zoneChoices() {
    const me = myActive();
    const out = new Map();
    if (!me) return out;
    const detail = actionDetail("enter");
    const fromServer = detail && Array.isArray(detail.zones);
    const blocked = cannotMove(me);
    for (const zone of app.state.arena.zones) {
      if (zone.id === me.zone) continue;
      if (fromServer) {
        const z = detail.zones.find((x) => x.zone === zone.id);
        out.set(zone.id, z ? { ok: true, cost: z.cost_feet } : { ok: false, why: detail.available === false ? detail.message : `${zone.name} cannot be entered from here now.` });
        continue;
      }
      const near = linksFrom(me.zone).find((n) => n.zone === zone.id);
      if (blocked) out.set(zone.id, { ok: false, why: blocked });
      else if (!near) out.set(zone.id, { ok: false, why: `${zone.name} is not adjacent to ${zoneName(me.zone)}.` });
      else if (!near.links.some((l) => l.clear && (l.mode !== "fly" || me.speeds?.fly))) {
        out.set(zone.id, { ok: false, why: near.links.every((l) => l.mode === "fly") ? `Reaching ${zone.name} needs a flying speed.`
          : `There is no clear path from ${zoneName(me.zone)} to ${zone.name}.` });
      } else out.set(zone.id, { ok: true, cost: movementLeft(me) });
    }
    return out;
  }

  function renderMap() {
    const now = Date.now();
    const floats = [...app.floats.entries()].filter(([, f]) => f.until > now);
    const key = JSON.stringify([app.state, app.actions?.details ?? null, app.role, app.player, floats]);
    if (key === app.mapKey) return; // nothing changed: keep the nodes (and the focus, the hover)
    app.mapKey = key;
    keepFocus($("map"), drawMap);
  }

  function drawMap() {
    const s = app.state;
    const arena = s.arena;
    $("arena-name").textContent = arena.name;
    const cells = layout(arena);
    const me = myActive();
    const choices = zoneChoices();
    const map = $("map");
    const lines = svg("svg", { class: "links", "aria-hidden": "true", focusable: "false" });
    map.replaceChildren(lines);
    // A battle map (protocol 1.6): the image under the zones, each zone's box at its shape.
    const onMap = Boolean(arena.map && arena.zones.some((z) => z.shape));
    map.classList.toggle("on-map", onMap);
    if (onMap) drawMapImage(map, arena);
    for (const zone of arena.zones) {
      const [col, row] = cells.get(zone.id);
      const choice = choices.get(zone.id);
      const classes = ["zone"];
      if (zone.difficult) classes.push("difficult");
      if (me && zone.id === me.zone) classes.push("current");
      if (choice?.ok) classes.push("reachable");
      else if (choice) classes.push("unreachable");
      const near = linksFrom(zone.id).map((n) => {
        const all = [...new Set(n.links.map((l) => l.mode))];
        const notes = all.length > 1 ? [all.join(" or ")] : all.filter((m) => m !== "walk");
        if (n.links.every((l) => !l.clear)) notes.push("blocked");
        if (n.links.every((l) => l.blocks_sight)) notes.push("no line of sight");
        return `${zoneName(n.zone)} ${n.dir}${notes.length ? ` (${notes.join(", ")})` : ""}`;
      });
      const assets = [...arena.assets, ...Object.values(s.effects || {})].filter((a) => a.zone === zone.id);
      const tokens = Object.values(s.creatures).filter((c) => c.zone === zone.id);
      const costText = choice ? (choice.ok ? `Enter: ${choice.cost} ft` : `Cannot enter: ${choice.why}`) : "";
      // The accessible name starts with the words shown ("Kitchen 30 ft"), then says
      // more, each thing once ("Kitchen 30 ft: enter for 30 ft" said the cost twice).
      const label = choice ? `${zone.name} ${choice.ok ? `${choice.cost} ft: ${me.name} can enter` : `✕: ${costText}`}` : null;
      const button = el("button", { type: "button", class: "zone-button", dataset: { enter: zone.id },
        "aria-label": label, title: choice ? costText : zone.description || zone.name,
        "aria-disabled": choice && !choice.ok ? "true" : null,
        onclick: () => (choice?.ok ? enterZone(zone.id) : choice ? showError(choice.why) : null) },
      el("span", { class: "zone-name" }, zone.name), choice ? " " : null,
      choice ? el("span", { class: `zone-cost${choice.ok ? "" : " no"}` }, choice.ok ? `${choice.cost} ft` : "✕") : null);
      const crowded = tokens.length > CROWDED;
      const box = el("div", {
        class: classes.join(" ") + (crowded ? " crowded" : ""),
        dataset: { zone: zone.id },
        role: "group",
        "aria-label": zone.name,
        onclick: (ev) => {
          if (ev.target.closest("button, a, input, select, summary, details, .gm-token")) return;
          if (choice?.ok) enterZone(zone.id);
        },
        // A dragged token is dropped only where its zone button would take it.
        ondragover: choice?.ok ? (ev) => { ev.preventDefault(); ev.dataTransfer.dropEffect = "move"; } : null,
        ondrop: choice?.ok ? (ev) => {
          ev.preventDefault();
          if (ev.dataTransfer.getData("text/plain") === me?.id) enterZone(zone.id);
        } : null,
      },
      el("div", { class: "zone-head" }, button,
        el("span", { class: "zone-size" }, `${zone.size} ft · cap ${zone.capacity}${zone.difficult ? " · difficult" : ""}`)),
      el("div", { class: "zone-links" }, near.join(" · ")),
      assets.length ? el("ul", { class: "assets" }, assets.map((a) => el("li", { title: a.description || "" }, `${a.name} (${a.kind})`))) : null,
      el("div", { class: "tokens" }, crowded ? compactTokens(tokens, zone.id) : tokens.map(renderToken)),
      choice ? el("div", { class: choice.ok ? "zone-hint" : "zone-hint no" }, choice.ok ? `${me.name} can enter: ${choice.cost} ft` : choice.why) : null);
      box.style.gridColumn = String(col); // CSSOM, not a style attribute (the CSP forbids those)
      box.style.gridRow = String(row);
      if (onMap && zone.shape) placeOnMap(box, zone.shape, arena.map);
      map.append(box);
    }
    const unplaced = Object.values(s.creatures).filter((c) => !c.zone);
    $("unplaced").textContent = unplaced.length ? `Not placed yet: ${unplaced.map((c) => c.name).join(", ")}` : "";
    drawLinks();
  }

  /** The map image and the zones' outlines (rect or polygon, in the image's pixels),
   * under the zones' boxes; pinch-zoom and pan on the map (zoomable). */
  function drawMapImage(map, arena) {
    const { image, width, height } = arena.map;
    map.style.aspectRatio = `${width} / ${height}`;
    const outlines = svg("svg", { class: "shapes", viewBox: `0 0 ${width} ${height}`,
      preserveAspectRatio: "none", "aria-hidden": "true", focusable: "false" });
    for (const zone of arena.zones) {
      if (zone.shape?.rect) {
        const [x, y, w, h] = zone.shape.rect;
        outlines.append(svg("rect", { x, y, width: w, height: h }));
      } else if (zone.shape?.polygon) {
        outlines.append(svg("polygon", { points: zone.shape.polygon.map((p) => p.join(",")).join(" ") }));
      }
    }
    map.prepend(el("img", { class: "map-image", src: `../images/${image}`, alt: "", draggable: "false" }), outlines);
    zoomable(map);
  }

  /** A zone's box over the bounding box of its shape, in percent of the map. */
  function placeOnMap(box, shape, frame) {
    const points = shape.rect ? [[shape.rect[0], shape.rect[1]], [shape.rect[0] + shape.rect[2], shape.rect[1] + shape.rect[3]]] : shape.polygon;
    const xs = points.map((p) => p[0]);
    const ys = points.map((p) => p[1]);
    const pct = (v, of) => `${(100 * v) / of}%`;
    box.classList.add("placed");
    box.style.left = pct(Math.min(...xs), frame.width);
    box.style.top = pct(Math.min(...ys), frame.height);
    box.style.width = pct(Math.max(...xs) - Math.min(...xs), frame.width);
    box.style.height = pct(Math.max(...ys) - Math.min(...ys), frame.height);
  }

  /** Pinch-zoom (two pointers) and pan (one) of the map, as a CSS transform; a pointer
   * that starts on a button or a token is left to it. Once per map element. */
  function zoomable(map) {
    if (map.dataset.zoomable) return;
    map.dataset.zoomable = "1";
    const view = { x: 0, y: 0, s: 1 };
    const pointers = new Map();
    let start = null;
    const apply = () => {
      map.style.transform = view.s === 1 && !view.x && !view.y ? "" : `translate(${view.x}px, ${view.y}px) scale(${view.s})`;
    };
    const restart = () => { start = { view: { ...view }, points: [...pointers.values()] }; };
    map.addEventListener("pointerdown", (ev) => {
      if (!map.classList.contains("on-map") || ev.target.closest("button, a, input, select, summary, .token, .gm-token")) return;
      pointers.set(ev.pointerId, [ev.clientX, ev.clientY]);
      try { map.setPointerCapture(ev.pointerId); } catch { /* not an active pointer (a synthetic event) */ }
      restart();
    });
    map.addEventListener("pointermove", (ev) => {
      if (!pointers.has(ev.pointerId) || !start) return;
      pointers.set(ev.pointerId, [ev.clientX, ev.clientY]);
      const now = [...pointers.values()];
      const r = map.getBoundingClientRect();
      const base = [r.left - view.x, r.top - view.y]; // the untransformed corner (origin 0 0)
      const mid = (ps) => [(ps[0][0] + (ps[1] ?? ps[0])[0]) / 2 - base[0], (ps[0][1] + (ps[1] ?? ps[0])[1]) / 2 - base[1]];
      let s = start.view.s;
      if (now.length >= 2 && start.points.length >= 2) {
        const d = (ps) => Math.hypot(ps[0][0] - ps[1][0], ps[0][1] - ps[1][1]) || 1;
        s = Math.min(4, Math.max(1, (start.view.s * d(now)) / d(start.points)));
      }
      const m0 = mid(start.points);
      const m1 = mid(now);
      const p = [(m0[0] - start.view.x) / start.view.s, (m0[1] - start.view.y) / start.view.s];
      view.s = s;
      view.x = s === 1 && now.length >= 2 ? 0 : m1[0] - p[0] * s;
      view.y = s === 1 && now.length >= 2 ? 0 : m1[1] - p[1] * s;
      apply();
    });
    const end = (ev) => { if (pointers.delete(ev.pointerId)) restart(); };
    map.addEventListener("pointerup", end);
    map.addEventListener("pointercancel", end);
    map.addEventListener("dblclick", (ev) => {
      if (ev.target.closest("button, a, .token, .gm-token")) return;
      Object.assign(view, { x: 0, y: 0, s: 1 });
      apply();
    });
  }

  /** The links drawn between the zones: a line per pair of zones (dashed when blocked,
   * dotted when it blocks sight), its mode written on it (climb, swim, fly). */
  function drawLinks() {
    const map = $("map");
    const lines = map.querySelector("svg.links");
    if (!lines || !app.state) return;
    lines.replaceChildren();
    const box = map.getBoundingClientRect();
    lines.setAttribute("width", String(map.scrollWidth));
    lines.setAttribute("height", String(map.scrollHeight));
    const centre = (id) => {
      const node = map.querySelector(`.zone[data-zone="${CSS.escape(id)}"]`);
      if (!node) return null;
      const r = node.getBoundingClientRect();
      return [r.left - box.left + r.width / 2, r.top - box.top + r.height / 2];
    };
    const seen = new Set();
    for (const link of app.state.arena.links) {
      const pair = [link.a, link.b].sort().join("|");
      const group = app.state.arena.links.filter((l) => [l.a, l.b].sort().join("|") === pair);
      if (seen.has(pair)) continue;
      seen.add(pair);
      const p = centre(link.a);
      const q = centre(link.b);
      if (!p || !q) continue;
      const classes = ["link"];
      if (group.every((l) => !l.clear)) classes.push("blocked");
      if (group.every((l) => l.blocks_sight)) classes.push("no-sight");
      const modes = [...new Set(group.map((l) => l.mode))];
      if (modes.some((m) => m !== "walk")) classes.push(`mode-${modes.filter((m) => m !== "walk")[0]}`);
      lines.append(svg("line", { x1: p[0], y1: p[1], x2: q[0], y2: q[1], class: classes.join(" "),
        "data-link": pair }));
      const shown = modes.length > 1 ? [modes.join(" or ")] : modes.filter((m) => m !== "walk");
      const words = [...shown, ...(classes.includes("blocked") ? ["blocked"] : [])];
      if (words.length) {
        const t = svg("text", { x: (p[0] + q[0]) / 2, y: (p[1] + q[1]) / 2 - 4, class: "link-label", "text-anchor": "middle" });
        t.textContent = words.join(", ");
        lines.append(t);
      }
    }
  }

  window.addEventListener("resize", () => drawLinks());

  function tokenClasses(c) {
    const classes = ["token", `side-${sideIndex(c.side) % 4}`];
    if (app.state.active === c.id) classes.push("active");
    if (c.hidden) classes.push("hidden");
    if (isDying(c)) classes.push("dying");
    else if (isOut(c)) classes.push("out");
    return classes.join(" ");
  }

  function renderToken(c) {
    const s = app.state;
    const details = [];
    const engaged = partners(s.engagements, c.id);
    if (engaged.length && !isOut(c)) details.push(`⚔ engaged with ${engaged.map(name).join(", ")}`);
    const beside = partners(s.adjacent, c.id);
    if (beside.length) details.push(`beside ${beside.map(name).join(", ")}`);
    const backs = partners(s.back_to_back, c.id);
    if (backs.length) details.push(`back-to-back with ${backs.map(name).join(", ")}`);
    if (c.position) details.push(`at ${assetName(c.position)}`);
    if (c.hidden) details.push("hidden from players");
    const float = app.floats.get(c.id);
    const tag = app.role === "gm" ? "button" : "div";
    // The creature whose turn this seat plays is dragged to a zone to move it there:
    // the same move as the zone's button, with the same legality and cost.
    const mover = myActive()?.id === c.id;
    return el(tag, { class: tokenClasses(c) + (mover ? " draggable" : ""), dataset: { creature: c.id },
      type: tag === "button" ? "button" : null,
      title: mover ? `${c.name} (${c.side}): drag to a zone to move there` : `${c.name} (${c.side})`,
      draggable: mover ? "true" : null,
      ondragstart: mover ? (ev) => {
        ev.dataTransfer.setData("text/plain", c.id);
        ev.dataTransfer.effectAllowed = "move";
      } : null,

      onclick: tag === "button" ? () => openGmToken(c.id) : null },
    el("span", { class: "token-line" }, sideMark(c), el("span", { class: "name" }, c.name), el("span", { class: "hp" }, ` ${hpText(c)}`)),
    el("span", { class: "badges" }, conditionBadges(c)),
    details.map((d) => el("span", { class: "detail" }, d)),
    float && float.until > Date.now() ? el("span", { class: "roll-float", role: "status" }, float.text) : null);
  }

  /** A crowded zone: the creatures grouped by name ("Goblin ×9", how many still stand);
   * the active one and this seat's own stay on their own line. A group opens (a
   * disclosure, kept open across redraws) to every one of its creatures, each a token
   * like any other: the GM acts on one goblin of twenty. */
  function compactTokens(tokens, zoneId) {
    const s = app.state;
    const own = tokens.filter((c) => c.id === s.active || isMine(c.id) && app.role !== "gm");
    const rest = tokens.filter((c) => !own.includes(c));
    const groups = new Map();
    for (const c of rest) {
      const base = c.name.replace(/\s*#?\d+$/, "");
      const key = `${c.side}|${base}`;
      if (!groups.has(key)) groups.set(key, { key, base, members: [] });
      groups.get(key).members.push(c);
    }
    return [...own.map(renderToken), ...[...groups.values()].map(({ key, base, members }) => {
      if (members.length === 1) return renderToken(members[0]);
      const openKey = `${zoneId}|${key}`;
      const standing = members.filter((m) => !isOut(m)).length;
      const counts = standing === members.length ? "" : ` (${standing} standing)`;
      const group = el("details", { class: `token group side-${sideIndex(members[0].side) % 4}${standing ? "" : " out"}`,
        dataset: { group: base }, open: app.openGroups.has(openKey),
        ontoggle: (ev) => { if (ev.target.open) app.openGroups.add(openKey); else app.openGroups.delete(openKey); } },
      el("summary", { class: "token-line", title: members.map((m) => `${m.name} ${hpText(m)}`).join("\n") },
        el("span", { class: "group-arrow", "aria-hidden": "true" }, "▸"), sideMark(members[0]),
        el("span", { class: "name" }, `${base} ×${members.length}`), el("span", { class: "hp" }, counts)),
      el("div", { class: "group-members" }, members.map(renderToken)));
      return group;
    })];
  }

  function enterZone(zoneId) {
    const me = myActive();
    if (!me || app.busy) return;
    command("enter", { creature: me.id, zones: [zoneId] });
  }

  function timerBar() {
    const s = app.state;
    const timer = app.turnTimer;
    const timed = timer && s.phase === "turns" && timer.creature === s.active && timer.round === s.round;
    if (!timed) return null;
    return el("div", { class: "timer" },
      el("div", { class: "timer-bar", role: "progressbar", "aria-label": "Time left in this turn",
        "aria-valuemin": "0", "aria-valuemax": String(Math.round(timer.seconds || 0)), dataset: { deadline: String(timer.deadlineAt), seconds: String(timer.seconds || 0) } },
      el("div", { class: "timer-fill" })),
      el("span", { class: "countdown turn-timer", title: "The server ends this turn when the time is up",
        dataset: { deadline: String(timer.deadlineAt) } }, countdownText(timer.deadlineAt)));
  }

  function renderTracker() {
    const s = app.state;
    const node = $("tracker");
    const phaseText = { surprise: "Setting up: surprise", positions: "Setting up: positions",
      initiative: "Rolling initiative", turns: `Round ${s.round}`, ended: "The encounter has ended" };
    const head = el("div", { class: "tracker-head" },
      el("span", { class: "round" }, phaseText[s.phase] ?? s.phase),
      s.phase === "turns" ? el("span", { class: "whose-turn" },
        s.active ? `${name(s.active)}'s turn` : "Between turns") : null);
    const member = (cid) => {
      const c = creature(cid);
      if (!c) return null;
      return el("div", { class: "member", dataset: { creature: cid } },
        el("span", { class: "member-name" }, sideMark(c), el("span", { class: "name", title: c.name }, c.name),
          isDying(c) ? "" : isOut(c) ? " (out)" : "", s.surprised.includes(cid) ? " (surprised)" : ""),
        el("span", { class: "badges" }, conditionBadges(c)),
        el("span", { class: "hp" }, hpText(c)));
    };
    let body;
    if (s.initiative.length) {
      body = el("ol", { class: "order" }, s.initiative.map((entry) =>
        el("li", { class: entry.members.includes(s.active) ? "active" : "", dataset: { slot: entry.slot } },
          el("span", { class: "init", title: "Initiative" }, String(entry.total)),
          el("div", { class: "members" }, entry.members.map(member)))));
    } else {
      body = el("div", {}, el("div", { class: "muted" }, "No initiative yet."),
        Object.keys(s.creatures).map(member));
    }
    const ended = s.phase === "ended" && s.ended_reason ? el("div", { class: "muted" }, s.ended_reason) : null;
    node.replaceChildren(...[head, timerBar(), body, ended].filter(Boolean));
    paintTimers();
  }

  // -- the turn panel: resources, big buttons for the common actions, the rest under "More"

  /** The server's word on one command (`actions` details, when the server sends them). */
  function actionDetail(id) {
    const details = app.actions?.details;
    return Array.isArray(details) ? details.find((d) => d.id === id) ?? null : null;
  }

  /** Why a command cannot be used now (the refusal's sentence), or null when it can. */
  function unavailableWhy(id, c) {
    const detail = actionDetail(id);
    if (detail) return detail.available ? null : detail.message || "Not possible now.";
    if (app.actions === null || app.actions.creature !== c.id) return null; // not known: the server decides
    if (app.actions.actions.includes(id)) return null;
    const r = app.state.resources;
    const costs = app.commands.get(id)?.costs || [];
    if (isOut(c)) return `${c.name} is ${isDying(c) ? "dying" : "out of the fight"}.`;
    if (costs.includes("action") && r && r.actions <= 0) return `${c.name} has already used its action this turn.`;
    if (costs.includes("bonus") && r && r.bonus_actions <= 0) return `${c.name} has already used its bonus action this turn.`;
    if (costs.includes("movement") && movementLeft(c) <= 0) return `${c.name} has no movement left.`;
    if (costs.includes("reaction") && app.state.reactions_used.includes(c.id)) return `${c.name} has already used its reaction.`;
    return `${c.name} cannot ${id.replaceAll("_", " ")} now.`;
  }

  function fmtBonus(n) {
    return n >= 0 ? `+${n}` : `−${Math.abs(n)}`;
  }

  /** The attacks with their legal targets: the server's list when it sends one, else
   * the creature's attacks from the snapshot with the enemies it can see and reach. */
  function attackChoices(c) {
    const detail = actionDetail("attack");
    if (detail && Array.isArray(detail.attacks)) return detail.attacks;
    const s = app.state;
    const foes = Object.values(s.creatures).filter((o) => o.side !== c.side && !isOut(o) && o.zone);
    const seen = new Set([c.zone, ...linksFrom(c.zone).filter((n) => n.links.some((l) => !l.blocks_sight)).map((n) => n.zone)]);
    return (c.attacks || []).map((a) => ({
      name: a.name,
      label: `${a.name[0].toUpperCase()}${a.name.slice(1)} ${fmtBonus(a.bonus)}, ${a.damage}`,
      bonus: a.bonus,
      damage: a.damage,
      targets: foes.filter((o) => (a.kind === "ranged" ? seen.has(o.zone) : o.zone === c.zone)).map((o) => o.id),
    }));
  }

  const BIG = ["dash", "dodge", "disengage"];

  function renderTurn() {
    const s = app.state;
    const panel = $("turn-panel");
    const c = myActive();
    if (!c) {
      panel.hidden = true;
      app.commandsKey = null;
      app.spellOpen = null;
      app.attackOpen = null;
      app.featureOpen = null;
      return;
    }
    panel.hidden = false;
    $("turn-title").textContent = app.role === "gm" && c.controller !== "gm"
      ? `${c.name}'s turn (${c.controller})` : `Your turn: ${c.name}`;
    const r = s.resources;
    const res = $("resources");
    if (r) {
      const reaction = s.reactions_used.includes(c.id) ? 0 : 1;
      const row = (k, v) => el("div", { class: "res" }, el("dt", {}, k), el("dd", { dataset: { resource: k.toLowerCase() } }, v));
      res.replaceChildren(el("dl", { class: "resources" },
        row("Movement", `${movementLeft(c)} ft left`),
        row("Action", r.actions > 0 ? `${r.actions} left` : "used"),
        row("Bonus", r.bonus_actions > 0 ? `${r.bonus_actions} left` : "used"),
        row("Interaction", r.interactions > 0 ? `${r.interactions} left` : "used"),
        row("Reaction", reaction ? "1 left" : "used"),
        r.disengaged ? row("Disengaged", "yes") : null));
    } else {
      res.replaceChildren();
    }
    // The mover sees that play waits for others' reactions (an opportunity attack...).
    const me = app.role === "gm" ? "gm" : app.player;
    const others = (s.pending || []).filter((d) => d.controller !== me);
    if (others.length) {
      res.append(el("p", { class: "turn-waits", role: "status" },
        `Play waits for ${others.length === 1 ? "a reaction" : `${others.length} reactions`}: `,
        others.map((d) => d.prompt).join(" ")));
    }
    // Big buttons for the common actions; each unavailable one disabled, the reason on hover.
    const attackWhy = unavailableWhy("attack", c);
    const attacks = attackChoices(c);
    const big = [];
    for (const a of attacks) {
      const why = attackWhy ?? (a.targets && a.targets.length === 0 ? "No enemy in reach or in sight for this attack." : null);
      big.push(el("button", { type: "button", class: `big${app.attackOpen === a.name ? " open" : ""}`, dataset: { attack: a.name },
        disabled: Boolean(why), title: why || `Attack with ${a.name}: choose a target`, "aria-expanded": app.attackOpen === a.name ? "true" : "false",
        onclick: () => { app.attackOpen = app.attackOpen === a.name ? null : a.name; renderTurn(); } }, a.label));
    }
    const moveWhy = cannotMove(c);
    big.push(el("button", { type: "button", class: "big", dataset: { quick: "move" }, disabled: Boolean(moveWhy),
      title: moveWhy || "Choose a zone on the map", onclick: () => {
        const first = $("map").querySelector(".zone.reachable .zone-button");
        if (first) first.focus();
      } }, "Move"));
    for (const id of BIG) {
      const why = unavailableWhy(id, c);
      big.push(el("button", { type: "button", class: "big", dataset: { quick: id }, disabled: Boolean(why),
        title: why || app.commands.get(id)?.summary || id, onclick: () => command(id, { creature: c.id }) },
      id[0].toUpperCase() + id.slice(1)));
    }
    big.push(el("button", { type: "button", class: "big end", dataset: { quick: "end_turn" },
      onclick: () => command("end_turn", { creature: c.id }) }, "End turn"));
    const open = attacks.find((a) => a.name === app.attackOpen);
    const targets = open ? el("div", { class: "targets", role: "group", "aria-label": `Targets for ${open.name}` },
      el("span", { class: "muted" }, `${open.label}: target`),
      (open.targets ?? []).map((t) => el("button", { type: "button", class: "big target", dataset: { target: t },
        onclick: async () => {
          const done = await command("attack", { creature: c.id, target: t, attack: open.name });
          if (done) app.attackOpen = null;
        } }, name(t), creature(t)?.side === c.side ? " (ally)" : null))) : null;
    const [featureRow, featurePick] = featureChoices(c);
    keepFocus($("quick"), () => $("quick").replaceChildren(...[el("div", { class: "quick" }, big), targets, featureRow, featurePick].filter(Boolean)));
    keepFocus($("caster"), () => $("caster").replaceChildren(...renderCaster(c)));
    // "More": every other command as a form, rebuilt when the turn changes or anyone moves.
    const where = Object.values(s.creatures).map((x) => `${x.id}:${x.zone}:${isOut(x)}`).join(",");
    const key = `${c.id}|${s.phase}|${app.role}|${where}`;
    if (app.commandsKey !== key) {
      app.commandsKey = key;
      const skip = new Set(["attack", "end_turn", ...BIG]);
      const specs = [...app.commands.values()].filter((spec) => spec.who === "creature" && spec.phases.includes("turns") && !skip.has(spec.id));
      const wasOpen = $("commands").querySelector("details.more")?.open ?? false;
      // A form the player opened stays open when the forms are built again (the creature
      // moved: its targets change), so a tap is not lost to an update that came after it.
      const opened = new Set([...$("commands").querySelectorAll("details.command[open]")].map((d) => d.dataset.command));
      $("commands").replaceChildren(el("details", { class: "more", open: wasOpen },
        el("summary", {}, "More actions"), specs.map((spec) => commandForm(spec, { creature: c.id }))));
      for (const details of $("commands").querySelectorAll("details.command")) {
        if (opened.has(details.dataset.command)) details.open = true;
      }
    }
    for (const details of $("commands").querySelectorAll("details.command")) {
      const why = unavailableWhy(details.dataset.command, c);
      details.classList.toggle("unavailable", Boolean(why));
      details.querySelector("summary").title = why || "";
      const send = details.querySelector("button[type=submit]");
      if (send) {
        send.disabled = Boolean(why);
        send.title = why || "";
      }
    }
  }

  // -- a caster's page: class resources, concentration, and the spells by level --------

  /** Resources that are the rules' own bookkeeping, not a use a player counts: the
   * spells cast this turn, the two-weapon fighting marks (an attack's place, not a
   * count), and the turn stamps of "once a turn" (spirit guardians, a moonbeam). */
  const HIDDEN_RESOURCES = new Set(["spells-this-turn", "two-weapon", "off-hand"]);
  const hiddenResource = (key) => HIDDEN_RESOURCES.has(key) || key.endsWith("-turn");
  const ORDINAL = (n) => `${n}${n % 10 === 1 && n !== 11 ? "st" : n % 10 === 2 && n !== 12 ? "nd" : n % 10 === 3 && n !== 13 ? "rd" : "th"}`;
  const slotKey = (level) => `spell-slots-${level}`;

  /** The creature's Spellcasting (a trait from its sheet, or an action of a stat block). */
  function spellcastingOf(c) {
    return [...(c.traits || []), ...(c.actions || [])].find((f) => f.id === "spellcasting") || null;
  }

  /** Slots per level: [{level, left, most}] from the creature's resources, the most from
   * its Spellcasting's `slots` when it says them. */
  function slotsOf(c) {
    const most = spellcastingOf(c)?.params?.slots || {};
    const levels = new Set(Object.keys(most).map(Number));
    for (const k of Object.keys(c.resources || {})) {
      const m = /^spell-slots-(\d)$/.exec(k);
      if (m) levels.add(Number(m[1]));
    }
    return [...levels].filter((n) => n > 0).sort((a, b) => a - b)
      .map((level) => ({ level, left: c.resources?.[slotKey(level)] ?? 0, most: most[String(level)] ?? null }));
  }

  /** "2 of 4" as text, and as pips for the eye (the text says it; the pips are hidden). */
  function countNode(left, most, attrs = {}) {
    const text = most == null ? `${left} left` : `${left} of ${most}`;
    const pips = most != null && most <= 12
      ? el("span", { class: "pips", "aria-hidden": "true" }, Array.from({ length: most }, (_, i) => el("span", { class: i < left ? "pip full" : "pip" }, i < left ? "●" : "○")))
      : null;
    return el("span", { class: "count", ...attrs }, el("span", { class: "count-text" }, text), pips ? " " : null, pips);
  }

  /** A creature's class resources (uses left), labelled: its features' names when a
   * feature counts them, else the resource's own id in words. Spell slots are shown
   * with the spells. */
  function classResources(c) {
    const features = [...(c.traits || []), ...(c.actions || [])];
    // A feature with uses counts them in `resources` once one is spent; until then it has them all.
    const counts = { ...Object.fromEntries(features.filter((f) => f.uses && f.uses.recharge == null)
      .map((f) => [resourceKey(f), f.uses.charges ?? f.uses.count ?? 0])), ...(c.resources || {}) };
    return Object.entries(counts)
      .filter(([k]) => !hiddenResource(k) && !/^spell-slots-\d$/.test(k))
      .map(([k, left]) => {
        const f = features.find((x) => x.uses && resourceKey(x) === k);
        const label = f ? f.name : (k.charAt(0).toUpperCase() + k.slice(1)).replaceAll("-", " ").replaceAll("_", " ");
        const most = f?.uses && f.uses.recharge == null ? f.uses.charges ?? f.uses.count ?? null : null;
        return { key: k, label, left, most };
      });
  }

  /** What the creature concentrates on (its `concentrating` effect's source), or null. */
  function concentrationOf(cid) {
    const c = creature(cid);
    if (!c || !c.conditions.includes("concentrating")) return null;
    const effect = effectsOf(cid).find((e) => e.condition === "concentrating");
    return effect?.source || "a spell";
  }

  function concentrationBadge(cid) {
    const on = concentrationOf(cid);
    if (!on) return null;
    return el("span", { class: "badge concentrating", dataset: { concentration: cid }, title: `${name(cid)} concentrates on ${on}: damage calls for a Constitution save` },
      el("span", { "aria-hidden": "true" }, "◎ "), `Concentrating: ${on}`);
  }

  /** A spell's level from its choice: the server's `info.level` (0: a cantrip), else
   * the label ("Fireball (level 3)", "Fire Bolt (cantrip)"). */
  function spellLevel(choice) {
    if (Number.isInteger(choice.info?.level)) return choice.info.level;
    const m = /\((?:level (\d)|(cantrip))/.exec(choice.label || "");
    if (m) return m[2] ? 0 : Number(m[1]);
    const slots = choice.options?.slot;
    return Array.isArray(slots) && slots.length ? Math.min(...slots) : 0;
  }

  /** Whether a spell aimed at a zone takes targets there: a server that sends `info`
   * sends `targets_by_zone` only for those that do (a moonbeam takes none). */
  const takesTargets = (choice) => !choice.info || Boolean(choice.info.targets_by_zone);
  /** A spell aimed at a zone that strikes one creature there at most (the spiritual
   * weapon, `info.most_targets` 1): none chosen first, one at a time. */
  const oneTarget = (choice) => choice.info?.most_targets === 1;

  /** The creatures an area aimed at `zone` may take: the server's `info.targets_by_zone`
   * when it sends it, else the creatures the page sees there (the server decides). */
  function zoneCandidates(choice, zone) {
    const listed = choice.info?.targets_by_zone?.[zone];
    if (Array.isArray(listed)) return listed.map(creature).filter(Boolean);
    return Object.values(app.state.creatures).filter((x) => x.zone === zone && !isOut(x) && !x.hidden);
  }

  const spellName = (choice) => (choice.label || choice.params?.spell || "").replace(/\s*\((?:level \d|cantrip)\)$/, "");

  /** The caster's part of the turn panel: concentration, class resources, then the
   * "Spells" disclosure (spells by level with the slots left, each castable spell a
   * button opening its slot levels and its legal targets or zones, all from `actions`). */
  function renderCaster(c) {
    const parts = [];
    const badge = concentrationBadge(c.id);
    if (badge) parts.push(el("p", { class: "concentration-line" }, badge));
    const res = classResources(c);
    if (res.length && c.controller !== "gm") {
      parts.push(el("dl", { class: "resources class-resources", "aria-label": "Class resources" },
        res.map((r) => el("div", { class: "res" }, el("dt", {}, r.label), el("dd", { dataset: { classResource: r.key } }, countNode(r.left, r.most))))));
    }
    const kinds = [["cast", "Action spells"], ["cast_bonus", "Bonus-action spells"]].filter(([id]) => app.commands.has(id));
    const details = kinds.map(([id, word]) => ({ id, word, detail: actionDetail(id) }));
    const caster = spellcastingOf(c) || details.some((d) => d.detail?.choices?.length);
    if (!caster || !kinds.length) return parts;
    if (app.spellOpen && app.spellOpen.creature !== c.id) app.spellOpen = null;
    const choices = details.flatMap(({ id, detail }) => (detail?.choices || []).map((ch) => ({ ...ch, command: id, level: spellLevel(ch) })));
    const slots = slotsOf(c);
    const levels = [...new Set([...choices.map((ch) => ch.level), ...slots.map((s) => s.level)])].sort((a, b) => a - b);
    const open = app.spellOpen ? choices.find((ch) => ch.command === app.spellOpen.command && ch.params.spell === app.spellOpen.spell) : null;
    if (app.spellOpen && !open) app.spellOpen = null;
    const groups = levels.map((level) => {
      const slot = slots.find((s) => s.level === level);
      const here = choices.filter((ch) => ch.level === level);
      const title = level === 0 ? "Cantrips" : `${ORDINAL(level)} level`;
      return el("section", { class: "spell-level", dataset: { level: String(level) }, "aria-label": title },
        el("h3", { class: "spell-level-title" }, title,
          slot ? [" · slots ", countNode(slot.left, slot.most, { dataset: { slots: String(level) } })] : null),
        here.length ? el("div", { class: "spell-buttons" }, here.map((ch) => {
          const isOpen = open === ch;
          return el("button", { type: "button", class: `spell${isOpen ? " open" : ""}`, dataset: { spell: ch.params.spell, casting: ch.command },
            "aria-expanded": isOpen ? "true" : "false",
            onclick: () => {
              app.spellOpen = isOpen ? null : { creature: c.id, command: ch.command, spell: ch.params.spell,
                slot: ch.options?.slot?.[0] ?? null, zone: null, targets: [], option: null };
              renderTurn();
            } }, spellName(ch), ch.command === "cast_bonus" ? el("span", { class: "muted" }, " (bonus action)") : null);
        }))
          : el("p", { class: "muted" }, level && slot && slot.left === 0 ? "No slot left." : "No spell of this level can be cast now."),
        open && open.level === level ? spellPicker(c, open) : null);
    });
    // A way of casting the server refuses now: said with its reason (no spell of it is offered).
    const refusals = details.filter(({ detail }) => detail && !detail.available).map(({ id, word, detail }) =>
      el("li", { dataset: { castingUnavailable: id } }, `${word}: ${detail.message || "not possible now."}`));
    const wasOpen = $("caster").querySelector("details.spells")?.open ?? false;
    parts.push(el("details", { class: "spells", open: wasOpen || Boolean(open) },
      el("summary", { dataset: { spellsToggle: "1" } }, "Spells"),
      refusals.length ? el("ul", { class: "spell-refusals" }, refusals) : null,
      groups));
    return parts;
  }

  /** The open spell's choices, exactly as `actions` offers them: its slot levels
   * (upcasting), then its targets or zones; an area aimed at a zone then lists the
   * creatures in it (the caster picks its targets; the server checks them). */
  function spellPicker(c, ch) {
    const o = app.spellOpen;
    const options = ch.options || {};
    const rows = [];
    const toggle = (attrs, pressed, label, onclick) => el("button", { type: "button", class: `choice${pressed ? " chosen" : ""}`, "aria-pressed": pressed ? "true" : "false", ...attrs, onclick }, label);
    if (Array.isArray(options.slot) && options.slot.length) {
      rows.push(el("div", { class: "targets", role: "group", "aria-label": `${spellName(ch)}: slot level` },
        el("span", { class: "muted" }, "Slot:"),
        options.slot.map((n) => toggle({ dataset: { slot: String(n) } }, o.slot === n, `${ORDINAL(n)} level`, () => { o.slot = n; renderTurn(); }))));
    }
    if (Array.isArray(options.zone)) {
      rows.push(el("div", { class: "targets", role: "group", "aria-label": `${spellName(ch)}: zone` },
        el("span", { class: "muted" }, "Zone:"),
        options.zone.length ? options.zone.map((z) => toggle({ dataset: { zone: z } }, o.zone === z, zoneName(z), () => {
          o.zone = z;
          o.targets = takesTargets(ch) && !oneTarget(ch) ? zoneCandidates(ch, z).filter((x) => x.id !== c.id).map((x) => x.id) : [];
          renderTurn();
        })) : el("span", {}, "No zone in reach.")));
      if (o.zone && takesTargets(ch)) {
        const inside = zoneCandidates(ch, o.zone);
        rows.push(el("div", { class: "targets", role: "group", "aria-label": `${spellName(ch)}: targets in ${zoneName(o.zone)}` },
          el("span", { class: "muted" }, "Targets:"),
          inside.length ? inside.map((x) => toggle({ dataset: { target: x.id } }, o.targets.includes(x.id), [name(x.id), x.side === c.side ? " (ally)" : null], () => {
            if (oneTarget(ch)) o.targets = o.targets.includes(x.id) ? [] : [x.id];
            else o.targets = o.targets.includes(x.id) ? o.targets.filter((t) => t !== x.id) : [...o.targets, x.id];
            renderTurn();
          })) : el("span", {}, "Nobody there.")));
      }
    }
    if (Array.isArray(options.option)) {
      // The spell's option (Enhance Ability's enhancement, Protection from Energy's type).
      rows.push(el("div", { class: "targets", role: "group", "aria-label": `${spellName(ch)}: option` },
        el("span", { class: "muted" }, "Option:"),
        options.option.map((x) => toggle({ dataset: { option: x } }, o.option === x, x.replaceAll("-", " "), () => { o.option = x; renderTurn(); }))));
    }
    if (Array.isArray(options.target)) {
      rows.push(el("div", { class: "targets", role: "group", "aria-label": `${spellName(ch)}: targets` },
        el("span", { class: "muted" }, "Target:"),
        options.target.length ? options.target.map((t) => toggle({ dataset: { target: t } }, o.targets.includes(t), [name(t), creature(t)?.side === c.side ? " (ally)" : null], () => {
          o.targets = o.targets.includes(t) ? o.targets.filter((x) => x !== t) : [...o.targets, t];
          renderTurn();
        })) : el("span", {}, "No target in reach.")));
    }
    const missing = Array.isArray(options.zone) && !o.zone ? "Choose a zone first."
      : Array.isArray(options.option) && !o.option ? "Choose an option first."
      : Array.isArray(options.target) && !o.targets.length ? "Choose a target first." : null;
    const cast = el("button", { type: "button", class: "big cast", dataset: { cast: ch.params.spell }, disabled: Boolean(missing), title: missing || "",
      onclick: async () => {
        const params = { creature: c.id, ...ch.params };
        if (o.slot != null) params.slot = o.slot;
        if (o.zone) params.zone = o.zone;
        if (o.option) params.option = o.option;
        if (o.targets.length === 1 && (!o.zone || oneTarget(ch))) params.target = o.targets[0];
        else if (o.targets.length) params.targets = [...o.targets];
        const done = await command(ch.command, params);
        if (done) app.spellOpen = null;
      } }, `Cast ${spellName(ch)}${o.slot != null && o.slot !== ch.level ? ` at ${ORDINAL(o.slot)} level` : ""}`);
    return el("div", { class: "spell-picker", dataset: { spellPicker: ch.params.spell } }, rows, el("div", { class: "targets" }, cast));
  }

  /** The command that plays an automated stat-block action (`nimble-escape` →
   * `nimble_escape`), with the params it fixes; null when no command does. */
  function featureCommand(f) {
    if (f.id === "tentacles" || f.id === "tentacle-slam") return app.commands.has("grappled_save") ? ["grappled_save", { feature: f.id }] : null;
    const id = f.id.replace(/^[a-z0-9_]+\./, "").replaceAll("-", "_");
    return app.commands.has(id) ? [id, {}] : null;
  }

  const KIND_WORD = { action: "action", bonus_action: "bonus action", reaction: "reaction", legendary: "legendary" };

  /** The active creature's automated stat-block actions as buttons (Multiattack as one
   * choice per sequence, showing it; Nimble Escape among the bonus actions; a recharge
   * action with its state), and the picker of the open one (its targets, or its form). */
  function featureChoices(c) {
    const listed = Array.isArray(app.actions?.features) && app.actions.creature === c.id && app.actions.features.length
      ? app.actions.features : (c.actions || []).map((f) => ({ ...f, left: c.resources?.[resourceKey(f)] ?? null }));
    const playable = listed.filter((f) => f.kind !== "trait" && f.automated !== false && featureCommand(f));
    if (!playable.length) return [null, null];
    const buttons = [];
    let pick = null;
    const order = ["action", "bonus_action", "reaction", "legendary"];
    playable.sort((a, b) => order.indexOf(a.kind || "action") - order.indexOf(b.kind || "action"));
    for (const f of playable) {
      const [cmd, fixed] = featureCommand(f);
      const why = unavailableWhy(cmd, c);
      const kindWord = KIND_WORD[f.kind || "action"] || f.kind;
      const state = f.uses ? usesText(f, { resources: { [resourceKey(f)]: f.left ?? c.resources?.[resourceKey(f)] } }) : null;
      if (cmd === "multiattack") {
        const detail = actionDetail("multiattack");
        const left = detail?.attacks_left || [];
        const sequences = left.length ? [left] : (detail?.sequences?.length ? detail.sequences : f.params?.sequences || [[]]);
        sequences.forEach((seq, i) => {
          const items = seq.map((it) => (typeof it === "string" ? { attack: it } : it));
          const shown = items.map((it) => `${it.attack}${it.disadvantage ? " (disadvantage)" : ""}`).join(", ");
          const key = `multiattack:${left.length ? "next" : i}`;
          buttons.push(el("button", { type: "button", class: `big feature${app.featureOpen === key ? " open" : ""}`, dataset: { feature: "multiattack", sequence: String(i) },
            disabled: Boolean(why), title: why || `${f.name}: ${shown}`, "aria-expanded": app.featureOpen === key ? "true" : "false",
            onclick: () => { app.featureOpen = app.featureOpen === key ? null : key; renderTurn(); } },
          `${left.length ? `${f.name}, next` : f.name}: ${shown || "its attacks"}`));
          if (app.featureOpen === key && items.length) {
            const next = items[0].attack;
            const option = (detail?.attacks || []).find((a) => a.name === next);
            const targetIds = option?.targets ?? detail?.targets ?? legalChoices("attack", "target", c.id)?.map((o) => o.id) ?? [];
            pick = el("div", { class: "targets", role: "group", "aria-label": `Targets for ${f.name}` },
              el("span", { class: "muted" }, `${f.name}, ${next}: target`),
              targetIds.map((t) => el("button", { type: "button", class: "big target", dataset: { target: t },
                onclick: async () => {
                  const params = { creature: c.id, target: t, attack: next };
                  if (!left.length && sequences.length > 1) params.sequence = i;
                  const done = await command("multiattack", params);
                  if (done) app.featureOpen = items.length > 1 ? "multiattack:next" : null;
                } }, name(t), creature(t)?.side === c.side ? " (ally)" : null)));
          }
        });
        continue;
      }
      const spec = app.commands.get(cmd);
      const more = Object.keys(spec?.params || {}).filter((p) => p !== "creature" && !(p in fixed));
      const key = `feature:${f.id}`;
      buttons.push(el("button", { type: "button", class: `big feature${app.featureOpen === key ? " open" : ""}`, dataset: { feature: f.id, kind: f.kind || "action" },
        disabled: Boolean(why), title: why || f.text || f.name, "aria-expanded": more.length ? (app.featureOpen === key ? "true" : "false") : null,
        onclick: () => {
          if (!more.length) command(cmd, { creature: c.id, ...fixed });
          else { app.featureOpen = app.featureOpen === key ? null : key; renderTurn(); }
        } }, `${f.name} (${kindWord})`, state ? el("span", { class: "uses" }, ` · ${state}`) : null));
      // The ways to use it, as buttons: the server's own list (`choices`), else the
      // stat block's (Nimble Escape: disengage or hide); the server still decides.
      const detail = actionDetail(cmd);
      const own = (c.actions || []).find((a) => a.id === f.id);
      const ways = Array.isArray(detail?.choices) && detail.choices.length && detail.choices.every((w) => !Object.keys(w.options || {}).length)
        ? detail.choices.map((w) => [w.label, w.params])
        : "choice" in (spec?.params || {}) && Array.isArray(own?.params?.choices) && more.length === 1
          ? own.params.choices.map((w) => [String(w), { choice: w }]) : null;
      if (app.featureOpen === key && ways) {
        pick = el("div", { class: "targets", role: "group", "aria-label": `${f.name}: choose`, dataset: { featureForm: f.id } },
          el("span", { class: "muted" }, `${f.name}:`),
          ways.map(([label, params]) => el("button", { type: "button", class: "big target", dataset: { choice: JSON.stringify(params) },
            onclick: async () => {
              const done = await command(cmd, { creature: c.id, ...fixed, ...params });
              if (done) app.featureOpen = null;
            } }, label)));
      } else if (app.featureOpen === key && spec) {
        const form = commandForm(spec, { creature: c.id, ...fixed });
        form.open = true;
        pick = el("div", { class: "feature-form", dataset: { featureForm: f.id } }, form);
      }
    }
    return [el("div", { class: "quick features", role: "group", "aria-label": "Stat block actions" }, buttons), pick];
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
      const labelText = `${pname.replaceAll("_", " ")}${p.required ? "" : " (optional)"}: ${description}`;
      const field = paramInput(pname, p.type, p.required, legalChoices(spec.id, pname, fixed.creature),
        { prop: properties[pname], command: spec.id, actor: fixed.creature, description });
      inputs.push(field.read);
      form.append(el("label", { class: field.check ? "param check" : "param" }, field.check ? [field.node, labelText] : [labelText, field.node]));
      if (field.follows) form.addEventListener("change", (ev) => { if (ev.target.name === field.follows) field.refresh(form); });
      if (field.refresh) field.refresh(form);
    }
    form.append(el("button", { type: "submit" }, "Send"));
    return el("details", { class: "command", dataset: { command: spec.id } },
      el("summary", {}, spec.id.replaceAll("_", " ")), form);
  }

  // Commands whose target must stand in the actor's zone (melee reach, shoving,
  // engaging); the server still decides, this only keeps the choices sensible.
  // (A readied attack waits for a creature to come: any foe may be its target.)
  const SAME_ZONE = new Set(["engage", "withdraw", "shove", "shove_into", "move_adjacent"]);

  /** The creatures or zones worth offering for one parameter, or null for all. */
  function legalChoices(commandId, pname, actorId) {
    const s = app.state;
    const actor = actorId ? s.creatures[actorId] : null;
    if (!actor) return null;
    const detail = actionDetail(commandId);
    if (pname === "target" && Array.isArray(detail?.targets)) return detail.targets.map(creature).filter(Boolean);
    if (pname === "zone" && Array.isArray(detail?.zones)) return detail.zones.map((z) => z.zone);
    const others = Object.values(s.creatures).filter((c) => c.id !== actor.id && !isOut(c));
    if (pname === "target") {
      const foes = others.filter((c) => c.side !== actor.side);
      return SAME_ZONE.has(commandId) ? foes.filter((c) => c.zone === actor.zone) : foes;
    }
    if (pname === "ally") {
      return others.filter((c) => c.side === actor.side && c.zone === actor.zone);
    }
    if (pname === "zone") return linksFrom(actor.zone).map((n) => n.zone);
    return null;
  }

  /** What a text parameter names, as [value, text] pairs from the snapshot (an attack,
   * an asset, a hazard, an effect, a note, a decision...), or null when it is free text
   * (a note's words, a reason). Nothing the server already knows is typed. */
  function knownValues(pname, type, context) {
    const s = app.state;
    const actor = context.actor ? s.creatures[context.actor] : null;
    const enumValues = context.prop?.enum || context.prop?.items?.enum;
    if (enumValues) return enumValues.map((v) => [v, String(v).replaceAll("_", " ")]);
    const inZone = (items) => (actor ? items.filter((a) => a.zone === actor.zone) : items);
    const assets = () => inZone([...s.arena.assets, ...Object.values(s.effects || {})]).map((a) => [a.id, `${a.name} (${zoneName(a.zone)})`]);
    const attacks = () => {
      const owners = actor ? [actor] : Object.values(s.creatures);
      return [...new Set(owners.flatMap((c) => (c.attacks || []).map((a) => a.name)))].map((n) => [n, n]);
    };
    if (pname === "attack") return attacks();
    if (["asset", "object", "brazier", "position"].includes(pname)) return assets();
    if (context.command === "remove_hazard" && pname === "id") return Object.values(s.hazards || {}).map((h) => [h.id, h.name]);
    if (pname === "effect") return Object.values(s.condition_effects || {}).map((e) => [e.id, `${name(e.creature)}: ${e.condition}`]);
    if (pname === "note") return Object.entries(s.notes || {}).map(([id, n]) => [id, String(n.text || id).slice(0, 60)]);
    if (pname === "decision") return s.pending.map((d) => [d.id, d.prompt]);
    if (pname === "damage_type") return DAMAGE_TYPES.map((t) => [t, t]);
    if (pname === "mode") return ["walk", "climb", "swim", "fly", "burrow"].map((m) => [m, m]);
    if (pname === "group") return [...new Set(Object.values(s.creatures).map((c) => c.group).filter(Boolean))].map((g) => [g, optionText(g)]);
    // The fields the server lets the GM override (OVERRIDE_FIELDS in the SDK).
    if (pname === "field") return ["hp", "max_hp", "temp_hp", "ac", "sharing_with", "hidden", "side", "controller", "pc", "condition_immunities"].map((f) => [f, f.replaceAll("_", " ")]);
    if (pname === "conditions") return conditionChoices().map((c) => [c.id, c.id]);
    if (pname === "parent") return Object.values(s.condition_effects || {}).map((e) => [e.id, `${name(e.creature)}: ${e.condition}`]);
    // Words the server takes from a short list its description gives ("cone, cube,
    // sphere, cylinder or line"; "start_of_turn or end_of_turn: ..."): a picker.
    const listed = /^([a-z_]+(?:, [a-z_]+)*(?:,)? or [a-z_]+)(?::|$)/.exec(context.description || "");
    if (listed) return listed[1].split(/, | or |,/).map((w) => w.trim()).filter(Boolean).map((w) => [w, w.replaceAll("_", " ")]);
    return null;
  }

  function paramInput(pname, type, required, legal = null, context = {}) {
    const s = app.state;
    const creatures = legal && type === "creature" ? legal : Object.values(s.creatures);
    const opt = (value, text) => el("option", { value }, text);
    const emptyOption = required ? null : opt("", "—");
    if (context.command === "decide" && pname === "choice") return decisionChoice(pname);
    if (context.command === "override" && pname === "value") return overrideValue(pname);
    const known = type === "string" || type === "strings" ? knownValues(pname, type, context) : null;
    if (known && type === "string") {
      const node = el("select", { name: pname }, emptyOption, known.length ? known.map(([v, t]) => opt(v, t)) : opt("", "none here"));
      return { node, read: () => [pname, node.value || undefined] };
    }
    if (known && type === "strings") {
      const boxes = known.map(([v]) => el("input", { type: "checkbox", value: v }));
      const node = el("span", { class: "choices", dataset: { name: pname } }, known.map(([, t], i) => el("label", {}, boxes[i], t)));
      return { node, read: () => {
        const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
        return [pname, chosen.length || required ? chosen : undefined];
      } };
    }
    if (type === "strings" && pname === "zones") {
      // A path, zone by zone: pickers, in order (the first one the next zone, and so on).
      const picks = [0, 1, 2].map((i) => el("select", { name: `${pname}-${i}`, "aria-label": i ? `then zone ${i + 1}` : "zone" },
        opt("", i ? "— (stop)" : "—"), s.arena.zones.filter((z) => i || !legal || legal.includes(z.id)).map((z) => opt(z.id, z.name))));
      const node = el("span", { class: "choices", dataset: { name: pname } }, picks.flatMap((p, i) => [i ? " then " : "", p]));
      return { node, read: () => {
        const chosen = [];
        for (const p of picks) {
          if (!p.value) break;
          chosen.push(p.value);
        }
        return [pname, chosen.length || required ? chosen : undefined];
      } };
    }
    if (pname === "condition") {
      const node = el("select", { name: pname }, conditionOptions());
      return { node, read: () => [pname, node.value] };
    }
    if (pname === "save" || pname === "ability") {
      const node = el("select", { name: pname }, emptyOption, ABILITIES.map((a) => opt(a, a.toUpperCase())));
      return { node, read: () => [pname, node.value || undefined] };
    }
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

  /** A decision's answer, picked from the options of the decision chosen in the same
   * form: one option, or (a tie to order) every option, place by place. */
  function decisionChoice(pname) {
    const s = app.state;
    const node = el("span", { class: "choices", dataset: { name: pname } });
    let picks = [];
    const refresh = (form) => {
      const id = form.querySelector("select[name=decision]")?.value;
      const decision = s.pending.find((d) => d.id === id) || s.pending[0];
      const options = decision ? decision.options : [];
      const places = decision?.ordering ? options.length : 1;
      picks = Array.from({ length: places }, (_, i) => el("select",
        { name: `${pname}-${i}`, "aria-label": decision?.ordering ? `place ${i + 1}` : "choice" },
        options.length ? options.map((o) => el("option", { value: o }, optionText(o))) : el("option", { value: "" }, "none pending")));
      picks.forEach((p, i) => { if (options[i] !== undefined && decision?.ordering) p.value = options[i]; });
      node.replaceChildren(...picks.flatMap((p, i) => [i ? " then " : "", p]));
    };
    return { node, follows: "decision", refresh, read: () => [pname, picks.map((p) => p.value).filter(Boolean)] };
  }

  /** An override's new value, as the chosen field takes it: a number, yes or no, a
   * creature to share a space with (or nobody), a side or a controller the encounter
   * has, conditions. */
  function overrideValue(pname) {
    const s = app.state;
    const node = el("span", { class: "choices", dataset: { name: pname } });
    let read = () => undefined;
    const pick = (values) => {
      const select = el("select", { name: pname, "aria-label": "new value" }, values.map(([v, t]) => el("option", { value: v }, t)));
      read = () => select.value;
      return select;
    };
    const refresh = (form) => {
      const field = form.querySelector("select[name=field]")?.value || "hp";
      let input;
      if (["hp", "max_hp", "ac"].includes(field)) {
        input = el("input", { type: "number", step: "1", min: "0", name: pname, "aria-label": "new value" });
        read = () => (input.value === "" ? undefined : Number.parseInt(input.value, 10));
      } else if (field === "sharing_with") {
        const select = pick([["", "nobody"], ...Object.values(s.creatures).map((c) => [c.id, c.name])]);
        input = select;
        read = () => select.value || null;
      } else if (field === "condition_immunities") {
        const boxes = conditionChoices().map((c) => el("input", { type: "checkbox", value: c.id }));
        input = el("span", { class: "choices", dataset: { name: pname } }, conditionChoices().map((c, i) => el("label", {}, boxes[i], c.id)));
        read = () => boxes.filter((b) => b.checked).map((b) => b.value);
      } else if (field === "hidden" || field === "pc") {
        input = pick([["true", "yes"], ["false", "no"]]);
        const select = input;
        read = () => select.value === "true";
      } else if (field === "side") {
        input = pick([...new Set(Object.values(s.creatures).map((c) => c.side))].map((x) => [x, x]));
      } else if (field === "controller") {
        const players = [...new Set(Object.values(s.creatures).map((c) => c.controller).filter((x) => x && x !== "gm"))];
        input = pick([["gm", "the GM"], ...players.map((x) => [x, x])]);
      } else {
        input = el("input", { type: "text", name: pname, "aria-label": "new value" });
        read = () => (input.value === "" ? undefined : input.value);
      }
      node.replaceChildren(input);
    };
    return { node, follows: "field", refresh, read: () => [pname, read()] };
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
    // The prompts are a live region: rebuilt (and so announced) only when they change.
    const key = JSON.stringify([...app.prompts.values()].map((p) => [p.decision, p.order ?? null, Math.round(p.deadlineAt / 1000)]));
    if (key === app.promptsKey) {
      renderWaiting();
      return;
    }
    app.promptsKey = key;
    const nodes = [];
    for (const entry of app.prompts.values()) {
      const { decision, deadlineAt } = entry;
      // The ticking countdown is hidden from screen readers (a live region would read
      // every tick); the time limit is said once, when the prompt appears.
      const countdown = [el("span", { class: "countdown", "aria-hidden": "true", dataset: { deadline: String(deadlineAt) } }, countdownText(deadlineAt)),
        el("span", { class: "sr-only" }, `${countdownText(deadlineAt)} to answer`)];
      let buttons;
      if (decision.ordering) {
        // Any order: each option moves up or down; the order shown is what is sent.
        entry.order ??= [...decision.options];
        const order = entry.order;
        const move = (i, by) => {
          [order[i], order[i + by]] = [order[i + by], order[i]];
          renderPrompts();
          $("prompts").querySelector(`li[data-option="${CSS.escape(order[i + by])}"] button.${by < 0 ? "up" : "down"}`)?.focus();
        };
        buttons = el("div", {},
          el("ol", { class: "ordering" }, order.map((o, i) =>
            el("li", { dataset: { option: o } }, el("span", { class: "name", title: optionText(o) }, optionText(o)), " ",
              el("button", { type: "button", class: "up", "aria-label": `Move ${optionText(o)} up`, title: `Move ${optionText(o)} up`, disabled: i === 0,
                onclick: () => move(i, -1) }, "\u2191"),
              el("button", { type: "button", class: "down", "aria-label": `Move ${optionText(o)} down`, title: `Move ${optionText(o)} down`,
                disabled: i === order.length - 1, onclick: () => move(i, 1) }, "\u2193")))),
          el("div", { class: "buttons" },
            el("button", { type: "button", class: "confirm-order big", onclick: () => decide(decision, [...order]) },
              `Confirm this order: ${order.map(optionText).join(", ")}`)));
      } else {
        buttons = el("div", { class: "buttons" }, decision.options.map((o) =>
          el("button", { type: "button", class: "big", dataset: { choice: o }, onclick: () => decide(decision, [o]) },
            optionText(o)[0].toUpperCase() + optionText(o).slice(1) + (decision.default.includes(o) ? " (default)" : ""))));
      }
      const who = decision.controller === "gm" ? "the GM" : decision.controller;
      nodes.push(el("div", { class: "prompt", dataset: { decision: decision.id, kind: decision.kind } },
        el("div", { class: "prompt-text" }, decision.prompt),
        el("div", { class: "muted" }, `For ${who}; `, countdown,
          `; then by default: ${decision.default.map(optionText).join(", ") || "nothing"}.`),
        el("div", { class: "prompt-bar", dataset: { deadline: String(deadlineAt), seconds: String(app.state?.options?.reaction_seconds || 30) } }, el("div", { class: "timer-fill" })),
        buttons));
    }
    $("prompts").replaceChildren(...nodes);
    paintTimers();
    renderWaiting();
  }

  function countdownText(deadlineAt) {
    const left = Math.max(0, Math.ceil((deadlineAt - Date.now()) / 1000));
    return `${left} s left`;
  }

  /** Countdowns and time bars: a bar shrinks and turns red in its last fifth (or 10 s). */
  function paintTimers() {
    for (const node of document.querySelectorAll(".countdown[data-deadline]")) {
      node.textContent = countdownText(Number(node.dataset.deadline));
    }
    for (const bar of document.querySelectorAll(".timer-bar[data-deadline], .prompt-bar[data-deadline]")) {
      const left = Math.max(0, (Number(bar.dataset.deadline) - Date.now()) / 1000);
      const total = Math.max(1, Number(bar.dataset.seconds) || left);
      const frac = Math.min(1, left / total);
      bar.firstChild.style.width = `${(frac * 100).toFixed(1)}%`;
      bar.classList.toggle("urgent", left <= Math.max(10, total / 5));
      if (bar.getAttribute("role") === "progressbar") bar.setAttribute("aria-valuenow", String(Math.round(left)));
    }
    showReconnect();
  }

  setInterval(paintTimers, 250);

  async function decide(decision, choice) {
    const done = await command("decide", { decision: decision.id, choice });
    if (done !== null) {
      app.prompts.delete(decision.id);
      renderPrompts();
    }
  }

  // -- the GM's controls -------------------------------------------------------------

  /** What keeps the encounter going, in words (docs/rules.md, 12: the dying, time-sensitive
   * threats, and two sides still standing). */
  function openReasons() {
    const s = app.state;
    if (s.phase !== "turns") return [];
    const reasons = [];
    const creatures = Object.values(s.creatures);
    for (const c of creatures) if (isDying(c)) reasons.push(`${c.name} is dying (stabilize or heal them)`);
    for (const h of Object.values(s.hazards || {})) if (h.time_sensitive) reasons.push(`the hazard “${h.name}” is time-sensitive`);
    for (const a of [...s.arena.assets, ...Object.values(s.effects || {})]) {
      if (a.time_sensitive && creatures.some((c) => c.zone === a.zone && !isOut(c))) reasons.push(`${a.name} in ${zoneName(a.zone)} is time-sensitive while someone is there`);
    }
    const standing = [...new Set(creatures.filter((c) => !isOut(c)).map((c) => c.side))];
    if (standing.length > 1) reasons.push(`${standing.join(" and ")} still stand`);
    if (s.keep_going) reasons.push("the GM chose to keep going");
    return reasons;
  }

  function renderGm() {
    const s = app.state;
    const panel = $("gm-panel");
    if (app.role !== "gm") {
      panel.hidden = true;
      return;
    }
    panel.hidden = false;
    const reasons = openReasons();
    $("gm-hint").replaceChildren(reasons.length
      ? el("p", { class: "hint" }, el("strong", {}, "The fight goes on because "), reasons.join("; "), ".")
      : s.phase === "turns" ? el("p", { class: "hint" }, "Nothing keeps the encounter open: the rules may end it.") : "");
    renderGmToken();
    renderStatBlock();
    const root = $("gm");
    // Rebuilt only when the phase or the roster changes, so half-filled forms survive events.
    const setupPhase = s.phase === "surprise" || s.phase === "positions" || s.phase === "initiative";
    // (And when a decision opens or closes: "decide" is offered while one is pending.)
    const key = `${s.phase}|${Object.values(s.creatures).map((c) => `${c.id}:${c.hidden}:${setupPhase ? c.zone : ""}`).join(",")}`
      + `|${s.pending.map((d) => d.id).join(",")}`;
    if (root.dataset.key === key) return;
    const keep = app.gmSeats?.querySelector(".seat-links") ?? null;
    root.dataset.key = key;
    const creatures = Object.values(s.creatures);
    const phaseIs = (p) => s.phase === p;

    // Setup: surprise, positions, initiative; folded away once turns begin.
    const surpriseBoxes = creatures.map((c) => el("input", { type: "checkbox", value: c.id }));
    const placeSelects = creatures.map((c) => el("select", { dataset: { creature: c.id }, "aria-label": `${c.name}'s zone` },
      s.arena.zones.map((z) => el("option", { value: z.id, selected: c.zone === z.id }, z.name))));
    // Each step runs the ones before it that are still due: nobody has to press "Set
    // surprise" when nobody is surprised, and the buttons say what they will do.
    const STEPS = ["surprise", "positions", "initiative"];
    const at = STEPS.indexOf(s.phase);
    // Steps pressed one after the other run one after the other (each sees the phase
    // the last one left), and wait for a command still in flight (it would drop them).
    const setupTo = (target) => {
      app.setupChain = (app.setupChain || Promise.resolve()).then(() => setupStep(target)).catch(() => {});
      return app.setupChain;
    };
    const setupStep = async (target) => {
      for (let i = 0; app.busy && i < 100; i++) await new Promise((done) => setTimeout(done, 50));
      const goal = STEPS.indexOf(target);
      // Where setup is now: the state's step, or further when a step this page just sent
      // was taken and its events are still on their way.
      const shown = STEPS.indexOf(app.state.phase);
      const done = app.setupDone && app.setupDone.until > Date.now() ? app.setupDone.at : -1;
      const at = shown < 0 ? -1 : Math.max(shown, done);
      if (at < 0 || at > goal) return;
      const step = async (type, params, next) => {
        if ((await command(type, params)) === null) return false;
        app.setupDone = { at: next, until: Date.now() + 5000 };
        return true;
      };
      if (at <= 1 && goal >= 1 && !(await placeAnyway())) return;
      if (at === 0 && !(await step("set_surprise", { surprised: surpriseBoxes.filter((b) => b.checked).map((b) => b.value) }, 1))) return;
      if (goal === 0) return;
      if (at <= 1 && !(await step("place", { positions: Object.fromEntries(placeSelects.map((sel) => [sel.dataset.creature, sel.value])) }, 2))) return;
      if (goal === 1) return;
      await step("roll_initiative", {}, 3);
    };
    const stepButton = (id, target, label, doneText) => el("button", {
      type: "button", dataset: { setup: id }, disabled: at < 0 || at > STEPS.indexOf(target),
      title: at > STEPS.indexOf(target) ? doneText : null, onclick: () => setupTo(target) }, label);
    const setup = el("details", { class: "setup fold", open: setupPhase },
      el("summary", {}, setupPhase ? "Setup" : "Setup (done)"),
      el("p", { class: "muted setup-help" }, setupPhase
        ? "Tick whoever is surprised (nobody, if you tick none), choose each creature's zone, then press "
          + "the step you want: each one does the steps before it that are still due."
        : "Surprise, positions and initiative are settled."),
      el("div", { class: "gm-row" }, "Surprised:", creatures.map((c, i) => el("label", {}, surpriseBoxes[i], c.name))),
      el("div", { class: "gm-row" },
        stepButton("set_surprise", "surprise", "Set surprise", "Surprise is settled.")),
      el("div", {}, creatures.map((c, i) => el("div", { class: "gm-row" }, el("label", {}, `${c.name} in `, placeSelects[i])))),
      el("div", { class: "gm-row" },
        stepButton("place", "positions", at === 0 ? "Set surprise and place creatures" : "Place creatures", "Positions are settled."),
        stepButton("roll_initiative", "initiative", at < 2 ? "Settle the rest and roll initiative" : "Roll initiative", "Initiative is rolled.")),
      el("p", { class: "setup-note", id: "setup-note", role: "status" }));
    if (at >= 0 && at <= 1) noteWaitingSeats();

    // Seats: create_seat -> a link to hand to the player. Built once per roster, so a
    // half-typed player id and the links already made survive every other update.
    const rosterKey = creatures.map((c) => c.id).join(",");
    if (!app.gmSeats || app.gmSeats.dataset.roster !== rosterKey) app.gmSeats = seatsSection(creatures, rosterKey, keep);
    app.gmSeats.open = setupPhase || app.gmSeats.open;
    const seats = app.gmSeats;

    // Every other GM command of the current phase, as forms, folded.
    // (A pending decision may be answered here too, for a player who is away.)
    const gmSpecs = [...app.commands.values()].filter((spec) => (spec.who === "gm" || (spec.id === "decide" && s.pending.length))
      && spec.phases.includes(s.phase) && !["set_surprise", "place", "roll_initiative"].includes(spec.id));
    const gmCommands = el("details", { class: "fold more-gm", open: root.querySelector("details.more-gm")?.open ?? false }, el("summary", {}, "More GM commands"),
      gmSpecs.map((spec) => commandForm(spec)));

    const end = s.phase === "ended" ? null : el("div", { class: "gm-row" },
      el("button", { type: "button", dataset: { gm: "end" }, class: "danger", onclick: endEncounter }, "End the encounter…"));
    root.replaceChildren(...[setup, seats, gmCommands, end].filter(Boolean)); // (a null would be written "null")
  }

  /** The seats still waiting for their character (list_seats), or [] if it cannot say. */
  async function waitingSeats() {
    try {
      const found = await request("list_seats", { encounter: seat.encounter });
      return found.seats.filter((x) => x.waiting).map((x) => x.player);
    } catch {
      return [];
    }
  }

  /** Beside the setup buttons: who is shut out once the creatures are placed. */
  async function noteWaitingSeats() {
    const waiting = await waitingSeats();
    const note = $("setup-note");
    if (!note) return;
    note.textContent = waiting.length
      ? `Still waiting for ${waiting.length > 1 ? `${waiting.slice(0, -1).join(", ")} and ${waiting.at(-1)}'s characters` : `${waiting[0]}'s character`}. Once the creatures are placed, the server `
        + "takes no more characters: a latecomer has to ask you to add theirs."
      : "";
  }

  /** Placing shuts out the seats without a character: ask first when one waits. */
  async function placeAnyway() {
    const waiting = await waitingSeats();
    if (!waiting.length) return true;
    return confirm(`${waiting.join(", ")} ${waiting.length === 1 ? "has" : "have"} not sent a character yet. `
      + "Once the creatures are placed the server takes no more characters. Place them anyway?");
  }

  /** One confirmed button ends the encounter, saying what still keeps it going. */
  async function endEncounter() {
    const reasons = openReasons();
    const why = reasons.length ? ` The fight is not over: ${reasons.join("; ")}.` : "";
    if (!confirm(`End the encounter now for everyone?${why} Everyone sees it end.`)) return;
    await command("end_encounter", { force: true, reason: "the GM ended the encounter" });
  }

  function openGmToken(cid) {
    app.gmToken = app.gmToken === cid ? null : cid;
    renderGmToken();
    renderStatBlock();
    placeGmToken();
    if (app.gmToken) gmTokenBox().scrollIntoView({ block: "nearest" });
  }

  /** The token panel (kept by reference: while it sits in the map, a redraw of the map
   * takes it out of the document until it is placed again). */
  function gmTokenBox() {
    app.gmTokenBox ??= document.getElementById("gm-token");
    return app.gmTokenBox;
  }

  /** The GM's token panel opens beside its token on the map (under it, in its zone),
   * not in the GM panel far away; closed, it goes back there. */
  function placeGmToken() {
    const box = gmTokenBox();
    app.gmTokenHome ??= box.parentNode;
    const token = app.gmToken && !box.hidden
      ? document.querySelector(`#map .token[data-creature="${CSS.escape(app.gmToken)}"]`) : null;
    if (!token) {
      if (box.parentNode !== app.gmTokenHome) app.gmTokenHome.append(box);
      return;
    }
    const group = token.closest("details.token.group");
    const anchor = group && !group.open ? group : token;
    if (anchor.nextSibling !== box) anchor.after(box);
  }

  /** Per-token GM actions: damage, heal, a condition from the known ones (with rounds and
   * a save), hide or reveal, take out of the fight. */
  function renderGmToken() {
    const box = gmTokenBox();
    const c = app.gmToken ? creature(app.gmToken) : null;
    if (!c || app.role !== "gm") {
      box.hidden = true;
      box.replaceChildren();
      delete box.dataset.tokenOf;
      return;
    }
    box.hidden = false;
    // The fields are built once per creature (what the GM is typing survives every
    // event); only the state part (hit points, conditions, hidden) is redrawn.
    if (box.dataset.tokenOf !== c.id) {
      box.dataset.tokenOf = c.id; // not data-creature: the token beside it has that
      delete box.dataset.key;
      const id = c.id;
      const amount = el("input", { type: "number", min: "1", step: "1", name: "amount", placeholder: "amount", "aria-label": "Hit points", class: "short" });
      // An empty box sends nothing: it asks for the amount (it never starts at 1).
      const readAmount = () => Math.max(0, Number.parseInt(amount.value, 10) || 0);
      const hurt = (n, params = {}) => command("damage", { creature: id, amount: n, ...params });
      const typed = (send) => () => {
        const n = readAmount();
        if (!n) {
          amount.focus();
          amount.setAttribute("aria-invalid", "true");
          return;
        }
        amount.removeAttribute("aria-invalid");
        send(n);
      };
      const condition = el("select", { name: "condition", "aria-label": "Condition" }, conditionOptions());
      const rounds = el("input", { type: "number", min: "1", step: "1", name: "rounds", "aria-label": "Rounds (empty: until removed)", placeholder: "rounds", class: "short" });
      const save = el("select", { name: "save", "aria-label": "Save that ends it" }, el("option", { value: "" }, "no save"), ABILITIES.map((a) => el("option", { value: a }, `${a.toUpperCase()} save`)));
      const dc = el("input", { type: "number", min: "1", step: "1", name: "dc", "aria-label": "Save DC", placeholder: "DC", class: "short" });
      // The damage's type: the creature's resistances, vulnerabilities and immunities apply.
      const damageType = el("select", { name: "damage_type", "aria-label": "Damage type" }, el("option", { value: "" }, "untyped"), DAMAGE_TYPES.map((t) => el("option", { value: t }, t)));
      box.replaceChildren(
        el("div", { class: "token-state" }),
        el("div", { class: "gm-row" }, el("label", {}, "HP ", amount),
          // The server's damage command: at 0 hit points a PC is dying and an NPC
          // defeated, and what follows from that follows (the rules decide, not the page).
          damageType,
          el("button", { type: "button", dataset: { tokenAct: "damage" }, onclick: typed((n) => hurt(n, damageType.value ? { damage_type: damageType.value } : {})) }, "Damage"),
          el("button", { type: "button", dataset: { tokenAct: "heal" }, onclick: typed((n) => command("heal", { creature: id, amount: n })) }, "Heal")),
        // One tap: the common amounts, untyped damage or healing.
        el("div", { class: "gm-row quick-hp" },
          [1, 5, 10].map((n) => el("button", { type: "button", dataset: { quickDamage: String(n) }, "aria-label": `Damage ${n}`, onclick: () => hurt(n) }, `−${n}`)),
          [1, 5, 10].map((n) => el("button", { type: "button", dataset: { quickHeal: String(n) }, "aria-label": `Heal ${n}`, onclick: () => command("heal", { creature: id, amount: n }) }, `+${n}`))),
        el("div", { class: "gm-row" }, condition, rounds, save, dc,
          el("button", { type: "button", dataset: { tokenAct: "condition" }, onclick: () => {
            const n = Number.parseInt(rounds.value, 10);
            if (!Number.isFinite(n) && !save.value) {
              command("grant_condition", { creature: id, condition: condition.value });
              return;
            }
            const params = { creature: id, condition: condition.value };
            if (Number.isFinite(n)) params.rounds = n;
            if (save.value) {
              params.save = save.value;
              const d = Number.parseInt(dc.value, 10);
              if (Number.isFinite(d)) params.dc = d;
            }
            command("apply_effect", params);
          } }, "Apply")),
        el("div", { class: "token-controls" }));
    }
    const key = `${c.id}|${c.hp}|${c.conditions.join(",")}|${c.hidden}|${effectsOf(c.id).map((e) => e.id).join(",")}`;
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.querySelector(".token-state").replaceChildren(
      el("h3", {}, sideMark(c), " ", c.name, " ", el("span", { class: "muted" }, hpText(c))));
    const controls = box.querySelector(".token-controls");
    keepFocus(controls, () => controls.replaceChildren(...[
      c.conditions.length ? el("div", { class: "gm-row" }, "Remove:", c.conditions.map((cond) => {
        const effect = effectsOf(c.id).find((e) => e.condition === cond);
        return el("button", { type: "button", dataset: { removeCondition: cond }, onclick: () => (effect
          ? command("end_effect_of", { effect: effect.id, reason: "ended by the GM" })
          : command("remove_condition", { creature: c.id, condition: cond })) }, `${cond} ✕`);
      })) : null,
      el("div", { class: "gm-row" },
        el("button", { type: "button", dataset: { hide: c.id }, onclick: () => command("override", { creature: c.id, field: "hidden", value: !c.hidden }) },
          c.hidden ? "Reveal to players" : "Hide from players"),
        isDying(c) ? el("button", { type: "button", dataset: { tokenAct: "stabilize" }, onclick: () => command("stabilize", { creature: c.id }) }, "Stabilize") : null,
        // Out of the fight through the rules' own conditions (grant_condition): the GM
        // says how it left (fled, surrendered or beaten), which the log and the
        // encounter's end then tell; nothing is deleted, so a rewind brings it back.
        el("select", { name: "remove-as", "aria-label": "How it leaves the fight" },
          [["escaped", "it flees (escaped)"], ["surrendered", "it surrenders"], ["defeated", "it is beaten (defeated)"]]
            .map(([v, t]) => el("option", { value: v }, t))),
        el("button", { type: "button", dataset: { tokenAct: "remove" }, title: "Takes the creature out of the fight, as the choice beside says",
          onclick: (ev) => command("grant_condition", { creature: c.id,
            condition: ev.currentTarget.parentNode.querySelector("select[name=remove-as]").value }) }, "Remove from the fight"),
        el("button", { type: "button", class: "close", onclick: () => openGmToken(c.id) }, "Close"))].filter(Boolean)));
  }

  // -- the GM's stat block of the creature whose token is open --------------------------

  /** A feature's key in its creature's `resources` (SDK `resource_key`). */
  function resourceKey(f) {
    if (f.id !== "gm") return f.id;
    return `gm-${f.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "feature"}`;
  }

  /** How often a feature may be used, and what it has left: "Recharge 5–6: ready". */
  function usesText(f, c) {
    const u = f.uses;
    if (!u) return null;
    const left = c.resources?.[resourceKey(f)];
    if (u.recharge != null) {
      const range = u.recharge >= 6 ? "6" : `${u.recharge}–6`;
      return `Recharge ${range}: ${left === 0 ? "spent" : "ready"}`;
    }
    const most = u.charges ?? u.count;
    const per = u.per ? `/${u.per.replaceAll("_", " ")}` : " charges";
    return `${most}${per}: ${left ?? most} left`;
  }

  /** Whether the server plays a feature itself, or the GM adjudicates it (and why). */
  function automationBadge(f) {
    if (f.automated === true) return el("span", { class: "auto yes", dataset: { automated: "true" } }, "Automated");
    return el("span", { class: "auto gm", dataset: { automated: "false" }, title: f.gm || "" },
      "GM adjudicates", f.gm ? `: ${f.gm}` : "");
  }

  const ACTION_KINDS = [["action", "Actions"], ["bonus_action", "Bonus actions"], ["reaction", "Reactions"], ["legendary", "Legendary actions"]];

  function attackLine(a) {
    const reach = a.kind === "ranged" ? `range ${a.range}${a.long_range ? `/${a.long_range}` : ""} ft` : `reach ${a.reach} ft`;
    const extra = (a.extra_damage || []).map((x) => ` plus ${x.damage} ${x.damage_type}`).join("");
    return `${a.kind === "ranged" ? "Ranged" : "Melee"} ${fmtBonus(a.bonus)} to hit, ${reach}; ${a.damage} ${a.damage_type || ""}${extra}${a.magical ? " (magical)" : ""}`;
  }

  function featureItem(f, c, kind) {
    const uses = usesText(f, c);
    // A Multiattack's sequences as the server plays them (one action).
    const sequences = f.id.replace(/^[a-z0-9_]+\./, "") === "multiattack" && Array.isArray(f.params?.sequences)
      ? f.params.sequences.map((seq) => (Array.isArray(seq) ? seq : []).map((it) => (typeof it === "string" ? it : `${it.attack}${it.disadvantage ? " (disadvantage)" : ""}`)).join(", ")) : [];
    return el("li", { class: "feature", dataset: { feature: f.id, kind } },
      el("div", { class: "feature-head" }, el("strong", {}, f.name), uses ? el("span", { class: "uses", dataset: { uses: resourceKey(f) } }, uses) : null, automationBadge(f)),
      f.text ? el("div", { class: "feature-text" }, f.text) : null,
      sequences.length ? el("div", { class: "feature-sequence" }, `Sequence: ${sequences.join("; or ")}`) : null);
  }

  /** The GM's view of the open token's creature: its whole stat block (the snapshot
   * carries it for the GM only; a player's page never gets another creature's). */
  function renderStatBlock() {
    const box = $("stat-block");
    const c = app.role === "gm" && app.gmToken ? creature(app.gmToken) : null;
    if (!c) {
      box.hidden = true;
      box.replaceChildren();
      delete box.dataset.key;
      return;
    }
    const key = JSON.stringify(c);
    box.hidden = false;
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.dataset.statBlock = c.id;
    const list = (items) => items.filter(Boolean).join(", ");
    const signed = (obj) => list(Object.entries(obj || {}).map(([k, v]) => `${k.replaceAll("_", " ")} ${fmtBonus(v)}`));
    const row = (label, value) => (value || value === 0 ? el("div", { class: "sb-row" }, el("dt", {}, label), el("dd", {}, String(value))) : null);
    const nonmagical = (types) => (types && types.length ? `${types.join(", ")} from nonmagical attacks` : null);
    const speeds = list(Object.entries(c.speeds || {}).map(([m, ft]) => (m === "walk" ? `${ft} ft` : `${m} ${ft} ft`)));
    const senses = list([...Object.entries(c.senses || {}).map(([k, ft]) => `${k} ${ft} ft`), `passive Perception ${c.passive_perception}`]);
    const dl = el("dl", { class: "sb-props" },
      row("Armor Class", c.ac),
      row("Hit Points", `${c.hp} / ${c.max_hp}${c.hit_dice ? ` (${c.hit_dice})` : ""}`),
      row("Speed", speeds),
      row("Saving Throws", signed(c.saves)),
      row("Skills", signed(c.skills)),
      row("Damage Vulnerabilities", list(c.damage_vulnerabilities || [])),
      row("Damage Resistances", list([...(c.damage_resistances || []), nonmagical(c.damage_resistances_nonmagical)])),
      row("Damage Immunities", list([...(c.damage_immunities || []), nonmagical(c.damage_immunities_nonmagical)])),
      row("Condition Immunities", list(c.condition_immunities || [])),
      row("Senses", senses),
      row("Proficiency", fmtBonus(c.proficiency ?? 0)),
      row("DCs", `maneuver ${c.maneuver_dc}, spell ${c.spell_dc}`));
    const abilities = el("table", { class: "sb-abilities" },
      el("thead", {}, el("tr", {}, ABILITIES.map((a) => el("th", { scope: "col" }, a.toUpperCase())))),
      el("tbody", {}, el("tr", {}, ABILITIES.map((a) => el("td", { dataset: { ability: a } }, c.abilities && a in c.abilities ? fmtBonus(c.abilities[a]) : "—")))));
    const sections = [];
    if ((c.traits || []).length) {
      sections.push(el("section", { class: "sb-section", dataset: { section: "traits" } }, el("h4", {}, "Traits"),
        el("ul", { class: "features" }, c.traits.map((f) => featureItem(f, c, "trait")))));
    }
    const attacks = (c.attacks || []).map((a) => el("li", { class: "feature attack", dataset: { attack: a.name } },
      el("div", { class: "feature-head" }, el("strong", {}, a.name[0].toUpperCase() + a.name.slice(1)), el("span", { class: "auto yes", dataset: { automated: "true" } }, "Automated")),
      el("div", { class: "feature-text" }, attackLine(a)),
      (a.on_hit || []).length ? el("ul", { class: "riders" }, a.on_hit.map((r) => el("li", { dataset: { rider: r.id } },
        `On a hit: ${r.text || r.id} `, automationBadge(r)))) : null));
    for (const [kind, title] of ACTION_KINDS) {
      const own = (c.actions || []).filter((f) => (f.kind || "action") === kind);
      const items = [...(kind === "action" ? attacks : []), ...own.map((f) => featureItem(f, c, kind))];
      if (items.length) sections.push(el("section", { class: "sb-section", dataset: { section: kind } }, el("h4", {}, title), el("ul", { class: "features" }, items)));
    }
    const resources = Object.entries(c.resources || {});
    if (resources.length) {
      const all = [...(c.traits || []), ...(c.actions || [])];
      sections.push(el("section", { class: "sb-section", dataset: { section: "resources" } }, el("h4", {}, "Resources"),
        el("ul", { class: "sb-resources" }, resources.map(([k, left]) => {
          const f = all.find((x) => resourceKey(x) === k);
          return el("li", { dataset: { resource: k } }, f ? `${f.name}: ${usesText(f, c)}` : `${k}: ${left} left`);
        }))));
    }
    box.replaceChildren(
      el("h3", { id: "stat-block-title" }, `${c.name}: stat block`),
      el("div", { class: "muted sb-sub" }, `${c.size || ""} · ${c.side}${c.group ? ` · group ${c.group}` : ""}`),
      dl, abilities, ...sections);
  }

  function seatsSection(creatures, rosterKey, keep) {
    // A seat's player: one already at the table (a fresh link for them) or a new name.
    const players = [...new Set(creatures.map((c) => c.controller).filter((p) => p && p !== "gm"))];
    const playerInput = el("input", { type: "text", name: "player", list: "seat-players", placeholder: "Player's name", "aria-label": "Player's name (one at the table, or a new seat)" });
    const playerList = el("datalist", { id: "seat-players" }, players.map((p) => el("option", { value: p })));
    const seatBoxes = creatures.map((c) => el("input", { type: "checkbox", value: c.id }));
    const links = keep ?? el("div", { class: "seat-links" });
    const linkFor = (token) => `${location.origin}${location.pathname}#encounter=${encodeURIComponent(seat.encounter)}&token=${encodeURIComponent(token)}`;
    // The link under public_url or the address this page was opened on, and its QR code
    // (table_link); this page's own address if the server cannot say.
    const addLink = async (label, token) => {
      let href = linkFor(token);
      let qr = null;
      try {
        const made = await request("table_link", { encounter: seat.encounter, token });
        href = made.url;
        qr = el("img", { class: "seat-qr", src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(made.qr_svg)}`,
          alt: `QR code of the link for ${label}`, width: 148, height: 148 });
      } catch { /* an older server */ }
      links.append(el("div", { class: "seat-link", dataset: { seat: label } }, `${label}: `,
        el("a", { href, target: "_blank", rel: "noopener" }, href), qr));
    };
    return el("details", { class: "seats fold", dataset: { roster: rosterKey } }, el("summary", {}, "Seats and links"),
      el("div", { class: "gm-row" }, playerInput, playerList),
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

  /** A link that opens nothing: only the message, and a field to paste another link. */
  function showBadLink(message) {
    $("table").hidden = true;
    clearError();
    document.body.classList.remove("offline");
    setStatus("Not connected", "offline");
    document.body.classList.remove("offline");
    $("no-link-message").textContent = message;
    $("no-link").hidden = false;
  }

  app.render = render; // the browser tests redraw after setting app.actions by hand
  app.request = request; // chat.js sends its own requests on this page's connection
  app.seat = seat;

  function start() {
    $("open-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = new FormData(ev.target).get("link").trim();
      const next = parseSeat(text);
      if (!next.encounter || !next.token) {
        $("no-link-message").textContent = "That is not a table link: it needs #encounter=…&token=… at its end.";
        return;
      }
      location.hash = new URLSearchParams(next).toString();
      location.reload();
    });
    const sound = $("sound");
    sound.addEventListener("change", () => {
      app.sound = sound.checked;
      if (app.sound) beep();
    });
    $("undo").addEventListener("click", () => undoLast());
    const watching = new URLSearchParams(location.hash.replace(/^#/, "")).has("watch"); // a public encounter, no token
    if (!seat.encounter || (!seat.token && !watching)) {
      showBadLink("This page needs a table link (…/table/#encounter=…&token=…): ask your GM for yours.");
      return;
    }
    window.addEventListener("hashchange", () => location.reload());
    connect();
  }

  start();
})();
