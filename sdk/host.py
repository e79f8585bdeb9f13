"""zonekeep.sdk.host: what only a host needs (the server, the protocol, tools, tests).

A plugin imports :mod:`zonekeep.sdk`; a program that runs encounters (the server, the
in-process harness, an exporter, a verifier) also imports this module, as trio's
programs reach for ``trio.lowlevel``: the serializers of events and states, the
compendium and character loaders, the fair dice's construction and verifier, the
collection of the plugins' declarations and settings, and the plumbing of the state's
fold. :mod:`zonekeep.sdk.engine` holds the engine itself and plugin loading. Every
name is listed in docs/plugins.md, "The SDK's names".
"""

from ._arena import (
    MAX_MAP_SIDE,
    MAX_POLYGON_POINTS,
    ArenaProblem,
    asset_data_problems,
    polygon_problem,
    single_zone_arena,
)
from ._character import (
    CHARACTER_RANGES,
    CLASS_HIT_DICE,
    SKILL_ABILITIES,
    SPELL_SLOT_KEYS,
    SRD_ARMOR,
    SRD_WEAPONS,
    WEAPON_PROPERTIES,
    ArmorWorn,
    CharacterSheet,
    ClassLevel,
    ClassResource,
    PactSlots,
    SheetValues,
    Weapon,
    ability_modifier,
    character_attacks,
    character_creature,
    character_problems,
    character_resources,
    character_traits,
    level_proficiency,
    parse_character,
    sheet_values,
)
from ._compendium import (
    CHALLENGE_RATINGS,
    COMPENDIUM_RANGES,
    Compendium,
    CompendiumError,
    HitPoints,
    entry_creatures,
    entry_problems,
    expand_roster,
    load_compendium_file,
    proficiency_bonus,
    roster_reference,
    source_problems,
)
from ._conditions import (
    AssetTagConflict,
    declared_asset_tags,
    declared_conditions,
)
from ._custom import (
    AmbiguousId,
    CustomEventError,
    PluginCatalog,
    qualify,
)
from ._errors import (
    RULE_ERRORS,
)
from ._events import (
    EVENT_TYPES,
    event_type,
)
from ._fairdice import (
    EMPTY_MIX,
    CountedEntropy,
    VerifyFailure,
    VerifyReport,
    commitment,
    dice_in,
    next_mix,
    undone_counters,
    valid_seed,
    verify_log,
)
from ._hookspecs import (
    hookspec,
)
from ._importers import (
    CHARACTER_FORMATS,
    MAX_IMPORTED_ITEMS,
    CharacterImport,
    import_character,
)
from ._json import (
    json_kind,
    strict_containers,
    strict_scalar,
)
from ._plugin import (
    SDK_VERSION,
    VersionRangeError,
    parse_range,
    parse_version,
    version_in_range,
)
from ._schema import (
    SCHEMA_KEYWORDS,
    check_schema,
    schema_problems,
)
from ._schema import (
    validate as validate_json,
)
from ._serial import (
    converter,
    creature_to_dict,
    describe_errors,
    event_from_dict,
    event_to_dict,
    state_to_dict,
)
from ._settings import (
    SettingsError,
    declared_settings,
    effective_settings,
    settings_problems,
)
from ._state import (
    apply_event,
    replay_steps,
)
from ._types import (
    clamp_options,
    option_problems,
)

__all__ = [
    "CHALLENGE_RATINGS",
    "CHARACTER_FORMATS",
    "CHARACTER_RANGES",
    "CLASS_HIT_DICE",
    "COMPENDIUM_RANGES",
    "EMPTY_MIX",
    "EVENT_TYPES",
    "MAX_IMPORTED_ITEMS",
    "MAX_MAP_SIDE",
    "MAX_POLYGON_POINTS",
    "RULE_ERRORS",
    "SCHEMA_KEYWORDS",
    "SDK_VERSION",
    "SKILL_ABILITIES",
    "SPELL_SLOT_KEYS",
    "SRD_ARMOR",
    "SRD_WEAPONS",
    "WEAPON_PROPERTIES",
    "AmbiguousId",
    "ArenaProblem",
    "ArmorWorn",
    "AssetTagConflict",
    "CharacterImport",
    "CharacterSheet",
    "ClassLevel",
    "ClassResource",
    "Compendium",
    "CompendiumError",
    "CountedEntropy",
    "CustomEventError",
    "HitPoints",
    "PactSlots",
    "PluginCatalog",
    "SettingsError",
    "SheetValues",
    "VerifyFailure",
    "VerifyReport",
    "VersionRangeError",
    "Weapon",
    "ability_modifier",
    "apply_event",
    "asset_data_problems",
    "character_attacks",
    "character_creature",
    "character_problems",
    "character_resources",
    "character_traits",
    "check_schema",
    "clamp_options",
    "commitment",
    "converter",
    "creature_to_dict",
    "declared_asset_tags",
    "declared_conditions",
    "declared_settings",
    "describe_errors",
    "dice_in",
    "effective_settings",
    "entry_creatures",
    "entry_problems",
    "event_from_dict",
    "event_to_dict",
    "event_type",
    "expand_roster",
    "hookspec",
    "import_character",
    "json_kind",
    "level_proficiency",
    "load_compendium_file",
    "next_mix",
    "option_problems",
    "parse_character",
    "parse_range",
    "parse_version",
    "polygon_problem",
    "proficiency_bonus",
    "qualify",
    "replay_steps",
    "roster_reference",
    "schema_problems",
    "settings_problems",
    "sheet_values",
    "single_zone_arena",
    "source_problems",
    "state_to_dict",
    "strict_containers",
    "strict_scalar",
    "undone_counters",
    "valid_seed",
    "validate_json",
    "verify_log",
    "version_in_range",
]
