// A reference zonekeep client in plain Node.js, written from protocol/SPEC.md alone.
//
//   node client.mjs ws://127.0.0.1:8765/ws [ws://ANOTHER-NODE/ws]
//
// With a second URL (a server of several nodes, docs/scale-out.md), Alice connects to
// that node; if another node serves the encounter, her `join` is answered `moved`
// (protocol 1.4) and she follows it to the error's `url` without further ado.
//
// It opens two connections: the GM's, which creates an encounter in the bundled
// "tavern" arena, and Alice's, which joins with a player seat token. Then it sets the
// encounter up, plays a few rounds (attack an enemy in the same zone, or end the
// turn), answers every prompt, and checks that event seqs arrive without gaps.
// Exit code 0 on success, 1 on any unexpected protocol error, seq gap or timeout.

import { isDeepStrictEqual } from "node:util";

import WebSocket from "ws";

import { Fold } from "./fold.mjs";

const PROTOCOL = "1.4";
const CLIENT = { name: "zonekeep-node-example", version: "0.1.0" };
const OVERALL_TIMEOUT_MS = 20_000;
const MAX_ROUNDS = 3;

// The engine commands and event types this client relies on: checked against the
// server's `hello` capabilities before anything else is sent.
const NEEDED_COMMANDS = {
  set_surprise: ["surprised"],
  place: ["positions"],
  roll_initiative: [],
  attack: ["creature", "target"],
  end_turn: ["creature"],
  decide: ["decision", "choice"],
};
const NEEDED_EVENTS = ["turn_started", "turn_ended", "round_started", "damaged"];

const blade = { name: "blade", kind: "melee", bonus: 4, damage: "1d6+2", damage_type: "slashing" };
const ROSTER = [
  { id: "aria", name: "Aria", side: "party", controller: "alice", dex_mod: 3,
    hp: 20, max_hp: 20, ac: 14, zone: "common_room", attacks: [blade] },
  { id: "bram", name: "Bram", side: "party", controller: "bob", dex_mod: 1,
    hp: 24, max_hp: 24, ac: 15, zone: "common_room", attacks: [blade] },
  { id: "gob1", name: "Goblin 1", side: "goblins", dex_mod: 2,
    hp: 7, max_hp: 7, ac: 13, zone: "common_room", attacks: [blade] },
  { id: "gob2", name: "Goblin 2", side: "goblins", dex_mod: 2,
    hp: 7, max_hp: 7, ac: 13, zone: "bar", attacks: [blade] },
];
// `place` may override the roster's zones: Goblin 2 vaults the bar into the common room.
const PLACE = { gob2: "common_room" };

// ---------------------------------------------------------------------------------------
// Failing loudly

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(1);
}

const overallTimer = setTimeout(
  () => fail(`timed out after ${OVERALL_TIMEOUT_MS / 1000} s`),
  OVERALL_TIMEOUT_MS,
);

/** An error response from the server: `code` (number) and `wireName` (stable name). */
class ServerError extends Error {
  constructor(label, method, error) {
    super(`${label}: ${method} refused: ${error.name} (${error.code}): ${error.message}`);
    this.code = error.code;
    this.wireName = error.name;
    this.url = error.url; // "moved" (1010): the node that serves the encounter
  }
}

// ---------------------------------------------------------------------------------------
// One WebSocket connection: requests matched to responses by id, notifications
// dispatched by method, and the seq of the one encounter it follows.

class Connection {
  constructor(label, ws, limits) {
    this.label = label;
    this.ws = ws;
    this.limits = limits;
    this.nextId = 1;
    this.inFlight = new Map(); // id -> {resolve, reject, method}
    this.handlers = new Map(); // notification method -> function(params)
    this.lastSeq = 0; // seq of the last event applied
    this.repeats = 0;
    this.seqWaiters = []; // {seq, resolve}
    this.nextSendAt = 0; // pacing, to stay under rate_per_second
    this.closing = false;
  }

