// The zonekeep GM's home and the players' character form: plain JavaScript beside the
// table (table.js), written from protocol/SPEC.md. It has a websocket of its own.
//
// - /table/ with no #encounter= in its hash (or with #gm_key=KEY): the GM's home, the
//   lobby (my encounters, public ones) and "New encounter" (builder.js).
// - /table/#encounter=E&token=T: table.js runs the table; this file only adds, for a
//   player whose seat has no character yet, the character form (submit_character), and
//   for the GM, "waiting for Ana's character" while a seat waits.
// Every address is relative to the page, so it works under a reverse proxy's prefix.
"use strict";

(() => {
  const PROTOCOL = "1.3";
  const CLIENT = { name: "zonekeep-web-home", version: "0.1.0" };
  const KEY_STORE = "zonekeep.gm_key";

  const $ = (id) => document.getElementById(id);

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

  // ---------------------------------------------------------------------------------
  // A connection: hello, requests matched by id, notifications to a callback.

  class ServerError extends Error {
    constructor(error) {
      super(error.message);
      this.wireName = error.name;
    }
  }

  function socketUrl() {
    const url = new URL("../ws", location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    url.search = "";
    url.hash = "";
    return url.href;
  }

  class Connection {
    constructor(onNotification) {
      this.onNotification = onNotification || (() => {});
      this.nextId = 1;
      this.inFlight = new Map();
      this.nextSendAt = 0;
      this.welcome = null;
      this.closed = false;
    }

    open(gmKey) {
      return new Promise((resolve, reject) => {
        const ws = new WebSocket(socketUrl());
        this.ws = ws;
        ws.addEventListener("open", async () => {
          try {
            const params = { protocol: PROTOCOL, client: CLIENT };
            if (gmKey) params.gm_key = gmKey;
            this.welcome = await this.request("hello", params);
            // Stay under the server's idle timeout.
            const idle = this.welcome.limits?.idle_timeout_seconds ?? 300;
            this.pinger = setInterval(() => {
              if (ws.readyState === WebSocket.OPEN) this.request("ping").catch(() => {});
            }, Math.max(5, idle / 3) * 1000);
            resolve(this.welcome);
          } catch (err) {
            reject(err);
          }
        });
        ws.addEventListener("message", (msg) => {
          let message;
          try {
            message = JSON.parse(msg.data);
          } catch {
            return;
          }
          if ("id" in message) {
            const pending = this.inFlight.get(message.id);
            if (!pending) return;
            this.inFlight.delete(message.id);
            if ("error" in message) pending.reject(new ServerError(message.error));
            else pending.resolve(message.result);
          } else if (message.method) {
            this.onNotification(message.method, message.params);
          }
        });
        ws.addEventListener("close", () => {
          this.closed = true;
          clearInterval(this.pinger);
          for (const pending of this.inFlight.values()) {
            pending.reject(new Error("The connection to the server was lost; reload the page."));
          }
          this.inFlight.clear();
          reject(new Error("Could not reach the server."));
        });
      });
    }

    request(method, params = {}) {
      const ws = this.ws;
      if (!ws || ws.readyState !== WebSocket.OPEN) {
        return Promise.reject(new Error("Not connected to the server; reload the page."));
      }
      const id = this.nextId++;
      const text = JSON.stringify({ id, method, params });
      const limits = this.welcome?.limits;
      if (limits && new TextEncoder().encode(text).length > limits.max_message_bytes) {
        return Promise.reject(new Error(`That is too large to send (at most ${limits.max_message_bytes} bytes).`));
      }
      const interval = limits ? 1000 / limits.rate_per_second : 0;
      const now = Date.now();
      const sendAt = Math.max(now, this.nextSendAt);
      this.nextSendAt = sendAt + interval;
      return new Promise((resolve, reject) => {
        this.inFlight.set(id, { resolve, reject });
        const send = () => (ws.readyState === WebSocket.OPEN ? ws.send(text) : null);
        if (sendAt > now) setTimeout(send, sendAt - now);
        else send();
      });
    }

    close() {
      if (this.ws) this.ws.close(1000);
    }
  }

  // The web table's address for links: the server's answer to table_home (public_url,
  // else the address this page was opened on), else this page's own address.
  function tableLink(encounter, token) {
    const params = new URLSearchParams({ encounter, token });
    const base = home.base || `${location.origin}${location.pathname}`;
    return `${base}#${params.toString()}`;
  }

  /** A seat link's QR code, rendered by the server (table_link), as an image a phone scans. */
  function qrCode(link) {
    const figure = el("figure", { class: "zk-qr", dataset: { qr: link.seat } },
      el("figcaption", {}, `Scan for ${link.label}`));
    if (!home.conn || !link.token) return null;
    home.conn.request("table_link", { encounter: link.encounter, token: link.token }).then((result) => {
      figure.prepend(el("img", {
        src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(result.qr_svg)}`,
        alt: `QR code of the link for ${link.label}`, width: 148, height: 148, dataset: { url: result.url },
      }));
    }).catch(() => figure.remove());
    return figure;
  }

  async function copyText(text, button) {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  }

  /** A list of links, each with a Copy button, and for a player or the spectators a QR
   * code. links: [{label, href, seat, encounter, token}] */
  function linkList(links) {
    return el("ul", { class: "zk-links" }, links.map((link) =>
      el("li", { dataset: { link: link.seat } },
        el("div", { class: "zk-link-row" },
          el("span", { class: "zk-link-label" }, link.label),
          " ",
          el("a", { href: link.href, target: "_blank", rel: "noopener" }, link.href),
          " ",
          el("button", { type: "button", onclick: (ev) => copyText(link.href, ev.target) }, "Copy")),
        link.seat === "gm" ? null : qrCode(link))));
  }

  // Exported to builder.js.
  window.zonekeepHome = { el, Connection, ServerError, tableLink, linkList };

  // ---------------------------------------------------------------------------------
  // The GM's home: the key, the lobby, public encounters, "New encounter".

  const home = { conn: null, key: null, root: null, base: null, info: null };

  function storedKey() {
    try {
      return localStorage.getItem(KEY_STORE);
    } catch {
      return null;
    }
  }

  function setStatus(text, kind) {
    const node = $("status");
    if (!node) return;
    node.textContent = text;
    node.className = `status status-${kind}`;
  }

  function homeError(message) {
    const node = $("home-error");
    node.textContent = message || "";
    node.hidden = !message;
  }

  async function startHome() {
    const hash = new URLSearchParams(location.hash.replace(/^#/, ""));
    const given = hash.get("gm_key");
    if (given) {
      try {
        localStorage.setItem(KEY_STORE, given);
      } catch { /* private mode: the key lives in this page only */ }
      history.replaceState(null, "", location.pathname + location.search);
    }
    home.key = given || storedKey();
    const noLink = $("no-link");
    if (noLink) noLink.hidden = true;
    $("encounter-name").textContent = "home";
    document.title = "zonekeep — home";
    home.root = el("main", { id: "home", class: "zk-home" },
      el("div", { id: "home-error", class: "error", role: "alert", hidden: true }),
      el("section", { id: "home-key", class: "panel" }),
      el("section", { id: "home-builder", class: "panel", hidden: true }),
      el("section", { id: "home-editor", class: "panel", hidden: true }),
      el("section", { id: "home-mine", class: "panel" },
        el("div", { class: "zk-head" },
          el("h2", {}, "My encounters"),
          el("span", {},
            el("button", { type: "button", id: "open-editor", onclick: openEditor }, "Arena editor"),
            " ",
            el("button", { type: "button", id: "new-encounter", onclick: openBuilder }, "New encounter"))),
        el("div", { id: "home-links" }),
        el("div", { id: "my-encounters" })),
      el("section", { id: "home-public", class: "panel" },
        el("h2", {}, "Public encounters"),
        el("div", { id: "public-encounters" })),
      el("section", { class: "panel" },
        el("h2", {}, "Open a table"),
        el("p", { class: "muted" }, "A link from a GM opens a seat: paste it here."),
        el("form", { id: "home-open", onsubmit: (ev) => {
          ev.preventDefault();
          const text = new FormData(ev.target).get("link").trim();
          const hash = new URLSearchParams(text.includes("#") ? text.slice(text.indexOf("#") + 1) : text);
          if (!hash.get("encounter") || !hash.get("token")) {
            homeError("That is not a table link: it needs #encounter=…&token=… at its end.");
            return;
          }
          location.hash = new URLSearchParams({ encounter: hash.get("encounter"), token: hash.get("token") }).toString();
          location.reload();
        } },
        el("label", { for: "home-link" }, "Your table link "),
        el("input", { id: "home-link", name: "link", required: true, autocomplete: "off", placeholder: "https://…/table/#encounter=…&token=…" }),
        " ",
        el("button", { type: "submit" }, "Open"))));
    $("top").after(home.root);
    await connectHome();
  }

  async function connectHome() {
    setStatus("Connecting…", "connecting");
    if (home.conn) home.conn.close();
    home.conn = new Connection((method, params) => {
      if (method === "encounter_closed" || method === "event") scheduleLobby();
    });
    try {
      const welcome = await home.conn.open(home.key);
      setStatus(welcome.gm ? `GM ${welcome.gm}` : "Connected", "online");
      try {
        home.info = await home.conn.request("table_home");
        home.base = home.info.url;
      } catch {
        home.info = null; // an older server: links from this page's address
      }
      renderKey(welcome.gm);
      homeError("");
      await refreshLobby();
      clearInterval(home.refresher);
      home.refresher = setInterval(() => {
        if (document.visibilityState === "visible") refreshLobby().catch(() => {});
      }, 10000);
      if (window.zonekeepBuilder?.hasDraft()) openBuilder();
    } catch (err) {
      if (err instanceof ServerError && err.wireName === "bad_gm_key") {
        forgetKey(false);
        homeError(`${err.message} The key was forgotten; type it again.`);
        return connectHome();
      }
      setStatus("Not connected", "offline");
      homeError(err.message);
    }
  }

  function forgetKey(reconnect = true) {
    try {
      localStorage.removeItem(KEY_STORE);
    } catch { /* nothing kept */ }
    home.key = null;
    if (reconnect) connectHome();
  }

  function renderKey(gm) {
    const box = $("home-key");
    box.replaceChildren();
    const refused = Boolean(home.info && !home.info.may_create && !gm);
    $("new-encounter").disabled = refused;
    $("new-encounter").title = refused ? home.info.how : "";
    if (gm) {
      box.append(el("div", { class: "zk-head" },
        el("span", {}, "Signed in with the GM key of ", el("strong", { id: "gm-name" }, gm), " (kept in this browser)."),
        el("button", { type: "button", id: "forget-key", onclick: () => forgetKey() }, "Forget key")));
      return;
    }
    const info = home.info;
    const form = el("form", { id: "key-form", onsubmit: (ev) => {
      ev.preventDefault();
      const key = new FormData(ev.target).get("gm_key").trim();
      if (!key) return;
      try {
        localStorage.setItem(KEY_STORE, key);
      } catch { /* kept for this page only */ }
      home.key = key;
      connectHome();
    } },
    el("label", { for: "gm-key-input" }, "GM key "),
    el("input", { id: "gm-key-input", name: "gm_key", type: "password", autocomplete: "off" }),
    " ",
    el("button", { type: "submit" }, "Use key"),
    el("p", { class: "muted" }, "A key you type is kept in this browser only; “Forget key” removes it."));
    if (info && info.may_create) {
      // No key needed here: say why; the key box stays folded away.
      box.append(el("p", { id: "home-rule" }, info.how),
        el("details", { id: "key-details" }, el("summary", {}, "I have a GM key"), form));
      return;
    }
    box.append(
      el("h2", {}, "GM key"),
      el("p", { id: "home-rule" }, info ? info.how
        : "Type the GM key your server's operator gave you: this browser keeps it. Without one you "
        + "can create encounters only on an open server (or from the server's own machine when "
        + "it has no key at all)."),
      form);
  }

  let lobbyTimer = null;
  function scheduleLobby() {
    clearTimeout(lobbyTimer);
    lobbyTimer = setTimeout(() => refreshLobby().catch(() => {}), 300);
  }

  function when(iso) {
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
  }

  function seatsText(seats) {
    if (!seats.length) return "no seats";
    return seats.map((s) => {
      const joined = s.connections === null ? "" : s.connections > 0 ? " (here)" : " (away)";
      const waiting = s.waiting ? " — waiting for their character" : "";
      return `${s.player}${joined}${waiting}`;
    }).join(", ");
  }

  async function refreshLobby() {
    const conn = home.conn;
    const mine = [];
    const everyone = [];
    for (let offset = 0; ; offset += 100) {
      const page = await conn.request("list_encounters", { offset, limit: 100 });
      for (const e of page.encounters) {
        if (e.mine) mine.push(e);
        // A public one is listed under "Public encounters" for everyone, its GM (and the
        // operator, to whom every encounter is "mine") included.
        if (!e.mine || e.public) everyone.push(e);
      }
      if (offset + page.encounters.length >= page.total || !page.encounters.length) break;
    }
    const box = $("my-encounters");
    if (!mine.length) {
      box.replaceChildren(el("p", { class: "muted" }, "No encounters of yours yet: make one with “New encounter”."));
    } else {
      box.replaceChildren(el("table", { class: "zk-lobby" },
        el("thead", {}, el("tr", {}, ["Title", "Arena", "State", "Round", "Players", "Last activity", ""].map((h) => el("th", {}, h)))),
        el("tbody", {}, mine.map((e) => el("tr", { dataset: { encounter: e.id } },
          el("td", { class: "zk-title" }, e.title, e.public ? el("span", { class: "muted" }, " (public)") : null),
          el("td", {}, e.arena),
          el("td", {}, e.status === "open" ? e.phase : e.phase === "ended" ? "ended" : "archived"),
          el("td", {}, String(e.round)),
          el("td", { class: "zk-seats" }, seatsText(e.seats),
            e.seats.filter((s) => s.waiting).map((s) => el("div", { class: "zk-waiting" }, `waiting for ${s.player}'s character`))),
          el("td", {}, when(e.last_activity)),
          el("td", { class: "zk-actions" }, e.status === "open" ? [
            el("button", { type: "button", dataset: { action: "open" }, onclick: () => openEncounter(e) }, "Open"),
            el("button", { type: "button", dataset: { action: "links" }, onclick: () => freshLinks(e) }, "Fresh links"),
            el("button", { type: "button", dataset: { action: "rotate" }, onclick: () => rotateGmLink(e) }, "New GM link…"),
            el("button", { type: "button", dataset: { action: "end" }, onclick: () => endEncounter(e) }, "End"),
            el("button", { type: "button", dataset: { action: "archive" }, onclick: () => archive(e) }, "Archive"),
          ] : null))))));
    }
    const pub = $("public-encounters");
    const open = everyone.filter((e) => e.status === "open");
    pub.replaceChildren(open.length
      ? el("ul", {}, open.map((e) => el("li", { dataset: { encounter: e.id } },
        el("strong", {}, e.title), ` — ${e.arena}, ${e.phase}, round ${e.round} `,
        el("a", { href: `#encounter=${encodeURIComponent(e.id)}&watch=1`, dataset: { watch: e.id }, onclick: (ev) => {
          ev.preventDefault();
          location.hash = `encounter=${encodeURIComponent(e.id)}&watch=1`;
          location.reload();
        } }, "Watch"))))
      : el("p", { class: "muted" }, "No public encounter right now."));
  }

  // keep_gm: one more GM token, every earlier one (the GM's open table) keeps working.
  // Only "New GM link…", confirmed, rotates the GM token.
  async function links(e, rotate = false) {
    return home.conn.request("encounter_links", rotate ? { encounter: e.id } : { encounter: e.id, keep_gm: true });
  }

  async function openEncounter(e) {
    try {
      const result = await links(e);
      location.hash = new URLSearchParams({ encounter: e.id, token: result.gm_token }).toString();
      location.reload();
    } catch (err) {
      homeError(err.message);
    }
  }

  function showLinks(title, encounter, result, rotated = false) {
    const entry = (label, token, seat) => ({ label, href: tableLink(encounter, token), seat, encounter, token });
    const list = [entry("GM", result.gm_token, "gm")];
    for (const [player, token] of Object.entries(result.seats || {})) list.push(entry(player, token, player));
    if (result.spectator_token) list.push(entry("spectators", result.spectator_token, "spectators"));
    $("home-links").replaceChildren(el("div", { class: "zk-linkbox", dataset: { encounter } },
      el("h3", {}, `Links to “${title}”`),
      el("p", { class: "muted" }, rotated
        ? `A new GM link: every earlier GM link stopped working${result.closed ? `: the tables open with one were closed (${result.closed} connection${result.closed === 1 ? "" : "s"})` : ""}. Players' links keep working.`
        : "Send each player their own link. Every earlier link, yours included, keeps working."),
      linkList(list)));
  }

  async function freshLinks(e) {
    try {
      showLinks(e.title, e.id, await links(e));
    } catch (err) {
      homeError(err.message);
    }
  }

  async function rotateGmLink(e) {
    if (!confirm(`Make a new GM link for “${e.title}”? Every earlier GM link stops working and `
      + "every table open with one (yours too, on any screen) is closed. Players' and spectators' links keep working.")) return;
    try {
      showLinks(e.title, e.id, await links(e, true), true);
    } catch (err) {
      homeError(err.message);
    }
  }

  async function endEncounter(e) {
    if (!confirm(`End “${e.title}” now? The players see it end.`)) return;
    try {
      const result = await links(e);
      await home.conn.request("join", { encounter: e.id, token: result.gm_token });
      await home.conn.request("command", { encounter: e.id, type: "end_encounter", params: { force: true } });
      await home.conn.request("leave", { encounter: e.id });
      await refreshLobby();
    } catch (err) {
      homeError(err.message);
    }
  }

  async function archive(e) {
    if (!confirm(`Archive “${e.title}”? Everyone in it is sent away.`)) return;
    try {
      await home.conn.request("archive_encounter", { encounter: e.id });
      await refreshLobby();
    } catch (err) {
      homeError(err.message);
    }
  }

  function openBuilder() {
    const box = $("home-builder");
    box.hidden = false;
    window.zonekeepBuilder.open(box, home.conn, {
      created: () => refreshLobby().catch(() => {}),
      close: () => { box.hidden = true; },
    });
  }

  function openEditor() {
    const box = $("home-editor");
    box.hidden = false;
    window.zonekeepEditor.open(box, home.conn, {
      key: () => home.key,
      // An open builder lists the library again, the saved arena with it.
      saved: () => { if (!$("home-builder").hidden) openBuilder(); },
      close: () => { box.hidden = true; },
    });
  }

  // ---------------------------------------------------------------------------------
  // At a seat: the character form while the seat has no character; the GM's waiting list.

  const SIZES = ["Tiny", "Small", "Medium", "Large", "Huge", "Gargantuan", "Colossal"];
  const MODES = ["walk", "climb", "swim", "fly", "burrow"];
  const ABILITIES = ["str", "dex", "con", "int", "wis", "cha"];
  const DAMAGE = ["acid", "bludgeoning", "cold", "fire", "force", "lightning", "necrotic", "piercing", "poison", "psychic", "radiant", "slashing", "thunder"];

  const seat = { conn: null, encounter: null, player: null, panel: null };

  function hasCharacter(snapshot, player) {
    return Object.values(snapshot.creatures || {}).some((c) => c.controller === player);
  }

  async function startSeat(encounter, token) {
    seat.encounter = encounter;
    seat.conn = new Connection((method, params) => {
      if (method !== "event" || params.encounter !== encounter) return;
      const event = params.event;
      if (event.type === "creature_added" && seat.player && event.creature?.controller === seat.player) {
        closeSeat(`${event.creature.name} joins the encounter (${event.creature.id}).`);
      } else if (event.type === "creature_added" && seat.role === "gm") {
        refreshWaiting();
      }
    });
    let joined;
    try {
      await seat.conn.open();
      joined = await seat.conn.request("join", { encounter, token });
    } catch {
      seat.conn.close();
      return; // table.js says what is wrong
    }
    seat.role = joined.role;
    if (joined.role === "player" && !hasCharacter(joined.snapshot, joined.player)) {
      seat.player = joined.player;
      showCharacterForm();
    } else if (joined.role === "gm") {
      refreshWaiting();
      // Seats made at the table (create_seat) may wait too.
      setInterval(() => { if (!seat.conn.closed) refreshWaiting(); }, 15000);
    } else {
      seat.conn.close();
    }
  }

  async function refreshWaiting() {
    let seats = [];
    try {
      seats = (await seat.conn.request("list_seats", { encounter: seat.encounter })).seats;
    } catch {
      seats = []; // an older server: nothing to say
    }
    let box = $("zk-waiting");
    const waiting = seats.filter((s) => s.waiting);
    if (!waiting.length) {
      if (box) box.remove();
      return;
    }
    if (!box) {
      box = el("div", { id: "zk-waiting", class: "zk-banner", role: "status" });
      $("error").before(box);
    }
    box.replaceChildren(...waiting.map((s) => el("div", { dataset: { seat: s.player } }, `Waiting for ${s.player}'s character.`)));
  }

  function closeSeat(message) {
    if (seat.done) return;
    seat.done = true;
    window.scrollTo({ top: 0 }); // back to the table's top, not left at the log
    if (seat.panel) {
      seat.panel.replaceChildren(el("p", { class: "zk-done" }, message));
      setTimeout(() => seat.panel?.remove(), 1500);
    }
    seat.conn?.close();
  }

  function field(label, input, path) {
    return el("label", { class: "zk-field", dataset: { path } }, el("span", {}, label), input);
  }

  function numberInput(name, value, attrs = {}) {
    return el("input", { type: "number", name, value: value ?? "", step: 1, ...attrs });
  }

  function attackRow(attack = {}) {
    const kind = attack.kind || "melee";
    const row = el("fieldset", { class: "zk-attack" },
      el("legend", {}, "Attack"),
      field("Name", el("input", { name: "a_name", value: attack.name || "", required: true }), "name"),
      field("Kind", el("select", { name: "a_kind" },
        ["melee", "ranged"].map((k) => el("option", { value: k, selected: k === kind }, k))), "kind"),
      field("Bonus to hit", numberInput("a_bonus", attack.bonus ?? 0), "bonus"),
      field("Damage", el("input", { name: "a_damage", value: attack.damage || "", placeholder: "1d8+3", required: true }), "damage"),
      field("Damage type", el("select", { name: "a_type" },
        DAMAGE.map((d) => el("option", { value: d, selected: d === (attack.damage_type || "slashing") }, d))), "damage_type"),
      field("Reach (ft)", numberInput("a_reach", attack.reach ?? 5, { min: 5, step: 5 }), "reach"),
      field("Range (ft)", numberInput("a_range", attack.range ?? "", { min: 5, step: 5 }), "range"),
      field("Long range (ft)", numberInput("a_long", attack.long_range ?? "", { min: 5, step: 5 }), "long_range"),
      el("button", { type: "button", class: "zk-remove", onclick: () => row.remove() }, "Remove attack"));
    return row;
  }

  function characterFromForm(form) {
    const get = (name) => form.querySelector(`[name=${name}]`).value.trim();
    const num = (value) => (value === "" ? undefined : Number(value));
    const speeds = {};
    for (const mode of MODES) {
      const v = num(get(`speed_${mode}`));
      if (v !== undefined && (mode === "walk" || v > 0)) speeds[mode] = v;
    }
    const abilities = {};
    for (const a of ABILITIES) {
      const v = num(get(`ab_${a}`));
      if (v !== undefined) abilities[a] = v;
    }
    const attacks = [...form.querySelectorAll(".zk-attack")].map((row) => {
      const value = (n) => row.querySelector(`[name=${n}]`).value.trim();
      const attack = {
        name: value("a_name"),
        kind: value("a_kind"),
        bonus: num(value("a_bonus")) ?? 0,
        damage: value("a_damage"),
        damage_type: value("a_type"),
      };
      if (attack.kind === "melee") {
        if (value("a_reach") !== "") attack.reach = num(value("a_reach"));
      } else {
        if (value("a_range") !== "") attack.range = num(value("a_range"));
        if (value("a_long") !== "") attack.long_range = num(value("a_long"));
      }
      return attack;
    });
    const character = {
      name: get("name"),
      size: get("size"),
      speeds,
      abilities: form.dataset.scores ? undefined : abilities,
      ac: num(get("ac")),
      hp: num(get("hp")),
      passive_perception: num(get("passive_perception")),
    };
    if (attacks.length) character.attacks = attacks;
    for (const key of Object.keys(character)) if (character[key] === undefined) delete character[key];
    return character;
  }

  function fillForm(form, c) {
    const set = (name, value) => {
      const node = form.querySelector(`[name=${name}]`);
      if (node) node.value = value ?? "";
    };
    set("name", c.name);
    set("size", c.size || "Medium");
    for (const mode of MODES) set(`speed_${mode}`, c.speeds?.[mode] ?? (mode === "walk" ? 30 : ""));
    // A file in the character model gives scores: the form shows their modifiers,
    // read only, and sends the scores (in the kept extra keys) rather than modifiers.
    const scores = c.ability_scores && typeof c.ability_scores === "object" ? c.ability_scores : null;
    form.dataset.scores = scores ? "1" : "";
    for (const a of ABILITIES) {
      const node = form.querySelector(`[name=ab_${a}]`);
      const score = scores?.[a];
      set(`ab_${a}`, scores ? (Number.isInteger(score) ? Math.floor((score - 10) / 2) : "") : c.abilities?.[a] ?? 0);
      if (node) node.readOnly = Boolean(scores);
    }
    set("ac", c.ac);
    set("hp", c.hp);
    set("passive_perception", c.passive_perception);
    const list = form.querySelector(".zk-attacks");
    list.replaceChildren(...(c.attacks || []).map((a) => attackRow(a)));
    form.dataset.extra = JSON.stringify(Object.fromEntries(Object.entries(c).filter(([k]) =>
      !["name", "size", "speeds", "abilities", "ac", "hp", "passive_perception", "attacks", "$schema"].includes(k))));
  }

  function showProblems(box, problems) {
    box.replaceChildren();
    if (!problems.length) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.append(el("p", {}, "Please fix these:"),
      el("ul", {}, problems.map((p) => el("li", { dataset: { path: p.path } },
        p.path ? el("code", {}, p.path) : null, p.path ? ": " : "", p.message))));
  }

  function showCharacterForm() {
    const problems = el("div", { id: "character-problems", class: "error", role: "alert", hidden: true });
    const form = el("form", { id: "character-form", class: "zk-character", novalidate: true },
      el("div", { class: "zk-grid" },
        field("Name", el("input", { name: "name", required: true, maxlength: 100 }), "name"),
        field("Size", el("select", { name: "size" }, SIZES.map((s) => el("option", { value: s, selected: s === "Medium" }, s))), "size"),
        field("Armor Class", numberInput("ac", 12, { min: 1, max: 30 }), "ac"),
        field("Hit points", numberInput("hp", 10, { min: 1, max: 999 }), "hp"),
        field("Passive Perception", numberInput("passive_perception", 10, { min: 1, max: 40 }), "passive_perception")),
      el("h3", {}, "Speeds (feet)"),
      el("div", { class: "zk-grid" }, MODES.map((m) => field(m, numberInput(`speed_${m}`, m === "walk" ? 30 : "", { min: 0, step: 5 }), `speeds.${m}`))),
      el("h3", {}, "Ability modifiers"),
      el("div", { class: "zk-grid" }, ABILITIES.map((a) => field(a.toUpperCase(), numberInput(`ab_${a}`, 0, { min: -5, max: 10 }), `abilities.${a}`))),
      el("h3", {}, "Attacks"),
      el("div", { class: "zk-attacks" }),
      el("button", { type: "button", id: "add-attack", onclick: () => form.querySelector(".zk-attacks").append(attackRow()) }, "Add attack"),
      el("div", { class: "zk-row" },
        el("button", { type: "submit", id: "send-character" }, "Send character")));
    const unmapped = el("div", { id: "character-unmapped", class: "zk-unmapped", role: "status", hidden: true });
    const format = el("select", { id: "character-format", name: "format" },
      [["auto", "Detect the format"], ["zonekeep", "zonekeep character file"],
        ["foundry", "Foundry VTT (dnd5e actor export)"], ["improved-initiative", "Improved Initiative statblock"]]
        .map(([value, text]) => el("option", { value }, text)));
    const detect = (data) => {
      if (format.value !== "auto") return format.value;
      if ((data.system || data.data) && Array.isArray(data.items)) return "foundry";
      if (data.Abilities && data.HP) return "improved-initiative";
      return "zonekeep";
    };
    const showUnmapped = (list, kind) => {
      unmapped.replaceChildren();
      unmapped.hidden = !list.length;
      if (!list.length) return;
      unmapped.append(el("p", {}, `Not carried over from your ${kind === "foundry" ? "Foundry VTT" : "Improved Initiative"} sheet (tell your GM what matters):`),
        el("ul", {}, list.map((line) => el("li", {}, line))));
    };
    const upload = el("input", { type: "file", id: "character-file", accept: ".json,application/json", onchange: async (ev) => {
      const file = ev.target.files[0];
      if (!file) return;
      try {
        const text = await file.text();
        ev.target.value = ""; // the same file again is a new upload
        const data = JSON.parse(text);
        if (typeof data !== "object" || data === null || Array.isArray(data)) throw new Error("not an object");
        const kind = detect(data);
        if (kind === "zonekeep") {
          showUnmapped([], kind);
          fillForm(form, data);
          const checked = await seat.conn.request("check_character", { character: data });
          showProblems(problems, checked.problems);
          return;
        }
        const checked = await seat.conn.request("check_character", { character: data, format: kind });
        showUnmapped(checked.unmapped || [], kind);
        if (checked.character) fillForm(form, checked.character);
        showProblems(problems, checked.problems);
      } catch (err) {
        showProblems(problems, [{ path: file.name, message: `cannot be read as a character file: ${err.message}` }]);
      }
    } });
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const character = { ...JSON.parse(form.dataset.extra || "{}"), ...characterFromForm(form) };
      try {
        const checked = await seat.conn.request("check_character", { character });
        showProblems(problems, checked.problems);
        if (checked.problems.length) return;
        const sent = await seat.conn.request("submit_character", { encounter: seat.encounter, character });
        closeSeat(`${character.name} joins the encounter (${sent.creature}).`);
      } catch (err) {
        showProblems(problems, [{ path: "", message: err.message }]);
      }
    });
    seat.panel = el("section", { id: "character-panel", class: "panel zk-character-panel" },
      el("h2", {}, "Your character"),
      el("p", {}, `Fill in your character for seat ${seat.player}, or load a character file (`,
        el("code", {}, ".json"), ": zonekeep's character format, a Foundry VTT dnd5e actor export or an Improved Initiative statblock)."),
      el("label", { class: "zk-field" }, el("span", {}, "File format"), format),
      el("label", { class: "zk-field" }, el("span", {}, "Character file"), upload),
      problems,
      unmapped,
      form);
    $("error").after(seat.panel);
  }

  // ---------------------------------------------------------------------------------
  // Which page is this?

  document.addEventListener("DOMContentLoaded", () => {
    const hash = new URLSearchParams(location.hash.replace(/^#/, ""));
    const encounter = hash.get("encounter");
    const token = hash.get("token");
    if (!encounter || hash.get("gm_key")) {
      startHome();
    } else if (token) {
      startSeat(encounter, token);
    }
  });
})();
