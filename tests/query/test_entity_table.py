"""The entity table describes what the graph half shows: the entities the question names and the ends of the paths
and rows. An entity that only a returned passage mentions is written in that passage already; listing it (the demo's
directive question listed Amara Diallo and the 2025 security budget) spends tokens nobody needs."""

from __future__ import annotations

from kg_rag import EntityBasedKGRAG
from kg_rag.demo import demo_graph
from kg_rag.testing import BagOfWordsEmbeddings


def test_the_entity_table_lists_what_the_graph_half_shows():
    retriever = EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings())
    result = retriever.retrieve("Which directive replaced Directive 2019-03?")
    listed = {e.key for e in result.entities}
    shown = {k for p in result.paths for k in p.nodes} | {
        key for r in result.relations for key, name in result.names.items() if name in (r.source, r.target)
    }
    assert listed and listed <= shown | {"directive 2019-03"}
    assert "directive 2023-07" in listed  # the answer
    mentioned = {e for c in result.chunks for e in ("Amara Diallo", "Priya Nair") if e in c.text}
    assert mentioned  # the returned passages still carry them
    assert not listed & {"amara diallo", "priya nair"}


def test_without_a_graph_half_the_table_lists_what_the_question_matches():
    retriever = EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings())
    result = retriever.retrieve("Which directive replaced Directive 2019-03?", max_relations=0, max_paths=0)
    assert not result.relations and not result.paths
    assert len(result.entities) > 2  # as before: the matched entities the returned passages mention
