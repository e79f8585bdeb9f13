// One load-generator process of the load benchmark, in Node.js (started by
// `run.py --generator node`, not by hand). Modes: `zonekeep`, `baseline` (the fair
// baseline, baseline.py: one frame in per command saying which frames to send back)
// and `broadcast` (the per-frame-broadcast variant, baseline_broadcast.py), with the
// same --sizes, --command-timeout and --drop-every options as generator.py. A port of generator.py: same roles, same
// command loop, same closed and open shapes, same latency measurement, same baseline
// mode, and the same control protocol on standard input and output, so run.py drives
// either the same way:
//
// - `warmup`: (zonekeep) create one encounter, play a command, end it.
// - `create`: (zonekeep) for each encounter, a short-lived GM connection creates it
//   (bundled "tavern" arena, 2 heroes + 2 goblins), makes 2 player seats and a
//   spectator link, runs the setup (surprise, positions, initiative) and closes.
// - `join`: open M connections per encounter (GM, players, spectators; in baseline
//   mode each sends its group id) and start reading.
// - `closed SECONDS` / `open SECONDS PERIOD`: play for that long, then report.
// - `quit` (or end of input): exit at once.
//
// One JSON object a line is written back per phase (`{"error": ...}` on failure).
//
// Every command is timed at the client: from just before the send to the moment the
// last of the encounter's M connections received the command's last event (`all`),
// and to the moment the sender received the command's first event (`own`).
//
// Unlike generator.py, there is no task per command or per connection: one `message`
// handler per socket, one timer driving every open-loop send, and one sweep timer for
// the 10 s command deadlines. Connections use the `ws` package (compression off, no
// client pings: the server pings, `ws` answers).

import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import WebSocket from "ws";

/** How long one command may take (reply, then delivery to all M) before it counts as timed out, s. */
const COMMAND_TIMEOUT = 10.0;
/** How long opening and greeting one connection may take, s. */
const CONNECT_TIMEOUT = 60.0;
/** How often in-flight commands are checked against their deadline, ms. */
const SWEEP_MS = 50;

const BLADE = { name: "blade", kind: "melee", bonus: 4, damage: "1d6+2", damage_type: "slashing" };
const ROSTER = [
  // Initiative bonuses 40 apart: the d20 never ties, so the turn order is fixed. Hit
  // points enough for hours of blows: the fight never ends.
  { id: "aria", name: "Aria", side: "party", controller: "alice", dex_mod: 2,
    speeds: { walk: 30 }, initiative_bonus: 40, hp: 99999, max_hp: 99999, ac: 16, attacks: [BLADE] },
  { id: "brom", name: "Brom", side: "party", controller: "bob",
    speeds: { walk: 30 }, initiative_bonus: 20, hp: 99999, max_hp: 99999, ac: 18, attacks: [BLADE] },
  { id: "gob1", name: "Goblin 1", side: "goblins",
    speeds: { walk: 30 }, initiative_bonus: 0, hp: 99999, max_hp: 99999, ac: 15, attacks: [BLADE] },
  { id: "gob2", name: "Goblin 2", side: "goblins",
    speeds: { walk: 30 }, initiative_bonus: -20, hp: 99999, max_hp: 99999, ac: 15, attacks: [BLADE] },
];
const POSITIONS = { aria: "common_room", brom: "common_room", gob1: "bar", gob2: "bar" };
/** Who controls each creature: 0 is the GM's connection, 1 alice's, 2 bob's. */
const CONTROLLER = { aria: 1, brom: 2, gob1: 0, gob2: 0 };
/** One scripted turn: `commands` ([type, params without `creature`]), then end_turn. */
const turn = (creature, ...commands) => [creature, [...commands, ["end_turn", {}]]];
/** Two rounds that repeat for ever, in initiative order (as generator.py's SCRIPT). */
const SCRIPT = [
  turn("aria", ["enter", { zones: ["bar"] }], ["attack", { target: "gob1" }]),
  turn("brom", ["move", { feet: 5 }]),
  turn("gob1", ["attack", { target: "aria" }]),
  turn("gob2", ["attack", { target: "aria" }]),
  turn("aria", ["enter", { zones: ["common_room"] }]),
  turn("brom", ["move", { feet: 5 }]),
  turn("gob1", ["move", { feet: 5 }]),
  turn("gob2", ["move", { feet: 5 }]),
];
/** The GM adds (or removes) a note before every this many turns. */
const NOTE_EVERY = 4;
const noteText = (n) =>
  `The goblins shout; a tankard rolls under the bar (note ${String(n).padStart(4, "0")}).`;
