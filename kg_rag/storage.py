"""Persistence of a :class:`GraphIndex` in safe, inspectable files (JSON, JSONL, ``.npy``). No pickle.

Layout of an index directory::

    DIR/kg-rag-index.json        pointer: format, schema_version, current generation
    DIR/gen-<time>-<rand>/       one complete, immutable snapshot
        manifest.json            schema version, embedding model, stats, sha256 + size of every file
        chunks.jsonl entities.jsonl relations.jsonl ingest_report.json
        entities.npy facts.npy chunks.npy   (+ entities.ids.json ... ids and content hashes)

Saving writes a new generation, fsyncs it, then atomically replaces the pointer (``os.replace``); only then
are older generations removed. A save killed at any point leaves the previous index loadable. Every file is
checked against the manifest on load, and any problem raises :class:`IndexFormatError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kg_rag.errors import IndexFormatError
from kg_rag.graph import KnowledgeGraph
from kg_rag.index import GraphIndex, VectorTable
from kg_rag.ingest.report import IngestReport

logger = logging.getLogger(__name__)

FORMAT = "kg-rag-index"
SCHEMA_VERSION = 1
POINTER = "kg-rag-index.json"
VECTOR_TABLES = ("entities", "facts", "chunks")
QUERY_SNAPSHOT_FILES = (
    *(
        f"compiled.{name}.npy"
        for name in ("src", "dst", "type_id", "weight", "is_synonym", "incidence_rows", "incidence_cols", "fact_edge")
    ),
    "compiled.lists.json",
    *(f"{kind}.offsets.npy" for kind in ("entities", "relations", "chunks")),
    *(f"compiled.{kind}_lines.npy" for kind in ("entities", "relations", "chunks")),
)
"""Files that let a loaded index answer queries without building the NetworkX model (schema 1, optional)."""


class GraphStore(Protocol):
    """What every storage backend offers; ``tests/test_storage_contract.py`` runs against each one."""

    def save(self, index: GraphIndex) -> None: ...

    def load(self) -> GraphIndex: ...

    def exists(self) -> bool: ...


# ---------------------------------------------------------------------------- file helpers
def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and ``os.replace`` (never a half-written file)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    _fsync_dir(path.parent)


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]], key: str | None = None) -> tuple[np.ndarray, dict]:
    """Write one JSON object per line; returns the byte offset of every line (and ``row[key] -> line``)."""
    offsets: list[int] = []
    lines: dict[str, int] = {}
    position = 0
    with open(path, "wb") as fh:
        for row in rows:
            data = json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n"
            if key is not None:
                lines[str(row[key])] = len(offsets)
            offsets.append(position)
            fh.write(data)
            position += len(data)
        fh.flush()
        os.fsync(fh.fileno())
    return np.asarray(offsets, dtype=np.int64), lines


def _write_json(path: Path, obj: Any) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=1, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())


def _write_npy(path: Path, array: Any, dtype: Any = None) -> None:
    """Write an array as ``.npy`` (never pickled); ``dtype`` converts first (vectors are stored as float32)."""
    with open(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(array, dtype=dtype), allow_pickle=False)
        fh.flush()
        os.fsync(fh.fileno())


def _write_faiss(path: Path, index: Any) -> None:
    import faiss

    faiss.write_index(index, str(path))
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _read_faiss(path: Path) -> Any:
    import faiss

    from kg_rag.index import IVF_NPROBE

    try:
        index = faiss.read_index(str(path))
    except RuntimeError as exc:
        raise IndexFormatError(path, f"not a valid FAISS index ({str(exc).splitlines()[0]})") from exc
    if hasattr(index, "nprobe"):
        index.nprobe = IVF_NPROBE
    return index


MMAP_MIN_BYTES = 256 << 20
"""Vector files at least this large are not read into memory: their rows are read on demand with ``pread``
(:class:`kg_rag.rowfile.RowFile`). Queries touch such tables sparsely (a few dozen fact rows per search)."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError as exc:
        raise IndexFormatError(path, "file is missing") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexFormatError(path, f"corrupt JSON ({exc})") from exc


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError as exc:
        raise IndexFormatError(path, "file is missing") from exc
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise IndexFormatError(path, f"corrupt JSON on line {n} ({exc})") from exc
            if not isinstance(row, dict):
                raise IndexFormatError(path, f"line {n} is not a JSON object")
            yield row


def _read_plain_npy(path: Path) -> np.ndarray:
    """A numeric/bool array of any shape (compiled graph arrays); never unpickles."""
    try:
        array = np.load(path, allow_pickle=False)
    except FileNotFoundError as exc:
        raise IndexFormatError(path, "file is missing") from exc
    except (ValueError, OSError, EOFError) as exc:
        raise IndexFormatError(path, f"not a valid .npy array ({exc})") from exc
    if array.dtype.kind not in "biuf":
        raise IndexFormatError(path, f"unexpected array type {array.dtype}")
    return array


