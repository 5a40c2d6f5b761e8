"""LangChain's own standard retriever integration suite (sync and async) against EntityBasedKGRAG."""

from __future__ import annotations

from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from kg_rag import EntityBasedKGRAG, KnowledgeGraph, build_index
from kg_rag.ingest.extraction_file import import_extraction_file

from ..conftest import DEMO_CORPUS, BagOfWordsEmbeddings

_EMB = BagOfWordsEmbeddings()
_KG = KnowledgeGraph()
import_extraction_file(_KG, DEMO_CORPUS)
_INDEX = build_index(_KG, _EMB)


class TestEntityBasedKGRAGStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[EntityBasedKGRAG]:
        return EntityBasedKGRAG

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"index": _INDEX, "embeddings": _EMB}

    @property
    def retriever_query_example(self) -> str:
        return "Which directive superseded Directive 2019-03?"
