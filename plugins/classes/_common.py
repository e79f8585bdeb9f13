"""What the class feature modules share: a creature's level in a class, its features by
id (unless marked ``gm``), and the live count of a feature's uses."""

from __future__ import annotations

from zonekeep.sdk import Action, Attack, Creature, Trait, resource_key

__all__ = ["class_level", "feature_of", "no_uses_left", "uses_left", "uses_strength"]


def class_level(creature: Creature, class_id: str) -> int:
    """``creature``'s level in ``class_id`` (from its ``class-levels`` trait), or 0."""
    for trait in creature.traits:
        if trait.id != "class-levels":
            continue
        for entry in trait.params.get("classes", ()):
            if isinstance(entry, dict) and entry.get("name") == class_id:
                level = entry.get("level")
                return level if isinstance(level, int) and not isinstance(level, bool) else 0
    return 0


def feature_of(creature: Creature, feature: str) -> Trait | Action | None:
    """``creature``'s trait or action ``feature``, unless its data marks it ``gm``."""
    found: tuple[Trait | Action, ...] = (*creature.traits, *creature.actions)
    for item in found:
        if item.id in (feature, f"zonekeep.classes.{feature}") and item.gm is None:
            return item
    return None


def uses_left(creature: Creature, feature: Trait | Action) -> int:
    """The uses of ``feature`` ``creature`` has left (its full count when none is spent;
    0 for a feature without uses)."""
    uses = feature.uses
    if uses is None:
        return 0
    full = 1 if uses.recharge is not None else (uses.count or uses.charges or 1)
    return creature.resources.get(resource_key(feature), full)


def no_uses_left(
    creature: Creature, feature: Trait | Action, need: int = 1
) -> tuple[str, str] | None:
    """A refusal when ``creature`` has fewer than ``need`` uses of ``feature`` left."""
    if feature.uses is None:
        return None
    left = uses_left(creature, feature)
    if left < need:
        return (
            "no_uses_left",
            f"{creature.name} has {left} use(s) of {feature.name} left, not {need}.",
        )
    return None


def uses_strength(creature: Creature, attack: Attack) -> bool:
    """Whether ``attack`` is a melee weapon attack made with Strength: a melee attack,
    unless it is a finesse weapon's and the creature's Dexterity is the better (the
    sheet takes the better of the two for a finesse weapon)."""
    if attack.kind != "melee":
        return False
    if "finesse" not in attack.properties:
        return True
    return creature.abilities.get("str", 0) >= creature.abilities.get("dex", 0)
