"""zonekeep behind a real nginx with TLS and a path prefix, as docs/deploy.md sets it up.

``zonekeep serve`` (a subprocess, the bundled ``goblin-ambush`` example, ``public_url``
and ``trusted_proxies`` from its config file) runs behind Debian's nginx (a subprocess
in the foreground, its own config, pid and logs under the test's temporary folder, on a
free loopback port), which serves it over https at ``/zk/`` with a self-signed
certificate made here with the ``openssl`` command. The tests check that the printed
links use ``public_url``, that the web table and its files load through the prefix,
that clients play over ``wss://`` through it (and the page itself does, in Chromium when
it is installed), and that the server's log shows the client's address taken from
``X-Forwarded-For``.

nginx and openssl are needed: without them the tests skip saying why, except under
``CI=true``, where ``.ci/run`` installs nginx, so a missing one is a failure.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio
from helpers import deadline, missing_component

from zonekeep.protocol.client import ClientError, connect

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "server" / "static"
PREFIX = "/zk/"
FORWARDED_FOR = "203.0.113.7"  # TEST-NET-3: an address no test machine has
CHROMIUM = Path("/usr/bin/chromium")
STARTUP_SECONDS = 30.0


def _needed(program: str) -> str:
    """The path of ``program``; a failure under CI (which installs it), else a skip."""
    found = shutil.which(program) or shutil.which(program, path="/usr/sbin:/sbin")
    if found:
        return found
    why = f"{program} is not installed (apt-get install {program}; .ci/run installs it)"
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(why)
    pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _read_until(stream: Any, marker: bytes, seconds: float, what: str) -> bytes:
    """Read ``stream`` (a pipe) until ``marker`` has been seen, for at most ``seconds``."""
    got = b""
    deadline = time.monotonic() + helpers.deadline(seconds)
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        while marker not in got:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise AssertionError(f"{what}: no {marker!r} within {seconds} s: {got!r}")
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"{what} stopped: {got!r}")
            got += chunk
    return got


def _drain(stream: Any, into: list[bytes]) -> None:
    """Keep reading a pipe (so its writer never blocks on a full pipe)."""
    while chunk := os.read(stream.fileno(), 65536):
        into.append(chunk)


def _stop(process: subprocess.Popen[bytes], sig: int) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=helpers.deadline(15))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


NGINX_CONF = """\
# The site of docs/deploy.md (examples/deploy/nginx.conf), in a config of its own.
{user}worker_processes 1;
pid {dir}/nginx.pid;
error_log stderr notice;
events {{ worker_connections 64; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}

    server {{
        listen 127.0.0.1:{port} ssl;
        server_name localhost;
        ssl_certificate {dir}/cert.pem;
        ssl_certificate_key {dir}/key.pem;

        location {prefix} {{
            proxy_pass http://127.0.0.1:{backend}/;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_read_timeout 1h;
        }}
    }}
}}
"""


@attrs.frozen
class Site:
    """zonekeep behind nginx: the links it printed, and where its log and certificate are."""

    base: str  # https://127.0.0.1:PORT/zk/
    banner: str
    encounter: str
    gm_token: str
    seat_tokens: dict[str, str]
    server_log: Path
    cert: Path

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))

    def fetch(self, url: str) -> tuple[int, str, str, bytes]:
        """GET ``url`` over https (trusting only the test's certificate, no proxy from the
        environment): status, final URL, Content-Type, body."""
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}),
            urllib.request.HTTPSHandler(context=self.ssl_context()),
        )
        with opener.open(url, timeout=helpers.deadline(10)) as reply:
            return reply.status, reply.geturl(), reply.headers["Content-Type"], reply.read()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    nginx = _needed("nginx")
    openssl = _needed("openssl")
    work = tmp_path_factory.mktemp("nginx")
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(work / "key.pem"), "-out", str(work / "cert.pem")),
        ],
        check=True,
        capture_output=True,
    )
    port = _free_port()
    base = f"https://127.0.0.1:{port}{PREFIX}"
    config = work / "zonekeep.toml"
    config.write_text(
        f'[server]\npublic_url = "{base}"\ntrusted_proxies = ["127.0.0.1"]\n', encoding="utf-8"
    )
    server_log = work / "server.log"
    with server_log.open("wb") as log:
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "zonekeep.server._cli", "serve", "--port", "0"),
                *("--config", str(config), "--data-dir", str(work / "data")),
                *("--example", "goblin-ambush"),  # a bundled example, by its name
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=work,
        )
    proxy: subprocess.Popen[bytes] | None = None
    try:
        assert server.stdout is not None
        banner = _read_until(server.stdout, b"Stop with Ctrl-C.", STARTUP_SECONDS, "zonekeep")
        text = banner.decode()
        listening = re.search(r"serving on ws://127\.0\.0\.1:(\d+)/ws", text)
        gm = re.search(r"GM token:\s+(\S+)", text)
        encounter = re.search(r"is ready: (\S+)", text)
        seats = dict(re.findall(r"seat (\w+):\s+(\S+)", text))
        assert listening and gm and encounter and seats, text
        backend = int(listening[1])

        user = "user root;\n" if os.geteuid() == 0 else ""  # workers as the test's user
        conf = work / "nginx.conf"
        conf.write_text(
            NGINX_CONF.format(user=user, dir=work, port=port, prefix=PREFIX, backend=backend),
            encoding="utf-8",
        )
        proxy = subprocess.Popen(
            [nginx, "-p", str(work), "-e", "stderr", "-c", str(conf), "-g", "daemon off;"],
            stderr=subprocess.PIPE,
        )
        assert proxy.stderr is not None
        _read_until(proxy.stderr, b"start worker process", STARTUP_SECONDS, "nginx")
        nginx_out: list[bytes] = []
        threading.Thread(target=_drain, args=(proxy.stderr, nginx_out), daemon=True).start()
        yield Site(
            base=base,
            banner=text,
            encounter=encounter[1],
            gm_token=gm[1],
            seat_tokens=seats,
            server_log=server_log,
            cert=work / "cert.pem",
        )
    finally:
        if proxy is not None:
            _stop(proxy, signal.SIGQUIT)  # nginx's graceful stop
        _stop(server, signal.SIGTERM)
        if server.stdout is not None:
            server.stdout.close()


def test_printed_links_use_public_url(site: Site) -> None:
    ws = site.base.replace("https://", "wss://") + "ws"
    assert f"Players reach it at {ws}  (web table: {site.base}table/)" in site.banner
    links = re.findall(r"^ +web table: +(\S+)", site.banner, re.MULTILINE)
    assert len(links) == 1 + len(site.seat_tokens) + 1  # the GM, each seat, the spectators
    for link in links:
        assert link.startswith(f"{site.base}table/#encounter={site.encounter}&token="), link
    assert f"{site.base}table/#encounter={site.encounter}&token={site.gm_token}" in links


def test_web_table_loads_through_the_prefix(site: Site) -> None:
    status, url, kind, page = site.fetch(site.base + "table/")
    assert (status, url) == (200, site.base + "table/")
    assert kind.startswith("text/html")
    assert page == (STATIC / "index.html").read_bytes()
    # Every file the page names is relative, so it comes through the prefix too.
    refs = re.findall(rb'(?:src|href)="([^"]+)"', page)
    assert sorted(refs) == [
        b"builder.css",
        b"builder.js",
        b"chat.css",
        b"chat.js",
        b"data:,",
        b"dice.js",
        b"editor.css",
        b"editor.js",
        b"home.js",
        b"table.css",
        b"table.js",
    ]
    for name in (
        "table.js",
        "dice.js",
        "table.css",
        "home.js",
        "builder.js",
        "builder.css",
        "editor.js",
        "editor.css",
        "chat.js",
        "chat.css",
    ):
        wanted = "text/css" if name.endswith(".css") else "text/javascript"
        status, _, kind, body = site.fetch(site.base + "table/" + name)
        assert status == 200 and kind.startswith(wanted), name
        assert body == (STATIC / name).read_bytes()
    # /zk/table redirects to /zk/table/ (not to the site's /table/).
    status, url, _, body = site.fetch(site.base + "table")
    assert (status, url, body) == (200, site.base + "table/", page)


def test_clients_play_over_wss_through_the_prefix(site: Site) -> None:
    """A GM and a player join over wss:// through nginx; the GM's command reaches both."""
    url = site.base.replace("https://", "wss://") + "ws"
    forwarded = {"X-Forwarded-For": FORWARDED_FOR}
    options: dict[str, Any] = {"ssl": site.ssl_context(), "proxy": None, "timeout": 10}

    async def play() -> None:
        with trio.fail_after(helpers.deadline(30)):
            async with (
                connect(url, additional_headers=forwarded, **options) as gm,
                connect(url, **options) as alice,
            ):
                welcome = gm.welcome
                assert welcome is not None and welcome["server"]["name"] == "zonekeep"
                assert "tavern" in welcome["capabilities"]["arenas"]
                joined = await gm.join(site.encounter, site.gm_token)
                assert joined["role"] == "gm"
                seated = await alice.join(site.encounter, site.seat_tokens["alice"])
                assert (seated["role"], seated["player"]) == ("player", "alice")
                result = await gm.command(site.encounter, "add_note", text="Through the proxy.")
                for client in (gm, alice):
                    pushed = await client.notification("event")
                    assert pushed["seq"] == result["first_seq"]
                    assert pushed["event"]["type"] == "note_added"

    trio.run(play)
    log = site.server_log.read_text(encoding="utf-8", errors="replace")
    for token in (site.gm_token, *site.seat_tokens.values()):
        assert token not in log


