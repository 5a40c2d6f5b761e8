"""format_context: directed rendering, the relationships table, in-network first, the token budget."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams
from kg_rag.context import RELATION_COLUMNS, quote_name, render_edge
from kg_rag.tokens import count_tokens

HOSTILE = ["A -> B", "x -[EVIL]-> y", "pipe | name", "comma, name", 'quote "name"', "bracket [x]", "tab\tname"]


def rows_of(context: str, header: str = "-----Relationships-----") -> list[list[str]]:
    lines = context.splitlines()
    if header not in lines:
        return []
    start = lines.index(header) + 1
    table = []
    for line in lines[start:]:
        if line.startswith("-----"):
            break
        table.append(line)
    return list(csv.reader(io.StringIO("\n".join(table)), delimiter="|"))


def directional_graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "EO_14028 supersedes EO_13800 in cyber security policy.", "d1"))
    kg.add_chunk(Chunk("c2", "STATUTE_2021 revokes REGULATION_2020 on data retention.", "d2"))
    kg.add_chunk(Chunk("c3", "EO_13800 mentioned REGULATION_2020 once.", "d3"))
    kg.add_relation("EO_14028", "EO_13800", "SUPERSEDES", chunk_id="c1", description="replaces the older order")
    kg.add_relation("STATUTE_2021", "REGULATION_2020", "REVOKES", chunk_id="c2", description="repeals it")
    kg.add_relation("EO_13800", "REGULATION_2020", None, chunk_id="c3", description="mentions")
    return kg


@pytest.fixture
def directional(bow_embeddings):
    return EntityBasedKGRAG.from_graph(directional_graph(), bow_embeddings, params=QueryParams(max_hops=2))


@pytest.mark.parametrize("query", ["EO_13800", "EO_14028", "REGULATION_2020", "STATUTE_2021", "superseded order"])
@pytest.mark.parametrize("direction", ["out", "in", "both"])
@pytest.mark.parametrize("strategy", ["frequency", "path", "ppr"])
def test_direction_is_never_inverted_in_rendered_output(directional, query, direction, strategy):
    ctx = directional.retrieve(query, direction=direction, strategy=strategy).context
    for inverted in (
        "EO_13800 -[SUPERSEDES]-> EO_14028",
        "EO_14028 <-[SUPERSEDES]- EO_13800",
        "REGULATION_2020 -[REVOKES]-> STATUTE_2021",
        "STATUTE_2021 <-[REVOKES]- REGULATION_2020",
    ):
        assert inverted not in ctx
    for row in rows_of(ctx)[1:]:
        if row[4] == "SUPERSEDES":
            assert (row[1], row[2]) == ("EO_14028", "EO_13800")
        if row[4] == "REVOKES":
            assert (row[1], row[2]) == ("STATUTE_2021", "REGULATION_2020")


def test_relationships_table_columns_and_related_fallback(directional):
    ctx = directional.retrieve("EO_13800 REGULATION_2020 EO_14028 STATUTE_2021").context
    table = rows_of(ctx)
    assert tuple(table[0]) == RELATION_COLUMNS
    assert table[0].index("relation_type") == table[0].index("description") + 1 == table[0].index("weight") - 1
    types = {(r[1], r[2]): r[4] for r in table[1:]}
    assert types[("EO_13800", "REGULATION_2020")] == "RELATED"
    assert types[("EO_14028", "EO_13800")] == "SUPERSEDES"


def test_in_network_relations_come_first(bow_embeddings):
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "hub text", "d"))
    kg.add_relation("Alpha", "Beta", "MANAGES", chunk_id="c")
    for i in range(6):
        kg.add_relation("Alpha", f"Outside {i}", "OWNS", chunk_id="c")
    kg.add_relation("Beta", "Outside 0", "OWNS", chunk_id="c")  # Outside 0 links two selected entities
    r = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    result = r.retrieve(
        "Alpha Beta",
        include_entities=["Alpha", "Beta"],
        top_k_nodes=2,
        top_k_facts=0,
        lexical_linking=False,
        similarity_threshold=1.0,
    )
    flags = [rel.in_network for rel in result.relations]
    assert flags[0] is True and flags == sorted(flags, reverse=True)
    outside = [rel for rel in result.relations if not rel.in_network]
    assert {outside[0].target, outside[1].target} == {"Outside 0"}  # linked to both selected entities
    assert outside[0].links == 2


@pytest.mark.parametrize("budget", [50, 80, 120, 200, 350, 600, 1000, 4000])
def test_budget_is_never_exceeded(demo_index, bow_embeddings, budget):
    r = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings)
    result = r.retrieve("What did Decision SC-2024-19 block and what caused it?", max_context_tokens=budget)
    assert count_tokens(result.context) <= budget
    assert result.section_tokens["total"] == count_tokens(result.context)
    if budget >= 1000:
        assert "-[" in result.context and "-----Sources-----" in result.context


def test_unused_budget_passes_to_other_sections(demo_index, bow_embeddings):
    r = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings)
    no_graph = r.retrieve(
        "Project Atlas",
        max_context_tokens=600,
        relations_share=0.5,
        entities_share=0.3,
        max_paths=0,
        max_relations=0,
        top_k_nodes=0,
        top_k_facts=0,
        lexical_linking=False,
    )
    assert no_graph.section_tokens["relations"] == 0
    assert no_graph.section_tokens["chunks"] > 600 * 0.2  # more than its nominal 20 % share


def test_descriptions_shrink_before_rows_are_dropped(bow_embeddings):
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "text", "d"))
    long_desc = "a very long description " * 40
    for i in range(8):
        kg.add_relation("Hub", f"Spoke {i}", "OWNS", chunk_id="c", description=long_desc)
    r = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    kwargs = {
        "include_entities": ["Hub"],
        "max_paths": 0,
        "relations_share": 1.0,
        "entities_share": 0.0,
        "community_share": 0.0,
    }
    full = rows_of(r.retrieve("Hub", max_context_tokens=20000, **kwargs).context)
    assert len(full) == 9 and all(len(row[3]) > 500 for row in full[1:])
    tight = rows_of(r.retrieve("Hub", max_context_tokens=300, **kwargs).context)
    assert len(tight) == 9, "every row still fits once descriptions are shortened"
    assert all(len(row[3]) < len(long_desc) for row in tight[1:])
    assert all(row[4] == "OWNS" and row[1] == "Hub" for row in tight[1:])
    tiny = rows_of(r.retrieve("Hub", max_context_tokens=60, **kwargs).context)
    assert 1 < len(tiny) < 9  # rows dropped only after descriptions were emptied
    assert all(row[3] == "" and row[4] == "OWNS" and row[1] == "Hub" and row[2].startswith("Spoke") for row in tiny[1:])


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_cannot_break_the_format(name):
    line = render_edge(name, "T", "Target")
    match = re.fullmatch(r'("(?:[^"\\]|\\.)*"|[^"]+?) -\[T\]-> Target', line)
    assert match, line
    token = match.group(1)
    assert (json.loads(token) if token.startswith('"') else token) == name
    assert quote_name("plain name") == "plain name"


def test_hostile_names_in_a_full_context(bow_embeddings):
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "hostile text", "d"))
    for i, name in enumerate(HOSTILE):
        kg.add_relation(name, f"Victim {i}", "-[X]->|,", chunk_id="c", description="desc | with, pipes\nand lines")
    r = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    ctx = r.retrieve("hostile names", include_entities=[HOSTILE[0]], top_k_nodes=20).context
    table = rows_of(ctx)
    assert all(len(row) == len(RELATION_COLUMNS) for row in table)
    assert {row[4] for row in table[1:]} == {"X"}
    names = {json.loads(row[1]) if row[1].startswith('"') else row[1] for row in table[1:]}  # JSON-quoted
    assert {" ".join(n.split()) for n in names} <= {" ".join(h.split()) for h in HOSTILE}
    assert not [row for row in table[1:] if "-[" in row[1] and not row[1].startswith('"')]  # never bare notation


def test_a_chunks_graph_score_is_the_part_of_its_score_the_graph_gave(directional):
    """``frequency`` reported the raw count of subgraph entities a chunk mentions (18 beside a score of 0.65 on
    MuSiQue) as the graph's part of the score; it is the weighted, normalised count that went into it."""
    chunks = directional.retrieve("EO_14028 supersedes EO_13800", strategy="frequency").chunks
    assert chunks
    for c in chunks:
        assert 0.0 <= c.graph_score <= min(0.4, c.score) + 1e-6  # a chunk filled in by dense has none
    assert max(c.graph_score for c in chunks) == pytest.approx(0.4)  # freq_weight x the most-mentioning chunk