  static open(label, url) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.once("open", () => resolve(new Connection(label, ws, null).#listen()));
      ws.once("error", (err) => {
        reject(new Error(`${label}: cannot connect to ${url}: ${err.message}`));
      });
    });
  }

  #listen() {
    this.ws.on("message", (data, isBinary) => {
      if (isBinary) fail(`${this.label}: the server sent a binary frame`);
      let message;
      try {
        message = JSON.parse(data.toString("utf8"));
      } catch (err) {
        fail(`${this.label}: the server sent invalid JSON: ${err.message}`);
      }
      this.#dispatch(message);
    });
    this.ws.on("close", (code, reason) => {
      if (!this.closing) fail(`${this.label}: connection closed by the server: ${code} ${reason}`);
    });
    this.ws.on("error", (err) => fail(`${this.label}: websocket error: ${err.message}`));
    return this;
  }

  #dispatch(message) {
    // A message with an `id` key is a response; one with a `method` key a notification.
    if ("id" in message) {
      const pending = this.inFlight.get(message.id);
      if (pending === undefined) {
        // id null: the server could not read one of our frames (parse_error, rate_limited ...).
        const error = message.error ?? {};
        fail(`${this.label}: response to no request (id ${JSON.stringify(message.id)}): ` +
             `${error.name} (${error.code}): ${error.message}`);
      }
      this.inFlight.delete(message.id);
      if ("error" in message) {
        pending.reject(new ServerError(this.label, pending.method, message.error));
      } else {
        const replayed = Array.isArray(message.result.events); // (a resume: the caller applies them)
        if ((pending.method === "join" && !replayed) || pending.method === "create_encounter") {
          // Live events follow from the reply's seq + 1, and may come in the same read as
          // the reply: take the seq now, before they are dispatched (a promise's
          // continuation would run after them).
          this.lastSeq = message.result.seq;
        }
        pending.resolve(message.result);
      }
      return;
    }
    if (message.method === "event") {
      this.#onEvent(message.params);
      return;
    }
    if (message.method === "closing") {
      fail(`${this.label}: the server is closing: ${message.params.reason}`);
    }
    if (message.method === "encounter_error") {
      fail(`${this.label}: encounter_error: ${message.params.message}`);
    }
    // Unknown notification methods MUST be ignored (a newer MINOR version may add some).
    this.handlers.get(message.method)?.(message.params);
  }

  #onEvent({ seq, event }) {
    if (seq <= this.lastSeq) {
      // The spec says: ignore an event at or below a seq already applied.
      this.repeats += 1;
      console.error(`warning: ${this.label}: event seq ${seq} repeated (at ${this.lastSeq})`);
      return;
    }
    if (seq !== this.lastSeq + 1) {
      // A real client would `join` again with last_seq; this one is a test of the server.
      fail(`${this.label}: seq gap: expected event seq ${this.lastSeq + 1}, got ${seq}`);
    }
    this.lastSeq = seq;
    this.handlers.get("event")?.(event, seq);
    this.seqWaiters = this.seqWaiters.filter((w) => (seq >= w.seq ? (w.resolve(), false) : true));
  }

  on(method, handler) {
    this.handlers.set(method, handler);
  }

  /** Resolves once the event with this seq (or a later one) has been applied. */
  waitForSeq(seq) {
    if (this.lastSeq >= seq) return Promise.resolve();
    return new Promise((resolve) => this.seqWaiters.push({ seq, resolve }));
  }

  request(method, params = {}) {
    const id = this.nextId++;
    const text = JSON.stringify({ id, method, params });
    if (this.limits && Buffer.byteLength(text, "utf8") > this.limits.max_message_bytes) {
      return Promise.reject(new Error(`${this.label}: ${method} is over max_message_bytes`));
    }
    // Pace requests at no more than rate_per_second, read from the `hello` result.
    const interval = this.limits ? 1000 / this.limits.rate_per_second : 0;
    const now = Date.now();
    const sendAt = Math.max(now, this.nextSendAt);
    this.nextSendAt = sendAt + interval;
    return new Promise((resolve, reject) => {
      this.inFlight.set(id, { resolve, reject, method });
      setTimeout(() => this.ws.send(text), sendAt - now);
    });
  }

  async command(encounter, type, params) {
    const result = await this.request("command", { encounter, type, params });
    // The events a command caused are pushed to its sender before the result.
    if (this.lastSeq < result.last_seq) {
      fail(`${this.label}: ${type} answered with last_seq ${result.last_seq} before its events ` +
           `(last event seen: ${this.lastSeq})`);
    }
    return result;
  }

  async hello() {
    const result = await this.request("hello", { protocol: PROTOCOL, client: CLIENT });
    if (result.protocol.split(".")[0] !== PROTOCOL.split(".")[0]) {
      fail(`${this.label}: the server speaks protocol ${result.protocol}, not ${PROTOCOL}`);
    }
    this.limits = result.limits;
    return result;
  }

  close() {
    this.closing = true;
    return new Promise((resolve) => {
      this.ws.once("close", resolve);
      this.ws.close(1000);
    });
  }
}

