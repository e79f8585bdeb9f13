"""docs/configuration.md, generated from :class:`ServerConfig` and :class:`Limits`.

Each setting's meaning is the ``#:`` comment above its field in ``server/_config.py``
(read from the source, as Sphinx's autodoc reads them), its type and range are its
annotation and validator, its default the class's, its environment variable
:func:`_config.env_name`'s, and what a SIGHUP does with it :func:`_config.on_reload`'s.

``python -m zonekeep.server._config_doc`` writes the file; with ``--check`` it writes
nothing and exits 1 when the file is out of date (``scripts/generate`` runs both
this and the protocol's generator; tests/test_config.py checks it).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from . import _config
from ._config import SECRETS, SECTIONS, Limits, ServerConfig, describe_type, env_name, on_reload

ROOT = Path(__file__).resolve().parent.parent
DOC = "docs/configuration.md"
COMMAND = "python -m zonekeep.server._config_doc"

#: Defaults computed when the server starts, as the docs say them.
FACTORY_DEFAULTS = {
    "server.plugin_settings": "`{}` (every plugin setting at its default)",
    "server.data_dir": "`$XDG_DATA_HOME/zonekeep`, else `~/.local/share/zonekeep`",
    "server.arena_dirs": "the bundled arenas",
}


def field_comments(cls: type[Any]) -> dict[str, str]:
    """The ``#:`` comment lines right above each field of ``cls`` in its source, joined."""
    source = Path(_config.__file__).read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    (node,) = (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
    comments: dict[str, str] = {}
    for statement in node.body:
        if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
            continue
        found: list[str] = []
        index = statement.lineno - 2
        while index >= 0 and lines[index].strip().startswith("#:"):
            found.insert(0, lines[index].strip()[2:].strip())
            index -= 1
        if found:
            comments[statement.target.id] = " ".join(found)
    return comments


def _markdown(text: str) -> str:
    """reStructuredText markup of the comments as Markdown: ``x`` and :role:`x` -> `x`;
    Python's ``None`` as the config spells it."""
    text = re.sub(r":\w+:`~?(?:[\w.]*\.)?([^`.]+)`", r"`\1`", text)
    return text.replace("``None``", 'none (`""`)').replace("``", "`")


def _default(key: str, field: attrs.Attribute[Any]) -> str:
    if isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
        return FACTORY_DEFAULTS[key]
    value = field.default
    if value is None:
        return "none"
    if value == ():
        return "`[]`"
    return f"`{_config._show(value)}`"


def _type(field: attrs.Attribute[Any]) -> str:
    check = field.validator
    text = check.expected if isinstance(check, _config._Check) else describe_type(field.type)
    if _config._optional_of(field.type) is not None and "none" not in text:
        text += ", or none"
    return text[0].upper() + text[1:]


class MissingDoc(Exception):
    """A setting without its ``#:`` comment, or a computed default the docs do not say."""


def render() -> str:
    """The text of docs/configuration.md."""
    parts = [INTRO.strip(), ""]
    for section, cls in zip(SECTIONS, (ServerConfig, Limits), strict=True):
        comments = field_comments(cls)
        parts += [f"## `[{section}]`", "", SECTION_TEXT[section].strip(), ""]
        for field in attrs.fields(cls):
            if field.name == "limits":
                continue
            key = f"{section}.{field.name}"
            if field.name not in comments:
                raise MissingDoc(f"{key} has no #: comment in server/_config.py")
            if isinstance(field.default, attrs.Factory) and key not in FACTORY_DEFAULTS:  # type: ignore[arg-type]
                raise MissingDoc(f"{key}: say its default in _config_doc.FACTORY_DEFAULTS")
            facts = [
                f"{_type(field)}.",
                f"Default: {_default(key, field)}.",
                f"Environment: `{env_name(key)}`.",
                f"On SIGHUP: {on_reload(key)}.",
            ]
            if key in SECRETS:
                facts.append("A secret: masked by `zonekeep config show`, never logged.")
            parts += [
                f"### `{field.name}`",
                "",
                " ".join(facts),
                "",
                _markdown(comments[field.name]),
                "",
            ]
    return "\n".join(parts).rstrip() + "\n"


def main(argv: Sequence[str] | None = None, root: Path = ROOT) -> int:
    """Write docs/configuration.md under ``root`` (or, with ``--check``, say whether it
    is out of date and exit 1 if so)."""
    args = list(sys.argv[1:] if argv is None else argv)
    path = root / DOC
    text = render()
    current = path.read_text(encoding="utf-8") if path.exists() else None
    if current == text:
        return 0
    if "--check" in args:
        print(f"out of date: {DOC}")
        print(f"run {COMMAND} (or scripts/generate) to regenerate it")
        return 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote: {DOC}")
    return 0


INTRO = """
# Configuration

<!-- Generated from server/_config.py by `python -m zonekeep.server._config_doc`
(or `scripts/generate`): edit the `#:` comments there, not this file. -->

`zonekeep serve` needs no configuration: the defaults serve on `127.0.0.1:8765` and
keep encounters in `~/.local/share/zonekeep`. Every setting below can be given, each
source over the ones before it:

1. the defaults;
2. a TOML file named by `--config FILE`, with a `[server]` and a `[limits]` table;
3. environment variables `ZONEKEEP_<SECTION>_<KEY>` (`ZONEKEEP_SERVER_PORT=9000`,
   `ZONEKEEP_LIMITS_MAX_ENCOUNTERS=50`);
4. the flags of `zonekeep serve` (`--host`, `--port`, `--server-key`, `--data-dir`,
   `--store`, `--durability`, `--log-level`, `--log-format`, and `--plugin-setting
   PLUGIN.SETTING=VALUE` for `plugin_settings`).

```toml
[server]
host = "0.0.0.0"
public_url = "https://tables.example.org/zk/"
trusted_proxies = ["127.0.0.1"]
server_key_file = "/run/credentials/zonekeep.service/server_key"
log_format = "json"

[server.plugin_settings.hazards]   # a plugin's settings (docs/plugins.md)
burn_die = "1d8"

[limits]
max_encounters = 200
```

`zonekeep config check [--config FILE] [--connect-timeout SECONDS]` reads the file and
the environment as `serve` would (loading the plugins and the compendium files too);
for a PostgreSQL `store` it also connects and logs in (changing nothing), waiting at
most `--connect-timeout` seconds (default 5). It prints `ok` (exit 0) or every problem
(exit 2), such as `/etc/zonekeep.toml: server.store: cannot reach
postgresql://zonekeep@db.internal/zonekeep: connection timeout expired`.

`zonekeep config show [--config FILE]` prints the config in force as a TOML file that
reads back as the same config (`--config` accepts it): every setting, defaults
included, each one not at its default followed by where it came from (the file, the
variable). No secret is written: a secret is a comment, `# server_key = "********"`
(followed by `read from server_key_file` when it came from its file, whose key is
written, so the file is read again), and a `store` URL is written without its
password. A secret given as `"********"` is refused, so pasted output never makes that
the key.

## Values

- **In the file**, values are TOML: numbers (`20`, `2.5`), strings (`"json"`), lists
  (`["10.0.0.1", "10.0.0.0/8"]`), `true`/`false`. A whole number is refused where a
  whole number is needed and given as `8765.0`; a number is refused when written as a
  string (`"20"`). TOML has no null: a setting that may be *none* is set to none with
  `""` (for example `archive_after_days = ""`: never archive).
- **In the environment**, values are text: numbers as written (`9000`, `2.5`); lists
  separated by commas, spaces around items ignored
  (`ZONEKEEP_SERVER_TRUSTED_PROXIES="10.0.0.1,10.0.0.0/8"`; empty: an empty list);
  `true` or `false`; an empty value (`ZONEKEEP_SERVER_PUBLIC_URL=`) is none (for a
  list that may be none, such as `allowed_origins`, too: none, not an empty list).
- A variable named `ZONEKEEP_SERVER_...` or `ZONEKEEP_LIMITS_...` must name a setting,
  and `ZONEKEEP_<KEY>` without its section (`ZONEKEEP_PORT`) is refused with the right
  name; other `ZONEKEEP_` variables are not settings and are left alone.
- A wrong type, a value out of range, an unknown table, key or variable stops the start
  (exit 2) with one line per problem: where it is, the value, and what was expected:

  ```text
  /etc/zonekeep.toml: limits.rate_per_second: "fast" is not a number
  /etc/zonekeep.toml: server.prot: unknown key (did you mean port?)
  ZONEKEEP_SERVER_PORT: "80a" is not a whole number
  --port: 70000 is not a port number from 0 to 65535
  ```

  A value overridden by a later source is checked all the same.

## Secrets

`server_key` and `metrics_token` are secrets. Give each in one of these ways, never only
as a flag: `--server-key` still works but prints a warning, since every user of the
machine can read a process's arguments (`ps`).

- a file: `server_key_file` / `metrics_token_file` (in the config file or as
  `ZONEKEEP_SERVER_SERVER_KEY_FILE`), read at start and at every SIGHUP, one trailing
  newline dropped. A missing, unreadable or empty file stops the start. This suits
  systemd's `LoadCredential=` and Docker secrets;
- the environment: `ZONEKEEP_SERVER_SERVER_KEY`, `ZONEKEEP_SERVER_METRICS_TOKEN`;
- the config file itself (`server_key = "..."`), if only the server's user can read it.

Setting a secret and its file in the same source is refused; a later source's secret or
file replaces an earlier one's (a key in the environment wins over a file named in the
config file). No secret ever appears in a log line or in `config show`.

A PostgreSQL `store` URL may carry a password (`postgresql://user:password@host/db`):
it is masked in errors and in the log and left out by `config show`, like a secret. Better, leave
it out of the URL and let libpq find it in `~/.pgpass` (or `PGPASSWORD`), so that
neither the config file nor a flag holds it.

## Reloading (SIGHUP)

`kill -HUP <pid>` (or `systemctl reload zonekeep`) reads the config again, from the
same file, environment and flags, and applies what can change while the server runs.
Each setting below says when ("On SIGHUP"):

- *at once*: from its next use (the next `join`, `create_encounter`, handshake,
  cleanup sweep, `/metrics` request or log line). An encounter already running keeps
  its decision deadlines; the connection caps of loaded encounters change.
- *new connections*: connections opened from then on; open ones keep the limits they
  opened with (message sizes, rates, pings, queues).
- *new encounters*: encounters created from then on.
- *needs a restart*: the server keeps its old value and logs a warning naming the
  setting (the address, the store, the plugins, the garbage-collection upkeep).

The server logs what changed (a secret as "changed", never its value). GM keys live in
the store and are read at each use: there is nothing to reload for them. A config with
any problem is logged with every problem and changes nothing. SIGTERM and SIGINT stop
the server gracefully, as before.
"""

SECTION_TEXT = {
    "server": "How the server runs: where it listens, its store, plugins, keys, logs.",
    "limits": (
        "The caps that protect the server from one client or one creator; what each\n"
        "defends against is in [security.md](security.md). The ones a client must know\n"
        'are announced in the `hello` result (protocol/SPEC.md, "Limits").'
    ),
}


if __name__ == "__main__":
    raise SystemExit(main())
