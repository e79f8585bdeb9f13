"""protocol/SPEC.md matches the code: every message has its section, every error code is in
the table with its number, and the generated tables are current (their generator is
tested in test_protocol_generated.py)."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from zonekeep.protocol import (
    DEFAULT_LIMITS,
    METHODS,
    NOTIFICATIONS,
    PROTOCOL_ERRORS,
    Limits,
    _generate,
)
from zonekeep.protocol._errors import RETRYABLE
from zonekeep.sdk.host import EVENT_TYPES, RULE_ERRORS

pytestmark = pytest.mark.docs

SPEC = Path(__file__).parent.parent / "protocol" / "SPEC.md"


def text() -> str:
    return SPEC.read_text(encoding="utf-8")


def sections(level: str) -> dict[str, str]:
    """Heading -> body for the headings of one level (``##`` or ``###``)."""
    parts = re.split(rf"^{level} ", text(), flags=re.M)[1:]
    return {p.splitlines()[0].strip(): p for p in parts}


def table_rows(section: str) -> list[list[str]]:
    rows = []
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def test_the_required_sections_exist() -> None:
    names = set(sections("##"))
    for required in (
        "Overview",
        "Transport",
        "Base protocol",
        "Lifecycle",
        "Error codes",
        "Close codes",
        "Requests",
        "Notifications",
        "Snapshot",
        "Seats, roles and tokens",
        "Hidden information",
        "Events",
        "Commands",
        "Limits",
        "Reconnecting and resuming",
        "Versioning",
    ):
        assert required in names, required


def test_every_method_and_notification_has_a_section() -> None:
    found = sections("###")
    requests = {m.group(1) for h in found if (m := re.fullmatch(r"Request: `(\w+)`", h))}
    notifications = {m.group(1) for h in found if (m := re.fullmatch(r"Notification: `(\w+)`", h))}
    assert requests == set(METHODS)
    assert notifications == set(NOTIFICATIONS)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_request_sections_have_every_part(method: str) -> None:
    body = sections("###")[f"Request: `{method}`"]
    for part in (
        "**Direction:**",
        "**Params**" if method != "ping" else "**Params:**",
        "**Result",
        "**Errors:**",
        "**Example**",
        "```json",
    ):
        assert part in body, f"{method}: {part}"
    assert f'"method": "{method}"' in body
    params_class = METHODS[method][0]
    for field in attrs.fields(params_class):
        assert f"`{field.name}`" in body, f"{method}: param {field.name} undocumented"
    result_class = METHODS[method][1]
    for field in attrs.fields(result_class):
        assert f"`{field.name}`" in body or f"{field.name}." in body, (
            f"{method}: result field {field.name} undocumented"
        )


@pytest.mark.parametrize("method", sorted(NOTIFICATIONS))
def test_notification_sections_have_every_field(method: str) -> None:
    body = sections("###")[f"Notification: `{method}`"]
    assert "**Direction:**" in body and "**Example**" in body
    assert f'"method": "{method}"' in body
    for field in attrs.fields(NOTIFICATIONS[method]):
        assert f"`{field.name}" in body, f"{method}: {field.name} undocumented"


def error_table() -> list[tuple[int, str, str]]:
    body = sections("##")["Error codes"]
    rows = []
    for cells in table_rows(body):
        if cells[0].isdigit() and len(cells) == 5:
            rows.append((int(cells[0]), cells[1], cells[2]))
    return rows


def test_error_table_says_which_errors_are_retryable() -> None:
    body = sections("##")["Error codes"]
    said = {c[1]: c[3] for c in table_rows(body) if c[0].isdigit() and len(c) == 5}
    assert said["rate_limited"] == said["decision_pending"] == said["store_unavailable"] == "yes"
    assert said["invalid_params"] == said["bad_token"] == said["not_your_turn"] == "no"
    assert {n for n, v in said.items() if v == "yes"} == set(RETRYABLE)


def test_error_table_lists_every_protocol_error_with_its_number() -> None:
    rows = {(code, name) for code, name, _ in error_table()}
    for name, code in PROTOCOL_ERRORS.items():
        assert (code, name) in rows, f"{code} {name} missing from the error table"


def test_error_table_lists_every_rule_error_with_its_number() -> None:
    rows = {(code, name) for code, name, _ in error_table()}
    for name, code in RULE_ERRORS.items():
        assert (code, name) in rows, f"{code} {name} missing from the error table"


def test_error_table_has_nothing_else_and_ranges_are_right() -> None:
    known = {(c, n) for n, c in PROTOCOL_ERRORS.items()} | {(c, n) for n, c in RULE_ERRORS.items()}
    ranges = {
        1: "protocol",
        2: "authentication",
        3: "permission",
        4: "rules",
        5: "limits",
        6: "server",
    }
    for code, name, kind in error_table():
        assert (code, name) in known, f"{code} {name} is not an error of the code"
        assert kind == ranges[code // 1000], f"{code} {name}: range {kind}"
    codes = [code for code, _, _ in error_table()]
    assert codes == sorted(codes)


def test_close_codes_are_listed() -> None:
    body = sections("##")["Close codes"]
    codes = {cells[0] for cells in table_rows(body)}
    assert {"1000", "1001", "1008", "1009", "4000", "4001"} <= codes
    for reason in ("rate limit abuse", "slow consumer", "idle timeout"):
        assert f"`{reason}`" in body


def test_limits_table_lists_every_limit_with_its_default() -> None:
    rows = {cells[0]: cells[1] for cells in table_rows(sections("##")["Limits"])}
    for field in attrs.fields(Limits):
        assert f"`{field.name}`" in rows, field.name
        default = getattr(DEFAULT_LIMITS, field.name)
        assert rows[f"`{field.name}`"] == f"{default:g}", field.name


def test_generated_blocks_are_current() -> None:
    assert _generate.fill_spec(text()) == text(), (
        "SPEC.md's generated tables are out of date: run python -m zonekeep.protocol._generate"
    )


def _block(key: str) -> str:
    begin = _generate.BEGIN.format(key)
    end = _generate.END.format(key)
    return text().split(begin, 1)[1].split(end, 1)[0]


def test_events_table_matches_the_event_classes() -> None:
    rows = table_rows(_block("events"))[1:]
    documented = {cells[0].strip("`"): cells[1] for cells in rows}
    assert set(documented) == {*EVENT_TYPES, "hidden"}
    for name, cls in EVENT_TYPES.items():
        for field in attrs.fields(cls):
            assert f"`{field.name}`" in documented[name], f"{name}.{field.name}"


def test_commands_table_matches_the_engine() -> None:
    from zonekeep.sdk.engine import Engine

    engine = Engine()
    rows = table_rows(_block("commands"))[1:]
    documented = {cells[0].strip("`"): cells for cells in rows}
    assert list(documented) == list(engine.commands)
    for cid, spec in engine.commands.items():
        cells = documented[cid]
        assert cells[1] == spec.who
        assert cells[2] == ", ".join(spec.costs)
        assert cells[3] == ", ".join(spec.phases)
        for name, param in spec.params.items():
            marker = f"`{name}`{'' if param.required else '?'}: {param.type}"
            assert marker in cells[4], f"{cid}: {marker}"


def test_every_schema_file_is_mentioned() -> None:
    body = sections("##")["Schema files"]
    for pattern in ("request", "error", "server_message", "event_payload", "snapshot", "arena"):
        assert f"`{pattern}.schema.json`" in body
    assert "`<method>.params.schema.json`" in body
    assert "`<method>.result.schema.json`" in body
    for method in NOTIFICATIONS:
        name = "snapshot.notification" if method == "snapshot" else method
        assert f"`{name}.schema.json`" in body


def test_the_spec_names_the_version_the_server_speaks() -> None:
    """The Versioning section's "this document is" is the version ``hello`` answers."""
    from zonekeep.protocol import PROTOCOL_VERSION

    said = re.findall(r"this document is (\d+\.\d+)\.", text())
    assert said == [PROTOCOL_VERSION]
