// The zonekeep encounter builder (the GM's home opens it): an arena from the server's
// library (with a preview drawn like the map) or an uploaded JSON/TOML file (checked by
// the server, every problem shown at its path); creatures from the compendium, a count,
// a starting zone, hidden or not, name/hp/AC per copy; player seats by name; every
// encounter option from its JSON Schema; the encounter's difficulty for the party (by
// XP: each creature's XP by challenge rating, the multiplier for the number of
// monsters, the party's thresholds by level); Start. The draft is kept in localStorage.
"use strict";

(() => {
  const DRAFT = "zonekeep.builder.draft";

  const emptyDraft = () => ({
    title: "",
    arenaName: null, // a library arena's name
    upload: null, // {file, arena} an uploaded, valid arena
    groups: [], // {id, name, side, challenge, copies: [{name, hp, ac, zone, hidden}]}
    seats: [], // {player, zone, level}
    options: {}, // option -> value, only those changed
    public: false,
  });

  function loadDraft() {
    try {
      const text = localStorage.getItem(DRAFT);
      if (text) return { ...emptyDraft(), ...JSON.parse(text) };
    } catch { /* a broken draft is dropped */ }
    return emptyDraft();
  }

  const b = {
    conn: null,
    box: null,
    hooks: null,
    draft: emptyDraft(),
    arenas: new Map(), // name -> arena object
    schema: null,
  };

  function hasDraft() {
    try {
      return Boolean(localStorage.getItem(DRAFT));
    } catch {
      return false;
    }
  }

  function currentArena() {
    if (b.draft.upload) return b.draft.upload.arena;
    return b.draft.arenaName ? b.arenas.get(b.draft.arenaName) || null : null;
  }

  function zonesOf(arena) {
    return arena ? arena.zones.map((z) => ({ id: z.id, name: z.name || z.id })) : [];
  }

  async function open(box, conn, hooks) {
    const { el } = window.zonekeepHome;
    b.box = box;
    b.conn = conn;
    b.hooks = hooks;
    b.draft = loadDraft();
    box.replaceChildren(
      el("div", { class: "zk-head" },
        el("h2", {}, "New encounter"),
        el("span", {},
          el("button", { type: "button", id: "builder-reset", onclick: () => {
            b.draft = emptyDraft();
            save();
            renderAll();
          } }, "Clear draft"),
          " ",
          el("button", { type: "button", id: "builder-close", onclick: () => hooks.close() }, "Close"))),
      el("div", { id: "builder-error", class: "error", role: "alert", hidden: true }),
      el("label", { class: "zk-field zk-wide" }, el("span", {}, "Title"),
        el("input", { id: "builder-title", maxlength: 200, value: b.draft.title, oninput: (ev) => {
          b.draft.title = ev.target.value;
          save();
        } })),
      el("h3", {}, "Arena"),
      el("div", { id: "builder-arena" }),
      el("h3", {}, "Creatures"),
      el("div", { id: "builder-search" }),
      el("div", { id: "builder-roster" }),
      el("h3", {}, "Player seats"),
      el("div", { id: "builder-seats" }),
      el("h3", {}, "Difficulty"),
      el("div", { id: "builder-difficulty", "aria-live": "polite" }),
      el("h3", {}, "Options"),
      el("div", { id: "builder-options" }),
      el("div", { class: "zk-row" },
        el("label", { class: "zk-check" }, el("input", { type: "checkbox", id: "builder-public", checked: b.draft.public, onchange: (ev) => {
          b.draft.public = ev.target.checked;
          save();
        } }), " Public: anyone may watch"),
        " ",
        el("button", { type: "button", id: "builder-start", class: "zk-primary", onclick: start }, "Start")));
    try {
      await loadLibrary();
      b.schema = (await conn.request("encounter_options")).schema;
    } catch (err) {
      error(err.message);
    }
    renderAll();
    renderSearch();
    box.scrollIntoView({ block: "start" });
  }

  function error(message) {
    const node = document.getElementById("builder-error");
    node.textContent = message || "";
    node.hidden = !message;
  }

  async function loadLibrary() {
    b.arenas.clear();
    for (let offset = 0; ; offset += 10) {
      const page = await b.conn.request("list_arenas", { offset, limit: 10 });
      for (const item of page.arenas) b.arenas.set(item.name, item.arena);
      if (offset + 10 >= page.total) break;
    }
  }

  /** After the arena changed: zones it does not have go back to its first zone. */
  function fitZones() {
    const ids = zonesOf(currentArena()).map((z) => z.id);
    const fit = (zone) => (zone && ids.includes(zone) ? zone : ids[0] || null);
    for (const g of b.draft.groups) for (const c of g.copies) if (c.zone) c.zone = fit(c.zone);
    for (const s of b.draft.seats) s.zone = fit(s.zone);
    save();
  }

  function renderAll() {
    const title = document.getElementById("builder-title");
    if (title) title.value = b.draft.title;
    renderArena();
    renderRoster();
    renderSeats();
    renderOptions();
    renderDifficulty();
  }

  function save() {
    try {
      localStorage.setItem(DRAFT, JSON.stringify(b.draft));
    } catch { /* not kept */ }
    renderDifficulty();
  }

  // -- the arena ------------------------------------------------------------------------

  /** The arena drawn like the table's map: zones as boxes (name, size), their links. */
  function preview(arena) {
    const { el } = window.zonekeepHome;
    const names = new Map(arena.zones.map((z) => [z.id, z.name || z.id]));
    // Each neighbour once, from this zone's side ("Common room below" on the balcony),
    // as the table's map says it.
    const linksOf = (id) => {
      const found = new Map();
      for (const l of arena.links || []) {
        let other = null;
        let dir = l.direction || "beside";
        if (l.a === id) other = l.b;
        else if (l.b === id) {
          other = l.a;
          if (dir !== "beside") dir = dir === "above" ? "below" : "above";
        }
        if (other === null) continue;
        if (!found.has(other)) found.set(other, { dir, modes: new Set(), sight: false, difficult: false });
        const f = found.get(other);
        f.modes.add(l.mode || "walk");
        f.sight = f.sight || !l.blocks_sight;
        f.difficult = f.difficult || Boolean(l.difficult);
      }
      return [...found].map(([other, f]) => {
        const modes = [...f.modes];
        const how = [modes.length === 1 && modes[0] === "walk" ? null : modes.join(" or "),
          f.sight ? null : "no line of sight", f.difficult ? "difficult" : null].filter(Boolean);
        return `${names.get(other) || other} ${f.dir}${how.length ? ` (${how.join(", ")})` : ""}`;
      });
    };
    const sizeText = (size) => (typeof size === "number" ? `${size} ft`
      : typeof size === "string" && size ? size[0].toUpperCase() + size.slice(1) : "");
    const assets = (id) => (arena.assets || []).filter((a) => a.zone === id).map((a) => `${a.name || a.id} (${a.kind || "asset"})`);
    return el("div", { class: "map zk-preview", dataset: { arena: arena.id } }, arena.zones.map((z) =>
      el("div", { class: `zone${z.difficult ? " difficult" : ""}`, dataset: { zone: z.id } },
        el("div", { class: "zone-head" },
          el("span", { class: "zone-name" }, z.name || z.id),
          el("span", { class: "zone-size" }, sizeText(z.size))),
        el("div", { class: "zone-links" }, linksOf(z.id).join(" · ")),
        assets(z.id).length ? el("ul", { class: "assets" }, assets(z.id).map((t) => el("li", {}, t))) : null)));
  }

  function renderArena() {
    const { el } = window.zonekeepHome;
    const box = document.getElementById("builder-arena");
    const names = [...b.arenas.keys()];
    const chosen = currentArena();
    box.replaceChildren(
      el("div", { class: "zk-row" },
        el("label", { class: "zk-field" }, el("span", {}, "From the server's library"),
          el("select", { id: "arena-select", onchange: (ev) => {
            b.draft.arenaName = ev.target.value || null;
            b.draft.upload = null;
            fitZones();
            renderAll();
          } },
          el("option", { value: "" }, "— choose —"),
          names.map((n) => el("option", { value: n, selected: !b.draft.upload && n === b.draft.arenaName }, `${b.arenas.get(n).name || n} (${n})`)))),
        el("label", { class: "zk-field" }, el("span", {}, "or upload an arena file (JSON or TOML)"),
          el("input", { type: "file", id: "arena-file", accept: ".json,.toml,application/json,application/toml", onchange: uploadArena }))),
      el("div", { id: "arena-problems", class: "error", role: "alert", hidden: true }),
      chosen
        ? el("div", {}, el("p", { class: "muted", id: "arena-chosen" },
          `${chosen.name || chosen.id}${b.draft.upload ? ` — uploaded from ${b.draft.upload.file}` : ""}${chosen.description ? `: ${chosen.description}` : ""}`), preview(chosen))
        : el("p", { class: "muted" }, "No arena chosen yet."));
  }

  async function uploadArena(ev) {
    const { el } = window.zonekeepHome;
    const file = ev.target.files[0];
    if (!file) return;
    const problems = document.getElementById("arena-problems");
    const format = file.name.toLowerCase().endsWith(".toml") ? "toml" : "json";
    try {
      const text = await file.text();
      ev.target.value = ""; // the same file again is a new upload
      const checked = await b.conn.request("check_arena", { text, format });
      if (checked.problems.length) {
        problems.hidden = false;
        problems.replaceChildren(
          el("p", {}, `${file.name}: ${checked.problems.length} problem${checked.problems.length === 1 ? "" : "s"}`),
          el("ul", { id: "arena-problem-list" }, checked.problems.map((p) =>
            el("li", { dataset: { path: p.path } }, p.path ? el("code", {}, p.path) : null, p.path ? ": " : "", p.message))));
        return;
      }
      b.draft.upload = { file: file.name, arena: checked.arena };
      fitZones();
      renderAll();
    } catch (err) {
      problems.hidden = false;
      problems.textContent = `${file.name}: ${err.message}`;
    }
  }

  // -- creatures ------------------------------------------------------------------------

  function crText(cr) {
    return { 0.125: "1/8", 0.25: "1/4", 0.5: "1/2" }[cr] || String(cr);
  }

  function renderSearch() {
    const { el } = window.zonekeepHome;
    const box = document.getElementById("builder-search");
    const results = el("div", { id: "compendium-results" });
    const form = el("form", { id: "compendium-search", class: "zk-row", onsubmit: async (ev) => {
      ev.preventDefault();
      const data = new FormData(form);
      const params = { text: data.get("text").trim(), limit: 20 };
      if (data.get("type")) params.type = data.get("type");
      if (data.get("cr_min") !== "") params.cr_min = Number(data.get("cr_min"));
      if (data.get("cr_max") !== "") params.cr_max = Number(data.get("cr_max"));
      try {
        const found = await b.conn.request("list_compendium", params);
        const credit = found.sources.map((s) => s.attribution).filter(Boolean);
        results.replaceChildren(
          found.entries.length ? el("table", { class: "zk-found" }, el("tbody", {}, found.entries.map((item) => {
            const e = item.entry;
            const count = el("input", { type: "number", min: 1, max: 50, value: 1, name: "count", "aria-label": `How many ${e.name}` });
            return el("tr", { dataset: { entry: item.id } },
              el("td", {}, el("strong", {}, e.name)),
              el("td", { class: "muted" }, `${e.size} ${e.type}, CR ${crText(e.challenge)}, AC ${e.ac}, HP ${e.hp?.average}`),
              el("td", {}, count, " ",
                el("button", { type: "button", dataset: { add: item.id }, onclick: () => addGroup(item, Number(count.value) || 1) }, "Add")));
          }))) : el("p", { class: "muted" }, "Nothing matches."),
          found.total > found.entries.length ? el("p", { class: "muted" }, `${found.total} match; the first ${found.entries.length} are shown.`) : null,
          credit.length ? el("p", { class: "zk-credit muted" }, credit.join(" ")) : null);
      } catch (err) {
        results.replaceChildren(el("p", { class: "error" }, err.message));
      }
    } },
    el("input", { name: "text", placeholder: "Search: goblin, wolf…", "aria-label": "Search the compendium" }),
    el("select", { name: "type", "aria-label": "Creature type" },
      ["", "aberration", "beast", "celestial", "construct", "dragon", "elemental", "fey", "fiend", "giant", "humanoid", "monstrosity", "ooze", "plant", "undead"]
        .map((t) => el("option", { value: t }, t || "any type"))),
    el("input", { name: "cr_min", type: "number", min: 0, max: 30, step: "any", placeholder: "CR from", "aria-label": "lowest challenge rating" }),
    el("input", { name: "cr_max", type: "number", min: 0, max: 30, step: "any", placeholder: "CR to", "aria-label": "highest challenge rating" }),
    el("button", { type: "submit" }, "Search"));
    box.replaceChildren(form, results);
  }

  function addGroup(item, count) {
    const e = item.entry;
    const zones = zonesOf(currentArena());
    const copies = [];
    for (let i = 1; i <= Math.min(50, count); i++) {
      copies.push({ name: count > 1 ? `${e.name} ${i}` : e.name, hp: e.hp?.average ?? null, ac: e.ac ?? null, zone: zones[0]?.id || null, hidden: false });
    }
    b.draft.groups.push({ id: item.id, name: e.name, side: "enemies", challenge: e.challenge, copies, defaults: { hp: e.hp?.average, ac: e.ac },
      hitDice: e.hp?.dice || null, rollHp: false });
    save();
    renderRoster();
  }

  function renderRoster() {
    const { el } = window.zonekeepHome;
    const box = document.getElementById("builder-roster");
    const zones = zonesOf(currentArena());
    if (!b.draft.groups.length) {
      box.replaceChildren(el("p", { class: "muted" }, "No creatures yet: search the compendium above."));
      return;
    }
    const SIDES = [["enemies", "enemies (against the players)"], ["party", "party (beside the players)"], ["neutral", "neutral"]];
    box.replaceChildren(...b.draft.groups.map((g, gi) => {
      const sides = SIDES.some(([v]) => v === g.side) ? SIDES : [...SIDES, [g.side, g.side]];
      const who = (ci) => `${g.name}, copy ${ci + 1}`;
      return el("fieldset", { class: "zk-group", dataset: { group: g.id, index: gi } },
        el("legend", {}, `${g.name} × ${g.copies.length}`),
        el("div", { class: "zk-row" },
          el("label", { class: "zk-field" }, el("span", {}, "Side"),
            el("select", { name: "side", onchange: (ev) => { g.side = ev.target.value; save(); } },
              sides.map(([v, text]) => el("option", { value: v, selected: v === g.side }, text)))),
          el("label", { class: "zk-field" }, el("span", {}, "Place them all in"),
            el("select", { name: "group_zone", onchange: (ev) => {
              if (ev.target.value === "-") return;
              for (const c of g.copies) c.zone = ev.target.value || null;
              save();
              renderRoster();
            } },
            el("option", { value: "-" }, "— zone by zone —"),
            el("option", { value: "" }, "— the GM places them —"),
            zones.map((z) => el("option", { value: z.id }, z.name)))),
          // The server rolls each copy's hit points from the hit dice, with the
          // encounter's own verifiable dice (the builder rolls nothing).
          g.hitDice ? el("label", { class: "zk-field zk-check" },
            el("input", { name: "roll_hp", type: "checkbox", checked: Boolean(g.rollHp), onchange: (ev) => { g.rollHp = ev.target.checked; save(); renderRoster(); } }),
            el("span", {}, `Roll hit points (${g.hitDice}) instead of ${g.defaults?.hp ?? "the average"}`)) : null,
          el("button", { type: "button", class: "zk-remove", onclick: () => {
            b.draft.groups.splice(gi, 1);
            save();
            renderRoster();
          } }, `Remove ${g.name}`)),
        el("div", { class: "zk-scroll" }, el("table", { class: "zk-copies" },
          el("thead", {}, el("tr", {}, ["Name", "HP", "AC", "Starting zone", "Hidden"].map((h) => el("th", { scope: "col" }, h)))),
          el("tbody", {}, g.copies.map((c, ci) => el("tr", { dataset: { copy: ci } },
            el("td", {}, el("input", { name: "name", value: c.name, "aria-label": `${who(ci)}: name`, oninput: (ev) => { c.name = ev.target.value; save(); } })),
            el("td", {}, g.rollHp ? el("span", { class: "zk-rolled", dataset: { rolled: ci } }, `rolled (${g.hitDice})`) : el("input", { name: "hp", type: "number", min: 1, value: c.hp ?? "", "aria-label": `${who(ci)}: hit points`, oninput: (ev) => { c.hp = ev.target.value === "" ? null : Number(ev.target.value); save(); } })),
            el("td", {}, el("input", { name: "ac", type: "number", min: 1, value: c.ac ?? "", "aria-label": `${who(ci)}: Armor Class`, oninput: (ev) => { c.ac = ev.target.value === "" ? null : Number(ev.target.value); save(); } })),
            el("td", {}, el("select", { name: "zone", "aria-label": `${who(ci)}: starting zone`, onchange: (ev) => { c.zone = ev.target.value || null; save(); } },
              el("option", { value: "" }, "— the GM places it —"),
              zones.map((z) => el("option", { value: z.id, selected: z.id === c.zone }, z.name)))),
            el("td", {}, el("input", { name: "hidden", type: "checkbox", checked: c.hidden, "aria-label": `${who(ci)}: hidden from the players`, onchange: (ev) => { c.hidden = ev.target.checked; save(); } }))))))));
    }));
  }

  // -- seats ----------------------------------------------------------------------------

  function renderSeats() {
    const { el } = window.zonekeepHome;
    const box = document.getElementById("builder-seats");
    const zones = zonesOf(currentArena());
    const input = el("input", { id: "seat-name", placeholder: "Player's name", maxlength: 64, "aria-label": "Player's name" });
    const add = (ev) => {
      ev.preventDefault();
      const player = input.value.trim();
      if (!player) return;
      if (player === "gm") return error("“gm” is the GM's own name: choose another.");
      if (b.draft.seats.some((s) => s.player === player)) return error(`There is already a seat for ${player}.`);
      error("");
      b.draft.seats.push({ player, zone: zones[0]?.id || null, level: 1 });
      save();
      renderSeats();
      document.getElementById("seat-name").focus();
    };
    box.replaceChildren(
      el("p", { class: "muted" }, "Each player gets a link and fills in their character there."),
      el("ul", { class: "zk-seatlist" }, b.draft.seats.map((s, i) => el("li", { dataset: { seat: s.player } },
        el("strong", {}, s.player), " starts in ",
        el("select", { name: "zone", "aria-label": `${s.player}'s character starts in`, onchange: (ev) => { s.zone = ev.target.value || null; save(); } },
          zones.map((z) => el("option", { value: z.id, selected: z.id === s.zone }, z.name))),
        " at level ",
        el("input", { name: "level", type: "number", min: 1, max: 20, value: s.level ?? 1, "aria-label": `${s.player}'s character's level`, oninput: (ev) => {
          const level = Math.trunc(Number(ev.target.value));
          if (level >= 1 && level <= 20) {
            s.level = level;
            save();
          }
        } }),
        " ",
        el("button", { type: "button", class: "zk-remove", onclick: () => {
          b.draft.seats.splice(i, 1);
          save();
          renderSeats();
        } }, "Remove")))),
      el("form", { id: "seat-form", class: "zk-row", onsubmit: add }, input, " ", el("button", { type: "submit", id: "add-seat" }, "Add seat")));
  }

  // -- difficulty -----------------------------------------------------------------------

  /** XP of a creature by challenge rating (SRD 5.1, "Experience Points by Challenge Rating"). */
  const XP_BY_CR = new Map([[0, 10], [0.125, 25], [0.25, 50], [0.5, 100], [1, 200], [2, 450], [3, 700],
    [4, 1100], [5, 1800], [6, 2300], [7, 2900], [8, 3900], [9, 5000], [10, 5900], [11, 7200],
    [12, 8400], [13, 10000], [14, 11500], [15, 13000], [16, 15000], [17, 18000], [18, 20000],
    [19, 22000], [20, 25000], [21, 33000], [22, 41000], [23, 50000], [24, 62000], [25, 75000],
    [26, 90000], [27, 105000], [28, 120000], [29, 135000], [30, 155000]]);
  /** A character's XP thresholds by level: easy, medium, hard, deadly. */
  const THRESHOLDS = [null, [25, 50, 75, 100], [50, 100, 150, 200], [75, 150, 225, 400],
    [125, 250, 375, 500], [250, 500, 750, 1100], [300, 600, 900, 1400], [350, 750, 1100, 1700],
    [450, 900, 1400, 2100], [550, 1100, 1600, 2400], [600, 1200, 1900, 2800],
    [800, 1600, 2400, 3600], [1000, 2000, 3000, 4500], [1100, 2200, 3400, 5100],
    [1250, 2500, 3800, 5700], [1400, 2800, 4300, 6400], [1600, 3200, 4800, 7200],
    [2000, 3900, 5900, 8800], [2100, 4200, 6300, 9500], [2400, 4900, 7300, 10900],
    [2800, 5700, 8500, 12700]];
  const LEVELS = ["easy", "medium", "hard", "deadly"];
  const MULTIPLIERS = [0.5, 1, 1.5, 2, 2.5, 3, 4, 5];

  /** The multiplier for `monsters` monsters against a party of `party` characters: one
   * step up for fewer than three characters, one step down for six or more. */
  function multiplier(monsters, party) {
    let step = monsters <= 1 ? 1 : monsters === 2 ? 2 : monsters <= 6 ? 3 : monsters <= 10 ? 4 : monsters <= 14 ? 5 : 6;
    if (party < 3) step += 1;
    else if (party >= 6) step -= 1;
    return MULTIPLIERS[step];
  }

  /** The encounter's difficulty for the party, or null with the reason why not. */
  function difficulty(draft) {
    const foes = draft.groups.filter((g) => g.side === "enemies");
    const unknown = foes.filter((g) => !XP_BY_CR.has(g.challenge)).map((g) => g.name);
    const counted = foes.filter((g) => XP_BY_CR.has(g.challenge));
    const monsters = counted.reduce((n, g) => n + g.copies.length, 0);
    const xp = counted.reduce((n, g) => n + XP_BY_CR.get(g.challenge) * g.copies.length, 0);
    const party = draft.seats.length;
    if (!party) return { reason: "Add player seats (with their characters' levels) to see how hard this is for them.", unknown };
    if (!monsters) return { reason: "No creature with a challenge rating is against the players yet.", unknown };
    const thresholds = [0, 0, 0, 0];
    for (const seat of draft.seats) {
      const row = THRESHOLDS[Math.min(20, Math.max(1, seat.level ?? 1))];
      row.forEach((v, i) => { thresholds[i] += v; });
    }
    const factor = multiplier(monsters, party);
    const adjusted = Math.round(xp * factor);
    let rating = "trivial";
    LEVELS.forEach((name, i) => { if (adjusted >= thresholds[i]) rating = name; });
    return { rating, xp, factor, adjusted, monsters, party, thresholds, unknown };
  }

  function renderDifficulty() {
    const box = document.getElementById("builder-difficulty");
    if (!box) return;
    const { el } = window.zonekeepHome;
    const d = difficulty(b.draft);
    const notes = d.unknown.length ? [el("p", { class: "muted" }, `Not counted (no challenge rating): ${d.unknown.join(", ")}.`)] : [];
    if (!d.rating) {
      box.replaceChildren(el("p", { id: "difficulty-rating", class: "muted", dataset: { rating: "" } }, d.reason), ...notes);
      return;
    }
    const words = d.rating === "trivial" ? "Trivial: below the easy threshold" : d.rating[0].toUpperCase() + d.rating.slice(1);
    box.replaceChildren(
      el("p", { id: "difficulty-rating", dataset: { rating: d.rating } }, el("strong", {}, words), ` for ${d.party} character${d.party > 1 ? "s" : ""}: `,
        `${d.monsters} creature${d.monsters > 1 ? "s" : ""} worth ${d.xp} XP, × ${d.factor} for their number = ${d.adjusted} XP.`),
      el("table", { class: "zk-thresholds" },
        el("caption", {}, "The party's thresholds (XP)"),
        el("thead", {}, el("tr", {}, LEVELS.map((name) => el("th", { scope: "col" }, name)))),
        el("tbody", {}, el("tr", {}, d.thresholds.map((v, i) => el("td", { dataset: { level: LEVELS[i] } }, String(v)))))),
      ...notes);
  }

  // -- options, from their schema -------------------------------------------------------

  /** An option's name for a person: its schema's title, else its id in words. */
  function optionTitle(name, prop) {
    if (prop.title) return prop.title;
    const words = name.replaceAll("_", " ");
    return words[0].toUpperCase() + words.slice(1);
  }

  function renderOptions() {
    const { el } = window.zonekeepHome;
    const box = document.getElementById("builder-options");
    if (!b.schema) {
      box.replaceChildren(el("p", { class: "muted" }, "The options could not be loaded."));
      return;
    }
    const rows = Object.entries(b.schema.properties).map(([name, prop]) => {
      const numeric = prop.anyOf ? prop.anyOf.find((p) => p.type === "number" || p.type === "integer") : (prop.type === "number" || prop.type === "integer" ? prop : null);
      const nullable = Boolean(prop.anyOf?.some((p) => p.type === "null"));
      const current = name in b.draft.options ? b.draft.options[name] : prop.default;
      const change = (value) => {
        if (value === prop.default) delete b.draft.options[name];
        else b.draft.options[name] = value;
        save();
      };
      let input;
      let range = "";
      if (prop.type === "boolean") {
        input = el("input", { type: "checkbox", name, checked: current, onchange: (ev) => change(ev.target.checked) });
      } else if (numeric) {
        range = `${numeric.minimum} to ${numeric.maximum}${nullable ? ", or empty for none" : ""}`;
        input = el("input", { type: "number", name, min: numeric.minimum, max: numeric.maximum, step: numeric.type === "integer" ? 1 : "any",
          value: current ?? "", placeholder: nullable ? "none" : "", oninput: (ev) => {
            const v = ev.target.value;
            change(v === "" ? (nullable ? null : prop.default) : Number(v));
          } });
      } else {
        return null;
      }
      const fallback = prop.default === null ? "none" : String(prop.default);
      return el("label", { class: "zk-option", dataset: { option: name } },
        input,
        el("span", {}, el("strong", {}, optionTitle(name, prop)), range ? ` (${range})` : "", ` — ${prop.description || ""} Default: ${fallback}.`));
    });
    box.replaceChildren(...rows.filter(Boolean), ...pluginSettings(b.schema.properties.settings));
  }

  // Plugin settings (protocol 1.4): options.settings.<plugin>.<id>, each from its schema;
  // the default shown is this server's value. Only the values changed are sent.
  function pluginSettings(schema) {
    const { el } = window.zonekeepHome;
    const rows = [];
    for (const [plugin, group] of Object.entries(schema?.properties || {})) {
      for (const [id, prop] of Object.entries(group.properties || {})) {
        const mine = b.draft.options.settings?.[plugin] || {};
        const current = id in mine ? mine[id] : prop.default;
        const change = (value) => {
          const all = { ...(b.draft.options.settings || {}) };
          const values = { ...(all[plugin] || {}) };
          if (value === prop.default || value === undefined) delete values[id];
          else values[id] = value;
          if (Object.keys(values).length) all[plugin] = values;
          else delete all[plugin];
          if (Object.keys(all).length) b.draft.options.settings = all;
          else delete b.draft.options.settings;
          save();
        };
        const name = `${plugin}.${id}`;
        let input;
        let range = "";
        if (prop.type === "boolean") {
          input = el("input", { type: "checkbox", name, checked: current, onchange: (ev) => change(ev.target.checked) });
        } else if (Array.isArray(prop.enum)) {
          input = el("select", { name, onchange: (ev) => change(prop.enum[Number(ev.target.value)]) },
            ...prop.enum.map((v, i) => el("option", { value: String(i), selected: v === current }, String(v))));
        } else if (prop.type === "integer" || prop.type === "number") {
          const low = prop.minimum ?? "";
          const high = prop.maximum ?? "";
          if (low !== "" || high !== "") range = `${low === "" ? "…" : low} to ${high === "" ? "…" : high}`;
          input = el("input", { type: "number", name, min: low, max: high, step: prop.type === "integer" ? 1 : "any",
            value: current ?? "", oninput: (ev) => change(ev.target.value === "" ? undefined : Number(ev.target.value)) });
        } else if (prop.type === "string") {
          if (prop.format === "dice") range = "dice, such as 1d6";
          input = el("input", { type: "text", name, value: current ?? "", oninput: (ev) => change(ev.target.value) });
        } else {
          continue; // a list or an object: not offered here (send it with create_encounter)
        }
        rows.push(el("label", { class: "zk-option", dataset: { setting: name } },
          input,
          el("span", {}, el("code", {}, name), range ? ` (${range})` : "", ` — ${prop.description || ""} Server's value: ${JSON.stringify(prop.default)}.`)));
      }
    }
    return rows;
  }

  // -- Start ----------------------------------------------------------------------------

  function roster() {
    return b.draft.groups.map((g) => {
      const overrides = g.copies.map((c, i) => {
        const o = {};
        const plain = g.copies.length > 1 ? `${g.name} ${i + 1}` : g.name;
        if (c.name && c.name !== plain) o.name = c.name;
        if (!g.rollHp && c.hp !== null && c.hp !== undefined && c.hp !== g.defaults?.hp) o.hp = c.hp;
        if (c.ac !== null && c.ac !== undefined && c.ac !== g.defaults?.ac) o.ac = c.ac;
        if (c.zone) o.zone = c.zone;
        if (c.hidden) o.hidden = true;
        return o;
      });
      const item = { compendium: g.id, count: g.copies.length };
      if (g.side && g.side !== "enemies") item.side = g.side;
      if (g.rollHp && g.hitDice) item.hp = "roll";
      if (overrides.some((o) => Object.keys(o).length)) item.overrides = overrides;
      return item;
    });
  }

  async function start() {
    const { el, tableLink, linkList } = window.zonekeepHome;
    error("");
    const arena = b.draft.upload ? b.draft.upload.arena : b.draft.arenaName;
    if (!arena) return error("Choose an arena first.");
    if (!b.draft.groups.length && !b.draft.seats.length) return error("Add creatures or player seats first.");
    const title = b.draft.title.trim() || (currentArena()?.name ?? "Encounter");
    const params = {
      name: title,
      arena,
      creatures: roster(),
      seats: b.draft.seats.map((s) => (s.zone ? { player: s.player, zone: s.zone } : { player: s.player })),
      public: b.draft.public,
    };
    if (Object.keys(b.draft.options).length) params.options = b.draft.options;
    let created;
    try {
      created = await b.conn.request("create_encounter", params);
    } catch (err) {
      return error(err.message);
    }
    // This connection joined it as the GM: a public encounter gets its spectator link
    // now (create_spectator_link), then it leaves; the GM's link opens the table.
    let watch = null;
    if (params.public) {
      try {
        watch = (await b.conn.request("create_spectator_link", { encounter: created.encounter })).token;
      } catch { /* the GM makes one at the table */ }
    }
    b.conn.request("leave", { encounter: created.encounter }).catch(() => {});
    b.draft = emptyDraft();
    save();
    try {
      localStorage.removeItem(DRAFT);
    } catch { /* nothing kept */ }
    const entry = (label, token, seat) => ({ label, href: tableLink(created.encounter, token), seat, encounter: created.encounter, token });
    const links = [entry("GM (you)", created.gm_token, "gm")];
    for (const [player, token] of Object.entries(created.seats)) {
      links.push(entry(player, token, player));
    }
    if (watch) links.push(entry("spectators", watch, "spectators"));
    b.box.replaceChildren(
      el("div", { id: "builder-started", dataset: { encounter: created.encounter } },
        el("h2", {}, `“${title}” is ready`),
        el("p", {}, "Send each player their own link; they fill in their character there. "
          + "Open yours to run the table (you see “waiting for …’s character” until they do)."),
        linkList(links),
        el("button", { type: "button", onclick: () => b.hooks.close() }, "Done")));
    b.hooks.created(title, created.encounter, { gm_token: created.gm_token, seats: created.seats });
  }

  window.zonekeepBuilder = { open, hasDraft, difficulty };
})();
