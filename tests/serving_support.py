"""Helpers for tests that start servers of their own: a free port, a subprocess started and always stopped,
waiting until it answers, and a small MuSiQue slice indexed with bag-of-words embeddings."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BOW = "kg_rag.testing:BagOfWordsEmbeddings"
"""The ``--embeddings`` spec of the bag-of-words test embeddings (fast, deterministic, no model download)."""


def folder_digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (to show that nothing was written there)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(
    cmd: list[str], url: str, *, env: dict[str, str] | None = None, cwd: str | None = None, timeout: float = 120.0
) -> Iterator[subprocess.Popen]:
    """Start ``cmd`` in its own process group, wait until ``url`` answers, and stop the group afterwards. Its
    output goes to a temporary file (a pipe nobody reads would block a chatty server), shown if it fails."""
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        cmd, env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True, stdout=log, stderr=subprocess.STDOUT
    )
    proc.log = log  # type: ignore[attr-defined]
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{cmd[:3]} exited with {proc.returncode}:\n{output(proc)}")
            try:
                with urllib.request.urlopen(url, timeout=2) as res:
                    if res.status < 500:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{cmd[:3]} did not answer at {url} within {timeout:.0f} s:\n{output(proc)}")
            time.sleep(0.3)
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)
        log.close()


def output(proc: subprocess.Popen, tail: int = 3000) -> str:
    """The last ``tail`` characters a :func:`running` process wrote."""
    log = proc.log  # type: ignore[attr-defined]
    log.flush()
    log.seek(0)
    return log.read().decode(errors="replace")[-tail:]


def kg_rag(*args: str, timeout: float = 300.0) -> subprocess.CompletedProcess:
    """``kg-rag ARGS`` in a subprocess (as a user runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "kg_rag.cli", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def musique_slice(musique: Path, out: Path, questions: slice = slice(3, 8)) -> tuple[Path, Path, list[dict]]:
    """Corpus and OpenIE files holding only the passages of some MuSiQue questions (about 100 passages)."""
    corpus = json.loads((musique / "corpus.json").read_text())
    openie = json.loads((musique / "openie_gpt-3.5-turbo-1106.json").read_text())["docs"]
    asked = json.loads((musique / "questions.json").read_text())[questions]
    wanted: set[str] = set()
    for q in asked:
        paragraphs = q["paragraphs"]
        paragraphs = ast.literal_eval(paragraphs) if isinstance(paragraphs, str) else paragraphs
        wanted |= {p["paragraph_text"] for p in paragraphs}
    out.mkdir(parents=True, exist_ok=True)
    corpus_file, openie_file = out / "corpus.json", out / "openie.json"
    corpus_file.write_text(json.dumps([c for c in corpus if c["text"] in wanted]))
    openie_file.write_text(json.dumps({"docs": [d for d in openie if d.get("text") in wanted]}))
    return corpus_file, openie_file, asked
