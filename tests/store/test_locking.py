"""Issue 11, items 1-2: one writer at a time across processes; readers keep a consistent generation.

The writer tests run the real ``kg-rag`` console script in two processes at once, as the bug report did.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from kg_rag.store import DirectoryStore
from kg_rag.store.directory import load_index

KG_RAG = [sys.executable, "-m", "kg_rag.cli"]
TRIALS = 20
DOCS_PER_WRITER = 40


def extraction_file(path: Path, prefix: str, n: int) -> Path:
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


def kg_rag(*args: str) -> subprocess.Popen:
    env = {**os.environ, "KG_RAG_LOCK_WAIT": "120"}
    return subprocess.Popen([*KG_RAG, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def documents_of(index_dir: Path) -> set[str]:
    return {d["id"] for d in DirectoryStore(index_dir).documents()}


def test_two_writers_never_lose_a_document_or_the_index(tmp_path):
    """20 trials of two concurrent ``index --update`` processes: every trial ends with a loadable index
    holding every document whose writer exited 0 (and both writers succeed: the second waits)."""
    idx = tmp_path / "idx"
    base = extraction_file(tmp_path / "base.json", "base", 3)
    assert (
        subprocess.run(
            [*KG_RAG, "index", "--extractions", str(base), "--out", str(idx), "--embeddings", "fake:16", "-q"],
            capture_output=True,
        ).returncode
        == 0
    )
    expected = documents_of(idx)
    for trial in range(TRIALS):
        files = [extraction_file(tmp_path / f"w{trial}-{w}.json", f"t{trial}w{w}", DOCS_PER_WRITER) for w in (0, 1)]
        procs = [
            kg_rag("index", "--extractions", str(f), "--out", str(idx), "--update", "--embeddings", "fake:16", "-q")
            for f in files
        ]
        codes = [p.wait(timeout=300) for p in procs]
        for p, f, code in zip(procs, files, codes):
            err = p.stderr.read()
            assert code == 0, f"trial {trial}: writer failed: {err}"
            expected |= {d["id"] for d in json.loads(f.read_text())["documents"]}
        index = load_index(idx)  # loadable, checksums verified
        assert set(index.kg.documents()) == expected, f"trial {trial}: documents lost"
        assert not list(idx.glob(".gen-*.partial")), "a partial generation was left behind"


def test_update_and_delete_race_the_delete_sticks(tmp_path):
    """An update and a delete started together: the deleted document never comes back."""
    idx = tmp_path / "idx"
    base = extraction_file(tmp_path / "base.json", "base", 5)
    subprocess.run(
        [*KG_RAG, "index", "--extractions", str(base), "--out", str(idx), "--embeddings", "fake:16", "-q"],
        check=True,
        capture_output=True,
    )
    for trial in range(4):
        victim = f"base-{trial:03d}"
        extra = extraction_file(tmp_path / f"extra{trial}.json", f"extra{trial}", 20)
        procs = [
            kg_rag(
                "index", "--extractions", str(extra), "--out", str(idx), "--update", "--embeddings", "fake:16", "-q"
            ),
            kg_rag("delete", str(idx), "--doc", victim, "--embeddings", "fake:16"),
        ]
        codes = [p.wait(timeout=300) for p in procs]
        assert codes == [0, 0], [p.stderr.read() for p in procs]
        docs = documents_of(idx)
        assert victim not in docs, f"trial {trial}: deleted document came back"
        assert f"extra{trial}-000" in docs


def test_a_second_writer_gives_up_with_one_line_naming_the_holder(tmp_path, fake_embeddings):
    from kg_rag import Chunk, KnowledgeGraph, build_index

    idx = tmp_path / "idx"
    store = DirectoryStore(idx)
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "A supersedes B.", "d"))
    kg.add_relation("A", "B", "SUPERSEDES", chunk_id="c", doc_id="d")
    store.save(build_index(kg, fake_embeddings))
    with store.writing():
        proc = subprocess.run(
            [*KG_RAG, "delete", str(idx), "--doc", "d", "--embeddings", "fake:16", "--wait", "0.5"],
            capture_output=True,
            text=True,
        )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "locked for writing by pid" in lines[0] and str(os.getpid()) in lines[0]
    assert documents_of(idx) == {"d"}  # nothing changed


def test_a_serving_reader_keeps_its_generation_until_it_refreshes(tmp_path):
    """A retriever keeps answering and reading its graph while other processes save; ``refresh()`` moves on."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from kg_rag import EntityBasedKGRAG

    fake_embeddings = DeterministicFakeEmbedding(size=16)
    idx = tmp_path / "idx"
    first = extraction_file(tmp_path / "first.json", "first", 3)
    subprocess.run(
        [*KG_RAG, "index", "--extractions", str(first), "--out", str(idx), "--embeddings", "fake:16", "-q"],
        check=True,
        capture_output=True,
    )
    retriever = EntityBasedKGRAG.from_index(idx, fake_embeddings)
    before = set(retriever.knowledge_graph.documents())
    for n in range(4):  # more saves than generations kept for nobody
        more = extraction_file(tmp_path / f"more{n}.json", f"more{n}", 2)
        subprocess.run(
            [
                *KG_RAG,
                "index",
                "--extractions",
                str(more),
                "--out",
                str(idx),
                "--update",
                "--embeddings",
                "fake:16",
                "-q",
            ],
            check=True,
            capture_output=True,
        )
    assert set(retriever.knowledge_graph.documents()) == before  # its own generation, still readable
    assert retriever.invoke("first Order 1") is not None
    assert retriever.refresh() is True
    after = set(retriever.knowledge_graph.documents())
    assert after > before and "more3-000" in after
    assert retriever.refresh() is False  # already the newest


