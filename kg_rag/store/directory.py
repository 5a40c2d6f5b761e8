"""The directory store: an index in safe, inspectable files (JSON, JSONL, ``.npy``; no pickle).

Layout of an index directory::

    DIR/kg-rag-index.json        pointer: format, schema_version, current generation
    DIR/.kg-rag-writer.lock      the writer lock (flock; holds the holder's pid and command)
    DIR/gen-<time>-<rand>/       one complete, immutable generation
        manifest.json            schema version, embedding model, stats, sha256 + size of every file
        chunks.jsonl entities.jsonl relations.jsonl ingest_report.json
        entities.npy facts.npy chunks.npy (+ *.ids.json: row ids and content hashes; *.faiss for large tables)
        compiled.*.npy compiled.lists.json *.offsets.npy   the query snapshot (arrays + record byte offsets)
        readers.lock             held (shared) by every process that has this generation open

Saving happens under the writer lock: a new generation is written and fsynced, the pointer is replaced
atomically (``os.replace``), and only then are old generations cleaned up — never one another process is
reading (its reader lock is held), and never more than the retention settings allow to pile up. A save
killed at any point leaves the previous index loadable. Every file is checked against the manifest on load;
any problem raises :class:`IndexFormatError` naming the file.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

import kg_rag.store.files as F
from kg_rag.errors import IndexFormatError, IndexNotFoundError, InputError
from kg_rag.index.build import GraphIndex
from kg_rag.index.meta import FORMAT, IndexMeta, check_version
from kg_rag.index.snapshot import CompiledGraph, Snapshot
from kg_rag.index.vectors import VectorTable
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk, chunk_from_record
from kg_rag.model.report import IngestReport
from kg_rag.store.base import VersionedBackend
from kg_rag.store.graph_store import GraphStore
from kg_rag.store.locking import READERS_LOCK, WRITER_LOCK, WriterLock, in_use
from kg_rag.store.memory import SnapshotBackend
from kg_rag.store.records import FileRecords

logger = logging.getLogger(__name__)
T = TypeVar("T")

SCHEMA_VERSION = 2
"""2: documents.jsonl; entity descriptions and relation descriptions carry their provenance. Schema-1
indexes load (and are upgraded when saved again)."""
POINTER = "kg-rag-index.json"
VECTOR_TABLES = ("entities", "facts", "chunks")
RECORD_KINDS = ("entities", "relations", "chunks")
QUERY_SNAPSHOT_FILES = (
    *(f"compiled.{name}.npy" for name in CompiledGraph.ARRAYS),
    "compiled.lists.json",
    *(f"{kind}.offsets.npy" for kind in RECORD_KINDS),
    *(f"compiled.{kind}_lines.npy" for kind in RECORD_KINDS),
)
"""Files that let a loaded index answer queries without building the NetworkX model."""
KEEP_GENERATIONS = 2
"""Generations kept after a save (the current one included), whether or not anyone reads them."""
MAX_GENERATIONS = 8
"""Most generations kept for readers that still have them open; beyond this the oldest go anyway."""
MAX_GENERATION_AGE = 24 * 3600.0
"""Seconds after which a generation in use by a reader may be removed anyway."""


class DirectoryStore(GraphStore):
    """Stores an index in a local directory (see the module docstring for the layout and guarantees)."""

    def __init__(
        self,
        path: str | Path,
        *,
        verify: bool = True,
        keep_generations: int = KEEP_GENERATIONS,
        max_generations: int = MAX_GENERATIONS,
        max_generation_age: float = MAX_GENERATION_AGE,
    ) -> None:
        self.path = Path(path)
        self.verify = verify
        if keep_generations < 1:
            raise InputError("keep_generations must be >= 1")
        if max_generations < keep_generations:
            raise InputError("max_generations must be >= keep_generations")
        self.keep_generations = keep_generations
        self.max_generations = max_generations
        self.max_generation_age = float(max_generation_age)
        self._writer = WriterLock(self.path)

    @property
    def pointer(self) -> Path:
        return self.path / POINTER

    def exists(self) -> bool:
        return self.pointer.is_file()

    def __repr__(self) -> str:
        return f"DirectoryStore({str(self.path)!r})"

    def __str__(self) -> str:
        return str(self.path)

    # ------------------------------------------------------------------- writing
    @contextmanager
    def writing(self, wait: float | None = None) -> Iterator[DirectoryStore]:
        """Hold the writer lock for a whole read–modify–write; saves inside it do not lock again. A target that
        cannot take an index is refused first, before any work and before a lock file is left in it."""
        self.check_target()
        with self._writer.hold(wait):
            yield self

    def check_target(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"{self.path}: exists and is not a directory")
        if self.path.is_dir() and not self.exists() and any(p.name != WRITER_LOCK for p in self.path.iterdir()):
            raise InputError(f"{self.path}: directory is not empty and holds no kg-rag index; refusing to write")

    def save(self, index: GraphIndex, *, wait: float | None = None, forget: bool = False) -> str:
        """Write ``index`` as a new generation and make it current; returns the generation's name.

        ``forget=True`` (after a delete) removes every older generation no reader holds open, instead of
        keeping ``keep_generations`` of them; generations still open stay until their readers move on or
        ``max_generation_age`` passes.
        """
        self.check_target()
        self.path.mkdir(parents=True, exist_ok=True)
        with self._writer.hold(wait):
            gen = self._write_generation(index)
            pointer = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "generation": gen}
            F.atomic_write_bytes(self.pointer, json.dumps(pointer, indent=1).encode())
            self._prune(keep=gen, keep_generations=1 if forget else self.keep_generations)
        logger.info("saved index to %s (%s)", self.path, gen)
        return gen

    def _write_generation(self, index: GraphIndex) -> str:
        now = time.time_ns()  # names sort in creation order (clean-up relies on it), even within one second
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 1_000_000_000))
        gen = f"gen-{stamp}.{now % 1_000_000_000:09d}-{uuid.uuid4().hex[:8]}"
        tmp_dir = self.path / f".{gen}.partial"
        tmp_dir.mkdir()
        try:
            kg = index.kg
            with kg.lock:
                chunk_off, chunk_lines = F.write_jsonl(tmp_dir / "chunks.jsonl", kg.chunk_records(), "id")
                entity_off, entity_lines = F.write_jsonl(tmp_dir / "entities.jsonl", kg.entity_records(), "key")
                rel_off, rel_lines = F.write_jsonl(tmp_dir / "relations.jsonl", kg.relation_records(), "id")
                F.write_jsonl(tmp_dir / "documents.jsonl", kg.document_records())
                meta = IndexMeta.of_index(index, SCHEMA_VERSION).to_dict()
                compiled = CompiledGraph.from_index(index)
            arrays, lists = compiled.to_arrays()
            for name, array in arrays.items():
                F.write_npy(tmp_dir / f"compiled.{name}.npy", array)
            F.write_json(tmp_dir / "compiled.lists.json", lists)
            for name, offsets, lines, ids in (
                ("entities", entity_off, entity_lines, lists["node_ids"]),
                ("relations", rel_off, rel_lines, lists["relation_ids"]),
                ("chunks", chunk_off, chunk_lines, lists["chunk_ids"]),
            ):
                F.write_npy(tmp_dir / f"{name}.offsets.npy", offsets)
                line_of = np.asarray([lines.get(i, -1) for i in ids], dtype=np.int64)
                F.write_npy(tmp_dir / f"compiled.{name}_lines.npy", line_of)
            F.write_json(tmp_dir / "ingest_report.json", index.report.to_dict())
            if index.communities is not None:
                F.write_json(tmp_dir / "communities.json", index.communities.to_dict())
            for name in VECTOR_TABLES:
                table: VectorTable = getattr(index, name)
                F.write_npy(tmp_dir / f"{name}.npy", table.vectors, np.float32)
                F.write_json(tmp_dir / f"{name}.ids.json", {"ids": table.ids, "hashes": table.hashes})
                if not table.exact:  # large tables: persist the trained inverted-file index too
                    F.write_faiss(tmp_dir / f"{name}.faiss", table.faiss_index())
            files = {p.name: {"sha256": F.sha256(p), "bytes": p.stat().st_size} for p in sorted(tmp_dir.iterdir())}
            manifest = {**meta, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "files": files}
            F.write_json(tmp_dir / "manifest.json", manifest)
            (tmp_dir / READERS_LOCK).touch()
            F.fsync_dir(tmp_dir)
            os.replace(tmp_dir, self.path / gen)
            F.fsync_dir(self.path)
        except BaseException:
            shutil.rmtree(tmp_dir, ignore_errors=True)
            raise
        return gen

    def _prune(self, keep: str, keep_generations: int) -> None:
        """Remove old generations (called under the writer lock, so no partial folder is being written)."""
        gens = sorted(
            (p for p in self.path.iterdir() if p.is_dir() and p.name.startswith("gen-") and p.name != keep),
            key=lambda p: p.name,
            reverse=True,
        )
        now = time.time()
        kept = 1
        for old in gens:
            if kept < keep_generations:
                kept += 1
                continue
            try:
                age = now - old.stat().st_mtime
            except OSError:
                continue
            if in_use(old) and kept < self.max_generations and age < self.max_generation_age:
                kept += 1
                continue
            shutil.rmtree(old, ignore_errors=True)
        for partial in self.path.glob(".gen-*.partial"):  # left by a crashed writer (we hold the lock)
            shutil.rmtree(partial, ignore_errors=True)

    # ------------------------------------------------------------------- reading
    def current_generation(self) -> Path:
        if not self.path.is_dir():
            raise IndexNotFoundError(self.path, "no such index directory")
        if not self.pointer.is_file():
            raise IndexNotFoundError(self.path, f"no kg-rag index there ({self.pointer.name} is missing)")
        pointer = F.read_json(self.pointer)
        if not isinstance(pointer, dict) or pointer.get("format") != FORMAT:
            raise IndexFormatError(self.pointer, "not a kg-rag index pointer file")
        check_version(self.pointer, pointer.get("schema_version"), SCHEMA_VERSION)
        gen = pointer.get("generation")
        if not isinstance(gen, str) or not gen.startswith("gen-") or "/" in gen or "\\" in gen or ".." in gen:
            raise IndexFormatError(self.pointer, f"invalid generation name {gen!r}")
        gen_dir = self.path / gen
        if not gen_dir.is_dir():
            raise IndexFormatError(gen_dir, "generation directory named by the pointer is missing")
        return gen_dir

    def manifest(self, gen_dir: Path | None = None) -> dict[str, Any]:
        gen_dir = gen_dir or self.current_generation()
        path = gen_dir / "manifest.json"
        manifest = F.read_json(path)
        if not isinstance(manifest, dict):
            raise IndexFormatError(path, "manifest is not a JSON object")
        IndexMeta.parse(manifest, path, supported=SCHEMA_VERSION)  # types and ranges, before anything is sized
        files = manifest.get("files")
        if not isinstance(files, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("bytes"), int) and isinstance(v.get("sha256"), str)
            for v in files.values()
        ):
            raise IndexFormatError(path, "manifest has no valid file list")
        return manifest

    def read_meta(self, gen_dir: Path | None = None) -> IndexMeta:
        """The current generation's :class:`IndexMeta` (validated; its version is the generation's name)."""
        gen_dir = gen_dir or self.current_generation()
        return IndexMeta.parse(
            self.manifest(gen_dir), gen_dir / "manifest.json", supported=SCHEMA_VERSION, version=gen_dir.name
        )

    def read_report(self, gen_dir: Path | None = None) -> IngestReport:
        gen_dir = gen_dir or self.current_generation()
        return read_report(gen_dir / "ingest_report.json")

    def check_files(self, attempts: int = 3) -> None:
        """Check every file of the current generation against its manifest (size; sha256 unless ``verify`` is
        off) without loading anything: :meth:`stats` reads only the manifest's counts, which a damaged index
        still has. The generation is held with a reader lock meanwhile, so a writer's clean-up cannot remove it
        mid-check and have that reported as damage."""
        from kg_rag.store.locking import ReaderLock

        gen_dir, lock = self._at_current(lambda d: (d, ReaderLock(d)), "checking", attempts)
        try:
            files = self.manifest(gen_dir)["files"]
            for name in sorted(files):
                self._check_file(gen_dir, files, name)
        finally:
            lock.release()

    def check(self) -> IndexMeta:
        """Every file checked against the manifest (see :meth:`check_files`); returns the metadata."""
        self.check_files()
        return self.read_meta()

    def _check_file(self, gen_dir: Path, files: dict[str, Any], name: str) -> None:
        path = gen_dir / name
        if name not in files:
            raise IndexFormatError(gen_dir / "manifest.json", f"manifest does not list {name}")
        if not path.is_file():
            raise IndexFormatError(path, "file is missing")
        if path.stat().st_size != files[name].get("bytes"):
            raise IndexFormatError(path, "size differs from the manifest (truncated or modified)")
        if self.verify and F.sha256(path) != files[name].get("sha256"):
            raise IndexFormatError(path, "sha256 differs from the manifest (corrupt or modified)")

    def stats(self) -> dict[str, Any]:
        """Counts recorded with the current generation (no graph is built)."""
        gen_dir = self.current_generation()
        return self.read_meta(gen_dir).stats(self.read_report(gen_dir))

    def load(self) -> GraphIndex:
        """The current generation as an editable index (the NetworkX graph is built)."""
        return self.open().to_index()

    def documents(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The current generation's documents (see :meth:`OpenGeneration.documents`)."""
        generation = self.open()
        try:
            docs = generation.documents()
        finally:
            generation.close()
        if ids is None:
            return docs
        wanted = set(map(str, ids))
        return [d for d in docs if str(d.get("id")) in wanted]

    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """The current generation's chunks of these documents (one pass over the chunk records)."""
        generation = self.open()
        try:
            return generation.chunks_of(doc_ids)
        finally:
            generation.close()

    def backend(self) -> DirectoryBackend:
        """A read-only query view of the current generation; ``refresh()`` moves it to a newer one."""
        return DirectoryBackend(self)

    def open(self, attempts: int = 3) -> OpenGeneration:
        """Open the current generation (a reader lock is taken first, so clean-up leaves it alone)."""
        return self._at_current(lambda d: OpenGeneration(self, d), "opening", attempts)

    def _at_current(self, take: Callable[[Path], T], doing: str, attempts: int) -> T:
        """``take(current generation)``, which locks it; read the pointer again when a writer replaced and
        cleaned the generation up in between (``take`` raises ``FileNotFoundError``)."""
        for attempt in range(attempts):
            gen_dir = self.current_generation()
            try:
                return take(gen_dir)
            except FileNotFoundError:
                if attempt == attempts - 1:
                    raise IndexFormatError(gen_dir, f"generation was removed while {doing} it") from None
                time.sleep(0.05)
        raise AssertionError("unreachable")


