"""Write benchmarks on PostgreSQL: ``kg-rag bench --store postgres --writes`` and ``--replica``.

``--writes`` saves a synthetic graph (``kg_rag.eval.bench``) into a new schema and reports:

- the first save (bulk ``COPY``, constraints, each HNSW build, vacuum);
- adding one 20-chunk document and deleting it again, each in a fresh writer process through
  :class:`~kg_rag.indexing.writer.IndexWriter` (half its entities already stored, so merges are exercised): the
  process's peak resident memory and the write's wall time without embedding (``fake`` embeddings of the
  index's dimension; the embedding time is reported apart);
- ``trials`` rounds of two concurrent writer processes adding a document each while eight reader threads query
  (retrieval plus a check that every benchmark document a query sees is there whole): documents lost, errors,
  reader latency under writes.

``--replica`` starts a primary and a streaming hot standby (``pg_basebackup -R``), serves the readers from the
standby while the primary takes the writes, and reports replication lag, reader errors, the versions each query
saw, and whether the standby's answers equal the primary's once caught up.

A ``--pg`` URI naming a ``kg_schema`` that already holds the synthetic graph is reused (no generation, no
first save), so the writes can be measured again without the long save.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from kg_rag.eval.bench import peak_rss_mb
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk

logger = logging.getLogger(__name__)

DOC_CHUNKS = 20
READERS = 8


def document(doc_id: str, n_entities: int, chunks: int = DOC_CHUNKS) -> KnowledgeGraph:
    """A ``chunks``-chunk document: each chunk names three stored entities (popular and rare ones) and three new
    ones, with eight typed relations among them and a description of one stored entity."""
    rng = np.random.default_rng(zlib.crc32(doc_id.encode()))
    kg = KnowledgeGraph()
    kg.add_document(doc_id, source=f"{doc_id}.txt", content_hash=uuid.uuid4().hex)
    for i in range(chunks):
        cid = f"{doc_id}#c{i}"
        stored = [f"entity {int(x)}" for x in rng.integers(0, n_entities, 3)]
        new = [f"{doc_id} thing {i}.{j}" for j in range(3)]
        names = stored + new
        kg.add_chunk(Chunk(cid, f"Chunk {i} of {doc_id}: {', '.join(names)} and how they relate.", doc_id))
        for j in range(8):
            a, b = names[j % 6], names[(j * 5 + 1) % 6]
            if a != b:
                kg.add_relation(a, b, f"TYPE_{(j % 5) + 1:02d}", chunk_id=cid, evidence=f"{a} and {b}")
        kg.add_entity(stored[0], description=f"seen in {cid}", chunk_id=cid)
    return kg


def write_child(uri: str, mode: str, doc_id: str, dim: int, n_entities: int) -> dict[str, Any]:
    """One write in this (fresh) process: ``add`` or ``delete`` ``doc_id``; its timings and peak memory."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from kg_rag.indexing.writer import IndexWriter
    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(uri)
    writer = IndexWriter(store, DeterministicFakeEmbedding(size=dim), wait=600)
    t0 = time.perf_counter()
    if mode == "add":
        removed = writer.replace_documents(document(doc_id, n_entities))
    else:
        removed = writer.delete_documents([doc_id])
    wall = time.perf_counter() - t0
    last = dict(store.last_write)
    embed = float(last.get("embed_s", 0.0))
    return {
        "mode": mode,
        "doc": doc_id,
        "wall_s": round(wall, 3),
        "embed_s": round(embed, 3),
        "wall_without_embedding_s": round(wall - embed, 3),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "path": last.get("kind"),
        "timings": last,
        "removed": removed,
    }


