"""The connection's fast path frames messages itself (``_connection.text_frame``), and a
broadcast's frames are built once for every connection that gets the same messages
(``_fanout.Batch``, ``Connection.push_batch``): the bytes are websockets' own, and
every connection still gets its messages in order, a batch's among single ones."""

from __future__ import annotations

import io

import pytest
import trio
import trio.testing
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from zonekeep.server import Limits
from zonekeep.server._connection import Connection, Flusher, text_frame
from zonekeep.server._fanout import Member, fan_out


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_text_frame_is_the_frame_websockets_would_send(size: int) -> None:
    payload = bytes(i % 251 for i in range(size))
    assert text_frame(payload) == Frame(Opcode.TEXT, payload).serialize(mask=False)


def opened() -> tuple[ServerProtocol, ClientProtocol]:
    """A server protocol and its client, past the opening handshake."""
    client = ClientProtocol(parse_uri("ws://test.invalid/ws"))
    client.send_request(client.connect())
    server = ServerProtocol()
    server.receive_data(b"".join(client.data_to_send()))
    (request,) = server.events_received()
    assert isinstance(request, Request)
    server.send_response(server.accept(request))
    client.receive_data(b"".join(server.data_to_send()))
    client.events_received()
    return server, client


def received(client: ClientProtocol, data: bytes) -> list[str]:
    client.receive_data(data)
    return [
        bytes(e.data).decode()
        for e in client.events_received()
        if isinstance(e, Frame) and e.opcode is Opcode.TEXT
    ]


async def test_a_batch_is_framed_once_and_every_connection_gets_it_in_order() -> None:
    flusher = Flusher()
    sinks = [io.BytesIO() for _ in range(3)]
    clients = []
    connections = []
    for sink in sinks:
        server, client = opened()
        stream, _ = trio.testing.memory_stream_pair()
        connections.append(Connection(stream, server, Limits(), flusher, "test", sink.write))
        clients.append(client)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        connections[0].push_text('{"before":1}')
        members = [Member(c, "gm" if i == 0 else "spectator") for i, c in enumerate(connections)]

        def texts(view: bool) -> list[str]:
            return ['{"event":1}', '{"event":2}']  # the same for both views

        fan_out(members, lambda m: m.role == "gm", texts)
        connections[2].push_text('{"after":2}')
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    got = [received(c, s.getvalue()) for c, s in zip(clients, sinks, strict=True)]
    assert got[0] == ['{"before":1}', '{"event":1}', '{"event":2}']
    assert got[1] == ['{"event":1}', '{"event":2}']
    assert got[2] == ['{"event":1}', '{"event":2}', '{"after":2}']
    # The frames are the ones websockets would have made, one after the other.
    assert sinks[1].getvalue() == text_frame(b'{"event":1}') + text_frame(b'{"event":2}')


async def test_views_with_different_texts_get_their_own() -> None:
    flusher = Flusher()
    sinks = [io.BytesIO() for _ in range(2)]
    clients, members = [], []
    for i, sink in enumerate(sinks):
        server, client = opened()
        stream, _ = trio.testing.memory_stream_pair()
        connection = Connection(stream, server, Limits(), flusher, "test", sink.write)
        members.append(Member(connection, "gm" if i == 0 else "spectator"))
        clients.append(client)
    calls: list[bool] = []

    def texts(full: bool) -> list[str]:
        calls.append(full)
        return ['{"all":1}'] if full else ['{"some":1}']

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        fan_out(members, lambda m: m.role == "gm", texts)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert calls == [True, False]
    assert received(clients[0], sinks[0].getvalue()) == ['{"all":1}']
    assert received(clients[1], sinks[1].getvalue()) == ['{"some":1}']
