// Checks fold.mjs against the server's own snapshots (run by tests/test_node_fold.py).
//
//   node fold_check.mjs session FILE.jsonl
//     Folds a recorded session of the conformance kit (protocol/conformance/sessions/)
//     from the view's first snapshot (`create_encounter`'s or `join`'s result), with
//     every `event` and `snapshot` notification and a resume's `events`, and compares the
//     fold with each snapshot the server answered (`snapshot` requests) when it got it.
//   node fold_check.mjs log < LOG.json
//     LOG.json is {"seq", "snapshot", "events": [{"seq", "event", "expected"}]}: folds
//     each event and compares with `expected`, the server's state after it.
//
// Prints one JSON object: {"checked", "mismatches": [{"seq", "type", "keys"}], ...}.
// Exits 0 when it could run (the caller judges the mismatches), 1 on a bad input.

import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

import { Fold } from "./fold.mjs";

/** The top-level keys (and `creatures.<id>`) where `mine` and `theirs` differ. */
function differences(mine, theirs) {
  const keys = new Set([...Object.keys(mine), ...Object.keys(theirs)]);
  const found = [];
  for (const key of [...keys].sort()) {
    if (isDeepStrictEqual(mine[key], theirs[key])) continue;
    if (key === "creatures" && mine[key] && theirs[key]) {
      const ids = new Set([...Object.keys(mine[key]), ...Object.keys(theirs[key])]);
      for (const id of [...ids].sort()) {
        if (!isDeepStrictEqual(mine[key][id], theirs[key][id])) found.push(`creatures.${id}`);
      }
    } else {
      found.push(key);
    }
  }
  return found;
}

function session(path) {
  const entries = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
  const methods = new Map(); // "connection/id" -> method
  let fold = null;
  let invalidSeen = false;
  let checked = 0;
  let events = 0;
  let last = null;
  const mismatches = [];
  for (const entry of entries) {
    const m = entry.message;
    if (m === undefined) continue; // a close
    const key = `${entry.connection}/${m.id}`;
    if (entry.from === "client") {
      methods.set(key, m.method);
      continue;
    }
    const method = "id" in m ? methods.get(key) : undefined;
    const result = m.result;
    if ((method === "create_encounter" || method === "join") && result !== undefined) {
      if (fold === null) {
        fold = new Fold(result.snapshot, result.seq);
      } else if (Array.isArray(result.events)) {
        const first = fold.seq + 1; // a resume: the events missed
        result.events.forEach((event, n) => fold.event(first + n, event));
        events += result.events.length;
      }
    } else if (method === "snapshot" && result !== undefined && fold !== null) {
      last = result;
      if (fold.valid && fold.seq === result.seq) {
        checked += 1;
        const keys = differences(fold.snapshot, result.snapshot);
        if (keys.length > 0) mismatches.push({ seq: result.seq, type: "snapshot", keys });
      } else {
        mismatches.push({ seq: result.seq, type: "snapshot", keys: [`fold at seq ${fold.seq}, valid ${fold.valid}`] });
      }
    } else if (fold !== null && "method" in m) {
      events += m.method === "event" ? 1 : 0;
      fold.notification(m);
      invalidSeen ||= !fold.valid;
    }
  }
  if (fold === null || last === null) throw new Error(`${path}: no first snapshot or no final snapshot`);
  return {
    checked,
    events,
    mismatches,
    invalid_seen: invalidSeen,
    valid: fold.valid,
    seq: fold.seq,
    phase: fold.snapshot.phase,
    final_equal: isDeepStrictEqual(fold.snapshot, last.snapshot),
    unknown: [...fold.unknown],
  };
}

function log(text) {
  const data = JSON.parse(text);
  const fold = new Fold(data.snapshot, data.seq);
  const mismatches = [];
  let checked = 0;
  for (const { seq, event, expected } of data.events) {
    fold.event(seq, event);
    checked += 1;
    const keys = differences(fold.snapshot, expected);
    if (keys.length > 0) {
      mismatches.push({ seq, type: event.type, keys });
      fold.replace(seq, expected); // report each wrong event once, not every one after it
    }
  }
  return { checked, mismatches, unknown: [...fold.unknown] };
}

const [mode, path] = process.argv.slice(2);
let report;
try {
  if (mode === "session" && path) report = session(path);
  else if (mode === "log") report = log(readFileSync(0, "utf8"));
  else {
    console.error("usage: node fold_check.mjs session FILE.jsonl | node fold_check.mjs log < LOG.json");
    process.exit(2);
  }
} catch (err) {
  console.error(`error: ${err.stack ?? err}`);
  process.exit(1);
}
console.log(JSON.stringify(report));
