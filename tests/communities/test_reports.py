"""Community reports (``kg_rag/communities/reports.py``): typed, directed reports, staleness marked and refreshed
incrementally, extractive summaries."""

from __future__ import annotations

import json
import re

import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index, load_index
from kg_rag.communities import (
    community_context,
    detect_communities,
    extractive_report,
    mark_stale,
    refresh_communities,
)
from kg_rag.testing import BagOfWordsEmbeddings

from ..cli_support import run
from . import graphs
from .graphs import BACKWARD, FORWARD, big_graph, orders_graph


@pytest.fixture
def demo_with_communities():
    return graphs.demo_with_communities()


BOW = "kg_rag.testing:BagOfWordsEmbeddings"


# ------------------------------------------------------------------------------------------- direction
def test_reports_keep_relation_type_and_direction():
    kg = orders_graph()
    communities, _ = refresh_communities(kg)
    [community] = list(communities)
    context, _ = community_context(kg, community)
    text = community.report_text()
    for rendered in (context, text, "\n".join(community.lines(0)), "\n".join(community.lines(2))):
        assert FORWARD in rendered and BACKWARD not in rendered
    assert f"{FORWARD} — replaces it (weight: 1)" in text
    assert f"{FORWARD} (weight: 1)" in "\n".join(community.lines(0))  # cut: description first, type stays


# ------------------------------------------------------------------------------------------- detection


def test_staleness_is_incremental(tmp_path, capsys):
    """After an update, only communities whose members changed are stale, and only those get new reports."""
    kg = big_graph()
    idx = str(tmp_path / "idx")
    from kg_rag.store import DirectoryStore

    DirectoryStore(idx).save(build_index(kg, BagOfWordsEmbeddings()))
    code, out, _ = run(capsys, "communities", idx, "--extractive")
    assert code == 0 and "0 reused" in out
    total = int(re.search(r"(\d+) communities", out).group(1))
    doc = {
        "id": "team2-news.md",
        "text": "Team 2 member 1 (T2 M1) now mentors member 5 (T2 M5).",
        "extraction": {"relations": [{"source": "T2 M1", "target": "T2 M5", "type": "MENTORS"}]},
    }
    (tmp_path / "x.json").write_text(json.dumps({"documents": [doc]}))
    assert (
        run(
            capsys,
            "index",
            "--extractions",
            str(tmp_path / "x.json"),
            "--out",
            idx,
            "--update",
            "--embeddings",
            BOW,
            "-q",
        )[0]
        == 0
    )
    code, out, _ = run(capsys, "stats", idx)
    stale = int(re.search(r"communities\s+\d+ \((\d+) stale\)", out).group(1))
    assert 1 <= stale < total
    listing = run(capsys, "communities", idx, "--json", "--extractive")
    payload = json.loads(listing[1])
    assert re.search(rf"{stale} reports written, {total - stale} reused", listing[2])
    assert not any(c["stale"] for c in payload["communities"])
    assert {"id", "level", "title", "entities", "report"} <= set(payload["communities"][0])


PEOPLE = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo"]


def test_an_unchanged_update_with_synonym_links_leaves_every_community_current(tmp_path, capsys):
    """``--update`` compared communities before the synonym links were added back, so with
    ``--synonym-threshold`` about half of them went stale (and cost an LLM report each) on unchanged input."""
    docs = [
        {
            "id": f"team{t}.md",
            "text": f"Team {t} notes.",  # names without numbers: names that differ in a number are never synonyms
            "extraction": {
                "relations": [
                    {"source": f"{t} {a}", "target": f"{t} {b}", "type": "WORKS_WITH"}
                    for a, b in zip(PEOPLE, PEOPLE[1:] + PEOPLE[:1])
                ]
            },
        }
        for t in ("Red", "Blue", "Green")
    ]
    (tmp_path / "x.json").write_text(json.dumps({"documents": docs}))
    idx = str(tmp_path / "idx")
    build = ["index", "--extractions", str(tmp_path / "x.json"), "--out", idx, "--embeddings", BOW, "-q"]
    assert run(capsys, *build, "--synonym-threshold", "0.5")[0] == 0
    assert load_index(idx).kg.stats()["synonym_links"] > 0  # names sharing words: the links exist
    assert run(capsys, "communities", idx, "--extractive")[0] == 0
    assert run(capsys, *build, "--synonym-threshold", "0.5", "--update")[0] == 0
    assert re.search(r"communities\s+\d+ \(0 stale\)", run(capsys, "stats", idx)[1])
    code, out, err = run(capsys, "communities", idx, "--extractive")
    assert code == 0 and re.search(r" 0 reports written", out + err), out + err
    code, _, err = run(capsys, *build)  # a rebuild starts a new graph: the communities go, and it says so
    assert code == 0 and "communities were not kept" in err


