"""Measure the graph explorer's bounded views on a synthetic bench graph (run outside ``make test``).

    python evaluation/explorer_bound.py --entities 100000 --edges 1000000 --out evaluation/explorer-100000-1000000.json
    python evaluation/explorer_bound.py --index /tmp/kg-rag-explorer-100000-1000000 --browser   # the page too

Builds the ``kg-rag bench`` synthetic graph (power-law degrees), saves it as a directory index (or reuses
``--index``), serves it with the explorer app (through its ASGI stack, in process) and records, for the biggest
hubs and for questions naming an entity: edges and entities per response, response bytes and latency. With
``--browser``, ``kg-rag serve`` runs and headless Debian chromium (Playwright) expands the five biggest hubs one
after the other up to the page's bound, timing each until the drawing is laid out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=100_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--index", default=None, help="existing index folder (built here when missing)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--browser", action="store_true", help="also time the page in headless chromium")
    args = ap.parse_args()

    import numpy as np
    from fastapi.testclient import TestClient
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from kg_rag import EntityBasedKGRAG, save_index
    from kg_rag.eval.bench import peak_rss_mb, synthetic_index
    from kg_rag.explorer import MAX_VIEW_EDGES
    from kg_rag.explorer.app import create_app

    folder = Path(args.index or f"/tmp/kg-rag-explorer-{args.entities}-{args.edges}")
    result: dict = {"entities": args.entities, "edges": args.edges, "bound_edges_per_view": MAX_VIEW_EDGES}
    if not (folder / "CURRENT").exists() and not any(folder.glob("*")):
        t0 = time.perf_counter()
        synth = synthetic_index(args.entities, args.edges, n_queries=2)
        save_index(synth.index, folder)
        result["build_and_save_s"] = round(time.perf_counter() - t0, 1)
        del synth
    t0 = time.perf_counter()
    retriever = EntityBasedKGRAG.from_index(folder, DeterministicFakeEmbedding(size=384))
    result["open_s"] = round(time.perf_counter() - t0, 2)
    with retriever.backend.reader() as view:
        degrees = view.degrees(np.arange(view.info().entities))
    order = degrees.argsort()[::-1]
    with retriever.backend.reader() as view:
        hubs = [(view.entities([int(h)])[0].key, int(degrees[h])) for h in order[:5]]
    client = TestClient(create_app(retriever))

    def timed(method: str, url: str, **kw):
        t = time.perf_counter()
        res = getattr(client, method)(url, **kw)
        ms = 1000 * (time.perf_counter() - t)
        assert res.status_code == 200, res.text
        return res.json(), len(res.content), ms

    overview, size, ms = timed("get", "/api/overview")
    result["overview"] = {"ms": round(ms, 1), "bytes": size, "relation_types": len(overview["relation_types"])}
    rows = []
    for key, degree in hubs:
        view, size, ms = timed("post", "/api/entity", json={"entity": key})
        rows.append(
            {
                "entity": key,
                "degree": degree,
                "total_edges": view["total_edges"],
                "edges": len(view["edges"]),
                "nodes": len(view["nodes"]),
                "bytes": size,
                "ms": round(ms, 1),
            }
        )
    result["hub_entity_views"] = rows
    rows = []
    for key, _ in hubs:
        for hops in (2, 4):
            view, size, ms = timed(
                "post", "/api/query", json={"question": f"What is {key} connected to?", "max_hops": hops}
            )
            rows.append(
                {
                    "entity": key,
                    "max_hops": hops,
                    "edges": len(view["edges"]),
                    "nodes": len(view["nodes"]),
                    "bytes": size,
                    "ms": round(ms, 1),
                }
            )
    result["question_views"] = rows
    _, size, ms = timed("get", "/api/search", params={"q": hubs[0][0]})
    result["search"] = {"ms": round(ms, 1), "bytes": size}
    all_views = result["hub_entity_views"] + result["question_views"]
    result["max_edges_in_a_response"] = max(r["edges"] for r in all_views)
    result["max_response_bytes"] = max(r["bytes"] for r in all_views)
    result["median_entity_view_ms"] = statistics.median(r["ms"] for r in result["hub_entity_views"])
    result["median_question_view_ms"] = statistics.median(r["ms"] for r in result["question_views"])
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    if args.browser:
        result["browser"] = browser_timings(folder, [key for key, _ in hubs])
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


def browser_timings(folder: Path, hubs: list[str]) -> dict:
    """Expand ``hubs`` one after the other in the page (double-click's call), then one more past the bound."""
    import os
    import signal
    import socket
    import subprocess
    import urllib.request

    from playwright.sync_api import sync_playwright

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "kg_rag.cli", "serve", str(folder), "--port", str(port), "--embeddings", "fake:384"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict = {"expansions": []}
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(url + "/api/overview", timeout=2).close()
                break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1500, "height": 900})
            page.goto(url + "/")
            for hub in [*hubs, "entity 1"]:
                t0 = time.perf_counter()
                page.evaluate("(h) => kgExplorer.openEntity(h, true)", hub)
                page.wait_for_function("!kgExplorer.busy && kgExplorer.settled", timeout=300_000)
                out["expansions"].append(
                    {
                        "entity": hub,
                        "s": round(time.perf_counter() - t0, 2),
                        "edges_drawn": page.evaluate("kgExplorer.edges.length"),
                        "refused": page.evaluate("kgExplorer.lastError"),
                    }
                )
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    return out


if __name__ == "__main__":
    sys.exit(main())
