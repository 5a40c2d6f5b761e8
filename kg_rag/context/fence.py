"""The fence around everything kg-rag hands a model: structure kg-rag writes stays apart from data it quotes.

Two rules, applied by every renderer (the context, each Document's passage, the agent tools, global search):

- **Data lines are prefixed.** Every line of text that comes from a document, a report or a model is written
  with :data:`DATA_PREFIX` (``| ``). No structural line (a section header, a path ``A -[TYPE]-> B``, a table
  row, a source header) starts that way, so no document can pass a line of its own off as one of them.
- **The fence cannot be closed from inside.** The whole text goes between ``<context>`` and ``</context>``, and
  every spelling of those tags inside it (any case, spaces, line breaks) is defused first.
"""

from __future__ import annotations

import re

CONTEXT_OPEN = "<context>"
CONTEXT_CLOSE = "</context>"
DATA_PREFIX = "| "
"""Every line of quoted data starts with this; no structural line does."""

_FENCE_TAG = re.compile(r"<(\s*/?\s*context)", re.IGNORECASE)


def data_lines(text: str) -> list[str]:
    """``text`` as quoted data lines: control characters and tabs made spaces, blank lines dropped, each line
    prefixed with :data:`DATA_PREFIX`."""
    cleaned = "".join(ch if ch.isprintable() or ch == "\n" else " " for ch in str(text).replace("\t", " "))
    return [DATA_PREFIX + line.rstrip() for line in cleaned.strip().splitlines() if line.strip()]


def fence_safe(text: str) -> str:
    """``text`` with every ``<context``/``</context`` tag spelling defused, so data cannot close (or reopen) the
    fence it is written in."""
    return _FENCE_TAG.sub(r"&lt;\1", text)


def fenced(text: str) -> str:
    """``text`` between ``<context>`` and ``</context>``, tags inside it defused."""
    return f"{CONTEXT_OPEN}\n{fence_safe(text)}\n{CONTEXT_CLOSE}"