def test_a_second_run_with_entities_in_no_community_seeds_from_the_first():
    """Entities in no community (alone, below ``min_size``) and entities added since the last run used to
    get seed labels past the entity count, and leidenalg refused them ("Value cannot exceed length of list"):
    every incremental run after the first crashed on such a graph."""
    kg = big_graph()
    kg.add_chunk(Chunk("lone", "The archivist works alone.", "alone.md"))
    kg.add_entity("Archivist", "PERSON", chunk_id="lone")
    first, _ = refresh_communities(kg)
    assert "archivist" not in {k for c in first.at_level(0) for k in c.entities}
    again, stats = refresh_communities(kg, first)
    assert [(c.id, c.entities) for c in again.at_level(0)] == [(c.id, c.entities) for c in first.at_level(0)]
    assert stats.reused == len(first)
    kg.add_relation("T0 M1", "New Hire", "MENTORS", chunk_id="t0c1")  # a new entity joins an old community
    kg.remove_document("team3.md")  # and a whole community leaves
    later, _ = refresh_communities(kg, again)
    members = {k for c in later.at_level(0) for k in c.entities}
    assert "new hire" in members and "t3 m5" not in members


def test_a_run_on_an_unchanged_graph_keeps_the_communities_it_has(monkeypatch):
    """Leiden started from its own partition could still move an entity: on MuSiQue a second run on an unchanged
    graph found 3 896 communities instead of 3 895 and wrote 6 reports. Now it does not detect again."""
    import kg_rag.communities.reports as reports

    kg = big_graph()
    first, _ = refresh_communities(kg, max_cluster_size=5)
    detect = reports.detect_communities
    calls: list[int] = []
    monkeypatch.setattr(reports, "detect_communities", lambda *a, **k: calls.append(1) or detect(*a, **k))
    again, stats = refresh_communities(kg, previous=first)
    assert calls == [] and again.to_dict() == first.to_dict() and (stats.regenerated, stats.reused) == (0, len(first))
    assert stats.summary().startswith(f"{len(first)} communities on levels 0, 1; 0 reports written")
    # an edit the caller did not mark stale (same shape, new evidence): detection and that report run again
    kg.add_relation("T0 M1", "T0 M2", "WORKS_WITH", chunk_id="t0c2", description="pair programming")
    changed, stats = refresh_communities(kg, previous=first)
    assert calls == [1] and stats.regenerated >= 1
    kg.add_relation("T0 M1", "T0 M3", "MENTORS", chunk_id="t0c1")  # a new relation: a new shape
    changed, stats = refresh_communities(kg, previous=changed)
    assert calls == [1, 1] and changed.params["graph"] != first.params["graph"] and stats.regenerated >= 1


def test_a_stale_report_saved_by_an_older_release_is_not_served(demo_with_communities):
    retriever, index = demo_with_communities
    question = "Which directive replaced Directive 2019-03?"
    shown = retriever.retrieve(question).communities
    assert shown
    for c in index.communities:  # what an older release saved: stale, its report kept
        c.stale = c.stale or c.id == shown[0].id
    assert shown[0].id not in [c.id for c in retriever.retrieve(question).communities]


def test_mark_stale_only_touches_changed_communities():
    kg = big_graph()
    communities, _ = refresh_communities(kg, max_cluster_size=100)
    before = {c.id for c in communities}
    kg.add_relation("T1 M2", "T1 M6", "MENTORS", chunk_id="t1c2")
    assert mark_stale(communities, kg) == 1
    [stale] = communities.stale
    assert {"t1 m2", "t1 m6"} <= set(stale.entities) and {c.id for c in communities} == before


# ------------------------------------------------------------------------------------------- context


def test_extractive_report_marks_itself():
    kg = orders_graph()
    [community] = detect_communities(kg)
    extractive_report(kg, community)
    assert community.extractive and "extractive report" in community.report_text()


def test_an_extractive_summary_counts_every_member():
    """Four entity types, three shown by name: the rest is counted, so the counts add up to the members."""
    from kg_rag.communities.model import Community

    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "text", "d"))
    for name, etype in (
        ("Ann", "PERSON"),
        ("Bo", "PERSON"),
        ("Acme", "ORGANIZATION"),
        ("Oslo", "LOCATION"),
        ("X1", "PRODUCT"),
    ):
        kg.add_entity(name, etype, chunk_id="c")
    community = Community("L0-x", 0, sorted(kg.graph.nodes))
    extractive_report(kg, community)
    counts = re.search(r"5 entities \(([^)]*)\)", community.summary).group(1)
    assert sum(int(part.rsplit(" ", 1)[1]) for part in counts.split(", ")) == 5 and "other 1" in counts