def test_server_log_shows_the_forwarded_client(site: Site) -> None:
    """Runs after the play test (same module): the GM's connection came through nginx
    with ``X-Forwarded-For: 203.0.113.7``, which nginx extended to
    ``203.0.113.7, 127.0.0.1``; the server trusts 127.0.0.1, so it logs 203.0.113.7."""
    test_clients_play_over_wss_through_the_prefix(site)
    log = site.server_log.read_text(encoding="utf-8", errors="replace")
    assert f"client={FORWARDED_FOR}" in log, log[-4000:]


def test_the_page_plays_through_the_prefix_in_chromium(site: Site) -> None:
    """The page opens its websocket beside itself (wss:// under /zk/) and makes seat
    links under the prefix. Skips without Chromium (fails under CI), like tests/browser."""
    if not CHROMIUM.exists():
        missing_component(f"{CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
        )
        try:
            context = browser.new_context(ignore_https_errors=True)
            page = context.new_page()
            page.set_default_timeout(helpers.deadline(15_000))
            sockets: list[str] = []
            page.on("websocket", lambda ws: sockets.append(ws.url))
            page.goto(f"{site.base}table/#encounter={site.encounter}&token={site.gm_token}")
            sync_api.expect(page.locator("#status")).to_have_text(
                "Connected as GM", timeout=helpers.deadline(15_000)
            )
            # The table's socket, and the home script's (it looks for seats waiting for
            # their characters), both beside the page.
            assert sockets and set(sockets) == {site.base.replace("https://", "wss://") + "ws"}
            page.locator("#gm input[name=player]").fill("alice")
            page.locator("#gm .seats input[type=checkbox][value=aria]").check()
            page.locator("[data-gm=create_seat]").click()
            link = page.locator("#gm .seat-link[data-seat=alice] a")
            sync_api.expect(link).to_have_attribute(
                "href", re.compile("^" + re.escape(f"{site.base}table/#encounter="))
            )
            # The GM's home under the prefix: its socket beside it too.
            home = context.new_page()
            home.set_default_timeout(helpers.deadline(15_000))
            homes: list[str] = []
            home.on("websocket", lambda ws: homes.append(ws.url))
            home.goto(f"{site.base}table/")
            sync_api.expect(home.locator("#public-encounters")).to_contain_text("No public")
            assert homes == [site.base.replace("https://", "wss://") + "ws"]
        finally:
            browser.close()


