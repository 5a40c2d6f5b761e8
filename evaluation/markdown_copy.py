"""MuSiQue as a user's Markdown files: each passage written as ``# {title}`` + a blank line + its text, one file a
passage, then evaluated with the gold passages matched by their text without the heading (nlp-extractor.md).

python evaluation/markdown_copy.py write ../shared/data/musique/corpus.json /tmp/musique-md
kg-rag index --docs /tmp/musique-md --extractor nlp --workers 2 --out /tmp/idx-musique-md
python evaluation/markdown_copy.py eval /tmp/idx-musique-md ../shared/data/musique/questions.json /tmp/md.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HEADING = re.compile(r"^# .*\n\n")


def write(corpus: str, folder: str) -> None:
    from kg_rag.jsonio import load_json

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for i, passage in enumerate(load_json(corpus)):
        (out / f"p{i:04d}.md").write_text(f"# {passage['title']}\n\n{passage['text']}\n", encoding="utf-8")


def evaluate_copy(index: str, questions: str, out: str, methods: str = "kg-rag,dense") -> None:
    from kg_rag.eval.datasets import load_musique_questions
    from kg_rag.eval.methods import load_method_specs
    from kg_rag.eval.runner import evaluate
    from kg_rag.langchain.embeddings import make_embeddings
    from kg_rag.model import Chunk
    from kg_rag.store import open_store

    backend = open_store(index).backend()
    with backend.reader() as view:
        chunks = [Chunk(c.id, HEADING.sub("", c.text).strip(), c.doc_id) for _, c in view.iter_chunks()]
    specs = load_method_specs(Path(__file__).resolve().parent.parent / "methods")
    report = evaluate(
        load_musique_questions(questions, chunks),
        backend,
        make_embeddings("local"),
        [specs[m] for m in methods.split(",")],
        [2, 5],
        progress=False,
    )
    Path(out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    keys = ["recall@2", "recall@5", "answer_in_context@5", "answer_in_graph_context", "chain_coverage"]
    for name, m in report["methods"].items():
        print(name, " ".join(f"{k}={m[k]:.3f}" for k in keys if isinstance(m.get(k), float)))


def main() -> int:
    if len(sys.argv) >= 4 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "eval":
        evaluate_copy(*sys.argv[2:6])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
