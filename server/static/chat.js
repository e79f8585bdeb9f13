// The web table's "Table talk" panel: a dice roller for every seat, table chat, whispers
// between a player and the GM (protocol 1.6: the `roll` and `chat` requests, the
// `dice_rolled` and `chat_sent` events). It rides on table.js: the page's connection
// (`zonekeepTable.request`) and the events it sees (the `zonekeep:event` and
// `zonekeep:joined` DOM events), and draws its own panel. Whatever a seat wrote is put
// on the page as text, never as markup.
"use strict";

(() => {
  const table = window.zonekeepTable;
  if (!table) return; // not the table page
  const DICE = ["d4", "d6", "d8", "d10", "d12", "d20", "d100"];
  /** Lines kept in the panel (the log keeps its own). */
  const KEPT = 200;

  const state = { role: null, player: null, lines: new Map(), seats: [], built: false };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const seatName = (by) => (table.seatName ? table.seatName(by) : String(by));
  const limits = () => table.welcome?.limits || {};

  /** A refusal in the table's words, with the seconds to wait when the seat's bucket is empty. */
  function refusalText(err) {
    if (err?.wireName === "rate_limited") {
      const match = /Retry in ([\d.]+) seconds/.exec(err.message || "");
      return `That was too fast: wait ${match ? `${Math.ceil(Number(match[1]))} s` : "a moment"}, then try again.`;
    }
    if (err?.wireName === "spectator_read_only") return "Spectators watch: they cannot roll or chat.";
    if (err?.wireName === "encounter_over") return "The encounter has ended: the table is closed.";
    return err?.message || "That did not work.";
  }

  function say(where, text, bad) {
    const box = document.getElementById(where);
    box.textContent = text;
    box.classList.toggle("talk-bad", Boolean(bad));
  }

  async function send(method, params, where) {
    say(where, "");
    try {
      const result = await table.request(method, { encounter: table.seat.encounter, ...params });
      return result;
    } catch (err) {
      say(where, refusalText(err), true);
      return null;
    }
  }

  // ---------------------------------------------------------------------------------
  // The panel

  function build() {
    if (state.built) return;
    state.built = true;
    const panel = el("section", { id: "talk-panel", class: "panel", "aria-labelledby": "talk-title" },
      el("h2", { id: "talk-title" }, "Table talk"),
      el("ol", { id: "talk", class: "talk", "aria-live": "polite", "aria-relevant": "additions",
        "aria-label": "Table talk and rolls", tabindex: "0" }),
      el("form", { id: "roll-form", class: "talk-form", "aria-label": "Roll dice" },
        el("div", { class: "talk-dice", role: "group", "aria-label": "Quick dice" },
          DICE.map((d) => el("button", { type: "button", class: "quick-die", "data-die": d,
            onclick: () => roll(d) }, d))),
        el("div", { class: "talk-row" },
          el("label", { for: "roll-dice" }, "Dice"),
          el("input", { id: "roll-dice", name: "dice", value: "d20", maxlength: "40", autocomplete: "off",
            spellcheck: "false", size: "8" }),
          el("label", { for: "roll-label" }, "For"),
          el("input", { id: "roll-label", name: "label", maxlength: "80", autocomplete: "off",
            placeholder: "Perception", size: "10" })),
        el("div", { class: "talk-row" },
          el("label", { for: "roll-advantage" }, "Two d20s"),
          el("select", { id: "roll-advantage", name: "advantage" },
            el("option", { value: "none" }, "no"),
            el("option", { value: "advantage" }, "advantage"),
            el("option", { value: "disadvantage" }, "disadvantage")),
          el("label", { class: "talk-check" },
            el("input", { type: "checkbox", id: "roll-private", name: "private" }),
            el("span", { id: "roll-private-text" }, "Only me and the GM")),
          el("button", { type: "submit", id: "roll-send" }, "Roll")),
        el("p", { id: "roll-status", class: "talk-status", role: "status", "aria-live": "polite" })),
      el("form", { id: "chat-form", class: "talk-form", "aria-label": "Chat" },
        el("div", { class: "talk-row" },
          el("label", { for: "chat-to" }, "To"),
          el("select", { id: "chat-to", name: "to" })),
        el("label", { for: "chat-text", class: "sr-only" }, "Message"),
        el("textarea", { id: "chat-text", name: "text", rows: "2", maxlength: String(limits().chat_max_chars || 500),
          placeholder: "Say something to the table" }),
        el("div", { class: "talk-row" },
          el("span", { id: "chat-count", class: "muted" }),
          el("button", { type: "submit", id: "chat-send" }, "Send")),
        el("p", { id: "chat-status", class: "talk-status", role: "status", "aria-live": "polite" })),
      el("p", { id: "talk-watching", class: "muted", hidden: true }, "You are watching: the table's rolls and chat appear here."));
    const side = document.getElementById("side");
    (side || document.getElementById("table")).append(panel);
    document.getElementById("roll-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      roll(document.getElementById("roll-dice").value.trim());
    });
    document.getElementById("chat-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      chat();
    });
    const text = document.getElementById("chat-text");
    text.addEventListener("input", count);
    text.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey) { // Enter sends, Shift+Enter breaks the line
        ev.preventDefault();
        chat();
      }
    });
    // The GM picks a seat to whisper to from the snapshot's controllers, updated live.
    document.getElementById("chat-to").addEventListener("focus", () => fillRecipients());
  }

  function count() {
    const max = limits().chat_max_chars || 500;
    const text = document.getElementById("chat-text");
    text.maxLength = max;
    const left = max - text.value.length;
    document.getElementById("chat-count").textContent = left < 100 ? `${left} left` : "";
  }

  function recipients() {
    if (state.role !== "gm") return [{ value: "", label: "the whole table" }, { value: "gm", label: "the GM only (whisper)" }];
    const players = new Set(state.seats);
    for (const c of Object.values(table.state?.creatures || {})) {
      if (c.controller && c.controller !== "gm") players.add(c.controller);
    }
    return [{ value: "", label: "the whole table" },
      ...[...players].sort().map((p) => ({ value: p, label: `${p} only (whisper)` }))];
  }

  function fillRecipients() {
    const select = document.getElementById("chat-to");
    const chosen = select.value;
    const options = recipients();
    select.replaceChildren(...options.map((o) => el("option", { value: o.value }, o.label)));
    if (options.some((o) => o.value === chosen)) select.value = chosen;
  }

  async function roll(dice) {
    if (!dice) {
      say("roll-status", "Write the dice to roll, such as 2d6+1.", true);
      return;
    }
    const params = { dice };
    const label = document.getElementById("roll-label").value.trim();
    if (label) params.label = label;
    const advantage = document.getElementById("roll-advantage").value;
    if (advantage !== "none") params.advantage = advantage;
    if (document.getElementById("roll-private").checked) params.private = true;
    const done = await send("roll", params, "roll-status");
    if (done) say("roll-status", `You rolled ${dice}: ${done.total}.`);
  }

  async function chat() {
    const field = document.getElementById("chat-text");
    const text = field.value;
    if (!text.trim()) return;
    const to = document.getElementById("chat-to").value;
    const params = { text };
    if (to) params.to = to;
    const done = await send("chat", params, "chat-status");
    if (done) {
      field.value = "";
      count();
    }
  }

  // ---------------------------------------------------------------------------------
  // Lines

  function rollNode(roll) {
    const kept = [...(roll.kept || [])];
    const two = roll.dice.length > kept.length;
    const faces = roll.dice.map((face) => {
      const i = kept.indexOf(face);
      if (i >= 0) kept.splice(i, 1);
      return el("span", { class: `die${two ? (i >= 0 ? " kept" : " dropped") : ""}` }, String(face));
    });
    const mod = roll.modifier ? ` ${roll.modifier > 0 ? "+" : "−"} ${Math.abs(roll.modifier)}` : "";
    return el("span", { class: "roll", title: roll.expr || "" }, faces, mod, " = ", el("strong", {}, String(roll.total)));
  }

  function lineFor(seq, event) {
    if (event.type === "chat_sent") {
      const whisper = event.to !== null && event.to !== undefined;
      const mine = event.by === (state.role === "gm" ? "gm" : state.player);
      const head = whisper
        ? (mine ? `To ${seatName(event.to)} (whisper)` : `${seatName(event.by)} whispers`)
        : seatName(event.by);
      return el("li", { class: `talk-line${whisper ? " whisper" : ""}`, "data-seq": String(seq), "data-type": "chat_sent" },
        el("span", { class: "talk-who" }, `${head}: `), el("span", { class: "talk-text" }, event.text));
    }
    if (event.type === "dice_rolled" && event.roll && Array.isArray(event.roll.dice)) {
      const what = `${seatName(event.by)} rolls ${event.roll.expr}${event.label ? ` for ${event.label}` : ""}`;
      return el("li", { class: `talk-line talk-roll${event.private ? " whisper" : ""}`, "data-seq": String(seq), "data-type": "dice_rolled" },
        el("span", { class: "talk-who" }, `${what}${event.private ? " (private)" : ""}: `), rollNode(event.roll));
    }
    return null;
  }

  function add(seq, event) {
    if (state.lines.has(seq)) return;
    const item = lineFor(seq, event);
    if (!item) return;
    build();
    state.lines.set(seq, item);
    const list = document.getElementById("talk");
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 30;
    // In seq order: a replayed older line goes before the live ones.
    const after = [...list.children].find((li) => Number(li.dataset.seq) > seq);
    list.insertBefore(item, after || null);
    while (list.children.length > KEPT) {
      state.lines.delete(Number(list.firstElementChild.dataset.seq));
      list.firstElementChild.remove();
    }
    if (atBottom || !after) list.scrollTop = list.scrollHeight;
  }

  async function joined(role, player) {
    state.role = role;
    state.player = player;
    build();
    const watching = role === "spectator";
    document.getElementById("roll-form").hidden = watching;
    document.getElementById("chat-form").hidden = watching;
    document.getElementById("talk-watching").hidden = !watching;
    document.getElementById("roll-private-text").textContent = role === "gm" ? "Only me (hidden from the players)" : "Only me and the GM";
    document.getElementById("chat-text").placeholder = role === "gm" ? "Say something to the table, or whisper to one player" : "Say something to the table, or whisper to the GM";
    count();
    if (role === "gm") {
      try {
        const found = await table.request("list_seats", { encounter: table.seat.encounter });
        state.seats = (found.seats || []).map((s) => s.player);
      } catch {
        state.seats = [];
      }
    }
    fillRecipients();
  }

  // ---------------------------------------------------------------------------------
  // The GM calls for a check or a save (the `call_check` command, when the server has it)

  const ABILITIES = { str: "Strength", dex: "Dexterity", con: "Constitution", int: "Intelligence", wis: "Wisdom", cha: "Charisma" };
  /** The SRD skills and the ability each is a check of (the server's list, docs/rules.md). */
  const SKILLS = {
    acrobatics: "dex", animal_handling: "wis", arcana: "int", athletics: "str", deception: "cha",
    history: "int", insight: "wis", intimidation: "cha", investigation: "int", medicine: "wis",
    nature: "int", perception: "wis", performance: "cha", persuasion: "cha", religion: "int",
    sleight_of_hand: "dex", stealth: "dex", survival: "wis",
  };
  const words = (id) => String(id).replaceAll("_", " ");
  const creatureName = (id) => table.state?.creatures?.[id]?.name || String(id);

  function checkWhat(e) {
    const ability = ABILITIES[e.ability] || e.ability;
    if (e.save) return `${ability} save`;
    return e.skill ? `${ability} (${words(e.skill)}) check` : `${ability} check`;
  }

  function buildChecks() {
    build();
    if (document.getElementById("check-panel")) return;
    const form = el("form", { id: "check-form", class: "talk-form", "aria-label": "Call for a check or save" },
      el("fieldset", { class: "check-creatures" },
        el("legend", {}, "Who rolls"),
        el("div", { id: "check-creatures", class: "check-list" }),
        el("button", { type: "button", id: "check-pcs", onclick: () => pickPcs() }, "All player characters")),
      el("div", { class: "talk-row" },
        el("label", { for: "check-kind" }, "Roll"),
        el("select", { id: "check-kind", name: "kind", onchange: () => syncChecks() },
          el("option", { value: "check" }, "ability check"),
          el("option", { value: "save" }, "saving throw")),
        el("label", { for: "check-ability" }, "Ability"),
        el("select", { id: "check-ability", name: "ability" },
          Object.entries(ABILITIES).map(([id, label]) => el("option", { value: id }, label)))),
      el("div", { class: "talk-row" },
        el("label", { for: "check-skill" }, "Skill"),
        el("select", { id: "check-skill", name: "skill", onchange: () => {
          const skill = document.getElementById("check-skill").value;
          if (skill) document.getElementById("check-ability").value = SKILLS[skill];
        } },
          el("option", { value: "" }, "none"),
          Object.keys(SKILLS).map((id) => el("option", { value: id }, words(id)))),
        el("label", { for: "check-dc" }, "DC"),
        el("input", { id: "check-dc", name: "dc", type: "number", min: "1", max: "30", inputmode: "numeric",
          placeholder: "none", size: "4" }),
        el("button", { type: "submit", id: "check-send" }, "Call for it")),
      el("p", { id: "check-status", class: "talk-status", role: "status", "aria-live": "polite" }),
      el("h3", { id: "check-results-title" }, "Results"),
      el("ol", { id: "check-results", class: "talk check-results", "aria-labelledby": "check-results-title" }));
    const panel = el("details", { id: "check-panel", class: "check-panel" },
      el("summary", {}, "Call for a check or save"), form);
    document.getElementById("talk-panel").insertBefore(panel, document.getElementById("roll-form"));
    panel.addEventListener("toggle", () => { if (panel.open) fillCreatures(); });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      callCheck();
    });
  }

  function syncChecks() {
    const save = document.getElementById("check-kind").value === "save";
    const skill = document.getElementById("check-skill");
    skill.disabled = save;
    if (save) skill.value = "";
  }

  function fillCreatures() {
    const box = document.getElementById("check-creatures");
    const chosen = new Set([...box.querySelectorAll("input:checked")].map((i) => i.value));
    const creatures = Object.values(table.state?.creatures || {}).sort((a, b) => a.name.localeCompare(b.name));
    box.replaceChildren(...creatures.map((c) => el("label", { class: "talk-check" },
      el("input", { type: "checkbox", name: "creature", value: c.id, checked: chosen.has(c.id),
        "data-controller": c.controller || "" }),
      el("span", {}, c.name))));
  }

  function pickPcs() {
    fillCreatures();
    for (const input of document.querySelectorAll("#check-creatures input")) {
      input.checked = input.dataset.controller !== "gm" && input.dataset.controller !== "";
    }
  }

  async function callCheck() {
    const creatures = [...document.querySelectorAll("#check-creatures input:checked")].map((i) => i.value);
    if (!creatures.length) {
      say("check-status", "Pick who rolls first.", true);
      return;
    }
    const params = { creatures, ability: document.getElementById("check-ability").value };
    if (document.getElementById("check-kind").value === "save") params.save = true;
    else if (document.getElementById("check-skill").value) params.skill = document.getElementById("check-skill").value;
    const dc = document.getElementById("check-dc").value;
    if (dc !== "") params.dc = Number(dc);
    const done = await send("command", { type: "call_check", params }, "check-status");
    if (done) say("check-status", `Called: ${checkWhat(params)}${params.dc ? ` against DC ${params.dc}` : ""}.`);
  }

  function outcome(e) {
    if (e.success === true) return "success";
    if (e.success === false) return e.automatic_failure ? `failure (${words(e.automatic_failure)})` : "failure";
    return "";
  }

  /** A check's result: in the GM's results (grouped by call) and in the talk list. */
  function addCheck(seq, e) {
    if (e.source !== "call_check" || !e.roll) return;
    const text = `${creatureName(e.creature)}: ${checkWhat(e)}${e.dc ? ` against DC ${e.dc}` : ""}`;
    const result = outcome(e);
    const node = (tag) => el(tag, { class: `talk-line check-line${result ? ` check-${e.success ? "success" : "failure"}` : ""}`,
      "data-seq": String(seq), "data-type": "check_rolled", "data-creature": e.creature },
    el("span", { class: "talk-who" }, `${text}: `), rollNode(e.roll), result ? ` — ${result}` : "");
    const results = document.getElementById("check-results");
    if (results && !results.querySelector(`[data-seq="${seq}"]`)) {
      const last = results.lastElementChild;
      const key = `${e.ability}|${e.skill || ""}|${e.save}|${e.dc ?? ""}`;
      if (!last || last.dataset.key !== key || Number(last.dataset.until) !== seq - 1) {
        results.append(el("li", { class: "check-call", "data-key": key, "data-until": String(seq) },
          el("span", { class: "talk-who" }, `${checkWhat(e)}${e.dc ? `, DC ${e.dc}` : ""}`), el("ul", {})));
      }
      const call = results.lastElementChild;
      call.dataset.until = String(seq);
      call.querySelector("ul").append(node("li"));
      while (results.children.length > 20) results.firstElementChild.remove();
    }
    if (!state.lines.has(seq)) {
      build();
      state.lines.set(seq, true);
      const list = document.getElementById("talk");
      const after = [...list.children].find((li) => Number(li.dataset.seq) > seq);
      list.insertBefore(node("li"), after || null);
      if (!after) list.scrollTop = list.scrollHeight;
    }
  }

  document.addEventListener("zonekeep:event", (ev) => {
    if (ev.detail.event.type === "check_rolled") addCheck(ev.detail.seq, ev.detail.event);
  });
  document.addEventListener("zonekeep:joined", (ev) => {
    if (ev.detail.role === "gm" && table.commands?.has("call_check")) buildChecks();
  });

  document.addEventListener("zonekeep:event", (ev) => add(ev.detail.seq, ev.detail.event));
  document.addEventListener("zonekeep:joined", (ev) => joined(ev.detail.role, ev.detail.player));
})();
