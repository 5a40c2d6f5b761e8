"""Entity recall of an index against reference entity lists (MuSiQue's GPT-3.5 OpenIE ``extracted_entities``).

For ranking, the entity set is the lever (a passage is reached through the names it shares with the question and
with other passages), so an extractor is measured by how many of a reference's entities it links to the same
passage, by canonical key. Recall is given over every reference entity, over those written in the passage as a
name (starting with a capital or a digit: what an extractor without a language model can be asked to find), and
over the corpus (the set of keys, wherever linked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kg_rag.model.names import canonical_key


def _written(name: str, text: str) -> bool:
    return " ".join(name.casefold().split()) in " ".join(text.casefold().split())


def entity_recall(
    linked: Mapping[str, set[str]], texts: Mapping[str, str], reference: Mapping[str, Sequence[Any]]
) -> dict[str, Any]:
    """``linked``: chunk id -> canonical keys of the entities the index links to it; ``texts``: chunk id -> text;
    ``reference``: chunk id -> the reference's entity names for that chunk (non-strings are ignored)."""
    hit = total = named_hit = named_total = 0
    corpus_ref: set[str] = set()
    corpus_linked: set[str] = set().union(*linked.values()) if linked else set()
    for cid, names in reference.items():
        mine = linked.get(cid, set())
        for name in {n for n in names if isinstance(n, str) and n.strip()}:
            key = canonical_key(name)
            corpus_ref.add(key)
            total += 1
            hit += key in mine
            if name.strip()[0].isupper() or name.strip()[0].isdigit():
                if _written(name, texts.get(cid, "")):
                    named_total += 1
                    named_hit += key in mine
    return {
        "reference_entities": total,
        "recall": hit / total if total else None,
        "named_written": named_total,
        "named_recall": named_hit / named_total if named_total else None,
        "corpus_keys": len(corpus_ref),
        "corpus_recall": len(corpus_ref & corpus_linked) / len(corpus_ref) if corpus_ref else None,
        "entities_per_chunk": sum(len(v) for v in linked.values()) / len(linked) if linked else None,
    }


def musique_entity_recall(kg: Any, openie_docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """:func:`entity_recall` of a MuSiQue index (chunks ``passage-NNNNN`` by corpus position, as ``kg-rag index
    --corpus`` writes them) against the OpenIE file's ``docs`` (in corpus order)."""
    from kg_rag.ingest.openie import passage_id

    linked = {cid: set(kg.entities_of_chunk(cid)) for cid in kg.chunks}
    texts = {cid: c.text for cid, c in kg.chunks.items()}
    reference = {
        passage_id(i): d.get("extracted_entities") or []
        for i, d in enumerate(openie_docs)
        if isinstance(d, dict) and passage_id(i) in linked
    }
    return entity_recall(linked, texts, reference)