/** Events a command makes on average in this script: the baseline sends as many frames. */
const FRAMES = { add_note: 1, remove_note: 1, move: 1, enter: 4, attack: 3, decide: 5, end_turn: 2 };
/** The baseline answers two made-up offers after Aria's walk back (see generator.py). */
const PROVOKED = 2;
/** A broadcast-variant frame is padded to about the size of a zonekeep `moved` event notification. */
const BASELINE_PAD = "x".repeat(150);
/** The fair baseline's frame sizes per command type without --sizes (see generator.py SIZES). */
const SIZES = {
  add_note: [250, 60, 190], remove_note: [150, 60, 140], move: [180, 60, 150],
  enter: [200, 60, 160], attack: [260, 60, 160], decide: [230, 60, 170], end_turn: [170, 60, 130],
};

/** Seconds on a monotonic clock (generator.py uses time.perf_counter). */
const now = () => performance.now() / 1000;

/** JSON text with Python's default separators (", " and ": "), so frames have the
 * same sizes as generator.py's; NaN is written as Python writes it. */
function pyDumps(v) {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "string":
      return JSON.stringify(v);
    case "number":
      if (Number.isNaN(v)) return "NaN";
      if (!Number.isFinite(v)) return v > 0 ? "Infinity" : "-Infinity";
      return String(v);
    case "boolean":
      return v ? "true" : "false";
    default:
      break;
  }
  if (Array.isArray(v)) return "[" + v.map(pyDumps).join(", ") + "]";
  const parts = [];
  for (const k of Object.keys(v)) parts.push(JSON.stringify(k) + ": " + pyDumps(v[k]));
  return "{" + parts.join(", ") + "}";
}

/** The rest of a baseline command frame: the command as JSON (type, params), padded with
 * "pad" to about `size` characters (see generator.py command_body). */
function commandBody(cmd, size) {
  const bare = pyDumps({ type: cmd.type, params: cmd.params, pad: "" });
  return bare.slice(0, -2) + "x".repeat(Math.max(0, size - bare.length)) + '"}';
}

const round6 = (x) => (Number.isNaN(x) ? x : Math.round(x * 1e6) / 1e6);

function bump(counter, key, by = 1) {
  counter[key] = (counter[key] || 0) + by;
}

// -- the command loop ---------------------------------------------------------------------

class Command {
  constructor(sender, type, params, frames) {
    this.sender = sender;
    this.type = type;
    this.params = params;
    this.frames = frames;
  }
}

/** The endless command loop of one encounter: the turns of SCRIPT, an occasional GM
 * note before a turn, and, whenever an opportunity attack is on offer, the GM taking it
 * before anything else. */
class Plan {
  constructor(clients, baseline = false) {
    this.clients = clients;
    this.baseline = baseline;
    this.turn = 0; // index into SCRIPT, counting on for ever
    this.step = -1; // -1: the note (every NOTE_EVERY turns), then the turn's commands
    this.notes = 0;
    this.added = 0; // notes added; even/odd alternates add and remove
  }

  sender(controller) {
    return controller < this.clients ? controller : 0; // a missing player: the GM
  }

  /** A command was refused: go to the end of the turn of `creature` (whose turn the
   * server says it is), so the loop always moves on. */
  resync(creature) {
    const n = SCRIPT.length;
    for (let ahead = 0; ahead < n; ahead++) {
      if (SCRIPT[(this.turn + ahead) % n][0] === creature) {
        this.turn += ahead;
        this.step = SCRIPT[this.turn % n][1].length - 1;
        return;
      }
    }
  }

  /** The next command; `offers` are the decisions open and not yet answered (oldest
   * first): the one answered now is taken off. */
  next(offers) {
    if (offers.length > 0) {
      return new Command(0, "decide", { decision: offers.shift(), choice: ["attack"] }, FRAMES.decide);
    }
    const [creature, commands] = SCRIPT[this.turn % SCRIPT.length];
    if (this.step === -1) {
      this.step = 0;
      if (this.turn % NOTE_EVERY === 0) {
        this.notes += 1;
        if (this.notes % 2) {
          this.added += 1;
          return new Command(0, "add_note", { text: noteText(this.added) }, 1);
        }
        // at most one note exists, and the engine numbers notes n1, n2 ... by count
        return new Command(0, "remove_note", { note: "n1" }, 1);
      }
    }
    const [kind, params] = commands[this.step];
    if (this.baseline && params.zones !== undefined && params.zones[0] === "common_room") {
      for (let n = 0; n < PROVOKED; n++) offers.push(`made-up ${n}`);
    }
    const sender = this.sender(CONTROLLER[creature]);
    let frames = FRAMES[kind];
    this.step += 1;
    if (this.step === commands.length) {
      this.step = -1;
      this.turn += 1;
      // turn_ended + turn_started, and round_ended + round_started at a round's end
      frames = this.turn % 4 === 0 ? 4 : 2;
    }
    return new Command(sender, kind, { creature, ...params }, frames);
  }
}

