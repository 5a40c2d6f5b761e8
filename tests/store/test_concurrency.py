"""Two writers and eight readers at once, on both backends (issue 27): 10 trials of two concurrent writers (each
with a store object of its own, as two processes would have; ``tests/test_writers.py`` races the CLI processes
themselves) while eight reader threads query the index. Every trial ends with every
document of both writers stored (none lost), no reader ever failed, and every query saw one committed version:
each document it could see was there whole (its chunk, its entities and its relation), and the versions a
reader saw never went backwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

TRIALS = 10
DOCS_PER_WRITER = 6
READERS = 8
KG_RAG = [sys.executable, "-m", "kg_rag.cli"]


def extraction_file(path: Path, prefix: str, n: int) -> Path:
    """``n`` documents; document ``i`` states ``<prefix> Order i -[SUPERSEDES]-> <prefix> Order i+1``."""
    docs = []
    for i in range(n):
        a, b = f"{prefix} Order {i}", f"{prefix} Order {i + 1}"
        docs.append(
            {
                "id": f"{prefix}-{i:03d}",
                "text": f"{a} supersedes {b}.",
                "extraction": {
                    "entities": [{"name": a, "type": "DOCUMENT"}, {"name": b, "type": "DOCUMENT"}],
                    "relations": [{"source": a, "target": b, "type": "SUPERSEDES", "evidence": f"{a} supersedes {b}"}],
                },
            }
        )
    path.write_text(json.dumps({"format": "kg-rag-extractions", "documents": docs}))
    return path


class Writer(threading.Thread):
    """Adds the documents of an extraction file to the store at ``location`` through a store of its own."""

    def __init__(self, location: str, source: Path) -> None:
        super().__init__()
        self.location, self.source, self.error = location, source, None

    def run(self) -> None:
        from langchain_core.embeddings import DeterministicFakeEmbedding

        from kg_rag.ingest.extraction_file import import_extraction_file
        from kg_rag.model.graph import KnowledgeGraph
        from kg_rag.store import open_store

        try:
            fragment = KnowledgeGraph()
            report = import_extraction_file(fragment, self.source)
            open_store(self.location).replace_documents(
                fragment, DeterministicFakeEmbedding(size=16), report=report, wait=120
            )
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.error = f"{type(exc).__name__}: {exc}"


def check_view(view) -> tuple[str, int]:
    """One query's view is one committed version: every stored document is there whole. Returns the version
    and how many documents it holds."""
    info = view.info()
    chunks = list(view.iter_chunks())
    assert len(chunks) == info.chunks, (len(chunks), info.chunks)
    handles = np.asarray([h for h, _ in chunks], np.int64)
    pairs, edges = view.chunk_relations(handles, _ANY)
    with_relation = set(pairs.left.tolist())
    mentions = view.chunk_entities(handles)
    mentioned = set(mentions.left.tolist())
    for handle, chunk in chunks:
        assert handle in with_relation and handle in mentioned, f"{chunk.id} is there without what it says"
    assert len(edges) == info.relations, (len(edges), info.relations)
    return info.version, info.documents


def _version_number(version: str) -> tuple:
    """Versions in the order they were written: ``schema@N`` in a database, a time-stamped generation name."""
    tail = version.rsplit("@", 1)[-1]
    return (int(tail),) if tail.isdigit() else (version,)


class Readers:
    """``READERS`` threads querying ``backend`` until stopped; they count queries and keep every failure."""

    def __init__(self, backend, queries: np.ndarray) -> None:
        self.backend = backend
        self.queries = queries
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.count = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(READERS)]

    def run(self, n: int) -> None:
        from kg_rag.query.engine import QueryEngine
        from kg_rag.testing.embeddings import BagOfWordsEmbeddings

        engine = QueryEngine(self.backend, BagOfWordsEmbeddings())  # query vectors are passed directly
        last: tuple = ()
        i = n
        while not self.stop.is_set():
            try:
                self.backend.refresh()
                with self.backend.reader() as view:
                    version, _ = check_view(view)
                seen = _version_number(version)
                assert not last or seen >= last, f"went back from {last} to {seen}"
                last = seen
                engine.retrieve_by_vector(self.queries[i % len(self.queries)], "order supersedes")
                with self.lock:
                    self.count += 1
            except Exception as exc:  # noqa: BLE001 - every failure is recorded and fails the test
                with self.lock:
                    self.errors.append(f"reader {n}: {type(exc).__name__}: {exc}")
                return
            i += READERS

    def __enter__(self) -> Readers:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(60)


def _any():
    from kg_rag.store.base import EdgeFilter

    return EdgeFilter.build()


_ANY = _any()


@pytest.fixture(params=["directory", "postgres"])
def location(request, tmp_path) -> str:
    if request.param == "directory":
        yield str(tmp_path / "idx")
        return
    uri = f"{request.getfixturevalue('pg_server')}&kg_schema=t_{uuid.uuid4().hex[:10]}"
    yield uri
    from kg_rag.store.postgres import PostgresStore

    PostgresStore(uri).drop()


def test_two_writers_and_eight_readers_lose_nothing_and_read_whole_versions(location, tmp_path):
    from kg_rag.store import open_store

    base = extraction_file(tmp_path / "base.json", "base", 3)
    done = subprocess.run(
        [*KG_RAG, "index", "--extractions", str(base), "--out", location, "--embeddings", "fake:16", "-q"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    store = open_store(location)
    expected = {d["id"] for d in store.documents()}
    backend = store.backend()
    queries = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    started = time.perf_counter()
    with Readers(backend, queries) as readers:
        for trial in range(TRIALS):
            files = [extraction_file(tmp_path / f"w{trial}-{w}.json", f"t{trial}w{w}", DOCS_PER_WRITER) for w in (0, 1)]
            writers = [Writer(location, f) for f in files]
            for w in writers:
                w.start()
            for w, f in zip(writers, files):
                w.join(300)
                assert w.error is None, f"trial {trial}: writer failed: {w.error}"
                expected |= {d["id"] for d in json.loads(f.read_text())["documents"]}
            assert {d["id"] for d in store.documents()} == expected, f"trial {trial}: documents lost"
            assert not readers.errors, readers.errors[:3]
    backend.close()
    assert not readers.errors, readers.errors[:3]
    assert readers.count >= TRIALS, f"readers ran only {readers.count} queries in {time.perf_counter() - started:.0f} s"
    with store.backend().reader() as view:
        _, documents = check_view(view)
    assert documents == len(expected)
