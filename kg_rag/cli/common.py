"""Shared pieces of the ``kg-rag`` commands: the one-line error type and small helpers."""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kg_rag.errors import KGRagError

logger = logging.getLogger("kg_rag.cli")

CHAT_MODEL_HELP = (
    "chat model: provider:model of LangChain's init_chat_model (openai:gpt-4o-mini, ollama:qwen2.5, anthropic:...), "
    "module:attr, or a model name of the OpenAI-compatible server at $OPENAI_BASE_URL (default: $KG_RAG_CHAT_MODEL, "
    "else gpt-4o-mini)"
)


class CLIError(KGRagError):
    """A user-facing error: printed as one line, exit status 2."""


def one_line(exc: BaseException) -> str:
    """The first line of an error; for a pydantic validation error, the message of its first error."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and type(exc).__name__ == "ValidationError":
        try:
            first = errors()[0]
            return str(first.get("msg", exc)).removeprefix("Value error, ").splitlines()[0]
        except (IndexError, TypeError, AttributeError):
            pass
    return str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__


def check_location(location: str) -> None:
    """An index location a command can open: an empty one (e.g. an unset shell variable) is not the current
    folder, and a file or a missing path is named as such."""
    from kg_rag.store import is_registered

    if not location.strip():
        raise CLIError("the index path is empty")
    if is_registered(location):  # a database (or another registered store) checks itself when opened
        return
    path = Path(location)
    if path.exists() and not path.is_dir():
        raise CLIError(f"{location}: not a directory (an index is a folder written by `kg-rag index`)")
    if not path.is_dir():
        raise CLIError(f"{location}: no such index directory")


def existing_store(location: str, **kwargs: Any):
    """The store at ``location``, which must hold an index (one-line errors otherwise)."""
    from kg_rag.store import open_store

    check_location(location)
    store = open_store(location, **kwargs)
    if not store.exists():
        raise CLIError(f"{location}: no kg-rag index there")
    return store


def stats_payload(stats: dict[str, Any]) -> dict[str, Any]:
    keys = ("chunks", "documents", "entities", "relations", "relation_types", "skipped")
    payload = {k: stats.get(k) for k in keys}
    payload.update({k: stats.get(k) for k in ("synonym_links", "extraction_failures", "embedding_model", "dim")})
    payload["communities"] = stats.get("communities")
    payload["stale_communities"] = stats.get("stale_communities")
    types = dict(sorted((payload["relation_types"] or {}).items(), key=lambda kv: (-kv[1], kv[0])))
    payload["relation_types"] = types
    share = typed_share(types)
    payload["typed_share"] = round(share, 4) if share is not None else None
    payload["type_vocabulary"] = type_vocabulary(types)
    return payload


def counted(n: Any, noun: str, plural: str | None = None) -> str:
    """``1 chunk``, ``2 chunks``, ``1 entity``, ``3 entities``: counts as a person would write them."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def typed_share(types: dict[str, int]) -> float | None:
    """Share of relations whose type names a relation — not ``RELATED`` and not a bare function word such as
    ``IN`` (:func:`~kg_rag.model.relation_types.names_relation`); None for an index without relations."""
    from kg_rag.model.predicates import names_relation

    total = sum(types.values())
    return sum(n for t, n in types.items() if names_relation(t)) / total if total else None


def type_vocabulary(types: dict[str, int]) -> int:
    """Relation types besides ``RELATED``: what a user can pick with ``--edge-types``."""
    return len([t for t in types if t != "RELATED"])


def split_list(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def count_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer no smaller than ``low`` (so ``--k 0`` is refused by the flag's name)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    parse.__name__ = "count"
    return parse


def seconds(text: str) -> float:
    """An argparse type for ``--wait``: a finite number of seconds, zero or more (``-5`` is refused by the flag's
    name instead of behaving like ``0``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {text}")
    return value


def index_embeddings(spec: str | None, stored: str, where: str) -> object:
    """The index's own embedding model (or ``--embeddings`` when it names the same one): editing an index must
    not silently re-embed it with another model."""
    from kg_rag.langchain.embeddings import embeddings_for_index, require_index_model

    embeddings = embeddings_for_index(spec, stored, where)
    require_index_model(embeddings, stored, where)
    return embeddings


def query_embeddings(spec: str | None, stored: str, where: str) -> Any:
    """The embeddings to query an index with: ``spec`` when given, else the model the index records. The local
    MiniLM model is made without LangChain (:class:`~kg_rag.index.minilm.MiniLMEmbeddings`), so a one-off command
    does not import it; any other model comes from :mod:`kg_rag.langchain.embeddings`."""
    from kg_rag.index.embeddings import LOCAL_MODEL_LABEL, LOCAL_MODEL_MISSING

    if spec == "local" or (spec is None and stored in ("", LOCAL_MODEL_LABEL)):
        from kg_rag.errors import ConfigurationError
        from kg_rag.index.minilm import MiniLMEmbeddings

        try:
            return MiniLMEmbeddings()
        except ImportError as exc:
            raise ConfigurationError(LOCAL_MODEL_MISSING) from exc
    from kg_rag.langchain.embeddings import embeddings_for_index

    return embeddings_for_index(spec, stored, where)


def add_filter_arguments(p: argparse.ArgumentParser) -> None:
    """``--doc`` and ``--filter``: the query-time document filter, for every command that retrieves."""
    p.add_argument(
        "--doc",
        action="append",
        help="only these documents (repeatable; ids as `kg-rag stats IDX --docs` lists them)",
    )
    p.add_argument(
        "--filter",
        default=None,
        help='only chunks whose metadata match, as JSON: \'{"source": "policies/a.md"}\', a list for any of',
    )


def document_filter(args: argparse.Namespace, *, parse: bool = True) -> dict[str, Any]:
    """``--filter`` (a JSON object) and ``--doc`` ids as one document filter, checked before the index opens
    (see :func:`add_filter_arguments`); ``parse=False`` checks its shape only (no index code is imported)."""
    doc_filter: dict[str, Any] = {}
    if args.filter is not None:
        try:
            doc_filter = json.loads(args.filter)
        except json.JSONDecodeError as exc:
            raise CLIError(f"--filter is not JSON ({exc.msg} at character {exc.pos})") from None
        if not isinstance(doc_filter, dict):
            raise CLIError(f'--filter must be a JSON object such as \'{{"doc_id": ["a.md"]}}\', got {args.filter}')
    if args.doc:
        if "doc_id" in doc_filter:
            raise CLIError("give document ids either with --doc or as doc_id in --filter, not both")
        doc_filter["doc_id"] = list(args.doc)
    if doc_filter and parse:
        from kg_rag.store.scope import DocumentFilter

        try:
            DocumentFilter.parse(doc_filter)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
    return doc_filter


_PLAIN_ID = re.compile(r"[\w.:/#@+=-]{1,300}")


def shown_id(value: object) -> str:
    """An id (of a chunk, document or community) as a terminal line shows it: as it is when it is one plain token,
    else in double quotes with line breaks and every other unprintable character escaped, so a document id can
    neither break the line nor pass for output of its own (``[9] chunk=FORGED doc=official``)."""
    text = str(value)
    if _PLAIN_ID.fullmatch(text):
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    if quoted.isprintable():
        return quoted
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in quoted)
