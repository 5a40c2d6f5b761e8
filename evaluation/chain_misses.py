"""Where the hops the graph half misses are (chain.md): each hop of MuSiQue's decompositions, for one method.

python evaluation/chain_misses.py idx-musique ../shared/data/musique/questions.json [kg-rag] [--list]

Each hop (kg_rag.eval.chain.question_hops) lands in the first class that holds it:

- joined: the context's graph half joins its two ends (the chain-coverage rule);
- stated: a relation of a returned passage joins them (the "chain reachable" rule), and the context leaves it out;
- written, not joined: a returned gold passage writes both ends, and no relation of it joins them (the extraction
  missed the fact, or named an end differently);
- gold passage not returned: a gold passage writes both ends, and retrieval did not return it;
- written nowhere: no gold passage writes both ends (the decomposition's answer is phrased otherwise, or the
  hop spans two passages).

``--list`` prints the hops of the last three classes with the gold passage's relations.
"""

from __future__ import annotations

import sys
from collections import Counter


def main(argv: list[str]) -> int:
    import numpy as np

    from kg_rag.cli.common import existing_store
    from kg_rag.context.format import format_context
    from kg_rag.eval.chain import context_edges, joined, writes
    from kg_rag.eval.datasets import load_musique_questions
    from kg_rag.eval.methods import build_method, load_method_specs
    from kg_rag.eval.runner import Corpus
    from kg_rag.index.embeddings import normalise_rows
    from kg_rag.langchain.embeddings import embeddings_for_index

    flags = {a for a in argv if a.startswith("--")}
    args = [a for a in argv if not a.startswith("--")]
    if len(args) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    index, questions_file = args[0], args[1]
    method = args[2] if len(args) > 2 else "kg-rag"
    backend = existing_store(index).backend()
    with backend.reader() as view:
        chunks = [c for _, c in view.iter_chunks()]
        model = view.info().embedding_model
    texts = {c.id: c.text for c in chunks}
    questions = load_musique_questions(questions_file, chunks)
    embeddings = embeddings_for_index(None, model, index)
    rank = build_method(load_method_specs("methods")[method], backend, embeddings)
    vectors = normalise_rows(np.asarray(embeddings.embed_documents([q.question for q in questions]), dtype=np.float32))
    corpus = Corpus(backend)

    classes: Counter[str] = Counter()
    listed = []
    for q, vec in zip(questions, vectors):
        run = rank(q.question, vec, 5)
        result = run.result
        rows, steps = context_edges(result, result.formatted or format_context(result, run.params))
        returned = [c.id for c in result.chunks]
        stated = corpus.edges_stated_by(returned)
        for n, hop in enumerate(q.hops):
            if joined(hop, rows + steps):
                classes["joined"] += 1
                continue
            if joined(hop, stated + rows + steps):
                classes["stated"] += 1
                continue
            gold = [g for g in q.gold_chunks if (not hop.sources or writes(texts[g], hop.sources))]
            gold = [g for g in gold if writes(texts[g], hop.targets)]
            if not gold:
                classes["written nowhere"] += 1
                continue
            seen = [g for g in gold if g in returned]
            key = "written, not joined" if seen else "gold passage not returned"
            classes[key] += 1
            listed.append((key, q.question, n, hop, seen or gold))
    total = sum(classes.values())
    for key in ("joined", "stated", "written, not joined", "gold passage not returned", "written nowhere"):
        print(f"{key:28s} {classes[key]:4d}  ({100 * classes[key] / max(total, 1):.1f} % of {total} hops)")
    if "--list" in flags:
        for key, question, n, hop, gold in listed:
            print(f"\n[{key}] {question}\n  hop {n + 1}: {hop.sources or hop.text} -> {hop.targets[0]}")
            for g in gold:
                print(f"  {g}: {texts[g][:300]}")
                for a, b, _ in corpus.edges_stated_by([g]):
                    print(f"    {a} -> {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