class OpenGeneration:
    """One generation opened for reading: verified files, the query snapshot, and a reader lock.

    Everything it reads later goes through descriptors opened here, so the view stays consistent (and
    readable) even after writers move the pointer on and clean the generation up.
    """

    def __init__(self, store: DirectoryStore, gen_dir: Path) -> None:
        from kg_rag.store.locking import ReaderLock

        self.store = store
        self.path = gen_dir
        self.lock = ReaderLock(gen_dir)  # FileNotFoundError if the generation vanished meanwhile
        try:
            self._open(store, gen_dir)
        except BaseException:
            self.lock.release()
            raise

    def _open(self, store: DirectoryStore, gen_dir: Path) -> None:
        manifest = store.manifest(gen_dir)
        self.manifest = manifest
        self.meta = store.read_meta(gen_dir)
        files = manifest["files"]
        expected = {"chunks.jsonl", "entities.jsonl", "relations.jsonl", "ingest_report.json"}
        expected |= {f"{n}.npy" for n in VECTOR_TABLES} | {f"{n}.ids.json" for n in VECTOR_TABLES}
        if manifest["schema_version"] >= 2:
            expected.add("documents.jsonl")
        for name in sorted(expected):
            store._check_file(gen_dir, files, name)
        optional = (
            {f"{n}.faiss" for n in VECTOR_TABLES}
            | set(QUERY_SNAPSHOT_FILES)
            | {READERS_LOCK, "documents.jsonl", "communities.json"}
        )
        unexpected = sorted(p.name for p in gen_dir.iterdir() if p.name not in expected | optional | {"manifest.json"})
        if unexpected:
            logger.warning("%s: ignoring files not written by kg-rag: %s", gen_dir, ", ".join(unexpected))
        self.report = read_report(gen_dir / "ingest_report.json")
        self.communities = None
        if "communities.json" in files:
            from kg_rag.communities.model import CommunitySet

            store._check_file(gen_dir, files, "communities.json")
            data = _dict(F.read_json(gen_dir / "communities.json"), gen_dir / "communities.json")
            try:
                self.communities = CommunitySet.from_dict(data)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise IndexFormatError(gen_dir / "communities.json", f"unreadable communities ({exc})") from exc
        self.tables = {name: self._table(name, files, self.meta.dim) for name in VECTOR_TABLES}
        self.embedding_model = self.meta.embedding_model
        self.type_prefix = self.meta.type_prefix
        if all(name in files for name in QUERY_SNAPSHOT_FILES):
            self.records: Any
            self.compiled, self.records = self._load_snapshot(files)
        else:  # written without a query snapshot: derive it from the records
            index = self.to_index()
            self.compiled, self.records = CompiledGraph.from_index(index), None
            self._graph_index = index

    def _table(self, name: str, files: dict[str, Any], dim: Any) -> VectorTable:
        """One vector table; its vectors must have the manifest's dimension, or a search would fail deep
        inside FAISS instead of naming the file."""
        gen_dir = self.path
        ids = F.read_json(gen_dir / f"{name}.ids.json")
        if not isinstance(ids, dict) or not isinstance(ids.get("ids"), list) or not isinstance(ids.get("hashes"), list):
            raise IndexFormatError(gen_dir / f"{name}.ids.json", 'expected {"ids": [...], "hashes": [...]}')
        try:
            vectors = F.read_npy(gen_dir / f"{name}.npy", len(ids["ids"]), dim if isinstance(dim, int) else None)
            table = VectorTable([str(i) for i in ids["ids"]], [str(h) for h in ids["hashes"]], vectors)
        except IndexFormatError:
            raise
        except ValueError as exc:
            raise IndexFormatError(gen_dir / f"{name}.npy", str(exc)) from exc
        if len(table) and isinstance(dim, int) and table.dim != dim:
            raise IndexFormatError(
                gen_dir / f"{name}.npy", f"vectors have {table.dim} dimensions, the manifest says {dim}"
            )
        faiss_file = gen_dir / f"{name}.faiss"
        if faiss_file.name in files:
            self.store._check_file(gen_dir, files, faiss_file.name)
            try:
                table.set_faiss_index(F.read_faiss(faiss_file))
            except IndexFormatError:
                raise
            except ValueError as exc:
                raise IndexFormatError(faiss_file, str(exc)) from exc
        return table

    def _load_snapshot(self, files: dict[str, Any]) -> tuple[CompiledGraph, FileRecords]:
        gen_dir = self.path
        for name in QUERY_SNAPSHOT_FILES:
            self.store._check_file(gen_dir, files, name)
        arrays = {name: F.read_plain_npy(gen_dir / f"compiled.{name}.npy") for name in CompiledGraph.ARRAYS}
        lists = F.read_json(gen_dir / "compiled.lists.json")
        if not isinstance(lists, dict):
            raise IndexFormatError(gen_dir / "compiled.lists.json", "expected a JSON object of lists")
        try:
            compiled = CompiledGraph.from_arrays(arrays, lists)
        except (ValueError, TypeError) as exc:
            raise IndexFormatError(gen_dir / "compiled.lists.json", f"compiled graph is inconsistent ({exc})") from exc
        offsets = {k: F.read_plain_npy(gen_dir / f"{k}.offsets.npy") for k in RECORD_KINDS}
        lines = {k: F.read_plain_npy(gen_dir / f"compiled.{k}_lines.npy") for k in RECORD_KINDS}
        expected = {"entities": compiled.n_nodes, "relations": compiled.n_edges, "chunks": compiled.n_chunks}
        for k in RECORD_KINDS:
            if len(lines[k]) != expected[k] or (lines[k].size and lines[k].max() >= len(offsets[k])):
                raise IndexFormatError(gen_dir / f"compiled.{k}_lines.npy", "does not match the records")
        files_of = {k: gen_dir / f"{k}.jsonl" for k in RECORD_KINDS}
        if (gen_dir / "documents.jsonl").is_file():
            files_of["documents"] = gen_dir / "documents.jsonl"
        records = FileRecords(files_of, offsets, lines)
        return compiled, records

    def snapshot(self) -> Snapshot:
        records = self.records
        if records is None:
            from kg_rag.index.snapshot import GraphRecords

            records = GraphRecords(self._graph_index.kg, self.compiled)
        snap = Snapshot(
            self.compiled,
            self.tables["entities"],
            self.tables["facts"],
            self.tables["chunks"],
            records,
            self.embedding_model,
            self.type_prefix,
            self.path.name,
            self.meta.documents,
            communities=self.communities,
            aliases=self.report.resolution.aliases(),
        )
        try:
            snap.check()
        except ValueError as exc:
            raise IndexFormatError(self.path / "compiled.lists.json", str(exc)) from exc
        return snap

    def close(self) -> None:
        """Release the reader lock (the open descriptors keep working for whoever still reads through them)."""
        self.lock.release()

    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """This generation's chunks of the given documents, in stored order."""
        wanted = set(doc_ids)
        out: dict[str, list[Chunk]] = {}
        if not wanted:
            return out
        chunks: Iterable[Chunk]
        if self.records is None:
            chunks = self._graph_index.kg.chunks.values()
        else:
            try:
                chunks = [
                    chunk_from_record(r) for r in self.records.iter_records("chunks") if r.get("doc_id") in wanted
                ]
            except (KeyError, TypeError, ValueError) as exc:
                raise IndexFormatError(self.path / "chunks.jsonl", f"unreadable records ({exc})") from exc
        for chunk in chunks:
            if chunk.doc_id in wanted:
                out.setdefault(chunk.doc_id, []).append(chunk)
        return out

    def documents(self) -> list[dict[str, Any]]:
        """Document records (``id, source, content_hash, title, metadata, chunks``), the ids ``delete`` takes."""
        if self.records is None or not self.records.has("documents"):  # schema 1: derive from the chunks
            kg = self.knowledge_graph() if self.records is not None else self._graph_index.kg
            return list(kg.document_records())
        try:
            return [dict(r) for r in self.records.iter_records("documents")]
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexFormatError(self.path / "documents.jsonl", f"unreadable records ({exc})") from exc

    def knowledge_graph(self) -> KnowledgeGraph:
        """The editable graph of this generation, read through the descriptors opened with it."""
        if getattr(self, "_graph_index", None) is not None:
            return self._graph_index.kg
        assert self.records is not None
        try:
            return KnowledgeGraph.from_records(
                self.records.iter_records("entities"),
                self.records.iter_records("relations"),
                self.records.iter_records("chunks"),
                self.records.iter_records("documents") if self.records.has("documents") else (),
            )
        except IndexFormatError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexFormatError(self.path, f"graph records are inconsistent ({type(exc).__name__}: {exc})") from exc

    def to_index(self) -> GraphIndex:
        if getattr(self, "_graph_index", None) is not None:
            return self._graph_index
        if getattr(self, "records", None) is None:  # called while opening a generation without a snapshot
            kg = self._graph_from_files()
        else:
            kg = self.knowledge_graph()
        return GraphIndex(
            kg,
            self.tables["entities"],
            self.tables["facts"],
            self.tables["chunks"],
            self.embedding_model,
            self.type_prefix,
            self.report,
            kg.version,
            communities=getattr(self, "communities", None),
        )

    def _graph_from_files(self) -> KnowledgeGraph:
        gen_dir = self.path
        try:
            docs = gen_dir / "documents.jsonl"
            return KnowledgeGraph.from_records(
                F.read_jsonl(gen_dir / "entities.jsonl"),
                F.read_jsonl(gen_dir / "relations.jsonl"),
                F.read_jsonl(gen_dir / "chunks.jsonl"),
                F.read_jsonl(docs) if docs.is_file() else (),
            )
        except IndexFormatError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexFormatError(gen_dir, f"graph records are inconsistent ({type(exc).__name__}: {exc})") from exc


