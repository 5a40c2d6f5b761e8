"""The graph explorer (``kg-rag serve IDX``): a local web page that draws what the retriever found for a
question as a typed, directed subgraph, and lets a user walk the graph entity by entity under the retriever's
own filters. :mod:`~kg_rag.explorer.views` builds the bounded views; :mod:`~kg_rag.explorer.app` serves them
(FastAPI + uvicorn; the drawing is vis-network, shipped by the ``pyvis`` package)."""

from kg_rag.explorer.views import MAX_PAGE_EDGES, MAX_VIEW_EDGES

__all__ = ["MAX_PAGE_EDGES", "MAX_VIEW_EDGES", "create_app", "serve"]


def __getattr__(name: str):
    if name in ("create_app", "serve"):
        from kg_rag.explorer import app

        return getattr(app, name)
    raise AttributeError(name)
