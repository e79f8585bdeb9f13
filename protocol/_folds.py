"""What each event changes in the snapshot (SPEC.md, "Keeping state from events"),
read from the rules' own reducers (``zonekeep.sdk``'s ``@reducer`` functions, in
``sdk/_state.py``) so that it cannot drift from them.

A reducer changes the snapshot keys whose attribute of the state it assigns, deletes,
or changes through a method (``s.pending.append(...)``), directly, through a name bound
to a part of it (``c = s.creatures[e.creature]; c.hp = ...``), or in a helper it hands
the state or a part of it to. What it changes of one creature is named field by field
(``creatures.<id>.hp``).
"""

from __future__ import annotations

import ast
import inspect
import sys
from functools import cache

from zonekeep.sdk.host import EVENT_TYPES, apply_event

#: Methods that change the object they are called on.
_MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "remove",
        "pop",
        "popitem",
        "clear",
        "update",
        "add",
        "discard",
        "setdefault",
        "sort",
        "reverse",
    }
)
#: ``EncounterState`` methods that return a creature (an alias into ``creatures``).
_CREATURE_METHODS = frozenset({"creature"})


def _roots(node: ast.AST, aliases: dict[str, list[str]], state: str) -> list[str]:
    """The snapshot keys ``node`` (an expression) is part of: ``["round"]`` for
    ``s.round``, ``["creatures.<id>.hp"]`` for ``c.hp`` when ``c`` is a creature."""
    path: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            path.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            path.append("[]")
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _CREATURE_METHODS:
                path += ["[]", "creatures"]
            node = node.func.value
        elif isinstance(node, ast.Name):
            break
        else:
            return []
    path.reverse()
    if node.id == state:
        bases = [path]
    elif node.id in aliases:
        bases = [a.split(".") + path for a in aliases[node.id]]
    else:
        return []
    return [key for base in bases if (key := _key(base)) is not None]


def _based_on(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is an attribute or item path from the name ``name``."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _key(path: list[str]) -> str | None:
    keys = [p for p in path if p != "[]"]
    if not keys:
        return None
    if keys[0] == "creatures" and len(path) > 1 and path[1] == "[]":
        return f"creatures.<id>.{keys[1]}" if len(keys) > 1 else "creatures.<id>"
    return keys[0]


def _alias(key: str) -> str:
    """What a name bound to the part ``key`` of the state stands for."""
    return "creatures.[]" if key.startswith("creatures.<id>") else key


def _written(
    fn: ast.FunctionDef, functions: dict[str, ast.FunctionDef], seen: frozenset[str]
) -> set[str]:
    """The snapshot keys ``fn`` changes (its first parameter is the state)."""
    if not fn.args.args:
        return set()
    state = fn.args.args[0].arg
    aliases: dict[str, list[str]] = {}
    found: set[str] = set()

    def note(target: ast.AST) -> None:
        found.update(_roots(target, aliases, state))

    def bind(name: str, value: ast.AST) -> None:
        parts = value.elts if isinstance(value, ast.Tuple | ast.List) else [value]
        keys = [_alias(k) for part in parts for k in _roots(part, aliases, state)]
        if keys:
            aliases[name] = keys

    for node in ast.walk(fn):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    if node.value is not None:
                        bind(target.id, node.value)
                    continue
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                for elt in elts:
                    if not isinstance(elt, ast.Name):
                        note(elt)
        elif isinstance(node, ast.AugAssign):
            note(node.target)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                note(target)
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            bind(node.target.id, node.iter)
            if aliases.get(node.target.id) == ["creatures"]:  # each creature in turn
                aliases[node.target.id] = ["creatures.[]"]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
                note(func.value)
            elif isinstance(func, ast.Name) and func.id == "setattr" and node.args:
                found.update(f"{k}.*" for k in _roots(node.args[0], aliases, state))
            elif isinstance(func, ast.Name) and func.id in functions:
                for arg in node.args:
                    if isinstance(arg, ast.Name) and arg.id == state:
                        if func.id not in seen:
                            helper = functions[func.id]
                            found |= _written(helper, functions, seen | {func.id})
                    elif isinstance(arg, ast.Name) and arg.id in aliases:
                        found.update(aliases[arg.id])  # a part of the state, handed over
                    elif isinstance(arg, ast.Attribute | ast.Subscript) and (
                        _based_on(arg, state)
                        or (
                            any(_based_on(arg, a) for a in aliases)
                            and not (isinstance(arg, ast.Attribute) and arg.attr == "id")
                        )
                    ):
                        note(arg)  # a part of the state (``s.<key>...``), handed over
    return {k.replace(".[]", ".<id>") for k in found}


@cache
def _reducers() -> tuple[dict[str, ast.FunctionDef], dict[str, ast.FunctionDef]]:
    """Event type -> its reducer's definition; and every function of the reducers'
    module, by name."""
    # The module of the reducers: where ``apply_event`` is (the SDK's public name).
    tree = ast.parse(inspect.getsource(sys.modules[apply_event.__module__]))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    type_of = {cls.__name__: name for name, cls in EVENT_TYPES.items()}
    found: dict[str, ast.FunctionDef] = {}
    for fn in functions.values():
        for deco in fn.decorator_list:
            if (
                isinstance(deco, ast.Call)
                and isinstance(deco.func, ast.Name)
                and deco.func.id == "reducer"
                and deco.args
                and isinstance(deco.args[0], ast.Attribute)
            ):
                name = type_of.get(deco.args[0].attr)
                if name is not None:
                    found[name] = fn
    return found, functions


@cache
def fold_rules() -> dict[str, tuple[str, ...]]:
    """Event type -> the snapshot keys its reducer changes (besides ``seq``), sorted."""
    reducers, functions = _reducers()
    # The events that only record what happened (rolls, words): no reducer of their own.
    rules: dict[str, tuple[str, ...]] = {name: () for name in EVENT_TYPES}
    for name, fn in reducers.items():
        rules[name] = tuple(sorted(_written(fn, functions, frozenset({fn.name}))))
    return dict(sorted(rules.items()))


@cache
def fold_hows() -> dict[str, str]:
    """Event type -> how its reducer changes the snapshot: the reducer's docstring (one
    paragraph of SPEC.md's Markdown), or ``""`` for an event that only records."""
    reducers, _ = _reducers()
    hows = {name: "" for name in EVENT_TYPES}
    for name, fn in reducers.items():
        hows[name] = " ".join((ast.get_docstring(fn) or "").split())
    return dict(sorted(hows.items()))
