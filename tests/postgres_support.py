"""The PostgreSQL server the tests use, and a fresh schema for each test.

The tests run against a real PostgreSQL (``ZONEKEEP_TEST_POSTGRES``, by default
``postgresql://postgres@127.0.0.1:5432/test``: trust authentication, as on the project's
machines and in CI). Each test gets a schema of its own (``zk_test_<random>``), made
before and dropped after it, and a store URL whose ``search_path`` names it.

Without PostgreSQL (or without psycopg) the tests skip saying why, except under
``CI=true``, where PostgreSQL runs before the tests: there a missing one is a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import helpers
import pytest

#: The database the tests make their schemas in.
POSTGRES_URL = os.environ.get("ZONEKEEP_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _missing(why: str) -> None:
    """A failure under CI (which runs PostgreSQL), else a skip that says why."""
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(why)
    pytest.skip(why)


_checked: list[str | None] = []


def needs_postgres() -> None:
    """Skip (or, under CI, fail) the calling test unless the test PostgreSQL answers."""
    if not _checked:
        _checked.append(_problem())
    if _checked[0] is not None:
        _missing(_checked[0])


def _problem() -> str | None:
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg or psycopg-pool is not installed (pip install -e '.[test]')"
    try:
        psycopg.connect(POSTGRES_URL, connect_timeout=round(helpers.deadline(5))).close()
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (
            f"no PostgreSQL at {POSTGRES_URL} ({first}); set ZONEKEEP_TEST_POSTGRES to "
            "a database the tests may make schemas in"
        )
    return None


def in_schema(schema: str) -> str:
    """:data:`POSTGRES_URL` with ``schema`` as the connection's ``search_path``."""
    joiner = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{joiner}options={quote(f'-csearch_path={schema}')}"


def sql(statement: str) -> list[tuple[object, ...]]:
    """Run one statement on the test database (autocommit); its rows, if any."""
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        cur = conn.execute(statement.encode())
        return cur.fetchall() if cur.description else []


@contextmanager
def fresh_schema() -> Iterator[str]:
    """A new, empty schema for one test (dropped after it, with everything in it): the
    store URL that keeps a store in it."""
    needs_postgres()
    schema = f"zk_test_{uuid.uuid4().hex[:12]}"
    sql(f"CREATE SCHEMA {schema}")
    try:
        yield in_schema(schema)
    finally:
        sql(f"DROP SCHEMA {schema} CASCADE")


def schema_of(url: str) -> str:
    """The schema a URL made by :func:`in_schema` names."""
    return url.rsplit("search_path%3D", 1)[1]
