"""One ``IndexMeta`` for both stores, validated on read before anything is sized from it (issue 27 §3).

Two crafted indexes got through before: a manifest claiming a huge vector dimension (``query`` and ``index``
were killed for memory after 80 s) and a community report of the wrong type (an ``AttributeError`` traceback).
Both now end in one line on stderr, for a directory and for PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.errors import IndexFormatError
from kg_rag.index.meta import MAX_DIM, IndexMeta

HUGE_MODEL = "DeterministicFakeEmbedding:2000000000"


def one_line_error(capsys, argv: list[str], *messages: str) -> None:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("kg-rag: error: ") and all(m in err for m in messages), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.fixture
def index_dir(tmp_path, bow_embeddings) -> Path:
    """A small directory index with communities (extractive reports)."""
    from kg_rag.communities import refresh_communities
    from kg_rag.index.build import build_index
    from kg_rag.store import DirectoryStore
    from kg_rag.testing.compliance import reference_graph

    index = build_index(reference_graph(), bow_embeddings)
    index.communities, _ = refresh_communities(index.kg, max_cluster_size=4)
    DirectoryStore(tmp_path / "idx").save(index)
    return tmp_path / "idx"


def rewrite(idx: Path, name: str, edit) -> None:
    """Edit one file of the current generation as a forger would: the manifest's size and sha256 follow."""
    gen = next(idx.glob("gen-*"))
    path = gen / name
    data = edit(json.loads(path.read_text()))
    path.write_text(json.dumps(data))
    if name != "manifest.json":
        manifest = json.loads((gen / "manifest.json").read_text())
        manifest["files"][name] = {
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "bytes": path.stat().st_size,
        }
        (gen / "manifest.json").write_text(json.dumps(manifest))


def claim_model(manifest: dict) -> dict:
    manifest["embedding"]["model"] = HUGE_MODEL
    return manifest


def claim_dim(manifest: dict) -> dict:
    manifest["embedding"]["dim"] = 10**9
    return manifest


def wrong_report(data: dict) -> dict:
    data["communities"][0]["findings"] = ["a finding that should be an object"]
    return data


@pytest.mark.parametrize("craft", [claim_model, claim_dim], ids=["model-claims-huge-dim", "dim-field-huge"])
@pytest.mark.parametrize("command", ["query", "index", "stats"])
def test_a_manifest_claiming_a_huge_dimension_is_one_line(index_dir, tmp_path, capsys, craft, command):
    rewrite(index_dir, "manifest.json", craft)
    argv = {
        "query": ["query", str(index_dir), "Who drafted Memo A?", "--no-answer"],
        "index": ["index", "--extractions", str(_one_document(tmp_path)), "--out", str(index_dir), "--update", "-q"],
        "stats": ["stats", str(index_dir)],
    }[command]
    one_line_error(capsys, argv, "manifest.json", "dimension")


def test_a_community_report_of_the_wrong_type_is_one_line(index_dir, capsys):
    rewrite(index_dir, "communities.json", wrong_report)
    message = "findings must be a list of objects"
    one_line_error(capsys, ["global", str(index_dir), "What is this about?"], "communities.json", message)
    one_line_error(capsys, ["communities", str(index_dir), "--extractive"], "communities.json", message)


def _one_document(tmp_path: Path) -> Path:
    doc = {"id": "extra", "text": "Alpha precedes Beta.", "extraction": {"entities": [], "relations": []}}
    path = tmp_path / "extra.json"
    path.write_text(json.dumps({"format": "kg-rag-extractions", "documents": [doc]}))
    return path


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("embedding", {"model": "m", "dim": -1, "type_prefix": True}, "vector dimension"),
        ("embedding", {"model": "m", "dim": MAX_DIM + 1, "type_prefix": True}, "vector dimension"),
        ("embedding", {"model": "m", "dim": "384", "type_prefix": True}, "vector dimension"),
        ("embedding", {"model": ["m"], "dim": 3, "type_prefix": True}, "embedding model"),
        ("embedding", {"model": "m", "dim": 3, "type_prefix": "yes"}, "type_prefix"),
        ("embedding", "not an object", "embedding must be a JSON object"),
        ("stats", {"chunks": -1}, "chunks must be a count"),
        ("stats", {"entities": 2**41}, "entities must be a count"),
        ("stats", {"relation_types": {"A": "many"}}, "relation_types"),
        ("stats", {"communities": 1.5}, "communities must be a count"),
        ("schema_version", 99, "newer than this kg-rag"),
        ("schema_version", True, "invalid schema_version"),
    ],
)
def test_index_meta_rejects_wrong_types_and_ranges(field, value, message):
    data = {"schema_version": 1, "embedding": {"model": "m", "dim": 3, "type_prefix": True}, "stats": {}}
    data[field] = value
    with pytest.raises(IndexFormatError, match=message):
        IndexMeta.parse(data, "manifest.json", supported=2)


def test_index_meta_round_trips_and_derives_stats_and_info(bow_embeddings):
    from kg_rag.index.build import build_index
    from kg_rag.testing.compliance import reference_graph

    index = build_index(reference_graph(), bow_embeddings)
    meta = IndexMeta.of_index(index, 2, version="v1")
    again = IndexMeta.parse(meta.to_dict(), "x", supported=2, version="v1")
    assert again == meta
    stats = again.stats(index.report)
    assert stats["entities"] == len(index.kg) and stats["dim"] == index.dim and stats["generation"] == "v1"
    info = again.info(backend="test")
    assert (info.entities, info.chunks, info.dim, info.version) == (
        len(index.kg),
        len(index.kg.chunks),
        index.dim,
        "v1",
    )
    assert info.extra["backend"] == "test" and info.extra["synonym_links"] == 4


# ------------------------------------------------------------------------------------------ PostgreSQL
@pytest.fixture
def pg_index(pg_server, bow_embeddings):
    from kg_rag.communities import refresh_communities
    from kg_rag.index.build import build_index
    from kg_rag.store.postgres import PostgresStore
    from kg_rag.testing.compliance import reference_graph

    store = PostgresStore(f"{pg_server}&kg_schema=t_{uuid.uuid4().hex[:10]}")
    index = build_index(reference_graph(), bow_embeddings)
    index.communities, _ = refresh_communities(index.kg, max_cluster_size=4)
    store.save(index)
    yield store
    store.drop()


def _sql(store, sql: str, *params) -> None:
    with store.connect(autocommit=True) as conn:
        conn.execute(sql.format(s=store.schema), params)


def test_postgres_meta_claiming_a_huge_dimension_is_one_line(pg_index, capsys):
    _sql(
        pg_index,
        "UPDATE {s}.meta SET value = jsonb_set(value, '{{model}}', to_jsonb(%s::text)) WHERE key = 'embedding'",
        HUGE_MODEL,
    )
    one_line_error(capsys, ["query", pg_index.location, "Who drafted Memo A?", "--no-answer"], "meta", "dimension")
    one_line_error(capsys, ["stats", pg_index.location], "meta", "dimension")


def test_postgres_community_report_of_the_wrong_type_is_one_line(pg_index, capsys):
    _sql(pg_index, "UPDATE {s}.communities SET record = jsonb_set(record, '{{findings}}', '[\"not an object\"]')")
    one_line_error(
        capsys,
        ["global", pg_index.location, "What is this about?"],
        "communities",
        "findings must be a list of objects",
    )