def _run_child(uri: str, mode: str, doc_id: str, dim: int, n_entities: int) -> subprocess.Popen:
    argv = [sys.executable, "-m", "kg_rag.eval.bench_writes", "--write", uri, mode, doc_id, str(dim), str(n_entities)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen, timeout: float = 3600) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        return {"error": (err or "").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]}
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------- readers
class Readers:
    """Reader threads querying a backend until stopped. Each round refreshes the backend, checks one read view
    with ``check(view)`` (by default: every benchmark document of ``docs`` it can see is there whole), checks
    that versions never go back, and runs one retrieval; latencies and failures are kept."""

    def __init__(
        self, backend: Any, queries: np.ndarray, docs: list[str] | None = None, *, check: Any = None, n: int = READERS
    ) -> None:
        self.backend, self.queries, self.docs = backend, queries, docs if docs is not None else []
        self.check = check or self._whole_documents
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.versions: set[str] = set()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(n)]

    @property
    def count(self) -> int:
        return len(self.latencies)

    def _whole_documents(self, view: Any) -> None:
        docs = list(self.docs)
        seen = view.chunk_handles([f"{d}#c{c}" for d in docs for c in range(DOC_CHUNKS)])
        for d in docs:
            present = sum(f"{d}#c{c}" in seen for c in range(DOC_CHUNKS))
            if present not in (0, DOC_CHUNKS):
                raise AssertionError(f"{d}: {present} of {DOC_CHUNKS} chunks visible")

    def _run(self, n: int) -> None:
        from kg_rag.eval.bench import _VectorsOnly
        from kg_rag.query.engine import QueryEngine

        engine = QueryEngine(self.backend, _VectorsOnly())
        last: tuple = ()
        i = n
        while not self.stop.is_set():
            try:
                t0 = time.perf_counter()
                self.backend.refresh()
                with self.backend.reader() as view:  # one version: what it shows is there whole
                    version = view.info().version
                    self.check(view)
                order = version_order(version)
                if last and order < last:
                    raise AssertionError(f"version went back from {last} to {order}")
                last = order
                engine.retrieve_by_vector(self.queries[i % len(self.queries)], "query")
                with self.lock:
                    self.latencies.append(1000 * (time.perf_counter() - t0))
                    self.versions.add(version)
            except Exception as exc:  # noqa: BLE001 - counted and reported
                with self.lock:
                    self.errors.append(f"reader {n}: {type(exc).__name__}: {str(exc)[:200]}")
                time.sleep(0.1)
            i += len(self.threads)

    def __enter__(self) -> Readers:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(120)

    def summary(self) -> dict[str, Any]:
        lat = np.asarray(self.latencies or [np.nan])
        return {
            "reader_queries": len(self.latencies),
            "reader_errors": len(self.errors),
            "reader_first_errors": self.errors[:3],
            "reader_latency_ms_p50": round(float(np.nanpercentile(lat, 50)), 1),
            "reader_latency_ms_p95": round(float(np.nanpercentile(lat, 95)), 1),
            "versions_seen": len(self.versions),
        }


def version_order(version: str) -> tuple:
    """Versions in the order they were written: ``schema@N`` in a database, a time-stamped generation name."""
    tail = version.rsplit("@", 1)[-1]
    return (int(tail),) if tail.isdigit() else (version,)


# ---------------------------------------------------------------------------------------------- the runs
def _schema_uri(pg_uri: str) -> tuple[str, bool]:
    """The URI to use and whether it names an existing index (reused: no generation, no first save)."""
    from kg_rag.store.postgres import PostgresStore

    if "kg_schema=" in pg_uri:
        return pg_uri, PostgresStore(pg_uri).exists()
    sep = "&" if "?" in pg_uri else "?"
    return f"{pg_uri}{sep}kg_schema=bench_{uuid.uuid4().hex[:8]}", False


