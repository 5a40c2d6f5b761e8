"""The contract every storage backend must pass: round trip, atomic saves, clear errors on bad files."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from kg_rag import Chunk, DirectoryStore, IndexFormatError, KnowledgeGraph, build_index
from kg_rag.store.directory import POINTER

BACKENDS = {"directory": lambda tmp: DirectoryStore(tmp / "idx")}


@pytest.fixture(params=sorted(BACKENDS))
def store(request, tmp_path):
    return BACKENDS[request.param](tmp_path)


def sample_index(embeddings, n_docs: int = 3):
    kg = KnowledgeGraph()
    for i in range(n_docs):
        kg.add_chunk(Chunk(f"c{i}", f"Text {i} with -> arrows, [brackets] | pipes", f"d{i}", {"page": i}, 9))
        kg.add_relation(
            f"Entity {i}",
            f"Entity {i + 1}",
            "PRECEDED",
            chunk_id=f"c{i}",
            evidence=f"Text {i}",
            confidence=0.7,
            source_type="EVENT",
        )
        kg.add_relation(f"Entity {i + 1}", f"Entity {i}", "RELATED", predicate="follows", chunk_id=f"c{i}")
    kg.add_entity('Weird "name" -[X]-> |,\nline', "CONCEPT", "desc", chunk_id="c0")
    kg.add_synonym("Entity 0", "Entity 1", 0.95)
    return build_index(kg, embeddings)


def test_round_trip_is_identical(store, fake_embeddings):
    index = sample_index(fake_embeddings)
    store.save(index)
    assert store.exists()
    loaded = store.load()
    assert list(loaded.kg.entity_records()) == list(index.kg.entity_records())
    assert list(loaded.kg.relation_records()) == list(index.kg.relation_records())
    assert list(loaded.kg.chunk_records()) == list(index.kg.chunk_records())
    for name in ("entities", "facts", "chunks"):
        a, b = getattr(index, name), getattr(loaded, name)
        assert a.ids == b.ids and a.hashes == b.hashes and np.array_equal(a.vectors, b.vectors)
    assert loaded.embedding_model == index.embedding_model and not loaded.stale


def test_resave_replaces_and_prunes(store, fake_embeddings):
    store.save(sample_index(fake_embeddings, 2))
    store.save(sample_index(fake_embeddings, 4))
    assert store.load().kg.stats()["chunks"] == 4
    if isinstance(store, DirectoryStore):
        assert len([p for p in store.path.iterdir() if p.name.startswith("gen-")]) == store.keep_generations


def test_failure_during_save_keeps_previous_index(store, fake_embeddings, monkeypatch):
    store.save(sample_index(fake_embeddings, 2))
    import kg_rag.store.files as files

    def boom(*args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(files, "write_npy", boom)
    with pytest.raises(OSError, match="disk full"):
        store.save(sample_index(fake_embeddings, 5))
    monkeypatch.undo()
    assert store.load().kg.stats()["chunks"] == 2


def test_killed_save_keeps_previous_index(tmp_path, fake_embeddings):
    """A real SIGKILL in the middle of a large save: the old index must still load."""
    store = DirectoryStore(tmp_path / "idx")
    store.save(sample_index(fake_embeddings, 2))
    script = textwrap.dedent(f"""
        import sys
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from kg_rag import KnowledgeGraph, build_index, save_index
        from kg_rag import Chunk
        kg = KnowledgeGraph()
        for i in range(20000):
            kg.add_chunk(Chunk(f"c{{i}}", "x" * 400, f"d{{i}}"))
            kg.add_relation(f"E{{i}}", f"E{{i+1}}", "PRECEDED", chunk_id=f"c{{i}}")
        index = build_index(kg, DeterministicFakeEmbedding(size=8), embed_chunks=False)
        print("saving", flush=True)
        save_index(index, {str(tmp_path / "idx")!r})
        print("saved", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "saving"
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    loaded = store.load()
    assert loaded.kg.stats()["chunks"] in (2, 20000)  # old, or the new one if the save won the race
    store.save(sample_index(fake_embeddings, 3))  # and the next save cleans up any partial generation
    assert not list(store.path.glob(".gen-*"))


def _generation(store: DirectoryStore) -> Path:
    return store.path / json.loads((store.path / POINTER).read_text())["generation"]


@pytest.mark.parametrize(
    "victim",
    [
        "relations.jsonl",
        "entities.npy",
        "chunks.ids.json",
        "manifest.json",
        "compiled.src.npy",
        "compiled.lists.json",
        "relations.offsets.npy",
    ],
)
def test_corrupt_or_truncated_file_names_the_file(tmp_path, fake_embeddings, victim):
    store = DirectoryStore(tmp_path / "idx")
    store.save(sample_index(fake_embeddings))
    path = _generation(store) / victim
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])
    with pytest.raises(IndexFormatError) as err:
        store.load()
    assert victim in str(err.value)


