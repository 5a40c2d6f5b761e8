"""Embeddings whose construction blocks as loading a real model does (``transformers`` reads the working folder
when imported): ``langgraph dev`` refuses such a call on its event loop with ``BlockingError``, so a graph
factory that builds the retriever there fails every run. Served through ``KG_RAG_EMBEDDINGS``."""

from __future__ import annotations

import os

from kg_rag.testing import BagOfWordsEmbeddings


class CwdBagOfWordsEmbeddings(BagOfWordsEmbeddings):
    """:class:`~kg_rag.testing.BagOfWordsEmbeddings` (same vectors) that calls ``os.getcwd()`` when made."""

    def __init__(self, size: int = 512) -> None:
        os.getcwd()  # a blocking call blockbuster watches for, as the local model's import makes
        super().__init__(size)


SPEC = "tests.serving.blocking_embeddings:CwdBagOfWordsEmbeddings"