/** Await a request that MUST be refused with the given error name and code. */
async function expectError(promise, name, code) {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ServerError && err.wireName === name && err.code === code) return err;
    throw err;
  }
  fail(`expected the error ${name} (${code}), but the request succeeded`);
}

function checkCapabilities(caps) {
  const commands = new Map(caps.commands.map((c) => [c.id, c]));
  for (const [id, params] of Object.entries(NEEDED_COMMANDS)) {
    const spec = commands.get(id);
    if (spec === undefined) fail(`the server does not offer the command ${id}`);
    for (const p of params) {
      if (!(p in spec.params)) fail(`the server's ${id} command has no parameter ${p}`);
    }
  }
  for (const type of NEEDED_EVENTS) {
    if (!caps.event_types.includes(type)) fail(`the server does not send ${type} events`);
  }
  if (!caps.arenas.includes("tavern")) {
    fail(`the server has no "tavern" arena (it has ${caps.arenas.join(", ")})`);
  }
}

// ---------------------------------------------------------------------------------------
// The table as the GM sees it: the GM's snapshot, kept current by folding the GM's
// events into it with the reference fold (fold.mjs, SPEC.md "Keeping state from
// events"). At the end the client checks the fold against the server's own snapshot.

class Table {
  constructor(snapshot, seq) {
    this.fold = new Fold(snapshot, seq);
    this.stats = { events: 0, attacks: 0, hits: 0, decisions: 0 };
    this.waiters = [];
  }

  get state() {
    return this.fold.snapshot;
  }

  get creatures() {
    return this.state.creatures;
  }

  get active() {
    return this.state.active;
  }

  get round() {
    return this.state.round;
  }

  get pending() {
    return this.state.pending;
  }

  /** The reason the encounter ended, or null while it goes on. */
  get ended() {
    return this.state.phase === "ended" ? this.state.ended_reason : null;
  }

  name(id) {
    return this.creatures[id]?.name ?? id;
  }

  apply(event, seq) {
    this.stats.events += 1;
    this.fold.event(seq, event);
    switch (event.type) {
      case "initiative_rolled":
        console.log("initiative: " + event.entries
          .map((e) => `${e.members.map((m) => this.name(m)).join("+")} ${e.total}`)
          .join(", "));
        break;
      case "round_started":
        console.log(`-- round ${event.round}`);
        break;
      case "attack_made":
        this.stats.attacks += 1;
        if (event.hit) this.stats.hits += 1;
        console.log(
          `${this.name(event.attacker)} attacks ${this.name(event.target)} with ${event.attack}: ` +
            `${event.roll.total} vs AC ${event.target_ac}, ${event.hit ? "hit" : "miss"}`,
        );
        break;
      case "damaged":
        console.log(`  ${this.name(event.creature)} takes ${event.amount} damage (hp ${event.hp})`);
        break;
      case "decision_resolved":
        this.stats.decisions += 1;
        console.log(`decision ${event.decision}: ${event.choice.join(", ")} (by ${event.by})`);
        break;
      case "encounter_ended":
        console.log(`encounter ended: ${event.reason}`);
        break;
      default:
        break; // the fold has applied it; nothing to print
    }
    this.settle();
  }