@pytest.mark.parametrize("victim", ["entities.jsonl", POINTER])
def test_missing_file_names_the_file(tmp_path, fake_embeddings, victim):
    store = DirectoryStore(tmp_path / "idx")
    store.save(sample_index(fake_embeddings))
    (store.path / victim if victim == POINTER else _generation(store) / victim).unlink()
    with pytest.raises(IndexFormatError, match=victim.replace(".", r"\.")):
        store.load()


def test_future_schema_version_is_rejected(tmp_path, fake_embeddings):
    store = DirectoryStore(tmp_path / "idx")
    store.save(sample_index(fake_embeddings))
    pointer = json.loads((store.path / POINTER).read_text())
    pointer["schema_version"] = 99
    (store.path / POINTER).write_text(json.dumps(pointer))
    with pytest.raises(IndexFormatError, match=r"kg-rag-index\.json: schema version 99 is newer"):
        store.load()


def test_pointer_cannot_escape_the_directory(tmp_path, fake_embeddings):
    store = DirectoryStore(tmp_path / "idx")
    store.save(sample_index(fake_embeddings))
    (store.path / POINTER).write_text(
        json.dumps({"format": "kg-rag-index", "schema_version": 1, "generation": "gen-x/../../etc"})
    )
    with pytest.raises(IndexFormatError, match="invalid generation"):
        store.load()


def test_pickled_npy_payload_is_rejected(tmp_path, fake_embeddings):
    """A planted object array (which np.load would unpickle if allowed) must never execute."""
    store = DirectoryStore(tmp_path / "idx", verify=False)
    store.save(sample_index(fake_embeddings))
    path = _generation(store) / "facts.npy"
    marker = tmp_path / "pwned"
    np.save(path, np.array([Exploit(str(marker))], dtype=object), allow_pickle=True)
    manifest_path = _generation(store) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"]["facts.npy"]["bytes"] = path.stat().st_size
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(IndexFormatError, match="facts.npy"):
        store.load()
    assert not marker.exists()


def test_vectors_of_another_dimension_name_the_file(tmp_path, fake_embeddings):
    """A vector file replaced consistently with its manifest entry (size and checksum re-signed) but of another
    dimension used to fail inside FAISS at the first search with a bare AssertionError."""
    store = DirectoryStore(tmp_path / "idx")
    store.save(sample_index(fake_embeddings))
    path = _generation(store) / "entities.npy"
    rows = np.load(path).shape[0]
    np.save(path, np.zeros((rows, 3), dtype=np.float32))
    manifest_path = _generation(store) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"]["entities.npy"] = {
        "bytes": path.stat().st_size,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(IndexFormatError, match=r"entities\.npy: vectors have 3 dimensions, the manifest says"):
        store.load()


class Exploit:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_refuses_to_write_into_a_foreign_directory(tmp_path, fake_embeddings):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not empty"):
        DirectoryStore(tmp_path / "mine").save(sample_index(fake_embeddings))
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_large_vector_files_are_read_by_row(tmp_path, fake_embeddings, monkeypatch):
    """Above MMAP_MIN_BYTES vectors stay on disk and are read row by row; results are unchanged."""
    import kg_rag.store.files as files
    from kg_rag.store.rowfile import RowFile

    index = sample_index(fake_embeddings, 6)
    save_index_dir = tmp_path / "idx"
    DirectoryStore(save_index_dir).save(index)
    monkeypatch.setattr(files, "MMAP_MIN_BYTES", 1)
    loaded = DirectoryStore(save_index_dir).load()
    assert isinstance(loaded.facts.vectors, RowFile)
    rows = np.asarray(loaded.facts.vectors)
    assert np.array_equal(rows, index.facts.vectors)
    assert np.array_equal(loaded.facts.vectors[[2, 0]], index.facts.vectors[[2, 0]])
    assert np.array_equal(loaded.facts.vectors[1:3], index.facts.vectors[1:3])
    assert np.allclose(loaded.facts.vectors @ index.facts.vectors[0], index.facts.vectors @ index.facts.vectors[0])
    q = index.facts.vectors[:1]
    assert np.array_equal(loaded.facts.search(q, 3)[1], index.facts.search(q, 3)[1])
    assert len(loaded.cache()) == len(index.cache())  # iterating rows works (used when re-indexing)
