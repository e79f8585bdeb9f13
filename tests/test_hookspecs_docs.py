"""The plugin contract is documented and consistent: hookspecs, events, refusal codes, commands."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pluggy
import pytest

import zonekeep.sdk as sdk
from zonekeep.plugins import default_plugins, load_default_plugins
from zonekeep.sdk import _hookspecs
from zonekeep.sdk._engine import _COST_CODES
from zonekeep.sdk._errors import RULE_ERRORS
from zonekeep.sdk._events import EVENT_TYPES, Event
from zonekeep.sdk._state import _REDUCERS
from zonekeep.sdk.engine import Engine

pytestmark = pytest.mark.docs

ROOT = Path(__file__).parent.parent

HOOKSPECS: dict[str, Callable[..., Any]] = {
    name: fn
    for name, fn in vars(_hookspecs).items()
    if name.startswith("zonekeep_") and inspect.isfunction(fn)
}


def spec_options(fn: Callable[..., Any]) -> dict[str, Any]:
    opts = getattr(fn, f"{_hookspecs.PROJECT}_spec", None)
    assert isinstance(opts, dict), f"{fn.__name__} is not decorated with @hookspec"
    return opts


def test_hookspecs_found() -> None:
    assert len(HOOKSPECS) >= 10
    assert {"zonekeep_commands", "zonekeep_roll_modifiers", "zonekeep_action_refusal"} <= set(
        HOOKSPECS
    )


@pytest.mark.parametrize("name", sorted(HOOKSPECS))
def test_hookspec_is_marked(name: str) -> None:
    opts = spec_options(HOOKSPECS[name])
    assert opts["historic"] is False


@pytest.mark.parametrize("name", sorted(HOOKSPECS))
def test_hookspec_docstring_says_when_called(name: str) -> None:
    doc = inspect.getdoc(HOOKSPECS[name]) or ""
    assert doc.strip(), f"{name} has no docstring"
    assert "Called" in doc, f"{name} does not say when it is called"


@pytest.mark.parametrize("name", sorted(HOOKSPECS))
def test_hookspec_documents_each_parameter(name: str) -> None:
    fn = HOOKSPECS[name]
    doc = inspect.getdoc(fn) or ""
    params = list(inspect.signature(fn).parameters)
    for param in params:
        assert f":param {param}:" in doc, f"{name} does not document its parameter {param!r}"
    documented = re.findall(r":param (\w+):", doc)
    assert sorted(documented) == sorted(params), f"{name} documents parameters it does not take"


@pytest.mark.parametrize("name", sorted(HOOKSPECS))
def test_hookspec_documents_return_unless_none(name: str) -> None:
    fn = HOOKSPECS[name]
    doc = inspect.getdoc(fn) or ""
    returns = inspect.signature(fn).return_annotation
    assert returns is not inspect.Signature.empty, f"{name} has no return annotation"
    returns_none = returns in ("None", None)
    if returns_none:
        assert ":return:" not in doc, f"{name} returns None but documents a return value"
    else:
        assert ":return:" in doc, f"{name} returns {returns} but has no ':return:'"


@pytest.mark.parametrize("name", sorted(HOOKSPECS))
def test_hookspec_firstresult_documented_exactly_when_set(name: str) -> None:
    fn = HOOKSPECS[name]
    doc = inspect.getdoc(fn) or ""
    firstresult = spec_options(fn)["firstresult"]
    says = "Stops at first non-None result" in doc
    assert says == firstresult, (
        f"{name}: firstresult={firstresult} but the docstring "
        f"{'says' if says else 'does not say'} 'Stops at first non-None result'"
    )


def test_firstresult_hooks_may_return_none() -> None:
    # A firstresult hook needs None to mean "no answer": its return type must allow it.
    for name, fn in HOOKSPECS.items():
        if spec_options(fn)["firstresult"]:
            assert "None" in str(inspect.signature(fn).return_annotation), name


# -- events -------------------------------------------------------------------------


def test_event_registry_is_consistent() -> None:
    assert EVENT_TYPES
    for name, cls in EVENT_TYPES.items():
        assert issubclass(cls, Event)
        assert cls.type == name
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", name), name


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_every_event_has_a_reducer(name: str) -> None:
    assert EVENT_TYPES[name] in _REDUCERS, f"event {name!r} has no reducer in _state"


def test_every_reducer_is_for_a_registered_event() -> None:
    registered = set(EVENT_TYPES.values())
    stray = [cls.__name__ for cls in _REDUCERS if cls not in registered]
    assert stray == []


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_every_event_is_exported_by_the_sdk(name: str) -> None:
    cls = EVENT_TYPES[name]
    assert getattr(sdk, cls.__name__, None) is cls


# -- refusal codes ------------------------------------------------------------------


def test_rule_error_numbers_unique_and_in_range() -> None:
    numbers = list(RULE_ERRORS.values())
    dupes = sorted({n for n in numbers if numbers.count(n) > 1})
    assert dupes == [], f"refusal numbers used twice: {dupes}"
    assert all(4000 <= n <= 4999 for n in numbers)
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", code) for code in RULE_ERRORS)


def _codes_in_source() -> set[str]:
    pattern = re.compile(r"(?:refuse|Refusal)\(\s*\"([a-z_]+)\"")
    found: set[str] = set()
    for folder in ("plugins", "server", "sdk"):
        for path in (ROOT / folder).glob("*.py"):
            found.update(pattern.findall(path.read_text()))
    found.update(code for code, _ in _COST_CODES.values())
    return found


def test_every_refusal_code_used_by_the_core_is_numbered() -> None:
    codes = _codes_in_source()
    assert len(codes) > 15  # the scan itself works
    missing = sorted(codes - set(RULE_ERRORS))
    assert missing == [], f"refusal codes without a number in RULE_ERRORS: {missing}"


# -- built-in plugins -----------------------------------------------------------------


@pytest.mark.parametrize("module_name", default_plugins)
def test_builtin_plugin_registers(module_name: str) -> None:
    module = importlib.import_module(module_name)
    impls = [
        # A module may name an implementation otherwise, with the hook as its specname
        # (the srd package's modules, each beside the package's own implementations).
        getattr(obj, f"{_hookspecs.PROJECT}_impl").get("specname") or name
        for name, obj in vars(module).items()
        if callable(obj) and hasattr(obj, f"{_hookspecs.PROJECT}_impl")
    ]
    assert impls, f"{module_name} implements no hook"
    assert all(name in HOOKSPECS for name in impls), impls
    pm = pluggy.PluginManager(_hookspecs.PROJECT)
    pm.add_hookspecs(_hookspecs)
    assert pm.register(module) is not None
    pm.check_pending()


def test_default_plugins_load_together() -> None:
    modules = load_default_plugins()
    assert [m.__name__ for m in modules] == list(default_plugins)
    engine = Engine()
    assert set(engine.pm.get_plugins()) == set(modules)
    engine.pm.check_pending()
    # Every command is owned by one of the built-in plugins.
    assert engine.commands
    assert set(engine.command_owners) == set(engine.commands)


# -- command specs ---------------------------------------------------------------------

ENGINE = Engine()
PARAMS = [(cid, name) for cid, spec in sorted(ENGINE.commands.items()) for name in spec.params]
#: Known documentation gaps (each a real bug to fix in the plugin that declares it).


@pytest.mark.parametrize("command", sorted(ENGINE.commands))
def test_command_has_summary(command: str) -> None:
    spec = ENGINE.commands[command]
    assert spec.id == command
    assert spec.summary.strip(), f"{command} has no summary"
    assert spec.summary == spec.summary.strip()


@pytest.mark.parametrize(
    ("command", "param"),
    [(c, p) for c, p in PARAMS],
)
def test_command_param_has_description(command: str, param: str) -> None:
    description = ENGINE.commands[command].params[param].description
    assert description.strip(), f"parameter {param!r} of {command!r} has no description"


@pytest.mark.parametrize(
    "command", sorted(c for c, spec in ENGINE.commands.items() if spec.who == "creature")
)
def test_creature_commands_declare_the_creature(command: str) -> None:
    # The engine reads params["creature"] for who="creature" commands.
    spec = ENGINE.commands[command]
    param = spec.params.get("creature")
    assert param is not None, f"{command} acts for a creature but takes no 'creature'"
    assert param.type == "creature"
    assert param.required


@pytest.mark.parametrize("command", sorted(ENGINE.commands))
def test_single_cost_commands_say_their_cost(command: str) -> None:
    # Players read the summary to know what a command costs.
    spec = ENGINE.commands[command]
    labels = {"action": "Action:", "bonus": "Bonus action:", "reaction": "Reaction:"}
    labels["interaction"] = "Interaction:"
    if len(spec.costs) == 1 and spec.costs[0] in labels:
        assert spec.summary.startswith(labels[spec.costs[0]]), spec.summary
