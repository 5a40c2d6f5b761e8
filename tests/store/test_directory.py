"""The directory store (``kg_rag/store/directory.py``, ``files.py``): identical round trips, atomic saves, the same
results as the in-memory index, and damaged, missing or foreign files named in one line."""

from __future__ import annotations

import hashlib
import io
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

from kg_rag import (
    Chunk,
    DirectoryStore,
    EntityBasedKGRAG,
    IndexFormatError,
    KnowledgeGraph,
    build_index,
    load_index,
    save_index,
)
from kg_rag.context import render_path
from kg_rag.eval.bench import synthetic_index
from kg_rag.query.engine import QueryEngine
from kg_rag.query.params import QueryParams
from kg_rag.store.directory import POINTER

from ..cli_support import index_demo, one_line_error

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


DEEP = "[" * 200_000 + "]" * 200_000


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return index_demo(tmp_path_factory.mktemp("cli") / "idx")


def copy_index(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_deeply_nested_pointer_and_manifest(demo_dir, tmp_path, capsys):
    idx = copy_index(demo_dir, tmp_path / "p")
    (idx / "kg-rag-index.json").write_text(DEEP)
    one_line_error(capsys, ["stats", str(idx)], "kg-rag-index.json: JSON is nested too deeply")
    idx = copy_index(demo_dir, tmp_path / "m")
    manifest = next(idx.glob("gen-*")) / "manifest.json"
    manifest.write_text(DEEP)
    one_line_error(capsys, ["query", str(idx), "who?", "--embeddings", "fake:16"], "manifest.json: JSON is nested")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("files", ["chunks.jsonl"], "no valid file list"),
        ("schema_version", "2", "invalid schema_version"),
        ("stats", [1], "stats must be a JSON object"),
        ("embedding", "x", "embedding must be a JSON object"),
    ],
)
def test_manifest_with_wrong_field_types(demo_dir, tmp_path, capsys, field, value, message):
    idx = copy_index(demo_dir, tmp_path / "idx")
    path = next(idx.glob("gen-*")) / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest[field] = value
    path.write_text(json.dumps(manifest))
    one_line_error(capsys, ["query", str(idx), "who?", "--embeddings", "fake:16"], message)


