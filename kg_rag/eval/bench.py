"""Speed and scale benchmark: synthetic typed directed graphs, kg-rag vs a faithful seed-003 reimplementation.

``kg-rag bench --entities N --edges M`` generates a graph with a realistic shape — power-law degrees (Zipf
endpoints), a few dozen relation types with skewed frequencies, every entity mentioned in several chunks —
and random unit vectors as embeddings, so the embedding model is not what is timed. Queries are perturbed
entity vectors (so some entities pass seed 003's 0.7 threshold, as a real question naming an entity would).
It measures retrieval latency of each strategy (query embedding excluded, context assembly included), the
same queries through the seed-003 algorithm as published (a Python loop over entities, a per-chunk scan),
index build and load time, and peak resident memory.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kg_rag.errors import InputError
from kg_rag.index.build import GraphIndex
from kg_rag.index.vectors import VectorTable
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.report import IngestReport
from kg_rag.query.params import get_preset

logger = logging.getLogger(__name__)


def peak_rss_mb() -> float:
    """Peak resident set size of this process, in MB (``VmHWM``: unlike ``ru_maxrss`` it is not inherited
    from the parent across fork/exec, so a child's figure is its own)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage / 1024.0 if sys.platform != "darwin" else usage / (1024.0 * 1024.0)


def rss_breakdown_mb() -> dict[str, float]:
    """Resident memory split into anonymous (heap) and file-backed pages (memory-mapped vectors, which the
    kernel can drop and re-read), in MB."""
    out = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(("RssAnon:", "RssFile:")):
                    out[line.split(":")[0]] = int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return {
        "rss_anon_mb": round(out.get("RssAnon", float("nan")), 1),
        "rss_file_mb": round(out.get("RssFile", float("nan")), 1),
    }


def current_rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        return float("nan")


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


@dataclass
class SyntheticGraph:
    index: GraphIndex
    queries: np.ndarray
    query_texts: list[str]


def synthetic_index(
    n_entities: int,
    n_edges: int,
    *,
    dim: int = 384,
    n_types: int = 36,
    mentions_per_entity: float = 3.0,
    entities_per_chunk: int = 6,
    n_queries: int = 50,
    seed: int = 0,
    model: str | None = None,
) -> SyntheticGraph:
    """A synthetic :class:`GraphIndex` built without an embedding model (vectorised generation).

    ``model`` names the embedding model the index records and keys its text hashes by, so that writes with that
    model (``fake:DIM`` in the write benchmark) embed only the text they add, as on a real index."""
    if n_entities < 2 or n_edges < 1:
        raise InputError("need at least 2 entities and 1 edge")
    rng = np.random.default_rng(seed)
    # power-law popularity: Zipf ranks over a random permutation of the entities
    popularity = 1.0 / np.arange(1, n_entities + 1) ** 0.8
    popularity /= popularity.sum()
    order = rng.permutation(n_entities)
    src = order[rng.choice(n_entities, size=n_edges, p=popularity)]
    dst = order[rng.choice(n_entities, size=n_edges, p=popularity)]
    loops = src == dst
    dst[loops] = (dst[loops] + 1) % n_entities
    type_p = 1.0 / np.arange(1, n_types + 1)
    type_p /= type_p.sum()
    types = rng.choice(n_types, size=n_edges, p=type_p)
    type_names = ["RELATED"] + [f"TYPE_{i:02d}" for i in range(1, n_types)]
    # chunks: each mentions `entities_per_chunk` entities; entities appear ~mentions_per_entity times
    n_chunks = max(1, int(n_entities * mentions_per_entity / entities_per_chunk))
    mention_entities = np.concatenate(
        [
            np.arange(n_entities),
            rng.choice(n_entities, size=max(0, n_chunks * entities_per_chunk - n_entities), p=popularity),
        ]
    )
    rng.shuffle(mention_entities)
    mention_chunks = np.arange(mention_entities.size) % n_chunks
    chunk_of_entity: dict[int, list[int]] = {}
    for e, c in zip(mention_entities.tolist(), mention_chunks.tolist()):
        chunk_of_entity.setdefault(e, []).append(c)
    names = [f"entity {i}" for i in range(n_entities)]
    keys = [f"entity {i}" for i in range(n_entities)]
    chunk_ids = [f"chunk-{i}" for i in range(n_chunks)]
    entities = (
        {
            "key": keys[i],
            "name": names[i],
            "entity_type": f"TYPE{i % 7}",
            "descriptions": [f"synthetic entity {i}"],
            "chunk_ids": [chunk_ids[c] for c in dict.fromkeys(chunk_of_entity.get(i, [0]))],
        }
        for i in range(n_entities)
    )
    evidence_chunk = [chunk_of_entity.get(int(s), [0])[0] for s in src]
    rel_ids = [f"r-{i:08x}" for i in range(n_edges)]
    relations = (
        {
            "source": keys[int(src[i])],
            "target": keys[int(dst[i])],
            "id": rel_ids[i],
            "kind": "extracted",
            "relation_type": type_names[int(types[i])],
            "predicate": None,
            "description": f"synthetic relation {i}",
            "evidence": [
                {
                    "chunk_id": chunk_ids[evidence_chunk[i]],
                    "doc_id": chunk_ids[evidence_chunk[i]],
                    "quote": None,
                    "confidence": None,
                    "description": None,
                    "weight": 1.0,
                }
            ],
        }
        for i in range(n_edges)
    )
    chunks = (
        {
            "id": chunk_ids[c],
            "text": f"Synthetic chunk {c} about several entities.",
            "doc_id": chunk_ids[c],
            "metadata": {},
            "n_tokens": 8,
        }
        for c in range(n_chunks)
    )
    kg = KnowledgeGraph.from_records(entities, relations, chunks)
    ent_vecs = _unit(rng, n_entities, dim)
    hashes = (
        _text_hashes(kg, model, keys, rel_ids, chunk_ids)
        if model
        else [[""] * n for n in (n_entities, n_edges, n_chunks)]
    )
    index = GraphIndex(
        kg,
        VectorTable(keys, hashes[0], ent_vecs),
        VectorTable(rel_ids, hashes[1], _unit(rng, n_edges, dim)),
        VectorTable(chunk_ids, hashes[2], _unit(rng, n_chunks, dim)),
        model or "synthetic-random-unit-vectors",
        True,
        IngestReport(),
        kg.version,
    )
    # queries: close to a popular entity's vector, so similarity thresholds are met for some entities
    targets = order[rng.choice(n_entities, size=n_queries, p=popularity)]
    queries = ent_vecs[targets] + 0.35 * _unit(rng, n_queries, dim)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return SyntheticGraph(index, queries.astype(np.float32), [names[t] for t in targets])


def _text_hashes(kg: KnowledgeGraph, model: str, *ids: list[str]) -> list[list[str]]:
    """The content hashes of the entity, fact and chunk texts under ``model``, in the order of ``ids``."""
    from kg_rag.index.build import _plan
    from kg_rag.index.embeddings import text_hash

    out = []
    for (_, keys, texts), order in zip(_plan(kg, True, True).parts, ids):
        by_key = dict(zip(keys, texts))
        out.append([text_hash(model, by_key[k]) for k in order])
    return out


# ----------------------------------------------------------------------------------------- seed 003
class Seed003Reference:
    """The seed-003 algorithm as published, for a side-by-side timing: similarity in a Python loop over every
    entity, one-hop neighbours from NetworkX, and a scan over every chunk for every query."""

    def __init__(self, index: GraphIndex) -> None:
        kg = index.kg
        self.kg = kg
        self.entity_vectors = {k: index.entities.vectors[i] for i, k in enumerate(index.entities.ids)}
        self.chunks: list[tuple[str, np.ndarray, set[str]]] = [
            (cid, index.chunks.vectors[i], set()) for i, cid in enumerate(index.chunks.ids)
        ]
        position = {cid: i for i, cid in enumerate(index.chunks.ids)}
        for key, attrs in kg.graph.nodes(data=True):
            for cid in attrs["chunk_ids"]:
                if cid in position:
                    self.chunks[position[cid]][2].add(key)

    def retrieve(
        self,
        q: np.ndarray,
        threshold: float = 0.7,
        top_k_nodes: int = 10,
        top_k_chunks: int = 5,
        w_freq: float = 0.4,
        w_sim: float = 0.6,
    ) -> list[str]:
        sims = []
        for key, vec in self.entity_vectors.items():  # the published per-entity loop
            s = float(np.dot(q, vec) / (np.linalg.norm(q) * np.linalg.norm(vec)))
            if s >= threshold:
                sims.append((s, key))
        sims.sort(reverse=True)
        nodes = {k for _, k in sims[:top_k_nodes]}
        for key in list(nodes):
            nodes.update(self.kg.graph.successors(key))
            nodes.update(self.kg.graph.predecessors(key))
        scored = []
        for cid, vec, ents in self.chunks:  # the per-chunk scan
            freq = sum(1 for e in ents if e in nodes)
            if freq:
                sim = float(np.dot(q, vec) / (np.linalg.norm(q) * np.linalg.norm(vec)))
                scored.append((cid, freq, sim))
        if not scored:
            return []
        max_freq = max(f for _, f, _ in scored)
        ranked = sorted(scored, key=lambda x: -(w_freq * x[1] / max_freq + w_sim * x[2]))
        return [cid for cid, _, _ in ranked[:top_k_chunks]]


# ----------------------------------------------------------------------------------------- runner
def _latencies(fn, queries: np.ndarray, texts: list[str]) -> list[float]:
    fn(queries[0], texts[0])  # warm-up
    out = []
    for q, t in zip(queries, texts):
        t0 = time.perf_counter()
        fn(q, t)
        out.append(1000 * (time.perf_counter() - t0))
    return out


def _floor(engine: Any, queries: np.ndarray, texts: list[str], params: Any = None) -> dict[str, Any]:
    """The floor of each query (its vector searches alone, see :mod:`kg_rag.eval.floor`), and the median time of
    each stage of the query, from one more untimed run per query."""
    from kg_rag.eval.floor import floor_ms, stage_medians

    floors: list[float] = []
    stages: list[dict[str, float]] = []
    for q, t in zip(queries, texts):

        def run(q: np.ndarray = q, t: str = t) -> None:
            stages.append(engine.retrieve_by_vector(q, t, params).timings_ms)

        ms, _ = floor_ms(engine.backend, run)
        floors.append(ms)
    medians = stage_medians(stages)
    return {
        "floor_ms_p50": round(float(np.percentile(floors, 50)), 3),
        "floor_ms_p95": round(float(np.percentile(floors, 95)), 3),
        "context_ms_p50": medians.get("context"),
        "stages_ms_p50": medians,
    }


def _with_ratio(out: dict[str, Any], latency_p50: float) -> dict[str, Any]:
    """``floor_ratio``: the p50 latency (context included) over the floor's p50."""
    out["floor_ratio"] = round(latency_p50 / out["floor_ms_p50"], 2) if out["floor_ms_p50"] > 0 else None
    return out


class _VectorsOnly:
    """Stands in for an embedding model: the benchmark passes query vectors directly."""

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("the benchmark passes query vectors directly")

    embed_documents = embed_query


def _measure_in_memory(synth: SyntheticGraph, strategies: tuple[str, ...], seed003_queries: int) -> dict[str, Any]:
    from kg_rag.query.engine import QueryEngine
    from kg_rag.store.memory import LiveBackend

    t0 = time.perf_counter()
    engine = QueryEngine(LiveBackend(synth.index, _VectorsOnly()), _VectorsOnly(), get_preset("default"))
    result: dict[str, Any] = {"build_s": round(time.perf_counter() - t0, 3)}  # arrays + FAISS, no embedding
    params = get_preset("default")
    for name in strategies:
        p = params.replace(strategy=name)  # each strategy with its default knobs
        lat = _latencies(lambda q, t, p=p: engine.retrieve_by_vector(q, t, p), synth.queries, synth.query_texts)
        result[f"{name}_latency_ms_p50"] = round(float(np.percentile(lat, 50)), 3)
        result[f"{name}_latency_ms_p95"] = round(float(np.percentile(lat, 95)), 3)
    result["latency_ms_p50"] = result[f"{strategies[0]}_latency_ms_p50"]
    result["latency_ms_p95"] = result[f"{strategies[0]}_latency_ms_p95"]
    first = params.replace(strategy=strategies[0])
    result.update(_with_ratio(_floor(engine, synth.queries, synth.query_texts, first), result["latency_ms_p50"]))
    # kg-rag running the seed-003 settings, and the published algorithm, on the same queries
    seed_p = get_preset("seed003")
    lat = _latencies(lambda q, t: engine.retrieve_by_vector(q, t, seed_p), synth.queries, synth.query_texts)
    result["kg_rag_seed003_preset_latency_ms_p50"] = round(float(np.percentile(lat, 50)), 3)
    reference = Seed003Reference(synth.index)
    nq = max(2, min(len(synth.queries), seed003_queries))
    lat = _latencies(lambda q, t: reference.retrieve(q), synth.queries[:nq], synth.query_texts[:nq])
    result["seed003_latency_ms_p50"] = round(float(np.percentile(lat, 50)), 3)
    result["seed003_latency_ms_p95"] = round(float(np.percentile(lat, 95)), 3)
    result["speedup_vs_seed003"] = round(result["seed003_latency_ms_p50"] / max(result["latency_ms_p50"], 1e-9), 1)
    return result


def run_benchmark(
    n_entities: int,
    n_edges: int,
    *,
    n_queries: int = 50,
    dim: int = 384,
    strategies: tuple[str, ...] = ("chain", "frequency", "path", "ppr"),
    seed003_queries: int | None = None,
    workdir: str | Path | None = None,
    store: str = "directory",
    pg_uri: str | None = None,
) -> dict[str, Any]:
    """Run the benchmark; returns the JSON-ready result (see the module docstring).

    ``store="postgres"`` saves the graph into PostgreSQL (``pg_uri``, or a server started for the run in a
    temporary folder) and serves the queries from there in a fresh process.
    """
    from kg_rag.store.directory import save_index

    if store not in ("directory", "postgres"):
        raise InputError(f"store must be directory or postgres, got {store!r}")
    if not strategies:
        raise InputError("name at least one strategy")
    t0 = time.perf_counter()
    synth = synthetic_index(n_entities, n_edges, dim=dim, n_queries=n_queries)
    result: dict[str, Any] = {
        "entities": n_entities,
        "edges": n_edges,
        "chunks": len(synth.index.chunks),
        "dim": dim,
        "queries": n_queries,
        "generate_s": round(time.perf_counter() - t0, 3),
    }
    result.update(_measure_in_memory(synth, strategies, seed003_queries or n_queries))
    result["generator_peak_rss_mb"] = round(peak_rss_mb(), 1)
    # persistence: save here, then load and query in a fresh process, so its peak RSS is that of a loaded
    # index serving queries (not of the generator and the seed-003 reference above)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        queries_file = Path(tmp) / "queries.npy"
        np.save(queries_file, synth.queries, allow_pickle=False)
        if store == "postgres":
            result.update(_measure_postgres(synth, Path(tmp), queries_file, pg_uri))
            return result
        t0 = time.perf_counter()
        save_index(synth.index, Path(tmp) / "idx")
        result["save_s"] = round(time.perf_counter() - t0, 3)
        del synth  # free the generator's copy before the child process loads
        gc.collect()
        result.update(_serve_in_child(["--serve", str(Path(tmp) / "idx"), str(queries_file)]))
    return result


def _serve_in_child(args: list[str]) -> dict[str, Any]:
    child = subprocess.run(
        [sys.executable, "-m", "kg_rag.eval.bench", *args], capture_output=True, text=True, timeout=3600
    )
    if child.returncode != 0:
        raise RuntimeError(f"benchmark load process failed: {child.stderr.strip()[-500:]}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def _measure_postgres(synth: SyntheticGraph, tmp: Path, queries_file: Path, pg_uri: str | None) -> dict[str, Any]:
    """Save into a fresh schema, serve the queries from PostgreSQL in a child process, drop the schema."""
    import uuid

    from kg_rag.store.postgres import PostgresStore
    from kg_rag.store.postgres.embedded import EmbeddedPostgres

    server = None
    if pg_uri is None:
        server = EmbeddedPostgres(tmp / "pgdata")
        pg_uri = server.start()
    sep = "&" if "?" in pg_uri else "?"
    uri = f"{pg_uri}{sep}kg_schema=bench_{uuid.uuid4().hex[:8]}"
    target = PostgresStore(uri)
    try:
        t0 = time.perf_counter()
        target.save(synth.index)
        out: dict[str, Any] = {"store": "postgres", "save_s": round(time.perf_counter() - t0, 3)}
        out["database_mb"] = database_mb(target)
        out["prewarmed_mb"] = _prewarm(target)
        out.update(_serve_in_child(["--serve-postgres", uri, str(queries_file)]))
        return out
    finally:
        target.drop()
        if server is not None:
            server.stop()


def database_mb(store: Any) -> float:
    """MB of a PostgreSQL index's tables with their indexes and TOAST."""
    with store.connect(autocommit=True) as conn:
        size = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
            (store.schema,),
        ).fetchone()[0]
    return round(float(size or 0) / 2**20, 1)


def _prewarm(store: Any) -> float:
    """Load the schema's tables and indexes into PostgreSQL's buffer cache (``pg_prewarm``), so the queries
    measure a serving database in its steady state rather than the first reads after a bulk load. Returns
    the MB loaded (0 when the extension is unavailable)."""
    try:
        with store.connect(autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            blocks = conn.execute(
                "SELECT coalesce(sum(pg_prewarm(c.oid)), 0) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'i')",
                (store.schema,),
            ).fetchone()[0]
    except Exception as exc:  # noqa: BLE001 - a cold cache only makes the figures pessimistic
        logger.warning("pg_prewarm unavailable (%s); measuring with a cold buffer cache", exc)
        return 0.0
    return round(float(blocks) * 8 / 1024, 1)


def markdown_table(results: list[dict[str, Any]]) -> str:
    """The comparison table of several :func:`run_benchmark` results (as in ``evaluation/benchmarks.md``): kg-rag's
    latency (context included; the context's own p50 beside it), its floor and the ratio, in memory and as
    served from the saved index in a fresh process (the directory or PostgreSQL), then the seed-003 reference."""
    head = (
        "| graph | kg-rag p50 / p95 ms | context p50 | floor p50 | × floor | served p50 / p95 | served floor | × floor "
        "| kg-rag (seed003 settings) p50 | seed-003 algorithm p50 | speed-up | build s | load s | peak RSS MB |"
    )
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r['entities']:,} entities / {r['edges']:,} edges | {r['latency_ms_p50']:.1f} / "
            f"{r['latency_ms_p95']:.1f} | {_num(r.get('context_ms_p50'))} | {r['floor_ms_p50']:.2f} | "
            f"{_num(r.get('floor_ratio'))}× | {r['loaded_latency_ms_p50']:.1f} / {r['loaded_latency_ms_p95']:.1f} | "
            f"{r['loaded_floor_ms_p50']:.2f} | {_num(r.get('loaded_floor_ratio'))}× | "
            f"{r['kg_rag_seed003_preset_latency_ms_p50']:.1f} | "
            f"{r['seed003_latency_ms_p50']:.1f} | {r['speedup_vs_seed003']:.1f}x | {r['build_s']:.1f} | "
            f"{r['load_s']:.1f} | {r['peak_rss_mb']:.0f} |"
        )
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def serve_and_measure(index_dir: str, queries_file: str, store: str = "directory") -> dict[str, Any]:
    """Child process of :func:`run_benchmark`: open the index, answer the queries, report time and memory."""
    from kg_rag.query.engine import QueryEngine
    from kg_rag.store import open_store
    from kg_rag.store.directory import DirectoryStore

    t0 = time.perf_counter()
    backend = (
        DirectoryStore(index_dir, verify=False).backend() if store == "directory" else open_store(index_dir).backend()
    )
    engine = QueryEngine(backend, _VectorsOnly(), get_preset("default"))
    load_s = time.perf_counter() - t0
    queries = np.load(queries_file, allow_pickle=False)
    texts = ["query"] * len(queries)
    lat = _latencies(lambda q, t: engine.retrieve_by_vector(q, t), queries, texts)
    p50 = round(float(np.percentile(lat, 50)), 3)
    floor = _with_ratio(_floor(engine, queries, texts), p50)
    return {
        "load_s": round(load_s, 3),
        "loaded_latency_ms_p50": p50,
        "loaded_latency_ms_p95": round(float(np.percentile(lat, 95)), 3),
        **{f"loaded_{key}": value for key, value in floor.items()},
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "rss_after_queries_mb": round(current_rss_mb(), 1),
        **rss_breakdown_mb(),
    }


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] in ("--serve", "--serve-postgres"):
        kind = "directory" if sys.argv[1] == "--serve" else "postgres"
        sys.stdout.write(json.dumps(serve_and_measure(sys.argv[2], sys.argv[3], kind)) + "\n")
    else:
        sys.stderr.write("internal entry point; use `kg-rag bench`\n")
        sys.exit(2)