def _prepare(uri: str, reuse: bool, n_entities: int, n_edges: int, dim: int, n_queries: int) -> tuple[dict, Any]:
    """Generate and save the synthetic graph (unless reused); returns the figures and query vectors."""
    from kg_rag.eval.bench import database_mb, synthetic_index
    from kg_rag.index.embeddings import model_id
    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(uri)
    out: dict[str, Any] = {"entities": n_entities, "edges": n_edges, "dim": dim, "schema": store.schema}
    if reuse:
        out["reused_schema"] = True
        with store.connect() as conn:
            rows = conn.execute(
                f"SELECT embedding FROM {store.schema}.entity_vectors ORDER BY id LIMIT %s", (n_queries,)
            ).fetchall()
        vectors = np.stack([np.asarray(r[0].to_numpy(), np.float32) for r in rows])
        rng = np.random.default_rng(0)
        queries = vectors + 0.35 * rng.standard_normal(vectors.shape).astype(np.float32) / np.sqrt(dim)
        return out, queries / np.linalg.norm(queries, axis=1, keepdims=True)
    from langchain_core.embeddings import DeterministicFakeEmbedding

    t0 = time.perf_counter()
    synth = synthetic_index(
        n_entities, n_edges, dim=dim, n_queries=n_queries, model=model_id(DeterministicFakeEmbedding(size=dim))
    )
    out["generate_s"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    store.save(synth.index)
    out["first_save_s"] = round(time.perf_counter() - t0, 1)
    out["first_save"] = dict(store.last_write)
    out["database_mb"] = database_mb(store)
    return out, synth.queries


def _writes(uri: str, dim: int, n_entities: int, tag: str) -> dict[str, Any]:
    """Add one 20-chunk document and delete it, each in a fresh writer process."""
    doc = f"bench-{tag}"
    add = _finish(_run_child(uri, "add", doc, dim, n_entities))
    delete = _finish(_run_child(uri, "delete", doc, dim, n_entities))
    return {"add_document": add, "delete_document": delete}


def _trials(uri: str, reader_uri: str, dim: int, n_entities: int, trials: int, queries: np.ndarray, tag: str) -> dict:
    """``trials`` rounds of two concurrent writer processes while eight readers query ``reader_uri``."""
    from kg_rag.store.postgres import PostgresStore

    writer_errors: list[Any] = []
    written: list[str] = []
    backend = PostgresStore(reader_uri).backend()
    readers = Readers(backend, queries, written)
    t0 = time.perf_counter()
    with readers:
        for trial in range(trials):
            docs = [f"bench-{tag}-t{trial}-w{w}" for w in (0, 1)]
            procs = [_run_child(uri, "add", d, dim, n_entities) for d in docs]
            for d, proc in zip(docs, procs):
                result = _finish(proc)
                if "error" in result:
                    writer_errors.append(result["error"])
                else:
                    written.append(d)
    stored = {d["id"] for d in PostgresStore(uri).documents(written)}
    backend.close()
    return {
        "trials": trials,
        "documents_written": len(written),
        "documents_lost": len(set(written) - stored),
        "writer_errors": len(writer_errors),
        "writer_first_errors": writer_errors[:3],
        "trials_s": round(time.perf_counter() - t0, 1),
        **readers.summary(),
        "added_documents": written,
    }


def run_write_benchmark(
    n_entities: int,
    n_edges: int,
    *,
    dim: int = 384,
    trials: int = 10,
    n_queries: int = 50,
    pg_uri: str | None = None,
    keep: bool = False,
) -> dict[str, Any]:
    """``kg-rag bench --store postgres --writes`` (see the module docstring)."""
    from kg_rag.indexing.writer import IndexWriter
    from kg_rag.store.postgres import PostgresStore
    from kg_rag.store.postgres.embedded import EmbeddedPostgres

    with tempfile.TemporaryDirectory() as tmp:
        server = None
        if pg_uri is None:
            server = EmbeddedPostgres(Path(tmp) / "pgdata")
            pg_uri = server.start()
        uri, reuse = _schema_uri(pg_uri)
        try:
            result, queries = _prepare(uri, reuse, n_entities, n_edges, dim, n_queries)
            tag = uuid.uuid4().hex[:6]
            result.update(_writes(uri, dim, n_entities, tag))
            result["concurrency"] = _trials(uri, uri, dim, n_entities, trials, queries, tag)
            if keep or reuse:  # leave a reused schema as it was found
                if result["concurrency"]["added_documents"]:
                    from langchain_core.embeddings import DeterministicFakeEmbedding

                    added = result["concurrency"]["added_documents"]
                    IndexWriter(PostgresStore(uri), DeterministicFakeEmbedding(size=dim)).delete_documents(added)
                result["schema_uri"] = uri
            else:
                PostgresStore(uri).drop()
            return result
        finally:
            if server is not None:
                server.stop()


def run_replica_benchmark(
    n_entities: int, n_edges: int, *, dim: int = 384, trials: int = 10, n_queries: int = 50, workdir: str | None = None
) -> dict[str, Any]:
    """``kg-rag bench --store postgres --replica`` (see the module docstring)."""
    from kg_rag.context import format_context
    from kg_rag.eval.bench import _VectorsOnly
    from kg_rag.query.engine import QueryEngine
    from kg_rag.store.postgres import PostgresStore
    from kg_rag.store.postgres.embedded import EmbeddedPostgres

    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        primary_server = EmbeddedPostgres(Path(tmp) / "primary")
        standby_server = EmbeddedPostgres(Path(tmp) / "standby")
        uri, _ = _schema_uri(primary_server.start())
        try:
            result, queries = _prepare(uri, False, n_entities, n_edges, dim, n_queries)
            t0 = time.perf_counter()
            standby_uri = f"{standby_server.replicate(primary_server)}&kg_schema={PostgresStore(uri).schema}"
            result["base_backup_and_start_s"] = round(time.perf_counter() - t0, 1)
            primary, standby = PostgresStore(uri), PostgresStore(standby_uri)
            result["caught_up_after_backup_s"] = _catch_up(primary, standby)
            lag = _LagProbe(primary, standby)
            with lag:
                result["replica"] = _trials(uri, standby_uri, dim, n_entities, trials, queries, uuid.uuid4().hex[:6])
            result["replica"].update(lag.summary())
            result["caught_up_after_writes_s"] = _catch_up(primary, standby)
            same = 0
            a, b = QueryEngine(primary.backend(), _VectorsOnly()), QueryEngine(standby.backend(), _VectorsOnly())
            for q in queries:
                ra, rb = a.retrieve_by_vector(q, "query"), b.retrieve_by_vector(q, "query")
                same += [c.id for c in ra.chunks] == [c.id for c in rb.chunks] and (
                    format_context(ra).text == format_context(rb).text
                )
            result["same_answers_after_catch_up"] = f"{same}/{len(queries)}"
            result["same_stats_after_catch_up"] = primary.stats() == standby.stats()
            return result
        finally:
            standby_server.stop()
            primary_server.stop()


def _catch_up(primary: Any, standby: Any, timeout: float = 600.0) -> float:
    """Seconds until the standby serves the primary's newest version."""
    t0 = time.perf_counter()
    want = primary.read_meta().version
    while standby.read_meta().version != want:
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"the standby did not catch up in {timeout:.0f} s")
        time.sleep(0.05)
    return round(time.perf_counter() - t0, 2)