// -- measurement ----------------------------------------------------------------------------

/** When each of the M connections received one seq (records are pooled and reused). */
class Record {
  constructor(clients) {
    this.count = 0;
    this.bytes = 0; // the size of the first connection's copy
    this.times = new Float64Array(clients);
    this.waiter = null; // the in-flight command waiting for this seq to reach all M
  }
}

class Stats {
  constructor() {
    this.commands = 0;
    this.received = 0;
    this.gaps = 0;
    this.duplicates = 0;
    this.timeouts = 0;
    this.missing = 0;
    this.errors = {};
    this.errorSamples = {};
    this.other = {};
    this.closed = {};
    this.latAll = [];
    this.latOwn = [];
    this.lag = []; // open loop: how late the generator sent (its own lag)
    this.sent = 0;
    this.kinds = {}; // commands sent by type
    this.kindEvents = {}; // (zonekeep) the events they made
    // (zonekeep) bytes of events (first connection's copy), replies, commands; replies
    this.kindEventBytes = {};
    this.kindReplyBytes = {};
    this.kindReplies = {};
    this.kindSentBytes = {};
    this.simulatedDrops = 0; // events ignored on purpose (--drop-every)
    this.receivedBytes = 0; // bytes of every event frame received
  }

  asDict() {
    return {
      commands: this.commands,
      sent: this.sent,
      received: this.received,
      gaps: this.gaps,
      duplicates: this.duplicates,
      timeouts: this.timeouts,
      missing: this.missing,
      errors: this.errors,
      error_samples: this.errorSamples,
      other_messages: this.other,
      closed_connections: this.closed,
      lat_all: this.latAll.map(round6),
      lat_own: this.latOwn.map(round6),
      lag: this.lag.map(round6),
      commands_by_type: this.kinds,
      events_by_type: this.kindEvents,
      sizes: Object.fromEntries(
        Object.keys(this.kindReplies).map((k) => [k, [this.kindEventBytes[k] || 0,
          this.kindEvents[k] || 0, this.kindReplyBytes[k] || 0, this.kindReplies[k],
          this.kindSentBytes[k] || 0]]),
      ),
      simulated_drops: this.simulatedDrops,
      received_bytes: this.receivedBytes,
    };
  }
}

// -- connections ------------------------------------------------------------------------------

/** Open a websocket; resolves once open, rejects on error or after `timeout` seconds. */
function openSocket(url, timeout) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, {
      perMessageDeflate: false,
      maxPayload: 2 ** 22,
      handshakeTimeout: timeout * 1000,
    });
    const fail = (err) => {
      ws.removeAllListeners("open");
      ws.terminate();
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    ws.once("open", () => {
      ws.removeListener("error", fail);
      ws.on("error", () => {}); // reported through "close"
      resolve(ws);
    });
    ws.once("error", fail);
  });
}

/** A socket in its setup stage: requests are matched to replies by id, notifications
 * skipped (generator.py's `oneshot`). `done()` detaches it. */
class Setup {
  constructor(ws, gen) {
    this.ws = ws;
    this.gen = gen;
    this.waiting = new Map(); // id -> [resolve, reject]
    this.onMessage = (data) => {
      const msg = JSON.parse(data);
      const slot = msg.id !== undefined ? this.waiting.get(msg.id) : undefined;
      if (slot === undefined) return;
      this.waiting.delete(msg.id);
      if (slot[2] !== undefined) slot[2](msg); // hand over before the next frame is read
      slot[0](msg);
    };
    this.onClose = (code, reason) => {
      const err = new Error(`connection closed (${code} ${reason})`);
      for (const [, slot] of this.waiting) slot[1](err);
      this.waiting.clear();
    };
    ws.on("message", this.onMessage);
    ws.on("close", this.onClose);
  }

  /** One request; `now(reply)`, if given, runs as soon as the reply is read. */
  async call(method, params, now = undefined) {
    const rid = this.gen.nextId();
    const reply = await new Promise((resolve, reject) => {
      this.waiting.set(rid, [resolve, reject, now]);
      this.ws.send(pyDumps({ id: rid, method, params }));
    });
    if ("error" in reply) {
      const err = new Error(`${method}: ${pyDumps(reply.error)}`);
      err.error = reply.error; // the protocol error object ({code, name, message, url?})
      throw err;
    }
    return reply.result;
  }

