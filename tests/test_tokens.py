from __future__ import annotations

import os
import subprocess
import sys

from kg_rag.tokens import count_tokens, truncate_to_tokens


def test_count_and_truncate():
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("<|endoftext|>") > 1  # special-token text is plain text, not an error
    assert truncate_to_tokens("one two three four", 2) == "one two"


def test_works_offline_and_leaves_the_environment_alone(tmp_path):
    code = (
        "import os, socket\n"
        "def deny(*a, **k): raise OSError('network disabled in this test')\n"
        "socket.socket.connect = deny\n"
        "socket.create_connection = deny\n"
        "before = dict(os.environ)\n"
        "from kg_rag.tokens import count_tokens\n"
        "from kg_rag.ingest.documents import split_documents\n"
        "from langchain_core.documents import Document\n"
        "assert count_tokens('hello world') == 2\n"
        "chunks = split_documents([Document(page_content='word ' * 2000, metadata={'doc_id': 'd'})], chunk_size=100)\n"
        "assert len(chunks) > 10 and all(c.n_tokens <= 100 for c in chunks)\n"
        "assert dict(os.environ) == before, 'the environment changed'\n"
        "print('ok')\n"
    )
    for env_extra in ({}, {"TIKTOKEN_CACHE_DIR": str(tmp_path / "user-cache")}):
        env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
        env.update(env_extra)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "ok"
    assert not (tmp_path / "user-cache").exists()  # nothing written to a cache the user owns
