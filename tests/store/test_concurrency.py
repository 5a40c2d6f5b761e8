"""Two writers and eight readers at once, on both backends (issue 27): 10 trials of two concurrent writers (each
with a store object of its own, as two processes would have; ``tests/store/test_locking.py`` races the CLI processes
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

from kg_rag.eval.bench_writes import Readers

from .readers import check_view
from .test_locking import extraction_file

TRIALS = 10
DOCS_PER_WRITER = 6
KG_RAG = [sys.executable, "-m", "kg_rag.cli"]


class Writer(threading.Thread):
    """Adds the documents of an extraction file to the store at ``location`` through a store of its own."""

    def __init__(self, location: str, source: Path) -> None:
        super().__init__()
        self.location, self.source, self.error = location, source, None

    def run(self) -> None:
        from langchain_core.embeddings import DeterministicFakeEmbedding

        from kg_rag.indexing import IndexWriter
        from kg_rag.ingest.extraction_file import import_extraction_file
        from kg_rag.model.graph import KnowledgeGraph
        from kg_rag.store import open_store

        try:
            fragment = KnowledgeGraph()
            report = import_extraction_file(fragment, self.source)
            writer = IndexWriter(open_store(self.location), DeterministicFakeEmbedding(size=16), wait=120)
            writer.replace_documents(fragment, report=report)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.error = f"{type(exc).__name__}: {exc}"


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
    with Readers(backend, queries, check=check_view) as readers:
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