  hello() {
    return this.call("hello", { protocol: "1.0", client: { name: "zonekeep-load", version: "0.1" } });
  }

  done() {
    this.ws.removeListener("message", this.onMessage);
    this.ws.removeListener("close", this.onClose);
  }
}

function withTimeout(promise, seconds, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${seconds} s`)), seconds * 1000);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Run `fn(item)` for every item, at most `limit` at a time; rejects on the first failure. */
async function pool(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// -- encounters ---------------------------------------------------------------------------------

/** One command on its way: sent, waiting for its reply, then for its last event at all M. */
class Flight {
  constructor(enc, cmd, t0, deadline) {
    this.enc = enc;
    this.cmd = cmd;
    this.t0 = t0;
    this.deadline = deadline;
    this.rid = 0;
    this.first = 0;
    this.last = 0;
    this.rec = null; // set once waiting for delivery
    this.replyBytes = 0;
    this.sentBytes = 0;
    this.over = false;
  }
}

class Encounter {
  constructor(gen, index) {
    this.gen = gen;
    this.index = index;
    this.id = `g${index}`;
    this.tokens = [];
    this.conns = []; // WebSocket per connection index
    this.pending = []; // per connection: Map request id -> Flight
    this.last = [];
    this.records = new Map();
    this.plan = new Plan(gen.clients, gen.mode !== "zonekeep");
    this.nextSeq = 1; // baseline: the seq the generator gives the next frame
    this.active = null;
    this.offers = []; // decisions open now (opportunity attacks on offer), oldest first
    this.running = false; // closed loop: still playing
  }

  record(seq) {
    let rec = this.records.get(seq);
    if (rec === undefined) {
      rec = this.gen.takeRecord();
      this.records.set(seq, rec);
    }
    return rec;
  }

  dropRecords(first, last) {
    for (let seq = first; seq <= last; seq++) {
      const rec = this.records.get(seq);
      if (rec !== undefined) {
        this.records.delete(seq);
        this.gen.giveRecord(rec);
      }
    }
  }

  onEvent(ci, seq, t, size = 0) {
    const gen = this.gen;
    const stats = gen.stats;
    if (gen.dropEvery && (stats.received + stats.simulatedDrops + 1) % gen.dropEvery === 0) {
      stats.simulatedDrops += 1;
      return;
    }
    stats.received += 1;
    const last = this.last[ci];
    if (seq !== last + 1) {
      if (seq <= last) {
        stats.duplicates += 1;
        return;
      }
      stats.gaps += seq - last - 1;
    }
    this.last[ci] = seq;
    const rec = this.record(seq);
    rec.times[ci] = t;
    if (ci === 0) rec.bytes = size;
    rec.count += 1;
    if (rec.count === gen.clients && rec.waiter !== null) gen.complete(rec.waiter);
  }
}

// -- the generator ------------------------------------------------------------------------------

class Generator {
  constructor(opts) {
    this.mode = opts.mode;
    this.url = opts.url;
    // several nodes (run.py --nodes K): encounter i is created at node i % K, and
    // connection c of it joins at node (i + c) % K, following "moved" to the owner
    this.urls = opts.urls && opts.urls.length ? opts.urls : [opts.url];
    this.moved = 0;
    this.clients = opts.clients;
    this.total = opts.total;
    this.encounters = [];
    for (let i = opts.first; i < opts.first + opts.count; i++) this.encounters.push(new Encounter(this, i));
    this.stats = new Stats();
    this.ids = 0;
    this.freeRecords = [];
    this.flights = []; // in flight, in deadline order (the deadline is send time + a constant)
    this.flightHead = 0;
    this.phase = null; // the running play phase
    this.commandTimeout = opts.commandTimeout;
    this.dropEvery = opts.dropEvery;
    this.sizes = { ...SIZES, ...opts.sizes };
    this.made = {}; // (fair baseline) events made so far per command type, fractional
  }

  nextId() {
    this.ids += 1;
    return this.ids;
  }

  takeRecord() {
    const rec = this.freeRecords.pop();
    if (rec === undefined) return new Record(this.clients);
    return rec;
  }

  giveRecord(rec) {
    rec.count = 0;
    rec.bytes = 0;
    rec.times.fill(0);
    rec.waiter = null;
    this.freeRecords.push(rec);
  }

  // -- plumbing --------------------------------------------------------------------------------

  /** The steady-state reader of connection `ci` of `enc`. */
  attach(enc, ci, ws) {
    const baseline = this.mode !== "zonekeep";
    const pending = enc.pending[ci];
    ws.on("message", (data) => {
      const t = now();
      const msg = JSON.parse(data);
      if (baseline) {
        if (msg.s !== undefined) {
          this.stats.receivedBytes += data.length;
          enc.onEvent(ci, msg.s, t);
        } // else the fair baseline's reply frame: nothing to wait for
      } else if (msg.id !== undefined) {
        const flight = pending.get(msg.id);
        if (flight !== undefined) {
          pending.delete(msg.id);
          flight.replyBytes = data.length;
          this.onReply(flight, msg);
        }
      } else if (msg.method === "event") {
        const params = msg.params;
        this.stats.receivedBytes += data.length;
        enc.onEvent(ci, params.seq, t, data.length);
        if (ci === 0) {
          const event = params.event;
          if (event.type === "turn_started") enc.active = event.creature;
          else if (event.type === "decision_opened") enc.offers.push(event.decision.id);
          else if (event.type === "decision_resolved") {
            const at = enc.offers.indexOf(event.decision);
            if (at >= 0) enc.offers.splice(at, 1); // answered by the deadline
          }
        }
      } else {
        bump(this.stats.other, msg.method === undefined || msg.method === null ? "None" : String(msg.method));
      }
    });
    ws.on("close", (code, reason) => {
      // websockets' ConnectionClosedOK (1000, 1001, 1005) ends generator.py's reader quietly
      if (code === 1000 || code === 1001 || code === 1005) return;
      bump(this.stats.closed, code === 1006 ? "no close frame" : `${code} ${reason.toString()}`);
    });
  }

  // -- phases ----------------------------------------------------------------------------------

  async warmup() {
    const ws = await openSocket(this.url, CONNECT_TIMEOUT);
    try {
      const s = new Setup(ws, this);
      await s.hello();
      const made = await s.call("create_encounter", { name: "warm-up", arena: "tavern", creatures: ROSTER });
      const eid = made.encounter;
      await s.call("create_seat", { encounter: eid, player: "alice" });
      await s.call("command", { encounter: eid, type: "add_note", params: { text: noteText(0) } });
      await s.call("command", { encounter: eid, type: "end_encounter", params: { force: true } });
      return { warmup: eid };
    } finally {
      ws.close();
    }
  }

  async createOne(enc) {
    const work = async () => {
      const ws = await openSocket(this.urls[enc.index % this.urls.length], CONNECT_TIMEOUT);
      try {
        const s = new Setup(ws, this);
        await s.hello();
        const made = await s.call("create_encounter", { name: `load ${enc.index}`, arena: "tavern", creatures: ROSTER });
        enc.id = made.encounter;
        const e = enc.id;
        const alice = await s.call("create_seat", { encounter: e, player: "alice" });
        const bob = await s.call("create_seat", { encounter: e, player: "bob" });
        const spec = await s.call("create_spectator_link", { encounter: e });
        enc.tokens = [made.gm_token, alice.token, bob.token, spec.token];
        for (const [kind, params] of [
          ["set_surprise", { surprised: [] }],
          ["place", { positions: POSITIONS }],
          ["roll_initiative", {}],
        ]) {
          await s.call("command", { encounter: e, type: kind, params });
        }
      } finally {
        ws.close();
      }
    };
    await withTimeout(work(), CONNECT_TIMEOUT, `create ${enc.index}`);
  }

  async create() {
    const t = now();
    if (this.mode === "zonekeep") await pool(this.encounters, 8, (enc) => this.createOne(enc));
    return { created: this.encounters.length, seconds: now() - t };
  }

  /** Open, greet and join connection `ci` of `enc`, then read it until closed. */
  async connection(enc, ci) {
    const work = async () => {
      if (this.mode !== "zonekeep") {
        const ws = await openSocket(this.url, CONNECT_TIMEOUT);
        ws.send(pyDumps({ group: enc.id }));
        enc.conns[ci] = ws;
        enc.last[ci] = 0;
        this.attach(enc, ci, ws);
        return;
      }
      let url = this.urls[(enc.index + ci) % this.urls.length];
      for (let attempt = 0; attempt < 5; attempt++) { // at most a few "moved" in a row
        const ws = await openSocket(url, CONNECT_TIMEOUT);
        const s = new Setup(ws, this);
        await s.hello();
        const token = enc.tokens[Math.min(ci, 3)];
        try {
          // switch to the reader synchronously with the reply: `ws` may emit the next
          // frames of the same read before an await resumes
          await s.call("join", { encounter: enc.id, token }, (joined) => {
            s.done();
            if (joined.result === undefined) return; // the error is thrown by call()
            enc.conns[ci] = ws;
            enc.last[ci] = joined.result.seq;
            this.attach(enc, ci, ws);
          });
          return;
        } catch (err) {
          if (!err.error || err.error.name !== "moved") throw err;
          this.moved += 1; // another node serves it: go there
          url = err.error.url;
          ws.close();
        }
      }
      throw new Error(`join ${enc.id}: moved too many times`);
    };
    await withTimeout(work(), CONNECT_TIMEOUT, `join ${enc.index}/${ci}`);
  }

  async join() {
    const t = now();
    for (const enc of this.encounters) {
      enc.conns = new Array(this.clients).fill(null);
      enc.pending = Array.from({ length: this.clients }, () => new Map());
      enc.last = new Array(this.clients).fill(0);
    }
    const slots = [];
    for (const enc of this.encounters) for (let ci = 0; ci < this.clients; ci++) slots.push([enc, ci]);
    // generator.py joins each encounter's connections one after the other, 16 at a time
    // over the process; joining in encounter-major order with 16 workers is the same.
    await pool(slots, 16, ([enc, ci]) => this.connection(enc, ci));
    if (this.mode !== "zonekeep") await sleep(500); // let the server register every group id
    let connections = 0;
    for (const enc of this.encounters) connections += enc.conns.length;
    return { connections, seconds: now() - t, moved: this.moved };
  }

  // -- one command -----------------------------------------------------------------------------

  /** Send one command; its end (completed, refused, timed out) is reported to `finish`. */
  issue(enc, cmd) {
    const stats = this.stats;
    const ws = enc.conns[cmd.sender];
    stats.sent += 1;
    bump(stats.kinds, cmd.type);
    if (ws === null || ws.readyState !== WebSocket.OPEN) {
      bump(stats.errors, "connection_closed");
      return false;
    }
    const flight = new Flight(enc, cmd, 0, now() + this.commandTimeout);
    if (this.mode === "fair") {
      // One frame in: what zonekeep would send back, then padding to a zonekeep command's size.
      const size = this.sizes[cmd.type];
      let frames = cmd.frames;
      if (size.length > 3) {
        const done = this.made[cmd.type] || 0;
        this.made[cmd.type] = done + size[3];
        frames = Math.max(1, Math.floor(done + size[3]) - Math.floor(done));
      }
      const first = enc.nextSeq;
      const last = first + frames - 1;
      enc.nextSeq = last + 1;
      flight.first = first;
      flight.last = last;
      const rec = enc.record(last);
      const head = `${first} ${Math.trunc(size[1])}` + ` ${Math.trunc(size[0])}`.repeat(frames) + "\n";
      const text = head + commandBody(cmd, Math.trunc(size[2]) - head.length);
      flight.t0 = now();
      ws.send(text);
      this.flights.push(flight);
      this.waitDelivery(flight, rec);
    } else if (this.mode === "baseline") {
      const first = enc.nextSeq;
      const last = first + cmd.frames - 1;
      enc.nextSeq = last + 1;
      flight.first = first;
      flight.last = last;
      const rec = enc.record(last);
      const tail = ", " + pyDumps({ type: cmd.type, p: cmd.params, pad: BASELINE_PAD }).slice(1);
      flight.t0 = now();
      for (let seq = first; seq <= last; seq++) ws.send(`{"s": ${seq}${tail}`);
      this.flights.push(flight);
      this.waitDelivery(flight, rec);
    } else {
      const rid = this.nextId();
      flight.rid = rid;
      enc.pending[cmd.sender].set(rid, flight);
      const text = pyDumps({
        id: rid, method: "command",
        params: { encounter: enc.id, type: cmd.type, params: cmd.params },
      });
      this.flights.push(flight);
      flight.sentBytes = text.length;
      flight.t0 = now();
      ws.send(text);
    }
    return true;
  }

  onReply(flight, reply) {
    if (flight.over) return;
    const stats = this.stats;
    const enc = flight.enc;
    if ("error" in reply) {
      const name = reply.error.name;
      bump(stats.errors, name);
      if (!(name in stats.errorSamples)) stats.errorSamples[name] = reply.error.message;
      if (enc.active !== null) enc.plan.resync(enc.active);
      this.finish(flight);
      return;
    }
    const first = reply.result.first_seq;
    const last = reply.result.last_seq;
    if (last < first) {
      bump(stats.errors, "no_event");
      this.finish(flight);
      return;
    }
    flight.first = first;
    flight.last = last;
    bump(stats.kindEvents, flight.cmd.type, last - first + 1);
    bump(stats.kindReplies, flight.cmd.type);
    bump(stats.kindReplyBytes, flight.cmd.type, flight.replyBytes);
    bump(stats.kindSentBytes, flight.cmd.type, flight.sentBytes);
    this.waitDelivery(flight, enc.record(last));
  }

  waitDelivery(flight, rec) {
    flight.rec = rec;
    if (rec.count >= this.clients) this.complete(flight);
    else rec.waiter = flight;
  }

  /** The command's last event reached all M connections. */
  complete(flight) {
    if (flight.over) return;
    const stats = this.stats;
    const enc = flight.enc;
    const rec = flight.rec;
    let latest = 0;
    for (let i = 0; i < rec.times.length; i++) if (rec.times[i] > latest) latest = rec.times[i];
    const own = enc.record(flight.first).times[flight.cmd.sender];
    if (this.mode === "zonekeep") {
      let bytes = 0;
      for (let seq = flight.first; seq <= flight.last; seq++) bytes += enc.record(seq).bytes;
      bump(stats.kindEventBytes, flight.cmd.type, bytes);
    }
    stats.commands += 1;
    stats.latAll.push(latest - flight.t0);
    stats.latOwn.push(own ? own - flight.t0 : NaN);
    enc.dropRecords(flight.first, flight.last);
    this.finish(flight);
  }

  /** The deadline passed: no reply (not counted as missing), or not yet at all M. */
  expire(flight) {
    const stats = this.stats;
    const enc = flight.enc;
    if (flight.rec === null) {
      enc.pending[flight.cmd.sender].delete(flight.rid);
      stats.timeouts += 1;
      this.finish(flight);
      return;
    }
    const rec = flight.rec;
    if (rec.count >= this.clients) {
      this.complete(flight);
      return;
    }
    stats.timeouts += 1;
    stats.missing += this.clients - rec.count;
    rec.waiter = null;
    enc.dropRecords(flight.first, flight.last);
    this.finish(flight);
  }

  finish(flight) {
    flight.over = true;
    const phase = this.phase;
    if (phase === null) return;
    phase.inflight -= 1;
    if (phase.shape === "closed") this.closedNext(flight.enc);
    else phase.check();
  }

  /** Every SWEEP_MS: expire the commands whose deadline passed (oldest first). */
  sweep() {
    const t = now();
    const flights = this.flights;
    while (this.flightHead < flights.length) {
      const f = flights[this.flightHead];
      if (f !== undefined && !f.over) {
        if (f.deadline > t) break;
        this.expire(f);
        if (this.flights !== flights) return; // that ended the phase
      }
      flights[this.flightHead] = undefined;
      this.flightHead += 1;
    }
    if (this.flightHead > 4096 && this.flightHead * 2 > flights.length) {
      this.flights = flights.slice(this.flightHead);
      this.flightHead = 0;
    }
  }

  // -- shapes ----------------------------------------------------------------------------------

  /** The encounter's next command, or (time is up, or the sender's connection is
   * closed) the end of its play. */
  closedNext(enc) {
    if (!enc.running) return;
    const phase = this.phase;
    if (now() < phase.until && this.issue(enc, enc.plan.next(enc.offers))) {
      phase.inflight += 1;
      return;
    }
    enc.running = false;
    phase.check();
  }

  play(shape, seconds, period) {
    return new Promise((resolve) => {
      this.stats = new Stats();
      const t0 = now();
      const start = t0 + 0.05;
      const until = start + seconds;
      const encs = this.encounters.filter((e) => e.conns.length > 0);
      let sweeper = null;
      let ticker = null;
      let hard = null;
      const phase = {
        shape,
        until,
        inflight: 0,
        sending: shape === "open",
        over: false,
        check: () => {
          if (phase.over || phase.inflight > 0 || phase.sending) return;
          if (shape === "closed" && encs.some((e) => e.running)) return;
          end();
        },
      };
      const end = () => {
        if (phase.over) return;
        phase.over = true;
        clearInterval(sweeper);
        clearTimeout(ticker);
        clearTimeout(hard);
        this.phase = null;
        // what is still in flight is abandoned, as generator.py's cancelled tasks are
        for (let i = this.flightHead; i < this.flights.length; i++) {
          const f = this.flights[i];
          if (f !== undefined && !f.over) {
            f.over = true;
            if (f.rec !== null && f.rec.waiter === f) f.rec.waiter = null;
            if (f.rec === null && f.rid) f.enc.pending[f.cmd.sender].delete(f.rid);
          }
        }
        this.flights = [];
        this.flightHead = 0;
        const out = this.stats.asDict();
        out.seconds = now() - t0;
        resolve(out);
      };
      this.phase = phase;
      sweeper = setInterval(() => this.sweep(), SWEEP_MS);
      hard = setTimeout(end, (until + this.commandTimeout + 5 - now()) * 1000);

      if (shape === "closed") {
        ticker = setTimeout(() => {
          for (const enc of encs) {
            enc.running = true;
            this.closedNext(enc);
          }
          phase.check();
        }, 0);
        return;
      }

      // Open loop: one timer walks a single timeline of every encounter's sends, each
      // encounter at `offset + k * period` (offsets spread evenly over the period).
      const order = encs
        .map((enc) => ({ enc, offset: (period * (enc.index % this.total)) / this.total }))
        .sort((a, b) => a.offset - b.offset);
      let k = 0;
      let i = 0;
      const nextAt = () => (order.length ? start + order[i].offset + k * period : Infinity);
      const tick = () => {
        ticker = null;
        let t = now();
        for (;;) {
          const at = nextAt();
          if (at >= until) {
            // generator.py stops each encounter at its first send time past the end
            phase.sending = false;
            phase.check();
            return;
          }
          if (at > t) {
            t = now();
            if (at > t) break;
          }
          const { enc } = order[i];
          this.stats.lag.push(t - at);
          if (this.issue(enc, enc.plan.next(enc.offers))) phase.inflight += 1;
          t = now();
          i += 1;
          if (i === order.length) {
            i = 0;
            k += 1;
          }
        }
        // one timer for the next due send (no spinning: timers have 1 ms resolution)
        ticker = setTimeout(tick, Math.max(0, (nextAt() - now()) * 1000));
      };
      ticker = setTimeout(tick, Math.max(0, (start - now()) * 1000));
    });
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// -- control -------------------------------------------------------------------------------------

function reply(obj) {
  process.stdout.write(pyDumps(obj) + "\n");
}

function bye() {
  reply({ bye: true });
  process.exit(0);
}

async function control(gen) {
  const lines = [];
  let wake = null;
  let closed = false;
  const rl = createInterface({ input: process.stdin, terminal: false });
  rl.on("line", (line) => {
    lines.push(line);
    if (wake) wake();
  });
  rl.on("close", () => {
    closed = true;
    if (wake) wake();
  });
  for (;;) {
    while (lines.length === 0 && !closed) await new Promise((resolve) => (wake = resolve));
    wake = null;
    if (lines.length === 0) bye();
    const words = lines.shift().split(/\s+/).filter(Boolean);
    if (words.length === 0 || words[0] === "quit") bye();
    let result;
    try {
      if (words[0] === "warmup") result = await gen.warmup();
      else if (words[0] === "create") result = await gen.create();
      else if (words[0] === "join") result = await gen.join();
      else if (words[0] === "closed" || words[0] === "open") {
        const period = words.length > 2 ? Number(words[2]) : 2.0;
        result = await gen.play(words[0], Number(words[1]), period);
      } else result = { error: `unknown phase '${words[0]}'` };
    } catch (exc) {
      result = { error: `${words[0]}: ${exc && exc.stack ? exc.stack.split("\n")[0] : exc}` };
    }
    reply(result);
  }
}

function main() {
  const { values } = parseArgs({
    options: {
      mode: { type: "string" },
      url: { type: "string" },
      first: { type: "string" },
      count: { type: "string" },
      total: { type: "string" },
      clients: { type: "string", default: "6" },
      "command-timeout": { type: "string", default: String(COMMAND_TIMEOUT) },
      sizes: { type: "string", default: "" },
      "drop-every": { type: "string", default: "0" },
      urls: { type: "string", default: "" },
    },
  });
  for (const name of ["mode", "url", "first", "count", "total"]) {
    if (values[name] === undefined) {
      process.stderr.write(`generator.mjs: --${name} is required\n`);
      process.exit(2);
    }
  }
  // Inside: "fair" is the fair baseline (baseline.py), "baseline" the broadcast variant.
  const modes = { zonekeep: "zonekeep", baseline: "fair", broadcast: "baseline" };
  if (modes[values.mode] === undefined) {
    process.stderr.write("generator.mjs: --mode must be zonekeep, baseline or broadcast\n");
    process.exit(2);
  }
  values.mode = modes[values.mode];
  const gen = new Generator({
    mode: values.mode,
    url: values.url,
    urls: values.urls ? values.urls.split(",") : [],
    first: parseInt(values.first, 10),
    count: parseInt(values.count, 10),
    total: parseInt(values.total, 10),
    clients: parseInt(values.clients, 10),
    commandTimeout: parseFloat(values["command-timeout"]),
    dropEvery: parseInt(values["drop-every"], 10),
    sizes: values.sizes ? JSON.parse(values.sizes) : {},
  });
  control(gen).catch((err) => {
    process.stderr.write(`generator.mjs: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  });
}

main();
