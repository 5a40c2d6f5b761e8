"""The query text: validation, and folding earlier turns of a conversation into it (seed 004)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_QUERY_CHARS = 8000
"""Queries longer than this are cut before embedding (the models truncate far earlier anyway)."""


def validate_query(query: Any) -> str:
    """The query as a clean string; ``ValueError`` when it is not text or has no content."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    cleaned = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in query).strip()
    if not cleaned:
        raise ValueError("query is empty: pass a question or keywords")
    return cleaned


def fold_history(query: str, history: Sequence[Any] | None, turns: int) -> str:
    """Fold the last ``turns`` previous *user* turns into the query text.

    ``history`` is a list whose items may be strings (taken as user turns), LangChain messages or
    ``{"role", "content"}`` dicts; anything else raises ``ValueError`` naming ``history``.
    """
    if history is None or turns <= 0:
        return query
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise ValueError(f"history must be a list of previous turns, got {type(history).__name__}")
    user_turns: list[str] = []
    for item in history:
        if isinstance(item, str):
            user_turns.append(item)
        elif isinstance(item, dict):
            if item.get("role") in ("user", "human"):
                user_turns.append(str(item.get("content", "")))
        elif hasattr(item, "type") and hasattr(item, "content"):
            if item.type == "human":
                user_turns.append(str(item.content))
        else:
            raise ValueError(f"history items must be strings, messages or role/content dicts, got {item!r}")
    kept = [t.strip() for t in user_turns[-turns:] if t and t.strip()]
    return "\n".join([*kept, query]) if kept else query