def _read_npy(path: Path) -> np.ndarray:
    try:
        if path.stat().st_size >= MMAP_MIN_BYTES:
            from kg_rag.rowfile import RowFile

            rows = RowFile.open(path)
            if rows.dtype != np.float32:
                raise IndexFormatError(path, f"expected a 2-D float32 array, found {rows.dtype} {rows.shape}")
            return rows  # type: ignore[return-value]
        array = np.load(path, allow_pickle=False)
    except FileNotFoundError as exc:
        raise IndexFormatError(path, "file is missing") from exc
    except (ValueError, OSError, EOFError) as exc:
        raise IndexFormatError(path, f"not a valid .npy array ({exc})") from exc
    if array.dtype != np.float32 or array.ndim != 2:
        raise IndexFormatError(path, f"expected a 2-D float32 array, found {array.dtype} {array.shape}")
    return array


# ---------------------------------------------------------------------------- the backend
class DirectoryStore:
    """Stores an index in a local directory (see the module docstring for the layout and guarantees)."""

    def __init__(self, path: str | Path, *, verify: bool = True, keep_generations: int = 1, lazy: bool = True) -> None:
        self.path = Path(path)
        self.verify = verify
        self.lazy = lazy
        """Serve queries from the saved query snapshot; the editable graph is built on first use."""
        if keep_generations < 1:
            raise ValueError("keep_generations must be >= 1")
        self.keep_generations = keep_generations

    @property
    def pointer(self) -> Path:
        return self.path / POINTER

    def exists(self) -> bool:
        return self.pointer.is_file()

    # ------------------------------------------------------------------- save
    def save(self, index: GraphIndex) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"{self.path}: exists and is not a directory")
        if self.path.is_dir() and any(self.path.iterdir()) and not self.exists():
            raise ValueError(f"{self.path}: directory is not empty and holds no kg-rag index; refusing to write")
        self.path.mkdir(parents=True, exist_ok=True)
        gen = f"gen-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        tmp_dir = self.path / f".{gen}.partial"
        tmp_dir.mkdir()
        try:
            kg = index.kg
            with kg._lock:
                chunk_off, chunk_lines = _write_jsonl(tmp_dir / "chunks.jsonl", kg.chunk_records(), "id")
                entity_off, entity_lines = _write_jsonl(tmp_dir / "entities.jsonl", kg.entity_records(), "key")
                rel_off, rel_lines = _write_jsonl(tmp_dir / "relations.jsonl", kg.relation_records(), "id")
                stats = kg.stats()
                compiled = self._compiled_for(index)
            # the query snapshot: compiled arrays plus record offsets, so loading needs no NetworkX
            arrays, lists = compiled.to_arrays()
            for name, array in arrays.items():
                _write_npy(tmp_dir / f"compiled.{name}.npy", array)
            _write_json(tmp_dir / "compiled.lists.json", lists)
            for name, offsets, lines, ids in (
                ("entities", entity_off, entity_lines, lists["node_ids"]),
                ("relations", rel_off, rel_lines, lists["relation_ids"]),
                ("chunks", chunk_off, chunk_lines, lists["chunk_ids"]),
            ):
                _write_npy(tmp_dir / f"{name}.offsets.npy", offsets)
                _write_npy(
                    tmp_dir / f"compiled.{name}_lines.npy", np.asarray([lines.get(i, -1) for i in ids], dtype=np.int64)
                )
            _write_json(tmp_dir / "ingest_report.json", index.report.to_dict())
            for name in VECTOR_TABLES:
                table: VectorTable = getattr(index, name)
                _write_npy(tmp_dir / f"{name}.npy", table.vectors, np.float32)
                _write_json(tmp_dir / f"{name}.ids.json", {"ids": table.ids, "hashes": table.hashes})
                if not table.exact:  # large tables: persist the trained inverted-file index too
                    _write_faiss(tmp_dir / f"{name}.faiss", table.faiss_index())
            files = {p.name: {"sha256": _sha256(p), "bytes": p.stat().st_size} for p in sorted(tmp_dir.iterdir())}
            manifest = {
                "format": FORMAT,
                "schema_version": SCHEMA_VERSION,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "embedding": {"model": index.embedding_model, "dim": index.dim, "type_prefix": index.type_prefix},
                "stats": stats,
                "files": files,
            }
            _write_json(tmp_dir / "manifest.json", manifest)
            _fsync_dir(tmp_dir)
            os.replace(tmp_dir, self.path / gen)
            _fsync_dir(self.path)
        except BaseException:
            shutil.rmtree(tmp_dir, ignore_errors=True)
            raise
        pointer = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "generation": gen}
        atomic_write_bytes(self.pointer, json.dumps(pointer, indent=1).encode())
        self._prune(keep=gen)
        logger.info("saved index to %s (%s)", self.path, gen)

    @staticmethod
    def _compiled_for(index: GraphIndex) -> Any:
        from kg_rag.compiled import CompiledGraph

        if index.compiled is not None and not index.stale:
            return index.compiled
        return CompiledGraph(index)

    def _prune(self, keep: str) -> None:
        gens = sorted(
            (p for p in self.path.iterdir() if p.is_dir() and p.name.startswith("gen-") and p.name != keep),
            key=lambda p: p.name,
        )
        for old in gens[: max(0, len(gens) - (self.keep_generations - 1))]:
            shutil.rmtree(old, ignore_errors=True)
        for partial in self.path.glob(".gen-*.partial"):
            shutil.rmtree(partial, ignore_errors=True)

    # ------------------------------------------------------------------- load
    def _generation(self) -> Path:
        if not self.path.is_dir():
            raise IndexFormatError(self.path, "no such index directory")
        pointer = _read_json(self.pointer)
        if not isinstance(pointer, dict) or pointer.get("format") != FORMAT:
            raise IndexFormatError(self.pointer, "not a kg-rag index pointer file")
        self._check_version(self.pointer, pointer.get("schema_version"))
        gen = pointer.get("generation")
        if not isinstance(gen, str) or not gen.startswith("gen-") or "/" in gen or "\\" in gen or ".." in gen:
            raise IndexFormatError(self.pointer, f"invalid generation name {gen!r}")
        gen_dir = self.path / gen
        if not gen_dir.is_dir():
            raise IndexFormatError(gen_dir, "generation directory named by the pointer is missing")
        return gen_dir

    @staticmethod
    def _check_version(path: Path, version: Any) -> None:
        if not isinstance(version, int):
            raise IndexFormatError(path, f"missing or invalid schema_version {version!r}")
        if version > SCHEMA_VERSION:
            raise IndexFormatError(
                path, f"schema version {version} is newer than this kg-rag supports ({SCHEMA_VERSION}); upgrade kg-rag"
            )
        if version < 1:
            raise IndexFormatError(path, f"unsupported schema version {version}")

    def manifest(self) -> dict[str, Any]:
        gen_dir = self._generation()
        manifest = _read_json(gen_dir / "manifest.json")
        if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
            raise IndexFormatError(gen_dir / "manifest.json", "manifest has no file list")
        self._check_version(gen_dir / "manifest.json", manifest.get("schema_version"))
        return manifest

    def _check_file(self, gen_dir: Path, files: dict[str, Any], name: str) -> None:
        path = gen_dir / name
        if name not in files:
            raise IndexFormatError(gen_dir / "manifest.json", f"manifest does not list {name}")
        if not path.is_file():
            raise IndexFormatError(path, "file is missing")
        if path.stat().st_size != files[name].get("bytes"):
            raise IndexFormatError(path, "size differs from the manifest (truncated or modified)")
        if self.verify and _sha256(path) != files[name].get("sha256"):
            raise IndexFormatError(path, "sha256 differs from the manifest (corrupt or modified)")

    def load(self) -> GraphIndex:
        gen_dir = self._generation()
        manifest = self.manifest()
        files = manifest["files"]
        expected = {"chunks.jsonl", "entities.jsonl", "relations.jsonl", "ingest_report.json"}
        expected |= {f"{n}.npy" for n in VECTOR_TABLES} | {f"{n}.ids.json" for n in VECTOR_TABLES}
        for name in sorted(expected):
            self._check_file(gen_dir, files, name)
        optional = {f"{n}.faiss" for n in VECTOR_TABLES} | set(QUERY_SNAPSHOT_FILES)
        unexpected = sorted(p.name for p in gen_dir.iterdir() if p.name not in expected | optional | {"manifest.json"})
        if unexpected:
            logger.warning("%s: ignoring files not written by kg-rag: %s", gen_dir, ", ".join(unexpected))

        def build_graph() -> KnowledgeGraph:
            try:
                return KnowledgeGraph.from_records(
                    _read_jsonl(gen_dir / "entities.jsonl"),
                    _read_jsonl(gen_dir / "relations.jsonl"),
                    _read_jsonl(gen_dir / "chunks.jsonl"),
                )
            except IndexFormatError:
                raise
            except (KeyError, TypeError, ValueError) as exc:
                raise IndexFormatError(
                    gen_dir, f"graph records are inconsistent ({type(exc).__name__}: {exc})"
                ) from exc

        snapshot = all(name in files for name in QUERY_SNAPSHOT_FILES) and self.lazy
        compiled = records = None
        if snapshot:
            from kg_rag.records import LazyKnowledgeGraph

            compiled, records = self._load_snapshot(gen_dir, files)
            kg: Any = LazyKnowledgeGraph(build_graph)
        else:
            kg = build_graph()
        tables = {}
        for name in VECTOR_TABLES:
            ids = _read_json(gen_dir / f"{name}.ids.json")
            if (
                not isinstance(ids, dict)
                or not isinstance(ids.get("ids"), list)
                or not isinstance(ids.get("hashes"), list)
            ):
                raise IndexFormatError(gen_dir / f"{name}.ids.json", 'expected {"ids": [...], "hashes": [...]}')
            try:
                tables[name] = VectorTable(
                    [str(i) for i in ids["ids"]], [str(h) for h in ids["hashes"]], _read_npy(gen_dir / f"{name}.npy")
                )
            except ValueError as exc:
                if isinstance(exc, IndexFormatError):
                    raise
                raise IndexFormatError(gen_dir / f"{name}.npy", str(exc)) from exc
            faiss_file = gen_dir / f"{name}.faiss"
            if faiss_file.name in files:
                self._check_file(gen_dir, files, faiss_file.name)
                try:
                    tables[name].set_faiss_index(_read_faiss(faiss_file))
                except ValueError as exc:
                    if isinstance(exc, IndexFormatError):
                        raise
                    raise IndexFormatError(faiss_file, str(exc)) from exc
        report = IngestReport.from_dict(_read_json(gen_dir / "ingest_report.json"))
        emb = manifest.get("embedding") or {}
        if compiled is not None and (
            compiled.n_nodes != len(tables["entities"]) or len(compiled.fact_edge) != len(tables["facts"])
        ):
            raise IndexFormatError(gen_dir / "compiled.lists.json", "compiled graph does not match the vectors")
        return GraphIndex(
            kg,
            tables["entities"],
            tables["facts"],
            tables["chunks"],
            str(emb.get("model", "")),
            bool(emb.get("type_prefix", True)),
            report,
            kg.version,
            compiled=compiled,
            records=records,
            saved_stats=manifest.get("stats") if isinstance(manifest.get("stats"), dict) else None,
        )

    def _load_snapshot(self, gen_dir: Path, files: dict[str, Any]) -> tuple[Any, Any]:
        from kg_rag.compiled import CompiledGraph
        from kg_rag.records import FileRecords

        for name in QUERY_SNAPSHOT_FILES:
            self._check_file(gen_dir, files, name)
        arrays = {name: _read_plain_npy(gen_dir / f"compiled.{name}.npy") for name in CompiledGraph.ARRAYS}
        lists = _read_json(gen_dir / "compiled.lists.json")
        if not isinstance(lists, dict):
            raise IndexFormatError(gen_dir / "compiled.lists.json", "expected a JSON object of lists")
        try:
            compiled = CompiledGraph.from_arrays(arrays, lists)
        except (ValueError, TypeError) as exc:
            raise IndexFormatError(gen_dir / "compiled.lists.json", f"compiled graph is inconsistent ({exc})") from exc
        kinds = ("entities", "relations", "chunks")
        offsets = {k: _read_plain_npy(gen_dir / f"{k}.offsets.npy") for k in kinds}
        lines = {k: _read_plain_npy(gen_dir / f"compiled.{k}_lines.npy") for k in kinds}
        expected = {"entities": compiled.n_nodes, "relations": compiled.n_edges, "chunks": compiled.n_chunks}
        for k in kinds:
            if len(lines[k]) != expected[k] or (lines[k].size and lines[k].max() >= len(offsets[k])):
                raise IndexFormatError(gen_dir / f"compiled.{k}_lines.npy", "does not match the records")
        records = FileRecords({k: gen_dir / f"{k}.jsonl" for k in kinds}, offsets, lines)
        return compiled, records


def save_index(index: GraphIndex, path: str | Path) -> None:
    """Save ``index`` to a directory (atomic; see :class:`DirectoryStore`)."""
    DirectoryStore(path).save(index)


def load_index(path: str | Path, *, verify: bool = True, lazy: bool = True) -> GraphIndex:
    """Load an index directory written by :func:`save_index`.

    With ``lazy`` (the default) queries run from the saved compiled arrays and read records on demand; the
    editable :class:`KnowledgeGraph` is built the first time ``index.kg`` is used for anything else.
    """
    return DirectoryStore(path, verify=verify, lazy=lazy).load()
