"""The query text: validation, and the earlier turns of a conversation (seed 004).

A follow-up question is retrieved for as itself, with the earlier turns as context: the query vector is the
question's plus half the earlier turns' (:data:`HISTORY_WEIGHT`), and names the earlier turns mention may seed
the search without counting as named by the question. Folding the turns into one text, as releases before did,
let an unrelated earlier question take retrieval over (measured by asking each benchmark question after the
one before it: evaluation/design-figures.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kg_rag.errors import InputError

HISTORY_WEIGHT = 0.5
"""Weight of the earlier turns' embedding next to the question's (which counts fully)."""
MAX_QUERY_CHARS = 8000
"""Earlier turns longer than this are cut before embedding (the models truncate far earlier anyway); a question
itself is refused past :data:`~kg_rag.query.limits.MAX_QUESTION_CHARS`."""


def validate_query(query: Any) -> str:
    """The query as a clean string; ``ValueError`` when it is not text, has no content or is longer than a
    question (:data:`~kg_rag.query.limits.MAX_QUESTION_CHARS`, the same bound for every entry point)."""
    from kg_rag.query.limits import check_question_length

    if not isinstance(query, str):
        raise InputError(f"query must be a string, got {type(query).__name__}")
    cleaned = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in query).strip()
    if not cleaned:
        raise InputError("query is empty: pass a question or keywords")
    return check_question_length(cleaned)


_USER_ROLES = ("user", "human")
_ROLES = frozenset({*_USER_ROLES, "ai", "assistant", "system", "developer", "function", "tool"})
"""The roles LangChain accepts in ``(role, content)`` tuples."""


def content_text(content: Any) -> str:
    """The text of a message's content: a string as is; for a list of content blocks, the text of its string
    and ``{"type": "text"}`` blocks joined by spaces (images, tool calls and other blocks carry no query text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        texts = []
        for block in content:
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        return " ".join(t.strip() for t in texts if t.strip())
    return "" if content is None else str(content)


def _user_turn(item: Any) -> str | None:
    """The text of ``item`` when it is a user turn, ``None`` for other roles; ``ValueError`` for unknown shapes."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        role = item.get("role", item.get("type"))
        return content_text(item.get("content")) if role in _USER_ROLES else None
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):  # LangChain (role, content)
        if item[0] not in _ROLES:
            raise InputError(f"history item has unknown role {item[0]!r}; use one of {', '.join(sorted(_ROLES))}")
        return content_text(item[1]) if item[0] in _USER_ROLES else None
    if hasattr(item, "type") and hasattr(item, "content"):  # a LangChain message
        return content_text(item.content) if item.type == "human" else None
    raise InputError(
        f"history items must be strings, messages, (role, content) tuples or role/content dicts, got {item!r}"
    )


def earlier_turns(history: Sequence[Any] | None, turns: int) -> str:
    """The last ``turns`` previous *user* turns as one text (empty without history): what a follow-up question
    ("and who approved it?") may refer to. See :func:`fold_history` for the formats accepted."""
    if history is None or turns <= 0:
        return ""
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise InputError(f"history must be a list of previous turns, got {type(history).__name__}")
    user_turns = [text for text in map(_user_turn, history) if text is not None]
    return "\n".join(t.strip() for t in user_turns[-turns:] if t and t.strip())


def fold_history(query: str, history: Sequence[Any] | None, turns: int) -> str:
    """Fold the last ``turns`` previous *user* turns into the query text.

    ``history`` is a list whose items may be strings (taken as user turns), LangChain messages, ``(role,
    content)`` tuples or ``{"role", "content"}`` dicts, in any of LangChain's message-like formats (content may
    be a list of content blocks; only their text counts); anything else raises ``ValueError`` naming ``history``.
    """
    earlier = earlier_turns(history, turns)
    return f"{earlier}\n{query}" if earlier else query
