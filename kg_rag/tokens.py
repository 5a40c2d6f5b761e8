"""Offline token counting.

``tiktoken.get_encoding("cl100k_base")`` normally downloads its BPE file. kg-rag ships that file
(verified by sha256) and points ``TIKTOKEN_CACHE_DIR`` at it before tiktoken first loads an encoding,
so token counting — ours and ``langchain-text-splitters``' — works with no network.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
from functools import lru_cache
from pathlib import Path

logger = logging.getLogger(__name__)

ENCODING_NAME = "cl100k_base"
# tiktoken's cache key is sha1 of the download URL; the file content is pinned by sha256.
_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_SHIPPED_DIR = Path(__file__).parent / "_data" / "tiktoken"
_lock = threading.Lock()
_ready = False


def _valid(path: Path) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == _SHA256
    except OSError:
        return False


def ensure_offline_tiktoken() -> None:
    """Make ``cl100k_base`` loadable without network. Idempotent and thread-safe.

    If the user already set ``TIKTOKEN_CACHE_DIR`` we respect it and only add the verified file when
    it is missing there; otherwise we point the variable at the copy shipped in the package.
    """
    global _ready
    if _ready:
        return
    with _lock:
        if _ready:
            return
        shipped = _SHIPPED_DIR / _CACHE_KEY
        if not _valid(shipped):
            raise RuntimeError(
                f"{shipped}: the shipped cl100k_base BPE file is missing or fails its sha256 check; reinstall kg-rag"
            )
        user_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
        if not user_dir:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(_SHIPPED_DIR)
        else:
            target = Path(user_dir) / _CACHE_KEY
            if not _valid(target):
                try:
                    Path(user_dir).mkdir(parents=True, exist_ok=True)
                    tmp = target.with_suffix(".kg-rag.tmp")
                    shutil.copyfile(shipped, tmp)
                    os.replace(tmp, target)
                except OSError as exc:  # read-only cache dir: fall back to ours
                    logger.warning("cannot write tiktoken cache %s (%s); using the shipped copy", user_dir, exc)
                    os.environ["TIKTOKEN_CACHE_DIR"] = str(_SHIPPED_DIR)
        _ready = True


@lru_cache(maxsize=4)
def get_encoding(name: str = ENCODING_NAME):
    """Return a tiktoken encoding, loaded offline."""
    ensure_offline_tiktoken()
    import tiktoken

    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = ENCODING_NAME) -> int:
    """Number of tokens in ``text`` (special-token text is counted as plain text, never rejected).

    Short strings (context lines are counted repeatedly while a budget is fitted) are memoised.
    """
    if not text:
        return 0
    if len(text) <= 2048:
        return _count_cached(text, encoding)
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


@lru_cache(maxsize=65536)
def _count_cached(text: str, encoding: str) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


def truncate_to_tokens(text: str, max_tokens: int, encoding: str = ENCODING_NAME) -> str:
    """Cut ``text`` to at most ``max_tokens`` tokens (adds no ellipsis; callers decide)."""
    if max_tokens <= 0:
        return ""
    enc = get_encoding(encoding)
    ids = enc.encode(text, disallowed_special=())
    if len(ids) <= max_tokens:
        return text
    return enc.decode(ids[:max_tokens])
