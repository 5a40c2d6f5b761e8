"""Browser-test set-up: Debian's chromium (installed here when missing: the suite runs as root on CI), a small
MuSiQue index, and the explorer server, each started and stopped by the tests."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ..conftest import require_musique
from ..serving_support import BOW, free_port, kg_rag, musique_slice, running

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium; installed with apt-get when missing (as root), else the test is skipped, saying why."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    if not shutil.which("apt-get") or os.geteuid() != 0:
        pytest.skip(f"{CHROMIUM} is missing; install it as root: apt-get install -y chromium chromium-driver")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"]):
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200, check=False)
        if done.returncode != 0:
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            pytest.skip(f"could not install chromium ({' '.join(cmd)}: {last[0]})")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"apt-get installed chromium but {CHROMIUM} is missing")
    return CHROMIUM


@pytest.fixture(scope="session")
def musique_index(tmp_path_factory):
    """An index of the passages of five MuSiQue questions (bag-of-words embeddings, so it builds in seconds)."""
    musique = require_musique()
    work = tmp_path_factory.mktemp("musique-slice")
    corpus, openie, questions = musique_slice(musique, work)
    out = work / "idx"
    done = kg_rag("index", "--corpus", str(corpus), "--openie", str(openie), "--out", str(out), "--embeddings", BOW)
    assert done.returncode == 0, done.stderr[-2000:]
    return out, questions


@pytest.fixture(scope="session")
def explorer_url(musique_index):
    """``kg-rag serve`` on the MuSiQue slice, on 127.0.0.1 (stopped at the end of the session)."""
    import sys

    index, _ = musique_index
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "kg_rag.cli", "serve", str(index), "--port", str(port), "--embeddings", BOW]
    with running(cmd, url + "/api/overview"):
        yield url
