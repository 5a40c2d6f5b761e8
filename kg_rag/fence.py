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
    cleaned = printable(str(text), keep_newlines=True)
    return [DATA_PREFIX + line.rstrip() for line in cleaned.strip().splitlines() if line.strip()]


def printable(text: str, keep_newlines: bool = False) -> str:
    """``text`` with every character that is not printable (tabs, control and format characters, line
    separators; line breaks too unless ``keep_newlines``) made a space. Checked per line first: almost all text
    needs no change, and ``str.isprintable`` decides that in C."""
    if keep_newlines:
        return "\n".join(line if line.isprintable() else _spaced(line) for line in text.split("\n"))
    return text if text.isprintable() else _spaced(text)


def _spaced(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)


def fence_safe(text: str) -> str:
    """``text`` with every ``<context``/``</context`` tag spelling defused, so data cannot close (or reopen) the
    fence it is written in."""
    return _FENCE_TAG.sub(r"&lt;\1", text)


def fenced(text: str) -> str:
    """``text`` between ``<context>`` and ``</context>``, tags inside it defused."""
    return f"{CONTEXT_OPEN}\n{fence_safe(text)}\n{CONTEXT_CLOSE}"
