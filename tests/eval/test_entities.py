"""Entity recall against a reference's entity lists, by canonical key and passage."""

from __future__ import annotations

import pytest

from kg_rag.eval.entities import entity_recall, musique_entity_recall
from kg_rag.model import Chunk, KnowledgeGraph


def test_recall_counts_per_passage_by_canonical_key():
    linked = {"p0": {"hank snow", "nashville"}, "p1": {"tennessee"}}
    texts = {"p0": "Hank Snow moved to Nashville in 1949.", "p1": "Tennessee is a state."}
    reference = {"p0": ["Hank Snow", "NASHVILLE", "1949", "country music"], "p1": ["Tennessee", "Nashville", 7]}
    report = entity_recall(linked, texts, reference)
    assert report["reference_entities"] == 6 and report["recall"] == pytest.approx(3 / 6)
    # named and written: Hank Snow, NASHVILLE, 1949 (p0) and Tennessee (p1); Nashville is not written in p1
    assert report["named_written"] == 4 and report["named_recall"] == pytest.approx(3 / 4)
    assert report["corpus_recall"] == pytest.approx(3 / 5)  # nashville is linked somewhere


def test_musique_recall_reads_the_index_by_passage_position():
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("passage-00000", "Hank Snow moved to Nashville.", "passage-00000"))
    kg.add_entity("Hank Snow", chunk_id="passage-00000")
    report = musique_entity_recall(kg, [{"extracted_entities": ["Hank Snow", "Nashville"]}])
    assert report["recall"] == 0.5 and report["named_recall"] == 0.5
