"""``kg-rag index`` with the NLP extractor: a typed, directed graph with no chat model, from files (``--docs``) and
from a HippoRAG corpus without OpenIE triples (``--corpus``); what happens with no chat model configured."""

from __future__ import annotations

import json

import pytest

from ..cli_support import one_line_error, run

FAKE = ["--embeddings", "fake:16", "-q"]
CORPUS = [
    {"title": "Hank Snow", "text": "Hank Snow was born in Brooklyn, Nova Scotia. He moved to Nashville in 1949."},
    {"title": "Hello Love (song)", "text": '"Hello Love" is a 1974 single by Hank Snow. It topped the charts.'},
]


@pytest.fixture(autouse=True)
def _needs_spacy():
    from kg_rag.errors import ConfigurationError
    from kg_rag.ingest.nlp import load_pipeline

    try:
        load_pipeline()
    except ConfigurationError as exc:  # pragma: no cover - make test installs the nlp extra
        pytest.skip(f"the NLP extractor cannot run here: {exc}")


def _graph(capsys, idx):
    from kg_rag.store import open_store

    kg = open_store(str(idx)).load().kg
    return {
        (kg.graph.nodes[r.source]["name"], r.relation_type, kg.graph.nodes[r.target]["name"]) for r in kg.relations()
    }


def test_corpus_without_openie_extracts_a_typed_directed_graph(tmp_path, capsys):
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(CORPUS))
    idx = tmp_path / "idx"
    code, out, err = run(capsys, "index", "--corpus", str(corpus), "--extractor", "nlp", "--out", str(idx), *FAKE)
    assert code == 0, err
    graph = _graph(capsys, idx)
    assert ("Hank Snow", "BORN_IN", "Brooklyn") in graph and ("Hank Snow", "MOVED_TO", "Nashville") in graph
    assert ("Hello Love", "SINGLE_BY", "Hank Snow") in graph and ("Hank Snow", "SINGLE_BY", "Hello Love") not in graph
    # the same corpus again: nothing is extracted again; an edited passage replaces its old version
    code, _, _ = run(capsys, "index", "--corpus", str(corpus), "--update", "--out", str(idx), *FAKE)
    assert code == 0 and _graph(capsys, idx) == graph
    CORPUS_EDITED = [CORPUS[0], {"title": "Hello Love (song)", "text": '"Hello Love" was written by Betty Foley.'}]
    corpus.write_text(json.dumps(CORPUS_EDITED))
    code, _, _ = run(capsys, "index", "--corpus", str(corpus), "--update", "--out", str(idx), *FAKE)
    graph = _graph(capsys, idx)
    assert ("Hello Love", "WRITTEN_BY", "Betty Foley") in graph and (
        "Hello Love",
        "SINGLE_BY",
        "Hank Snow",
    ) not in graph


def test_docs_with_no_chat_model_use_the_nlp_extractor_with_a_notice(tmp_path, capsys, no_chat_model):
    docs = tmp_path / "policies"
    docs.mkdir()
    (docs / "a.md").write_text("Directive 2023-07 supersedes Directive 2019-03. Lars Eriksen reports to Priya Nair.\n")
    idx = tmp_path / "idx"
    code, out, err = run(capsys, "index", "--docs", str(docs), "--out", str(idx), *FAKE)
    assert code == 0, err
    assert "note: no chat model configured (OPENAI_API_KEY): extracting with the NLP extractor" in out
    assert "--extractor llm" in out and "--no-extract" in out
    graph = _graph(capsys, idx)
    assert ("Directive 2023-07", "SUPERSEDES", "Directive 2019-03") in graph
    assert ("Lars Eriksen", "REPORTS_TO", "Priya Nair") in graph
    code, out, _ = run(capsys, "index", "--docs", str(docs), "--out", str(idx), "--dry-run")
    assert code == 0 and "0 changed, 1 unchanged" in out and "no chat calls" in out


def test_a_missing_pipeline_is_one_line(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("Lars Eriksen reports to Priya Nair.")
    argv = ["index", "--docs", str(tmp_path), "--out", str(tmp_path / "x"), "--extractor", "nlp"]
    err = one_line_error(capsys, [*argv, "--spacy-model", "en_core_web_nonexistent", *FAKE], "en_core_web_nonexistent")
    assert "pip install 'kg-rag[nlp]'" in err
    assert not (tmp_path / "x").exists()


def test_no_chat_model_and_no_spacy_names_every_route(tmp_path, capsys, no_chat_model, monkeypatch):
    from kg_rag.ingest.nlp import loading

    (tmp_path / "a.txt").write_text("Lars Eriksen reports to Priya Nair.")
    monkeypatch.setattr(loading.importlib.util, "find_spec", lambda name: None)
    loading.load_pipeline.cache_clear()
    try:
        err = one_line_error(capsys, ["index", "--docs", str(tmp_path), "--out", str(tmp_path / "x"), *FAKE], "")
    finally:
        loading.load_pipeline.cache_clear()
    for route in ("--extractor nlp", "--extractor llm", "--extractions FILE", "--no-extract", "pip install"):
        assert route in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--openie", "{o}", "--corpus", "{c}", "--extractor", "nlp"], "--extractor is for --docs and for --corpus"),
        (["--corpus", "{c}", "--extractor", "nlp", "--no-extract"], "--extractor has no effect with --no-extract"),
        (["--docs", "{d}", "--extractor", "nlp", "--schema", "{s}"], "--schema is for the LLM extractor"),
    ],
)
def test_flags_that_mean_nothing_together_are_refused(tmp_path, capsys, extra, message):
    (tmp_path / "c.json").write_text(json.dumps(CORPUS))
    (tmp_path / "o.json").write_text(json.dumps({"docs": []}))
    (tmp_path / "s.yaml").write_text("entity_types: [PERSON]\n")
    subs = {k: str(tmp_path / v) for k, v in {"{o}": "o.json", "{c}": "c.json", "{s}": "s.yaml", "{d}": "."}.items()}
    argv = ["index", *[subs.get(a, a) for a in extra], "--out", str(tmp_path / "x"), *FAKE]
    one_line_error(capsys, argv, message)
