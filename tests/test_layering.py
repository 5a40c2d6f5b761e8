"""The core does not depend on LangChain: with every ``langchain*`` module blocked, a graph is built, embedded,
saved, loaded, queried and formatted; only the LangChain bindings need LangChain."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CORE_WITHOUT_LANGCHAIN = textwrap.dedent(
    """
    import importlib.abc, sys, tempfile

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0].startswith(("langchain", "langgraph")):
                raise ImportError(f"blocked: {name}")
            return None

    sys.meta_path.insert(0, Block())
    import kg_rag
    from kg_rag import Chunk, KnowledgeGraph, QueryEngine, build_index, format_context, load_index, save_index
    import kg_rag.eval, kg_rag.store.postgres, kg_rag.ingest, kg_rag.testing.compliance
    from kg_rag.testing import BagOfWordsEmbeddings

    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "Directive 2023-07 supersedes Directive 2019-03.", "orders.md"))
    kg.add_relation("Directive 2023-07", "Directive 2019-03", "SUPERSEDES", chunk_id="c1")
    emb = BagOfWordsEmbeddings()
    folder = tempfile.mkdtemp()
    save_index(build_index(kg, emb), folder)
    engine = QueryEngine(kg_rag.open_store(folder).backend(), emb)
    text = format_context(engine.retrieve("What superseded Directive 2019-03?")).text
    assert "Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07" in text, text
    loaded = [m for m in sys.modules if m.split(".")[0].startswith(("langchain", "langgraph"))]
    assert not loaded, loaded
    try:
        kg_rag.EntityBasedKGRAG
    except ImportError as exc:
        assert "blocked" in str(exc)
    else:
        raise AssertionError("the LangChain binding imported without LangChain")
    print("core ok")
    """
)


def test_core_imports_and_runs_with_langchain_blocked():
    proc = subprocess.run([sys.executable, "-c", CORE_WITHOUT_LANGCHAIN], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "core ok"


def test_public_api_is_importable_from_the_top_level():
    import kg_rag

    for name in (
        "EntityBasedKGRAG",
        "KnowledgeGraph",
        "QueryParams",
        "build_answer_graph",
        "make_retriever_tool",
        "make_path_tool",
        "build_agent",
        "load_index",
        "save_index",
        "open_store",
        "build_index",
        "import_openie",
        "import_graph_documents",
        "import_extraction_file",
        "load_documents",
        "index_documents",
        "LLMExtractor",
        "PostgresStore",
        "DirectoryStore",
    ):
        assert getattr(kg_rag, name) is not None, name
        assert name in kg_rag.__all__, name
