"""Time ``kg-rag mcp INDEX`` from its start to its answer to ``initialize`` (and, with ``--call``, to the answer to
a first ``knowledge_graph_search`` call), as an MCP client that starts a server per session sees it. Standard
library only; run it under ``/usr/bin/time`` for the whole process. Used for ``benchmarks.md`` (issue 45).

    python evaluation/mcp_initialize.py demo/index [--call "Who does Lars Eriksen report to?"]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index")
    parser.add_argument("--call", default=None, help="a question for a first knowledge_graph_search call")
    parser.add_argument("--kg-rag", default=f"{sys.executable} -m kg_rag.cli", help="the kg-rag command")
    args = parser.parse_args()
    start = time.perf_counter()
    server = subprocess.Popen(
        [*args.kg_rag.split(), "mcp", args.index, "--no-global"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def send(message: dict) -> None:
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    def answer(request_id: int) -> dict:
        while True:
            line = server.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
    answer(1)
    report = f"initialize answered after {time.perf_counter() - start:.3f} s"
    if args.call:
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "knowledge_graph_search", "arguments": {"query": args.call}}
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        result = answer(2)
        if result.get("result", {}).get("isError") or "error" in result:
            raise SystemExit(f"the call failed: {json.dumps(result)[:300]}")
        report += f"; first search answered after {time.perf_counter() - start:.3f} s"
    server.stdin.close()
    server.wait(timeout=60)
    print(report)


if __name__ == "__main__":
    main()
