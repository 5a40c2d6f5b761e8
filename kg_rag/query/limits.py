"""One set of limits and one entity-name matcher for every entry point: the Python API, ``kg-rag query``, the
explorer and the MCP tools.

Limits: a question is at most :data:`MAX_QUESTION_CHARS` characters (longer text is refused, not cut: a question,
not a document), an entity name at most :data:`MAX_NAME_CHARS`, a filter list at most :data:`MAX_FILTER_NAMES`
names. The servers also bound the walk (:data:`MAX_SERVED_HOPS`) and the passages (:data:`MAX_SERVED_K`) a
request may ask for, since each hop multiplies the work around hub entities.

Names: an entity is named by its canonical name (case, whitespace and punctuation folded). A name that matches
none is never replaced by a guess; it is reported as unknown with up to :data:`SUGGESTIONS` suggestions, the
entities whose embedding is nearest to the name's and at least :data:`SUGGEST_MIN_SIMILARITY` similar
(:func:`unknown_name`), so a misspelt name gets the same "did you mean" everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kg_rag.errors import InputError
from kg_rag.model.names import MAX_NAME_CHARS, canonical_key

MAX_QUESTION_CHARS = 2000
"""Longest question accepted."""
MAX_FILTER_NAMES = 50
"""Most names (entities or relation types) in one filter list of a served request."""
MAX_SERVED_HOPS = 4
"""Deepest walk a served request (explorer, MCP) may ask for."""
MAX_SERVED_K = 50
"""Most passages a served request may ask for."""
SUGGESTIONS = 3
"""Most entities suggested for an unknown name."""
SUGGEST_MIN_SIMILARITY = 0.5
"""How similar (cosine of the embeddings) a suggested entity's name must be to the name asked for."""

__all__ = [
    "MAX_FILTER_NAMES",
    "MAX_NAME_CHARS",
    "MAX_QUESTION_CHARS",
    "MAX_SERVED_HOPS",
    "MAX_SERVED_K",
    "SUGGESTIONS",
    "SUGGEST_MIN_SIMILARITY",
    "check_question_length",
    "suggest_entities",
    "unknown_name",
]


def check_question_length(text: str, what: str = "query") -> str:
    """``text`` when it is at most :data:`MAX_QUESTION_CHARS` long; ``ValueError`` (one line) otherwise."""
    if len(text) > MAX_QUESTION_CHARS:
        raise InputError(f"{what} is {len(text)} characters long; at most {MAX_QUESTION_CHARS} are accepted")
    return text


def suggest_entities(view: Any, name: str, embed: Callable[[str], Any] | None) -> list[str]:
    """The display names of the entities nearest to ``name`` by embedding (at most :data:`SUGGESTIONS`, each at
    least :data:`SUGGEST_MIN_SIMILARITY` similar); none without ``embed`` or entities."""
    if embed is None or not name.strip() or not view.info().entities:
        return []
    import numpy as np

    vector = np.asarray(embed(name[:MAX_NAME_CHARS]), dtype=np.float32).reshape(-1)
    hits = view.search("entities", vector, SUGGESTIONS, min_score=SUGGEST_MIN_SIMILARITY)
    if not len(hits):
        return []
    records = view.entities(np.asarray(hits.ids, dtype=np.int64))
    key = canonical_key(name)
    return [r.name for r in records if r is not None and r.key != key]


def unknown_name(name: str, suggestions: Iterable[str], where: str = "the index") -> str:
    """``no entity named 'X' in the index (did you mean 'A' or 'B'?)``: the one message for an unknown name."""
    found = [repr(s) for s in suggestions]
    if not found:
        return f"no entity named {name!r} in {where}"
    options = found[0] if len(found) == 1 else ", ".join(found[:-1]) + " or " + found[-1]
    return f"no entity named {name!r} in {where} (did you mean {options}?)"
