"""Building an index (``kg_rag/index/build.py``): the async build matches the sync one."""

from __future__ import annotations

import asyncio

from kg_rag import abuild_index, build_index
from kg_rag.testing import BagOfWordsEmbeddings

from ..conftest import DEMO_CORPUS


def test_async_build_index_matches_sync_and_uses_aembed_documents():
    from kg_rag import KnowledgeGraph
    from kg_rag.ingest.extraction_file import import_extraction_file

    class AsyncCounting(BagOfWordsEmbeddings):
        calls = 0

        async def aembed_documents(self, texts):
            AsyncCounting.calls += 1
            return self.embed_documents(texts)

    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    sync = build_index(kg, BagOfWordsEmbeddings())
    emb = AsyncCounting()
    index = asyncio.run(abuild_index(kg, emb))
    assert AsyncCounting.calls == 3  # entities, facts, chunks
    for table in ("entities", "facts", "chunks"):
        assert getattr(index, table).ids == getattr(sync, table).ids
        assert (getattr(index, table).vectors == getattr(sync, table).vectors).all()


def test_a_chunk_is_embedded_with_its_title_once():
    """A corpus passage's title is embedded before its text; a Markdown document's first chunk opens with the title
    as its heading already, and the title written twice would outweigh the text."""
    from kg_rag.index.build import chunk_text
    from kg_rag.model import Chunk

    assert (
        chunk_text(Chunk("a", "He was born in Dover.", "d", {"title": "Ann Cole"})) == "Ann Cole\nHe was born in Dover."
    )
    headed = "# Ann  *Cole*\n\nShe was born in Dover."
    assert chunk_text(Chunk("b", headed, "d", {"title": "Ann Cole"})) == headed
    assert chunk_text(Chunk("c", "Born in Dover.", "d")) == "Born in Dover."
    linked = "# [Ann Cole](https://example.org/cole)\n\nBorn in Dover."
    assert chunk_text(Chunk("e", linked, "d", {"title": "Ann Cole"})) == linked
