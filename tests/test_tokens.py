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


def test_works_offline_with_no_cache_and_a_user_cache_dir(tmp_path):
    code = (
        "import socket\n"
        "def deny(*a, **k): raise OSError('network disabled in this test')\n"
        "socket.socket.connect = deny\n"
        "socket.create_connection = deny\n"
        "from kg_rag.tokens import count_tokens\n"
        "import tiktoken\n"
        "assert count_tokens('hello world') == 2\n"
        "assert len(tiktoken.get_encoding('cl100k_base').encode('hello')) == 1\n"
        "print('ok')\n"
    )
    for env_extra in ({}, {"TIKTOKEN_CACHE_DIR": str(tmp_path / "user-cache")}):
        env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
        env.update(env_extra)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "ok"
    assert (tmp_path / "user-cache" / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4").is_file()