# ------------------------------------------------------------------ bad data files
def test_corrupt_faiss_file_is_named(demo_index, tmp_path, monkeypatch):
    import kg_rag.index.vectors as vectors_module

    monkeypatch.setattr(vectors_module, "EXACT_MAX_ROWS", 5)  # force the persisted inverted-file index
    kg = KnowledgeGraph()
    rng = np.random.default_rng(0)
    for i in range(300):
        kg.add_chunk(Chunk(f"c{i}", f"text {i}", f"d{i}"))
        kg.add_relation(f"E{i}", f"E{(i * 7) % 300 + 1}", "PRECEDED", chunk_id=f"c{i}")
    from langchain_core.embeddings import DeterministicFakeEmbedding

    index = build_index(kg, DeterministicFakeEmbedding(size=16))
    save_index(index, tmp_path / "idx")
    gen = tmp_path / "idx" / json.loads((tmp_path / "idx" / POINTER).read_text())["generation"]
    assert (gen / "facts.faiss").is_file()
    loaded = load_index(tmp_path / "idx")
    q = rng.standard_normal((1, 16)).astype(np.float32)
    assert loaded.facts.search(q, 3)[1].shape == (1, 3)
    data = (gen / "facts.faiss").read_bytes()
    (gen / "facts.faiss").write_bytes(data[: len(data) // 2])
    with pytest.raises(IndexFormatError, match="facts.faiss"):
        load_index(tmp_path / "idx")


def test_index_directory_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(IndexFormatError, match="no such index directory"):
        load_index(tmp_path / "f")


def test_no_index_there_is_told_apart_from_a_damaged_one(tmp_path):
    """Both backends raise IndexNotFoundError for "nothing there" (PostgreSQL: a schema with no index, in
    test_postgres.py); a damaged index stays a plain IndexFormatError."""
    from kg_rag import IndexNotFoundError

    (tmp_path / "empty").mkdir()
    with pytest.raises(IndexNotFoundError, match="no such index directory"):
        load_index(tmp_path / "missing")
    with pytest.raises(IndexNotFoundError, match="no kg-rag index there"):
        load_index(tmp_path / "empty")
    (tmp_path / "empty" / "kg-rag-index.json").write_text("{not json")
    with pytest.raises(IndexFormatError) as damaged:
        load_index(tmp_path / "empty")
    assert not isinstance(damaged.value, IndexNotFoundError)


class _VectorsOnly:
    def embed_query(self, text):
        raise RuntimeError("vectors only")

    embed_documents = embed_query


@pytest.fixture(scope="module")
def small():
    s = synthetic_index(400, 3000, dim=32, n_queries=12, seed=7)
    return s, QueryEngine.for_index(s.index, _VectorsOnly(), QueryParams())


def test_saved_index_gives_identical_results(small, tmp_path):
    """Queries on a saved index run from the saved arrays and record offsets — same results as in memory."""
    from kg_rag import DirectoryStore

    s, engine = small
    store = DirectoryStore(tmp_path / "idx")
    store.save(s.index)
    loaded = QueryEngine(store.backend(), _VectorsOnly(), QueryParams())
    for strategy in ("chain", "ppr", "frequency", "path"):
        p = QueryParams(strategy=strategy, max_context_tokens=1500)
        for q, text in zip(s.queries, s.query_texts):
            a, b = engine.retrieve_by_vector(q, text, p), loaded.retrieve_by_vector(q, text, p)
            assert [(c.id, c.score, c.text) for c in a.chunks] == [(c.id, c.score, c.text) for c in b.chunks]
            assert [e.key for e in a.entities] == [e.key for e in b.entities]
            assert [render_path(a.names, x) for x in a.paths] == [render_path(b.names, x) for x in b.paths]
            assert [r.relation_id for r in a.relations] == [r.relation_id for r in b.relations]


def test_lazy_index_can_still_be_edited(tmp_path, bow_embeddings, demo_index):
    from kg_rag import Chunk, load_index, save_index

    save_index(demo_index, tmp_path / "idx")
    loaded = load_index(tmp_path / "idx")
    r = EntityBasedKGRAG(index=loaded, embeddings=bow_embeddings)
    before = [d.metadata["chunk_id"] for d in r.invoke("Quokka Council")]
    loaded.kg.add_chunk(Chunk("new", "Quokka Council supersedes Storage Policy v2.", "new-doc"))
    loaded.kg.add_relation("Quokka Council", "Storage Policy v2", "SUPERSEDES", chunk_id="new")
    after = [d.metadata["chunk_id"] for d in r.invoke("Quokka Council")]
    assert "new" not in before and after[0] == "new"


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda line: line[:-1] + b"x", "Expecting"),  # the object never closes
        (lambda line: b"{}" + b" " * (len(line) - 3) + b"x", "Extra data"),  # an object, then more
        (lambda line: b"\xff" + line[1:], "decode"),  # not UTF-8
    ],
)
def test_a_damaged_record_line_names_the_file_and_line_when_read(tmp_path, fake_embeddings, damage, why):
    """Records are read on demand, one line each: a damaged line is reported when a query reads it, with the
    file and line, never as a raw decoder error."""
    store = DirectoryStore(tmp_path / "idx")
    store.save(sample_index(fake_embeddings))
    path = _generation(store) / "relations.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[0] = damage(lines[0])
    path.write_bytes(b"\n".join(lines))  # same size; the checksum is what catches it on a verified open
    backend = DirectoryStore(tmp_path / "idx", verify=False).backend()
    with backend.reader() as view:
        rows = np.arange(len(lines) + 1, dtype=np.int64)  # every relation row (beyond the last: none)
        with pytest.raises(IndexFormatError, match=rf"relations\.jsonl.*line 1 .*{why}"):
            view.relations(rows)


def _forge_header(path: Path, shape: tuple[int, ...]) -> None:
    """Rewrite a ``.npy`` file's header to claim ``shape`` (the data left as it is) and re-sign the file in its
    generation's manifest, as someone who can write the index folder could."""
    fmt = np.lib.format
    raw = path.read_bytes()
    with open(path, "rb") as fh:
        fmt.read_magic(fh)
        _, _, dtype = fmt.read_array_header_1_0(fh)
        data = raw[fh.tell() :]
    header = io.BytesIO()
    fmt.write_array_header_1_0(header, {"descr": fmt.dtype_to_descr(dtype), "fortran_order": False, "shape": shape})
    path.write_bytes(header.getvalue() + data)
    manifest_path = path.parent / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"][path.name] = {
        "bytes": path.stat().st_size,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }
    manifest_path.write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "victim, shape, message",
    [
        (
            "entities.npy",
            lambda rows, dim: (10**11, dim),
            "the header claims a float32 array of shape (100000000000, 16)",
        ),
        ("facts.npy", lambda rows, dim: (rows * 2, dim // 2), "vectors, the id list"),
        ("compiled.src.npy", lambda rows, dim: (10**12,), "the header claims"),
    ],
    ids=["huge-vectors", "rows-not-the-ids", "huge-compiled-array"],
)
def test_a_forged_npy_header_is_one_line_before_anything_is_allocated(
    demo_dir, tmp_path, capsys, victim, shape, message
):
    """A header re-signed in the manifest that claims (10**11, 16) used to make numpy try to allocate terabytes:
    a 49-line _ArrayMemoryError traceback on `query`. The header is now checked against the file's size and the
    manifest's counts first."""
    idx = copy_index(demo_dir, tmp_path / "idx")
    path = next(idx.glob("gen-*")) / victim
    rows, dim = (np.load(path).shape + (16,))[:2]
    _forge_header(path, shape(rows, dim))
    err = one_line_error(capsys, ["query", str(idx), "who?", "--embeddings", "fake:16", "--no-answer"], message)
    assert victim in err