def test_the_example_site_proxies_as_the_tested_one() -> None:
    """examples/deploy/nginx.conf (docs/deploy.md) has every proxy line this test runs,
    so what the docs show is what was tested."""
    example = (ROOT / "examples" / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    ours = NGINX_CONF.split("location {prefix} {{", 1)[1].split("}}", 1)[0]
    lines = [line.strip() for line in ours.splitlines() if line.strip()]
    assert len(lines) == 8
    for line in lines:
        wanted = line.replace("{backend}", "8765")
        assert wanted in example, wanted
    for line in ("map $http_upgrade $connection_upgrade {", "default upgrade;", "''      close;"):
        assert line in example and line in NGINX_CONF


# -- issue 27, point 1: X-Forwarded-For that names no client ----------------------------------

#: 200 entries a client makes up; nginx appends the address it got the request from
#: (127.0.0.1: the test's client is on the loopback, as nginx is).
LONG_CHAIN = ", ".join(f"198.51.100.{i}" for i in range(1, 201))
LONG_CHAIN_CLIENT = "198.51.100.200"  # its rightmost entry: the first one not trusted


async def _lobby_as(site: Site, forwarded: str | None) -> dict[str, Any]:
    """What a client sending ``X-Forwarded-For: forwarded`` (none: no header) through
    nginx may do: whether it may create, what it lists, whether it gets the example's
    links (refused for anyone but the operator: a refusal changes nothing)."""
    url = site.base.replace("https://", "wss://") + "ws"
    headers = {} if forwarded is None else {"X-Forwarded-For": forwarded}
    options: dict[str, Any] = {"ssl": site.ssl_context(), "proxy": None, "timeout": deadline(10)}
    async with connect(url, additional_headers=headers, **options) as client:
        listed = (await client.list_encounters())["encounters"]
        if any(e["mine"] for e in listed):
            return {"listed": listed}  # the operator: nothing more is tried
        found: dict[str, Any] = {"listed": listed}
        for name, call in (
            ("create", client.create_encounter("Mine", "tavern", [])),
            ("links", client.encounter_links(site.encounter)),
        ):
            try:
                await call
            except ClientError as exc:
                found[name] = exc.name
            else:
                found[name] = "allowed"
        return found


def test_a_long_forwarded_chain_is_the_remote_client_not_the_operator(site: Site) -> None:
    """More than 128 entries fell back to the TCP peer, nginx on 127.0.0.1, which on a
    server with no key is the operator. Now the rightmost untrusted entry is the client,
    however long the list: no creation, no private listing, no ``encounter_links``."""

    async def attack() -> dict[str, Any]:
        with trio.fail_after(deadline(30)):
            return await _lobby_as(site, LONG_CHAIN)

    found = trio.run(attack)
    assert found["create"] == "gm_key_required"
    assert found["links"] == "gm_key_required"
    assert all(e["public"] and not e["mine"] for e in found["listed"]), found["listed"]
    assert site.encounter not in {e["id"] for e in found["listed"]}
    log = site.server_log.read_text(encoding="utf-8", errors="replace")
    assert f"client={LONG_CHAIN_CLIENT} " in log

    async def control() -> dict[str, Any]:
        with trio.fail_after(deadline(30)):
            return await _lobby_as(site, None)

    # The same client with no header of its own is on the loopback (so is nginx): the
    # operator, who lists the example's private encounter as its own.
    mine = {e["id"] for e in trio.run(control)["listed"] if e["mine"]}
    assert site.encounter in mine


@pytest.mark.parametrize(
    "forwarded",
    [
        "garbage",  # not an address, met before any untrusted one
        "203.0.113.7, unknown",
        ", ".join(["127.0.0.1"] * 40),  # more trusted proxies than are read
        ", ".join(["garbage"] * 200),
    ],
    ids=["garbage", "unknown", "40-trusted", "200-garbage"],
)
def test_a_forwarded_chain_naming_no_client_is_refused(site: Site, forwarded: str) -> None:
    """A chain the server cannot read a client from is refused with 400, for the web
    table's files and for the websocket alike: never taken for nginx's 127.0.0.1."""
    url = site.base + "healthz"
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        urllib.request.HTTPSHandler(context=site.ssl_context()),
    )
    wanted = "Bad request: X-Forwarded-For "
    with pytest.raises(urllib.error.HTTPError) as refused:
        opener.open(
            urllib.request.Request(url, headers={"X-Forwarded-For": forwarded}),
            timeout=deadline(10),
        )
    assert refused.value.code == 400
    assert refused.value.read().decode().startswith(wanted)

    async def attempt() -> None:
        with trio.fail_after(deadline(30)):
            await _lobby_as(site, forwarded)

    with pytest.raises(BaseException) as failed:
        trio.run(attempt)
    statuses = [
        getattr(getattr(exc, "response", None), "status_code", None)
        for exc in _leaves(failed.value)
    ]
    assert statuses == [400], repr(failed.value)


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions an exception group holds (the exception itself when not a group)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]