def test_clean_up_keeps_generations_in_use_within_bounds(tmp_path, fake_embeddings):
    from kg_rag import Chunk, KnowledgeGraph, build_index

    idx = tmp_path / "idx"
    store = DirectoryStore(idx, keep_generations=1, max_generations=3)
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "A supersedes B.", "d"))
    kg.add_relation("A", "B", "SUPERSEDES", chunk_id="c", doc_id="d")
    readers = []
    for _ in range(5):
        store.save(build_index(kg, fake_embeddings))
        readers.append(store.open())  # each reader holds the generation current when it opened
    gens = sorted(p.name for p in idx.glob("gen-*"))
    assert len(gens) == 3  # the current one plus the newest ones in use, up to max_generations
    for reader in readers[-3:]:
        assert reader.path.name in gens
    del readers, reader
    gc.collect()
    store.save(build_index(kg, fake_embeddings))
    assert len(list(idx.glob("gen-*"))) == 1  # nobody reads the old ones any more


def test_checking_the_files_holds_the_generation_so_clean_up_leaves_it_alone(tmp_path, fake_embeddings, monkeypatch):
    """``kg-rag stats`` checks the files; without a reader lock a writer's clean-up could remove the
    generation mid-check, and that was reported as a damaged index."""
    from kg_rag import Chunk, KnowledgeGraph, build_index
    from kg_rag.store.locking import in_use

    store = DirectoryStore(tmp_path / "idx")
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "A supersedes B.", "d"))
    kg.add_relation("A", "B", "SUPERSEDES", chunk_id="c", doc_id="d")
    store.save(build_index(kg, fake_embeddings))
    gen = store.current_generation()
    seen: list[bool] = []
    check = DirectoryStore._check_file
    monkeypatch.setattr(
        DirectoryStore, "_check_file", lambda self, d, f, n: seen.append(in_use(d)) or check(self, d, f, n)
    )
    store.check_files()
    assert seen and all(seen)  # held for every file checked
    assert not in_use(gen)  # and released after
