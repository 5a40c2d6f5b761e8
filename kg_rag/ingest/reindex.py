"""The re-index guard: a rebuild never deletes another source's documents without being told to.

``kg-rag index --docs DIR --out IDX`` without ``--update`` makes the index hold exactly ``DIR``'s documents.
Documents of ``DIR`` that are gone from the folder are deleted, as asked; but documents that came from elsewhere
(another folder added with ``--update``, a corpus, an extraction file) would be deleted too, and the only sign
used to be a count. :func:`plan_deletions` tells the two apart, and :func:`check_reindex` refuses a run that
would delete documents of other sources, naming them, unless confirmed (``--delete-others``). It runs before
any chat-model call, so a refused run costs nothing.

What belongs to an input: for a folder, the ids under its label (``policies/...``, see
:func:`~kg_rag.ingest.documents.document_ids_scope`); for a file (a corpus, an extraction file), the stored
documents whose recorded path resolves to that file (:func:`file_scope`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg_rag.errors import KGRagError

SHOWN = 10
"""Documents named in a refusal (the rest are counted)."""


class ReindexRefused(KGRagError, ValueError):
    """A re-index would delete documents of other sources and was not confirmed; ``documents`` names them."""

    def __init__(self, message: str, documents: list[str]) -> None:
        super().__init__(message)
        self.documents = documents


@dataclass
class Deletions:
    """What a re-index would delete, by document id."""

    own: list[str] = field(default_factory=list)
    """Documents of this input that the input no longer has (a file removed from the folder)."""
    others: list[str] = field(default_factory=list)
    """Documents of other sources."""

    @property
    def all(self) -> list[str]:
        return [*self.own, *self.others]


def plan_deletions(stored: Iterable[str], incoming: Iterable[str], owns: Callable[[str], bool]) -> Deletions:
    """The stored documents a rebuild from ``incoming`` would delete, split by whether ``owns`` claims them."""
    keep = set(incoming)
    gone = sorted(d for d in dict.fromkeys(stored) if d not in keep)
    return Deletions(own=[d for d in gone if owns(d)], others=[d for d in gone if not owns(d)])


def named(doc_ids: list[str], limit: int = SHOWN) -> str:
    """``a, b, c`` (``... and N more`` past ``limit``); odd ids quoted."""
    shown = [d if d.isprintable() and d == d.strip() and "," not in d else repr(d) for d in doc_ids[:limit]]
    more = f" ... and {len(doc_ids) - limit} more" if len(doc_ids) > limit else ""
    return ", ".join(shown) + more


def check_reindex(
    stored: Iterable[str],
    incoming: Iterable[str],
    owns: Callable[[str], bool],
    *,
    confirmed: bool = False,
    where: str = "the index",
    what: str = "this input",
    confirm_flag: str = "--delete-others",
) -> Deletions:
    """The deletions of a rebuild of ``where`` from ``what``; raises :class:`ReindexRefused` naming the
    documents of other sources when there are any and ``confirmed`` is false."""
    deletions = plan_deletions(stored, incoming, owns)
    if deletions.others and not confirmed:
        n = len(deletions.others)
        raise ReindexRefused(
            f"{where}: re-indexing {what} without --update would delete {n} document{'s' if n != 1 else ''} "
            f"of other sources: {named(deletions.others)}; add --update to keep them, or {confirm_flag} to "
            "delete them",
            deletions.others,
        )
    return deletions


def file_scope(records: Iterable[dict[str, Any]], *paths: str | Path | None) -> Callable[[str], bool]:
    """Ownership for an input file: a stored document (its record: ``id``, ``source``, ``metadata``) belongs to
    it when the path it records (``path`` metadata, else its ``source``) resolves to one of ``paths``."""
    targets = {_resolved(p) for p in paths if p}
    targets.discard(None)
    docs = {str(r["id"]): r for r in records}

    def owns(doc_id: str) -> bool:
        doc = docs.get(doc_id)
        if doc is None:
            return False
        recorded = (doc.get("metadata") or {}).get("path") or doc.get("source")
        if not recorded:
            return False
        return _resolved(recorded) in targets

    return owns


def _resolved(path: str | Path) -> str | None:
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError, ValueError):
        return None
