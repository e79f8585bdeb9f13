// zonekeep dice verifier: the construction of protocol/SPEC.md ("Dice") in plain
// JavaScript over Web Crypto, so that the web table checks the dice itself instead of
// trusting the server. It runs in the browser (window.zonekeepDice) and in Node.js 18+
// (module.exports), where the tests check it against the same vectors as the Python one.
"use strict";

(function (root) {
  const subtle = root.crypto && root.crypto.subtle;
  const encoder = new TextEncoder();
  const TWO_64 = 1n << 64n;
  const SEED = /^[!-~]{1,128}$/;

  function hex(bytes) {
    return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function fromHex(text) {
    const out = new Uint8Array(text.length / 2);
    for (let i = 0; i < out.length; i += 1) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
    return out;
  }

  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  /** SHA-256 of the seed's UTF-8 bytes, lower-case hex. */
  async function commitment(seed) {
    return hex(await subtle.digest("SHA-256", encoder.encode(seed)));
  }

  /** The mix (32 bytes) after a contribution: SHA-256(mix || UTF-8(contribution)). */
  async function nextMix(mix, contribution) {
    return new Uint8Array(await subtle.digest("SHA-256", concat(mix, encoder.encode(contribution))));
  }

  const keys = new Map();
  async function hmacKey(seed) {
    if (!keys.has(seed)) {
      keys.set(
        seed,
        await subtle.importKey("raw", encoder.encode(seed), { name: "HMAC", hash: "SHA-256" }, false, [
          "sign",
        ]),
      );
    }
    return keys.get(seed);
  }

  /** The face (1..sides) of die number `counter` under `seed` and `mix`. */
  async function die(seed, mix, counter, sides) {
    const key = await hmacKey(seed);
    const limit = TWO_64 - (TWO_64 % BigInt(sides));
    for (let attempt = 0; ; attempt += 1) {
      const message = new Uint8Array(mix.length + 12);
      message.set(mix, 0);
      const view = new DataView(message.buffer);
      view.setBigUint64(mix.length, BigInt(counter));
      view.setUint32(mix.length + 8, attempt);
      const block = new DataView(await subtle.sign("HMAC", key, message));
      const x = block.getBigUint64(0);
      if (x < limit) return Number(x % BigInt(sides)) + 1;
    }
  }

  class Failure extends Error {
    constructor(message, counter, seq) {
      const where = [];
      if (counter !== null && counter !== undefined) where.push(`roll #${counter}`);
      if (seq !== null && seq !== undefined) where.push(`event ${seq}`);
      super(where.length ? `${where.join(", ")}: ${message}` : message);
      this.counter = counter;
      this.seq = seq;
    }
  }

  function isInt(v) {
    return Number.isInteger(v);
  }

  /** Every die recorded in an event, as [counter, sides, value] (SPEC.md, "Dice"). */
  function diceIn(value, found = []) {
    if (Array.isArray(value)) {
      for (const item of value) diceIn(item, found);
      return found;
    }
    if (value === null || typeof value !== "object") return found;
    const pairs = value.draws;
    if (Array.isArray(pairs) && pairs.length) {
      if (value.type === "dice_drawn") {
        for (const d of pairs) found.push([d[0], d[1], d[2]]);
        return found;
      }
      let faces;
      if ("rolls" in value) faces = [...(value.rolls || [])];
      else {
        faces = [...(value.dice || [])];
        if (value.expertise) faces.push(value.expertise_roll);
        if (value.penalty) faces.push(value.penalty_roll);
        for (const face of value.bonus_dice || []) faces.push(face);
      }
      if (faces.length !== pairs.length) throw new Failure("a roll's draws and dice do not pair up", pairs[0][0]);
      pairs.forEach((p, i) => found.push([p[0], p[1], faces[i]]));
    }
    for (const [key, item] of Object.entries(value)) if (key !== "draws") diceIn(item, found);
    return found;
  }

  /**
   * Check a log: [[seq, event], ...] in seq order. Resolves to a report, or rejects
   * with a Failure naming the first roll that does not verify. With `partial` (a seat
   * that does not see every event: hidden creatures), counters may be missing: what is
   * seen is checked, the rest is counted as hidden.
   */
  async function verifyLog(events, { partial = false } = {}) {
    let epoch = null;
    let mix = new Uint8Array(32);
    const seen = new Set();
    let rolls = 0;
    let seeds = 0;
    let contributions = 0;
    let hidden = 0;
    let timeline = [];
    const undone = [];
    let lastSeq = 0;

    async function check() {
      for (const [seq, counter, sides, value, m] of epoch.pending) {
        const wanted = await die(epoch.seed, m, counter, sides);
        if (wanted !== value)
          throw new Failure(`recorded ${value} on a d${sides}; the construction gives ${wanted}`, counter, seq);
      }
      rolls += epoch.pending.length;
      epoch.pending = [];
    }
    function firstPending(message) {
      const p = epoch.pending.reduce((a, b) => (b[1] < a[1] ? b : a), epoch.pending[0]);
      return new Failure(message, p ? p[1] : null, p ? p[0] : null);
    }

    for (const [seq, event] of events) {
      lastSeq = seq;
      const kind = event.type;
      if (kind === "dice_committed") {
        if (epoch && epoch.mode === "fair" && epoch.seed === null && epoch.pending.length)
          throw firstPending("a new seed was committed before this one was revealed");
        if ((event.mode !== "fair" && event.mode !== "seeded") || typeof event.commitment !== "string")
          throw new Failure("a malformed dice_committed event", null, seq);
        if (event.mode === "seeded") {
          if (typeof event.seed !== "string" || (await commitment(event.seed)) !== event.commitment)
            throw new Failure("the seeded commitment is not the seed's", null, seq);
          seeds += 1;
        }
        epoch = { mode: event.mode, commitment: event.commitment, seed: event.mode === "seeded" ? event.seed : null, pending: [] };
      } else if (kind === "dice_contributed") {
        if (typeof event.value !== "string" || !SEED.test(event.value))
          throw new Failure("a malformed contribution", null, seq);
        mix = await nextMix(mix, event.value);
        contributions += 1;
      } else if (kind === "dice_revealed") {
        if (!epoch || epoch.mode !== "fair" || epoch.seed !== null)
          throw new Failure("a seed was revealed with no fair commitment open", null, seq);
        if (typeof event.seed !== "string" || (await commitment(event.seed)) !== epoch.commitment)
          throw new Failure("the revealed seed does not match its commitment", epoch.pending.length ? epoch.pending[0][1] : null, seq);
        epoch.seed = event.seed;
        await check();
        seeds += 1;
      } else if (kind === "rewound") {
        const gone = timeline.filter(([s]) => s > event.to_seq).flatMap(([, cs]) => cs);
        timeline = timeline.filter(([s]) => s <= event.to_seq);
        const claimed = event.undone_rolls;
        if (!partial && epoch && Array.isArray(claimed) && claimed.join(",") !== gone.join(","))
          throw new Failure(`the rewind says it undid rolls [${claimed}], but it undid [${gone}]`, gone.length ? gone[0] : null, seq);
        undone.push([seq, partial && Array.isArray(claimed) ? claimed : gone]);
      } else {
        const found = diceIn(event);
        if (!found.length) continue;
        if (!epoch) throw new Failure("dice were rolled before any commitment", found[0][0], seq);
        for (const [counter, sides, value] of found) {
          if (!isInt(counter) || !isInt(sides) || !isInt(value)) throw new Failure("a die is not a whole number", null, seq);
          if (seen.has(counter) || counter < 0) throw new Failure("this counter was used before (a die drawn twice)", counter, seq);
          if (sides < 1 || value < 1 || value > sides) throw new Failure(`${value} cannot come up on a d${sides}`, counter, seq);
          seen.add(counter);
          epoch.pending.push([seq, counter, sides, value, mix]);
        }
        timeline.push([seq, found.map((d) => d[0])]);
        if (epoch.seed !== null) await check();
      }
    }
    let top = -1;
    for (const c of seen) top = Math.max(top, c);
    for (let c = 0; c <= top; c += 1) {
      if (seen.has(c)) continue;
      if (!partial)
        throw new Failure("this roll is missing from the log (the counter skips it: rolls cut out, or drawn and not recorded)", c, null);
      hidden += 1;
    }
    if (epoch && epoch.pending.length)
      throw firstPending(
        `the seed was never revealed (the log ends at event ${lastSeq}: the encounter has not ended, or the log is truncated)`,
      );
    return { rolls, mode: epoch ? epoch.mode : "none", seeds, contributions, undone, hidden };
  }

  const api = { commitment, nextMix, die, diceIn, verifyLog, fromHex, hex, Failure };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.zonekeepDice = api;
})(globalThis);