class _LagProbe:
    """Samples the standby's replay lag (bytes of WAL behind the primary, and seconds) while writes run."""

    def __init__(self, primary: Any, standby: Any) -> None:
        self.primary, self.standby = primary, standby
        self.stop = threading.Event()
        self.bytes: list[int] = []
        self.seconds: list[float] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with self.primary.connect(autocommit=True) as p, self.standby.connect(autocommit=True) as s:
            while not self.stop.is_set():
                lsn = p.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
                behind, seconds = s.execute(
                    """SELECT pg_wal_lsn_diff(%s::pg_lsn, pg_last_wal_replay_lsn()),
                              coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0)""",
                    (lsn,),
                ).fetchone()
                self.bytes.append(max(0, int(behind)))
                self.seconds.append(float(seconds))
                time.sleep(0.2)

    def __enter__(self) -> _LagProbe:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)

    def summary(self) -> dict[str, Any]:
        b = np.asarray(self.bytes or [0])
        return {
            "replay_lag_kb_p50": round(float(np.percentile(b, 50)) / 1024, 1),
            "replay_lag_kb_max": round(float(b.max()) / 1024, 1),
            "lag_samples": len(self.bytes),
        }


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--write":
        _, _, uri, mode, doc, dim, n_entities = sys.argv
        sys.stdout.write(json.dumps(write_child(uri, mode, doc, int(dim), int(n_entities))) + "\n")
    else:
        sys.stderr.write("internal entry point; use `kg-rag bench --store postgres --writes`\n")
        sys.exit(2)
