// A reference fold of the zonekeep protocol in plain JavaScript (no dependencies).
//
// Written from protocol/SPEC.md, "Keeping state from events": start from a snapshot and
// its seq, apply each `event` in seq order, and after each one the state is the
// snapshot the server would send this seat. There is one reducer per event type in
// REDUCERS below; each changes exactly the snapshot keys SPEC.md's fold table names for
// that event, as the table's "how" column says (generated from the server's own
// reducers). tests/test_node_fold.py folds the recorded sessions and whole played
// encounters (every event type) with this file and compares every state with the
// server's.
//
// - `rewound` makes the state invalid (`fold.valid` false) until the `snapshot`
//   notification that follows replaces it (events in between advance `seq` only).
// - `hidden` (an event this seat may not see) changes nothing but `seq`.
// - A plugin's event (`<plugin>.<name>`) changes `plugin_state` as its plugin folds it,
//   which no generic client can know: it advances `seq` only, and `plugin_state` is
//   exact again after the next snapshot.
// - An event type this fold does not know (a newer MINOR version) advances `seq` and is
//   counted in `fold.unknown`; a client that must be exact asks for a `snapshot` then.
// - For a player or spectator, an enemy's hit points are words (`hp` "hurt", `max_hp`
//   null) in the snapshot and in `damaged`/`healed`/`override_applied`: the fold copies
//   whatever the event carries, so it stays exact for the seat's own view.

import { createHash } from "node:crypto";

/** An event skipped a seq: `join` again with `last_seq` (SPEC.md). */
export class FoldGap extends Error {}

const clone = (value) => (value === undefined ? undefined : structuredClone(value));

