"""The explorer's request guard (``kg_rag/explorer/app.py``): a body over the limit is refused as it streams, chunked
or not, and a ``Host`` the explorer does not serve (DNS rebinding) is refused."""

from __future__ import annotations

import socket
import threading
import time

import pytest

pytest.importorskip("fastapi", reason="the explorer needs the serve extra")

from fastapi.testclient import TestClient  # noqa: E402

from kg_rag import EntityBasedKGRAG, save_index  # noqa: E402
from kg_rag.explorer.app import MAX_BODY_BYTES, create_app, host_name  # noqa: E402
from kg_rag.testing import BagOfWordsEmbeddings  # noqa: E402

from ..serving_support import free_port  # noqa: E402


@pytest.fixture(scope="module")
def retriever(demo_index, tmp_path_factory):
    folder = tmp_path_factory.mktemp("guard") / "idx"
    save_index(demo_index, folder)
    return EntityBasedKGRAG.from_index(folder, BagOfWordsEmbeddings())


@pytest.fixture
def served(retriever):
    """The explorer under a real uvicorn server on 127.0.0.1, with the body bytes the server handed the app
    counted in front of it."""
    import uvicorn

    app = create_app(retriever)
    handed: list[int] = []

    async def counting(scope, receive, send):
        async def counted():
            message = await receive()
            handed.append(len(message.get("body", b"")))
            return message

        await app(scope, counted, send)

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(counting, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield port, handed
    server.should_exit = True
    thread.join(timeout=10)


def test_a_chunked_body_over_the_limit_is_refused_after_at_most_the_limit_was_read(served):
    """A chunked POST (no Content-Length) used to be buffered whole before validation answered 422: 256 MB cost
    the server 500 MB. It is now 413 once the body passes the limit, whatever follows."""
    port, handed = served
    sent = 0
    chunk = b"a" * 16384
    head = (
        f"POST /api/query HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + b"%x\r\n" % 14 + b'{"question": "' + b"\r\n")

        def send_body() -> None:
            nonlocal sent
            try:
                while sent < 64 * MAX_BODY_BYTES:  # 4 MiB offered
                    sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                    sent += len(chunk)
            except OSError:  # the server answered and closed the connection
                pass

        sender = threading.Thread(target=send_body, daemon=True)
        sender.start()
        response = b""
        try:
            while b"\r\n\r\n" not in response or b"}" not in response:
                data = sock.recv(65536)
                if not data:
                    break
                response += data
        except ConnectionResetError:
            pass
        sender.join(timeout=30)
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    assert response.endswith(b'{"error":"request body too large (at most 65536 bytes)"}')
    # refused at the first body message that crossed the limit: what came before it fit within the limit, and that
    # message is one of the server's own reads (its size depends on how the socket coalesced the chunks, so under
    # load it may hold several), never the 4 MiB offered
    assert sum(handed[:-1]) <= MAX_BODY_BYTES
    assert sum(handed) < 4 * MAX_BODY_BYTES
    assert sent > sum(handed)


def test_a_host_the_explorer_does_not_serve_is_refused(retriever):
    """A page on another site whose DNS name is rebound to 127.0.0.1 sends its own name as Host: refused, so a
    loopback-bound explorer cannot be read from another origin. Loopback names and the named hosts are served."""
    with TestClient(create_app(retriever), base_url="http://127.0.0.1:8765") as client:
        assert client.get("/api/overview").status_code == 200
        for host in ("localhost:8765", "[::1]:8765", "LOCALHOST"):
            assert client.get("/api/overview", headers={"host": host}).status_code == 200, host
        for host in ("attacker.example", "attacker.example:8765", "127.0.0.1.attacker.example", ""):
            refused = client.get("/api/overview", headers={"host": host})
            assert refused.status_code == 400, host
            assert "is not served here" in refused.json()["error"] and "--allow-host" in refused.json()["error"]
        assert (
            client.post("/api/query", json={"question": "x"}, headers={"host": "attacker.example"}).status_code == 400
        )
    with TestClient(create_app(retriever, allowed_hosts=["kg.internal"]), base_url="http://kg.internal") as client:
        assert client.get("/api/overview").status_code == 200
    with TestClient(create_app(retriever, allowed_hosts=["*"]), base_url="http://anything.example") as client:
        assert client.get("/api/overview").status_code == 200


def test_host_names_are_read_without_their_port():
    assert [host_name(h) for h in ("[::1]:8765", "Example.COM:80", "example.com.", "::1", "")] == [
        "::1",
        "example.com",
        "example.com",
        "::1",
        "",
    ]