def _dict(value: Any, where: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise IndexFormatError(where, "expected a JSON object")
    return value


def read_report(path: Path) -> IngestReport:
    """A saved ingest report, checked: a file of the wrong shape is an error naming it."""
    try:
        return IngestReport.from_dict(_dict(F.read_json(path), path))
    except IndexFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise IndexFormatError(path, f"unreadable ingest report ({type(exc).__name__}: {exc})") from exc


class DirectoryBackend(VersionedBackend):
    """Serves queries from one generation of a directory index until :meth:`refresh` moves it on.

    Each query reads the snapshot current when it starts (``reader()``), so a refresh during a query never
    mixes two generations.
    """

    def __init__(self, store: DirectoryStore) -> None:
        self.store = store
        self._generation = store.open()
        self._current = SnapshotBackend(self._generation.snapshot())
        self._graph: KnowledgeGraph | None = None
        self._lock = threading.Lock()

    @property
    def generation(self) -> str:
        return self._generation.path.name

    def refresh(self) -> bool:
        """Move to the newest generation if there is one; returns whether anything changed. Cheap when
        nothing changed (one small file read)."""
        if self.store.current_generation().name == self.generation:
            return False
        with self._lock:
            fresh = self.store.open()
            backend = SnapshotBackend(fresh.snapshot())
            old = self._generation
            self._generation, self._current, self._graph = fresh, backend, None
        old.close()  # in-flight queries keep reading through their open descriptors
        return True

    def current(self) -> SnapshotBackend:
        return self._current

    @contextmanager
    def reader(self) -> Iterator[SnapshotBackend]:
        with self._current.query_view() as view:
            yield view

    def info(self) -> Any:
        return self._current.info()

    def warm_up(self) -> None:
        self._current.warm_up()

    def close(self) -> None:
        """Release this backend's reader lock, so clean-up may remove its generation once a newer one exists."""
        self._generation.close()

    def knowledge_graph(self) -> KnowledgeGraph:
        """The editable graph of the generation this backend serves (built once, on first use)."""
        with self._lock:
            if self._graph is None:
                self._graph = self._generation.knowledge_graph()
            return self._graph

    def to_index(self) -> GraphIndex:
        return self._generation.to_index()


def save_index(index: GraphIndex, path: str | Path) -> None:
    """Save ``index`` to a directory (atomic, under the writer lock; see :class:`DirectoryStore`)."""
    DirectoryStore(path).save(index)


def load_index(path: str | Path, *, verify: bool = True) -> GraphIndex:
    """Load an index directory written by :func:`save_index` as an editable :class:`GraphIndex`."""
    return DirectoryStore(path, verify=verify).load()