  /** A `snapshot` notification: it replaces the folded state. */
  replace(seq, snapshot) {
    this.fold.replace(seq, snapshot);
    this.settle();
  }

  settle() {
    if (!this.fold.valid) return; // after a rewind, until its snapshot
    this.waiters = this.waiters.filter((w) => (w.test() ? (w.resolve(), false) : true));
  }

  /** Resolves once `test()` is true (checked after every event). */
  until(test) {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  canFight(id) {
    const cr = this.creatures[id];
    const out = ["dead", "unconscious", "incapacitated"];
    return cr.hp > 0 && !cr.conditions.some((x) => out.includes(x));
  }

  /** An enemy of `id` in the same zone that is still in the fight, or null. */
  targetFor(id) {
    const me = this.creatures[id];
    const enemy = Object.values(this.creatures).find(
      (o) => o.side !== me.side && o.zone === me.zone && this.canFight(o.id),
    );
    return enemy?.id ?? null;
  }
}

// ---------------------------------------------------------------------------------------
// Prompts: the seat that controls a decision answers it with `decide`. The GM may answer
// any decision; here it answers those of players who have no connection (bob) and its own.

const answered = new Set();

function answerPrompts(conn, encounter, mine) {
  conn.on("prompt", ({ decision }) => {
    if (!mine(decision) || answered.has(decision.id)) return;
    answered.add(decision.id);
    // The default is always a valid answer; an ordering decision needs all the options.
    const choice = decision.default.length > 0
      ? decision.default
      : decision.ordering ? decision.options : [decision.options[0]];
    conn.command(encounter, "decide", { decision: decision.id, choice }).catch((err) => {
      // Someone else may have answered first, or its deadline passed: that is fine.
      if (err.wireName !== "unknown_decision") fail(err.message);
    });
  });
}

// ---------------------------------------------------------------------------------------
// Several nodes (protocol 1.4): a `join` answered `moved` is sent again on a new
// connection to the error's `url` (after `hello` there); the old connection is closed.
// Returns the connection that joined and the join's result.

const MAX_MOVES = 5;

async function joinFollowingMoved(conn, params) {
  for (let moves = 0; moves < MAX_MOVES; moves++) {
    try {
      return [conn, await conn.request("join", params)];
    } catch (err) {
      if (!(err instanceof ServerError) || err.wireName !== "moved" || !err.url) throw err;
      console.log(`${conn.label}: moved to ${err.url}`);
      const next = await Connection.open(conn.label, err.url);
      await next.hello();
      await conn.close();
      conn = next;
    }
  }
  fail(`${conn.label}: join was moved ${MAX_MOVES} times in a row`);
}

// ---------------------------------------------------------------------------------------

async function main(url, playerUrl) {
  const gm = await Connection.open("gm", url);
  const welcome = await gm.hello();
  checkCapabilities(welcome.capabilities);
  const { server } = welcome;
  console.log(`connected to ${server.name} ${server.version}, protocol ${welcome.protocol}`);

  const created = await gm.request("create_encounter", {
    name: "Node client example",
    arena: "tavern",
    creatures: ROSTER,
  });
  const eid = created.encounter;
  // (gm.lastSeq is the reply's seq, taken when it came: encounter_created, seq 1, is in
  // the snapshot, not an event)
  const table = new Table(created.snapshot, created.seq);
  gm.on("event", (event, seq) => table.apply(event, seq));
  gm.on("snapshot", ({ seq, snapshot }) => table.replace(seq, snapshot));
  console.log(`created encounter ${eid} as ${created.role}`);

  // Aria's controller is already "alice", so this issues a token and changes nothing.
  const seat = await gm.request("create_seat", {
    encounter: eid,
    player: "alice",
    creatures: ["aria"],
  });

  const first = await Connection.open("alice", playerUrl);
  await first.hello();
  const [alice, joined] = await joinFollowingMoved(first, { encounter: eid, token: seat.token });
  if (joined.role !== "player" || joined.player !== "alice") {
    fail(`alice joined as ${joined.role}/${joined.player}, expected player/alice`);
  }
  // (alice.lastSeq is the join's seq, taken when its reply came, before the events after it)
  // Alice keeps her own view with the same fold (enemies' hit points are words there).
  // A `snapshot` notification replaces the seat's state; its seq is the new baseline.
  const aliceView = new Fold(joined.snapshot, joined.seq);
  alice.on("event", (event, seq) => aliceView.event(seq, event));
  alice.on("snapshot", ({ seq, snapshot }) => {
    alice.lastSeq = seq;
    aliceView.replace(seq, snapshot);
  });
  console.log(`alice joined as ${joined.role} at seq ${joined.seq}`);

  // Who sends commands (and answers decisions) for each controller.
  const seats = { alice };
  const connFor = (controller) => seats[controller] ?? gm;
  answerPrompts(alice, eid, (d) => d.controller === "alice");
  answerPrompts(gm, eid, (d) => !(d.controller in seats));

  // Set-up, as GM. Each command's events arrive before its result.
  await gm.command(eid, "set_surprise", { surprised: [] });
  await gm.command(eid, "place", { positions: PLACE });
  const rolled = await gm.command(eid, "roll_initiative", {});
  await gm.waitForSeq(rolled.last_seq);

  // Play: wait for a turn (an initiative tie may have to be decided first), act, repeat.
  const settled = () => table.ended !== null || (table.pending.length === 0 && table.active !== null);
  await table.until(settled);

  // A player may act only for her own creatures: 3001 on the wire, never 4003.
  const refused = alice.command(eid, "end_turn", { creature: "gob1" });
  await expectError(refused, "not_your_creature", 3001);

  for (;;) {
    await table.until(settled);
    if (table.ended !== null || table.round > MAX_ROUNDS) break;
    const who = table.active;
    const conn = connFor(table.creatures[who].controller);
    const target = table.canFight(who) ? table.targetFor(who) : null;
    if (target !== null) {
      const r = await conn.command(eid, "attack", { creature: who, target });
      await gm.waitForSeq(r.last_seq); // the GM's copy of the events may lag the sender's
      await table.until(settled);
      if (table.ended !== null) break;
    }
    const r = await conn.command(eid, "end_turn", { creature: who });
    await gm.waitForSeq(r.last_seq);
  }

  // Both seats must have seen every event (no hidden creatures in this roster).
  await alice.waitForSeq(gm.lastSeq);

  // Each seat's fold is the snapshot the server gives that seat.
  // (A decision's deadline may still add events: then ask again.)
  for (const [label, conn, fold] of [["gm", gm, table.fold], ["alice", alice, aliceView]]) {
    for (let tries = 1; ; tries++) {
      const server = await conn.request("snapshot", { encounter: eid });
      await conn.waitForSeq(server.seq);
      if (fold.seq !== server.seq && tries < 5) continue;
      if (fold.seq !== server.seq || !fold.valid || !isDeepStrictEqual(fold.snapshot, server.snapshot)) {
        fail(`${label}: the folded state at seq ${fold.seq} is not the server's snapshot ` +
             `at seq ${server.seq}`);
      }
      break;
    }
  }

  const s = table.stats;
  const repeats = gm.repeats + alice.repeats;
  console.log(
    `OK: encounter ${eid}, ${Math.min(table.round, MAX_ROUNDS)} round(s), ` +
    `events up to seq ${gm.lastSeq} without gaps, folded to the server's snapshot` +
    `${repeats ? ` (${repeats} repeats ignored)` : ""}, ` +
    `${s.attacks} attacks (${s.hits} hits), ${s.decisions} decision(s), ` +
    `${table.ended !== null ? `ended: ${table.ended}` : "not ended"}`,
  );
  await Promise.all([alice.close(), gm.close()]);
  clearTimeout(overallTimer);
}

const url = process.argv[2];
if (!url) {
  console.error("usage: node client.mjs ws://HOST:PORT/ws [ws://ANOTHER-NODE:PORT/ws]");
  process.exit(2);
}
main(url, process.argv[3] ?? url).then(
  () => process.exit(0),
  (err) => fail(err.message),
);