// Strings compare by code point, as the server sorts them.
function compareStrings(a, b) {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

// Items are strings or pairs of strings ([a, b]).
function compareItems(a, b) {
  if (typeof a === "string") return compareStrings(a, b);
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const d = compareStrings(a[i], b[i]);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

const same = (a, b) => compareItems(a, b) === 0 && typeof a === typeof b;
const indexOf = (items, item) => items.findIndex((x) => same(x, item));

/** Adds `item` to a list kept sorted and free of duplicates. */
function addSorted(items, item) {
  if (indexOf(items, item) < 0) {
    items.push(item);
    items.sort(compareItems);
  }
}

/** Removes `item` from `items` if it is there. */
function discard(items, item) {
  const i = indexOf(items, item);
  if (i >= 0) items.splice(i, 1);
}

/** A pair of creature ids as the snapshot keeps it: the smaller first. */
const pair = (a, b) => (compareStrings(a, b) <= 0 ? [a, b] : [b, a]);

const dropPairs = (pairs, id) => pairs.filter((p) => !p.includes(id));

/** A fresh turn's resources (SPEC.md, the snapshot's `resources`). */
const freshResources = () => ({
  movement_spent: 0,
  dashes: 0,
  actions: 1,
  bonus_actions: 1,
  interactions: 1,
  disengaged: false,
  sprinting: false,
  entered_zone: null,
  attacks: 0,
  attacks_left: [],
  multiattack_current: null,
});

/** An arena asset or an ongoing effect, by id (effects first). */
function asset(s, id) {
  if (s.effects && id in s.effects) return s.effects[id];
  return (s.arena?.assets ?? []).find((a) => a.id === id) ?? null;
}

function givenByEffect(s, creature, condition) {
  return Object.values(s.condition_effects).some(
    (x) => x.creature === creature && x.condition === condition,
  );
}

/** Forgets condition effect `id`; its condition goes unless another effect or a plain
 * hold (`plain_overlaps`) keeps it. */
function dropEffect(s, id) {
  const effect = s.condition_effects[id];
  if (effect === undefined) return;
  delete s.condition_effects[id];
  if (givenByEffect(s, effect.creature, effect.condition)) return;
  const held = [effect.creature, effect.condition];
  if (indexOf(s.plain_overlaps, held) >= 0) discard(s.plain_overlaps, held);
  else if (s.creatures[effect.creature]) discard(s.creatures[effect.creature].conditions, effect.condition);
}

/** Drops effect `id` and every effect descending from it (`parent`). */
function dropEffectTree(s, id) {
  dropEffect(s, id);
  for (const child of Object.values(s.condition_effects).filter((x) => x.parent === id)) {
    dropEffectTree(s, child.id);
  }
}

function creature(s, id) {
  const c = s.creatures[id];
  if (c === undefined) throw new Error(`the event names creature ${JSON.stringify(id)}, which the state does not have`);
  return c;
}

const nothing = () => {};

/** Event type -> (state, event) => void: what each event changes. */
export const REDUCERS = {
  // The encounter: its id, name, options, arena, creatures; phase "surprise".
  encounter_created(s, e) {
    s.id = e.encounter;
    s.name = e.name;
    s.options = clone(e.options);
    s.arena = clone(e.arena);
    s.creatures = Object.fromEntries(e.creatures.map((c) => [c.id, clone(c)]));
    s.phase = "surprise";
  },
  surprise_determined(s, e) {
    s.surprised = [...e.surprised];
    s.phase = "positions";
  },
  positions_established(s, e) {
    for (const [id, zone] of Object.entries(e.positions)) creature(s, id).zone = zone;
    s.phase = "initiative";
  },
  initiative_rolled(s, e) {
    s.initiative = clone(e.entries);
  },
  decision_opened(s, e) {
    s.pending.push(clone(e.decision));
    s.decisions_opened += 1;
  },
  // The decision leaves `pending`; an initiative tie's choice reorders its tied slots
  // among the places they held.
  decision_resolved(s, e) {
    const i = s.pending.findIndex((d) => d.id === e.decision);
    if (i < 0) return;
    const [decision] = s.pending.splice(i, 1);
    if (decision.kind !== "initiative_tie") return;
    const places = s.initiative
      .map((entry, index) => [entry.slot, index])
      .filter(([slot]) => e.choice.includes(slot))
      .map(([, index]) => index);
    const bySlot = Object.fromEntries(s.initiative.map((entry) => [entry.slot, entry]));
    places.forEach((place, n) => {
      s.initiative[place] = bySlot[e.choice[n]];
    });
  },
  group_order_set(s, e) {
    s.initiative = s.initiative.map((entry) =>
      entry.slot === e.group ? { ...entry, members: [...e.members] } : entry,
    );
  },
  round_started(s, e) {
    s.phase = "turns";
    s.round = e.round;
    s.turn_slot = -1;
    s.turn_member = -1;
  },
  round_ended(s) {
    s.active = null;
  },
  turn_started(s, e) {
    s.turn_slot = e.slot;
    s.turn_member = e.member;
    s.active = e.creature;
    s.resources = freshResources();
    discard(s.reactions_used, e.creature);
  },
  turn_skipped(s, e) {
    s.turn_slot = e.slot;
    s.turn_member = e.member;
    s.active = null;
  },
  turn_ended(s, e) {
    s.active = null;
    s.resources = freshResources();
    if (!s.turns_taken.includes(e.creature)) s.turns_taken.push(e.creature);
  },
  surprise_ended(s, e) {
    discard(s.surprised, e.creature);
  },
  // The cost comes off this turn's resources; a reaction marks the creature in
  // `reactions_used` instead; "free" changes nothing.
  action_taken(s, e) {
    const r = s.resources;
    if (e.cost === "action") r.actions -= 1;
    else if (e.cost === "attack") r.attacks -= 1;
    else if (e.cost === "bonus") r.bonus_actions -= 1;
    else if (e.cost === "interaction") r.interactions -= 1;
    else if (e.cost === "reaction" && !s.reactions_used.includes(e.creature)) {
      s.reactions_used.push(e.creature);
    }
  },
  // A feature grants more: `count` actions, attacks (Extra Attack) or bonus actions.
  action_granted(s, e) {
    const r = s.resources;
    if (e.cost === "action") r.actions += e.count;
    else if (e.cost === "attack") r.attacks += e.count;
    else if (e.cost === "bonus") r.bonus_actions += e.count;
  },
  movement_spent(s, e) {
    s.resources.movement_spent += e.feet;
  },
  moved(s, e) {
    s.resources.movement_spent += e.cost;
    if (e.feet > 0) creature(s, e.creature).sharing_with = null;
  },
  dashed(s) {
    s.resources.dashes += 1;
  },
  disengaged(s) {
    s.resources.disengaged = true;
  },
  sprinted(s) {
    s.resources.dashes += 1;
    s.resources.sprinting = true;
  },
  // A condition given plainly while an effect already gives it is noted in
  // `plain_overlaps`, so that the effect's end does not take it away.
  condition_applied(s, e) {
    if (givenByEffect(s, e.creature, e.condition)) addSorted(s.plain_overlaps, [e.creature, e.condition]);
    addSorted(creature(s, e.creature).conditions, e.condition);
  },
  // A plain removal takes the condition away whatever gives it: the effects giving it
  // (and their descendants) go too.
  condition_removed(s, e) {
    discard(creature(s, e.creature).conditions, e.condition);
    discard(s.plain_overlaps, [e.creature, e.condition]);
    const giving = Object.values(s.condition_effects)
      .filter((x) => x.creature === e.creature && x.condition === e.condition)
      .map((x) => x.id);
    for (const id of giving) dropEffectTree(s, id);
  },
  condition_effect_applied(s, e) {
    const effect = e.effect;
    const c = creature(s, effect.creature);
    if (c.conditions.includes(effect.condition) && !givenByEffect(s, effect.creature, effect.condition)) {
      addSorted(s.plain_overlaps, [effect.creature, effect.condition]);
    }
    s.condition_effects[effect.id] = clone(effect);
    addSorted(c.conditions, effect.condition);
  },
  condition_effect_ticked(s, e) {
    const effect = s.condition_effects[e.effect];
    if (effect !== undefined) s.condition_effects[e.effect] = { ...effect, rounds: e.rounds };
  },
  condition_effect_ended(s, e) {
    dropEffect(s, e.effect);
  },
  // A melee attack remembers its attacker in `last_melee` (keyed by the target); the
  // active creature's attack is the multiattack attack it was making, now made.
  attack_made(s, e) {
    if (e.kind === "melee") s.last_melee[e.target] = e.attacker;
    if (s.resources.multiattack_current !== null && e.attacker === s.active) {
      s.resources.multiattack_current = null;
    }
  },
  // A feature's uses left (`resources`, keyed by the feature) become the event's.
  resource_spent(s, e) {
    creature(s, e.creature).resources[e.resource] = e.left;
  },
  resource_restored(s, e) {
    creature(s, e.creature).resources[e.resource] = e.left;
  },
  recharge_rolled(s, e) {
    if (e.recharged) creature(s, e.creature).resources[e.resource] = 1;
  },
  multiattack_used(s, e) {
    s.resources.attacks_left = clone(e.attacks_left);
    s.resources.multiattack_current = clone(e.current ?? null);
  },
  damaged(s, e) {
    creature(s, e.creature).hp = e.hp;
  },
  healed(s, e) {
    creature(s, e.creature).hp = e.hp;
  },
  temp_hp_changed(s, e) {
    creature(s, e.creature).temp_hp = e.temp_hp;
  },
  readied(s, e) {
    s.readied[e.creature] = { target: e.target, attack: e.attack, trigger: e.trigger };
  },
  readied_cleared(s, e) {
    delete s.readied[e.creature];
  },
  // A creature joins; with an `entry` it joins the slot of that name (as a member) or
  // gets a new slot at `index`, moving the turn's slot along when it is at or after it.
  creature_added(s, e) {
    s.creatures[e.creature.id] = clone(e.creature);
    if (e.entry === null || e.entry === undefined) return;
    const existing = s.initiative.findIndex((x) => x.slot === e.entry.slot);
    if (existing >= 0) {
      const entry = s.initiative[existing];
      s.initiative[existing] = { ...entry, members: [...entry.members, e.creature.id] };
      return;
    }
    s.initiative.splice(e.index, 0, clone(e.entry));
    if (s.turn_slot >= e.index) s.turn_slot += 1;
  },
  hazard_added(s, e) {
    s.hazards[e.hazard.id] = clone(e.hazard);
  },
  hazard_removed(s, e) {
    delete s.hazards[e.hazard];
  },
  override_applied(s, e) {
    creature(s, e.creature)[e.field] = clone(e.value);
  },
  encounter_continued(s) {
    s.keep_going = true;
  },
  encounter_ended(s, e) {
    s.phase = "ended";
    s.active = null;
    s.ended_reason = e.reason;
    s.pending = [];
  },
  maneuver_started(s, e) {
    s.maneuver = clone(e.maneuver);
  },
  maneuver_updated(s, e) {
    s.maneuver = clone(e.maneuver);
  },
  maneuver_ended(s) {
    s.maneuver = null;
  },
  // The creature is in `to_zone`: it shares no space, its engagements and adjacencies
  // end, it leaves a position or element not in the new zone; when it moved itself on
  // its own turn, the cost is spent and `entered_zone` set.
  zone_entered(s, e) {
    const c = creature(s, e.creature);
    c.zone = e.to_zone;
    c.sharing_with = null;
    s.engagements = dropPairs(s.engagements, c.id);
    s.adjacent = dropPairs(s.adjacent, c.id);
    s.back_to_back = dropPairs(s.back_to_back, c.id);
    if (c.position !== null) {
      const a = asset(s, c.position);
      if (a === null || a.zone !== e.to_zone) c.position = null;
    }
    c.elements = c.elements.filter((id) => asset(s, id)?.zone === e.to_zone);
    if (!e.forced && s.active === c.id) {
      s.resources.movement_spent += e.cost;
      s.resources.entered_zone = e.to_zone;
    }
  },
  engagement_started(s, e) {
    addSorted(s.engagements, pair(e.creature, e.enemy));
  },
  engagement_ended(s, e) {
    discard(s.engagements, pair(e.creature, e.enemy));
  },
  // A prop (not an ongoing effect) becomes the creature's `position`; anything else is
  // one of its `elements`.
  position_taken(s, e) {
    const c = creature(s, e.creature);
    const a = asset(s, e.asset);
    if (a !== null && a.kind === "prop" && !(e.asset in s.effects)) c.position = e.asset;
    else addSorted(c.elements, e.asset);
  },
  position_left(s, e) {
    const c = creature(s, e.creature);
    if (c.position === e.asset) c.position = null;
    discard(c.elements, e.asset);
  },
  adjacency_taken(s, e) {
    const p = pair(e.creature, e.ally);
    addSorted(s.adjacent, p);
    if (e.back_to_back) addSorted(s.back_to_back, [...p]);
  },
  adjacency_ended(s, e) {
    const p = pair(e.creature, e.ally);
    discard(s.adjacent, p);
    discard(s.back_to_back, p);
  },
  effect_created(s, e) {
    s.effects[e.asset.id] = clone(e.asset);
  },
  effect_ended(s, e) {
    delete s.effects[e.asset];
    for (const c of Object.values(s.creatures)) discard(c.elements, e.asset);
  },
  // An asset placed while the encounter runs joins the arena's assets (a hidden one is
  // listed in `hidden_assets`: only the GM's view has it).
  asset_placed(s, e) {
    s.arena.assets.push(clone(e.asset));
    if (e.hidden) addSorted(s.hidden_assets, e.asset.id);
  },
  // New `data` replaces the asset's in its place; `hidden` true or false hides or
  // reveals it (a player or spectator gets a snapshot for that).
  asset_changed(s, e) {
    const a = asset(s, e.asset);
    if (a === null) return;
    if (e.data !== null && e.data !== undefined) {
      const changed = { ...a, data: clone(e.data) };
      if (s.effects && e.asset in s.effects) s.effects[e.asset] = changed;
      else s.arena.assets = s.arena.assets.map((x) => (x.id === e.asset ? changed : x));
    }
    if (e.hidden === true) addSorted(s.hidden_assets, e.asset);
    else if (e.hidden === false) discard(s.hidden_assets, e.asset);
  },
  // The asset leaves the effects or the arena, `hidden_assets`, and every creature's
  // position and elements.
  asset_removed(s, e) {
    if (s.effects && e.asset in s.effects) delete s.effects[e.asset];
    else s.arena.assets = s.arena.assets.filter((x) => x.id !== e.asset);
    discard(s.hidden_assets, e.asset);
    for (const c of Object.values(s.creatures)) {
      discard(c.elements, e.asset);
      if (c.position === e.asset) c.position = null;
    }
  },
  space_shared(s, e) {
    creature(s, e.creature).sharing_with = e.other;
  },
  note_added(s, e) {
    s.notes[e.note.id] = clone(e.note);
  },
  note_removed(s, e) {
    delete s.notes[e.note];
  },
  plugin_overran(s, e) {
    s.plugin_overruns[e.plugin] = (s.plugin_overruns[e.plugin] ?? 0) + 1;
  },
  plugin_disabled(s, e) {
    if (!s.disabled_plugins.includes(e.plugin)) s.disabled_plugins.push(e.plugin);
  },
  // A new seed: the mix and contributions so far are kept, `epoch` counts seeds.
  dice_committed(s, e) {
    const old = s.dice;
    s.dice = {
      mode: e.mode,
      commitment: e.commitment,
      seed: e.seed ?? null,
      revealed: false,
      mix: old ? old.mix : "0".repeat(64),
      contributions: old ? old.contributions : 0,
      epoch: (old ? old.epoch : 0) + 1,
    };
  },
  // The mix becomes SHA-256(mix bytes || UTF-8 of the contribution), in hex.
  dice_contributed(s, e) {
    if (!s.dice) return;
    const mix = createHash("sha256")
      .update(Buffer.from(s.dice.mix, "hex"))
      .update(Buffer.from(e.value, "utf8"))
      .digest("hex");
    s.dice = { ...s.dice, mix, contributions: s.dice.contributions + 1 };
  },
  dice_revealed(s, e) {
    if (s.dice) s.dice = { ...s.dice, seed: e.seed, revealed: true };
  },
  // Events that only record what happened (rolls, words, errors).
  chat_sent: nothing,
  check_rolled: nothing,
  communicated: nothing,
  condition_prevented: nothing,
  contest_rolled: nothing,
  dice_drawn: nothing,
  dice_rolled: nothing,
  interacted: nothing,
  plugin_error: nothing,
  save_made: nothing,
  tumble_attempted: nothing,
  // Its `damaged` events that follow change the hit points.
  zone_affected: nothing,
  // An event this seat may not see.
  hidden: nothing,
};

/** One seat's encounter state, kept from a snapshot and the events after it. */
export class Fold {
  /** `snapshot` and `seq`: `create_encounter`'s or `join`'s result, or a snapshot's. */
  constructor(snapshot, seq) {
    this.replace(seq, snapshot);
    /** Event types seen that this fold does not know (they advanced `seq` only). */
    this.unknown = new Set();
    /** Plugin events seen since the last snapshot (`plugin_state` may be stale). */
    this.pluginEvents = 0;
  }

  /** The state, as the server's snapshot for this seat says it (valid only when
   * `valid`). Callers must not change it. */
  get snapshot() {
    return this.state;
  }

  /** Applies event `seq` (an `event` notification's params, or one of a resume's
   * `events`). A repeat is ignored; a gap throws FoldGap. */
  event(seq, event) {
    if (seq <= this.seq) return;
    if (seq !== this.seq + 1) {
      throw new FoldGap(`event ${seq} after ${this.seq}: events ${this.seq + 1}.. are missing`);
    }
    this.seq = seq;
    const type = event.type;
    if (type === "rewound") this.valid = false; // the snapshot that follows has the state
    if (this.valid) {
      const reduce = Object.hasOwn(REDUCERS, type) ? REDUCERS[type] : undefined;
      if (reduce !== undefined) reduce(this.state, event);
      else if (typeof type === "string" && type.includes(".")) this.pluginEvents += 1;
      else this.unknown.add(type);
    }
    this.state.seq = seq;
  }

  /** A `snapshot` notification (or result): it replaces the state. */
  replace(seq, snapshot) {
    this.state = structuredClone(snapshot);
    this.seq = seq;
    this.valid = true;
    this.pluginEvents = 0;
  }

  /** Folds one server message: `event` and `snapshot` notifications count, the rest
   * is ignored. Returns whether it changed the fold. */
  notification(message) {
    const params = message.params ?? {};
    if (message.method === "event") {
      this.event(params.seq, params.event);
      return true;
    }
    if (message.method === "snapshot") {
      this.replace(params.seq, params.snapshot);
      return true;
    }
    return false;
  }
}
