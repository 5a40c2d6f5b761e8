"""Offline token counting.

``tiktoken.get_encoding("cl100k_base")`` normally downloads its BPE file. kg-rag ships that file (verified by
sha256) and builds the ``tiktoken.Encoding`` from it directly, so token counting — ours and the text
splitter's — works with no network, and the process environment (``TIKTOKEN_CACHE_DIR``) is left alone.
"""

from __future__ import annotations

import binascii
import hashlib
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

ENCODING_NAME = "cl100k_base"
_SHIPPED = Path(__file__).parent / "_data" / "tiktoken" / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_lock = threading.Lock()


def _shipped_ranks() -> dict[bytes, int]:
    try:
        data = _SHIPPED.read_bytes()
    except OSError as exc:
        raise RuntimeError(f"{_SHIPPED}: the shipped cl100k_base BPE file is missing; reinstall kg-rag") from exc
    if hashlib.sha256(data).hexdigest() != _SHA256:
        raise RuntimeError(f"{_SHIPPED}: the shipped cl100k_base BPE file fails its sha256 check; reinstall kg-rag")
    fields = data.split()  # "token rank" lines: the tokens at even positions, their ranks at odd ones
    if len(fields) % 2:
        raise RuntimeError(f"{_SHIPPED}: the shipped cl100k_base BPE file is malformed; reinstall kg-rag")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))  # a loop took twice as long


@lru_cache(maxsize=4)
def get_encoding(name: str = ENCODING_NAME) -> Any:
    """A tiktoken encoding: ``cl100k_base`` from the shipped file (no network, no cache directory); other
    names through tiktoken as usual."""
    import tiktoken

    if name != ENCODING_NAME:
        return tiktoken.get_encoding(name)
    import tiktoken_ext.openai_public as public

    ranks = _shipped_ranks()
    original = public.load_tiktoken_bpe

    def local(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if url.endswith("/cl100k_base.tiktoken"):
            return ranks
        return original(url, expected_hash)

    with _lock:  # tiktoken keeps the pattern and special tokens in its constructor: call it with our ranks
        public.load_tiktoken_bpe = local
        try:
            spec = public.cl100k_base()
        finally:
            public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


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
