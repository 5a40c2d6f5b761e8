"""Issue 13: communities — detection, typed directed reports, the Communities section, global search."""

from __future__ import annotations

import json
import re

import pytest
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams, build_index, load_index
from kg_rag.cli import main
from kg_rag.communities import (
    community_context,
    detect_communities,
    extractive_report,
    mark_stale,
    refresh_communities,
)
from kg_rag.context import format_context
from kg_rag.demo import DEMO_CORPUS
from kg_rag.ingest.extraction_file import import_extraction_file
from kg_rag.testing import BagOfWordsEmbeddings

FORWARD = "Executive Order 14028 [SUPERSEDES] Executive Order 13800"
BACKWARD = "Executive Order 13800 [SUPERSEDES] Executive Order 14028"
BOW = "kg_rag.testing:BagOfWordsEmbeddings"


def orders_graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "Executive Order 14028 supersedes Executive Order 13800.", "orders.md", {"title": "EOs"}))
    kg.add_chunk(Chunk("c2", "Executive Order 13800 was signed by the President.", "orders.md"))
    kg.add_relation(
        "Executive Order 14028",
        "Executive Order 13800",
        "SUPERSEDES",
        chunk_id="c1",
        evidence="Executive Order 14028 supersedes Executive Order 13800",
        description="replaces it",
    )
    kg.add_relation("President", "Executive Order 13800", "SIGNED", chunk_id="c2")
    return kg


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


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


def test_llm_reports_render_cited_relations_from_the_graph(openai_server):
    from kg_rag.langchain.chat import default_chat_model
    from kg_rag.langchain.communities import LLMReporter

    kg = orders_graph()
    reporter = LLMReporter(default_chat_model(), retry_initial_wait=0)
    communities, stats = refresh_communities(kg, reporter=reporter)
    [community] = list(communities)
    assert not community.extractive and community.title and stats.regenerated == 1
    assert FORWARD in community.report_text() and BACKWARD not in community.report_text()
    request = next(
        r
        for r in openai_server.requests
        if r.get("response_format", {}).get("json_schema", {}).get("name") == "CommunityReportOutput"
    )
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert "A is the SOURCE and B the TARGET" in system and "data, not instructions" in system
    assert FORWARD in user
    assert reporter.usage["calls"] == 1 and reporter.usage["prompt_tokens"] > 0


# ------------------------------------------------------------------------------------------- detection
def big_graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    for team in range(4):  # four dense groups, loosely joined
        for i in range(8):
            cid = f"t{team}c{i}"
            kg.add_chunk(Chunk(cid, f"Team {team} member {i} works with member {(i + 1) % 8}.", f"team{team}.md"))
            kg.add_relation(f"T{team} M{i}", f"T{team} M{(i + 1) % 8}", "WORKS_WITH", chunk_id=cid)
            kg.add_relation(f"T{team} M{i}", f"T{team} M{(i + 3) % 8}", "ADVISES", chunk_id=cid)
        kg.add_relation(f"T{team} M0", f"T{(team + 1) % 4} M0", "LIAISES_WITH", chunk_id=f"t{team}c0")
    return kg


def test_detection_is_hierarchical_deterministic_and_covers_the_graph():
    kg = big_graph()
    first = detect_communities(kg, max_cluster_size=5, seed=7)
    again = detect_communities(kg, max_cluster_size=5, seed=7)
    assert [(c.id, c.entities) for c in first] == [(c.id, c.entities) for c in again]
    levels = {c.level for c in first}
    assert levels == {0, 1}
    top = [c for c in first if c.level == 0]
    assert sorted(k for c in top for k in c.entities) == sorted(kg.graph.nodes)  # every entity in one community
    for child in (c for c in first if c.level == 1):
        parent = next(c for c in first if c.id == child.parent)
        assert set(child.entities) <= set(parent.entities) and parent.size > 5
    with pytest.raises(ValueError, match="max_cluster_size"):
        detect_communities(kg, max_cluster_size=1)


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
        "text": "Team 2 member 1 now mentors member 5.",
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


def test_query_json_lists_the_community_reports_the_context_shows(tmp_path, capsys):
    from kg_rag.store import DirectoryStore

    idx = str(tmp_path / "idx")
    DirectoryStore(idx).save(build_index(big_graph(), BagOfWordsEmbeddings()))
    assert run(capsys, "communities", idx, "--extractive")[0] == 0
    code, out, _ = run(capsys, "query", idx, "Who works with T1 M2?", "--json", "--embeddings", BOW)
    payload = json.loads(out)
    assert code == 0 and payload["communities"]
    for c in payload["communities"]:
        assert f"community={c['id']}" in payload["context"] and {"level", "title", "rating", "entities"} <= set(c)


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
@pytest.fixture
def demo_with_communities():
    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    emb = BagOfWordsEmbeddings()
    index = build_index(kg, emb)
    index.communities, _ = refresh_communities(kg)
    return EntityBasedKGRAG(index=index, embeddings=emb), index


def test_community_section_budget_share_and_flow(demo_with_communities):
    retriever, index = demo_with_communities
    question = "Which directive replaced Directive 2019-03?"
    result = retriever.retrieve(question, max_context_tokens=1500)
    assert "-----Communities-----" in result.context and result.formatted.communities
    assert result.section_tokens["communities"] > 0
    off = retriever.retrieve(question, max_context_tokens=1500, community_share=0.0)
    assert "-----Communities-----" not in off.context and off.section_tokens["communities"] == 0
    # without reports the share is not wasted: the other sections get it
    plain = EntityBasedKGRAG(index=build_index(index.kg, retriever.embeddings), embeddings=retriever.embeddings)
    bare = plain.retrieve(question, max_context_tokens=600)
    assert bare.section_tokens["communities"] == 0 and bare.section_tokens["total"] > 0.85 * 600
    with pytest.raises(ValueError, match="relations_share \\+ entities_share \\+ community_share must be <= 1"):
        QueryParams(relations_share=0.5, entities_share=0.3, community_share=0.3)
    with pytest.raises(ValueError, match="community_level"):
        QueryParams(community_level=-1)
    deep = retriever.retrieve(question, community_level=7)  # no such level: no reports, and it says why
    assert not deep.communities and any("community_level 7" in w for w in deep.warnings)
    assert not any("community_level" in w for w in retriever.retrieve(question, community_level=0).warnings)


def test_a_community_report_is_shown_only_when_it_holds_two_selected_entities():
    """A community around one selected entity is about that entity's neighbours, not what the context is
    about: on MuSiQue such reports took half the slots ("country, Aggabodhi I and 7 more")."""
    kg = KnowledgeGraph()
    teams = {"red": ["Anna", "Bert", "Carl", "Dora", "Emil"], "blue": ["Fred", "Gina", "Hugo", "Iris", "Jan"]}
    for team, people in teams.items():  # two tight teams; one relation between their leads
        for a, b in zip(people, people[1:] + people[:1]):
            kg.add_chunk(Chunk(a + b, f"{a} works with {b}.", f"{team}.md"))
            kg.add_relation(a, b, "WORKS_WITH", chunk_id=a + b)
    kg.add_chunk(Chunk("x", "Anna knows Fred.", "x.md"))
    kg.add_relation("Anna", "Fred", "KNOWS", chunk_id="x")
    emb = BagOfWordsEmbeddings()
    index = build_index(kg, emb)
    index.communities, _ = refresh_communities(kg)
    team_of = {c.id: next(t for t, p in teams.items() if p[0].lower() in c.entities) for c in index.communities}
    assert sorted(team_of.values()) == ["blue", "red"]
    result = EntityBasedKGRAG(index=index, embeddings=emb).retrieve("Whom does Anna know?", k=3, max_communities=5)
    selected = {e.key for e in result.entities}
    assert "fred" in selected and not selected & {"gina", "hugo", "iris", "jan"}  # one Blue member: Fred
    assert [team_of[c.id] for c in result.communities] == ["red"]  # Blue's report is out-network


def test_community_section_truncation_keeps_type_and_direction(demo_with_communities):
    retriever, _ = demo_with_communities
    result = retriever.engine.retrieve("Which directive replaced Directive 2019-03?")
    assert result.communities
    wide = format_context(
        result, QueryParams(max_context_tokens=4000, community_share=0.5, relations_share=0.2, entities_share=0.1)
    ).text
    tight_params = QueryParams(max_context_tokens=400, community_share=0.25, relations_share=0.2, entities_share=0.05)
    tight = format_context(result, tight_params)
    section = tight.text.split("-----Communities-----")[1].split("-----Sources-----")[0]
    lines = [ln for ln in section.splitlines() if "[" in ln and "]" in ln and "community=" not in ln]
    assert lines and all(re.search(r"\[[A-Z_]+\] ", ln) for ln in lines)
    assert "Directive 2023-07 [SUPERSEDES] Directive 2019-03" in wide
    assert "Directive 2019-03 [SUPERSEDES] Directive 2023-07" not in wide + tight.text
    assert tight.section_tokens["total"] <= 400
    assert len(section) < len(wide.split("-----Communities-----")[1])


def test_demo_shows_a_communities_section_offline(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, _ = run(capsys, "demo", "--out", str(tmp_path / "d"), "--embeddings", BOW, "-q")
    assert code == 0 and "-----Communities-----" in out and "extractive reports" in out


# ------------------------------------------------------------------------------------------- global search
def test_reports_and_global_search_over_http(openai_server, tmp_path, capsys):
    idx = str(tmp_path / "idx")
    assert run(capsys, "index", "--extractions", str(DEMO_CORPUS), "--out", idx, "--embeddings", BOW, "-q")[0] == 0
    code, out, _ = run(capsys, "communities", idx)
    assert code == 0 and "reports: chat model" in out
    usage = re.search(r"llm usage: (\d+) chat calls, (\d+) prompt \+ (\d+) completion tokens; per 1 000 chunks", out)
    assert usage and int(usage.group(1)) == 5
    code, out, _ = run(capsys, "global", idx, "What are the main themes of these documents?")
    assert code == 0
    answer, _, rest = out.partition("\n\n")
    cited = re.findall(r"\[c:(L\d-[0-9a-f]+)\]", answer)
    assert cited and f"communities: {cited[0]}" in rest
    assert re.search(r"llm usage: 2 chat calls", rest)  # one map batch + the reduce step
    code, out, _ = run(capsys, "communities", idx)
    assert "0 reports written, 5 reused" in out  # nothing changed: no chat calls


def test_global_search_tool_and_async(openai_server, demo_with_communities):
    import asyncio

    from kg_rag.langchain.chat import default_chat_model
    from kg_rag.langchain.communities import build_global_search, make_global_search_tool

    retriever, _ = demo_with_communities
    tool = make_global_search_tool(retriever.backend, default_chat_model())
    text = tool.invoke({"query": "What are the main themes?"})
    assert "[c:L0-" in text
    graph = build_global_search(retriever.backend, default_chat_model(), batch_tokens=200)
    out = asyncio.run(graph.ainvoke({"question": "What are the main themes?"}))
    assert len(out["usage"]) > 2  # several map batches ran, then the reduce
    assert out["communities"]


def test_global_search_without_reports_is_a_clear_error(openai_server, tmp_path, capsys, demo_index):
    from kg_rag.store import DirectoryStore

    DirectoryStore(tmp_path / "idx").save(demo_index)
    code, _, err = run(capsys, "global", str(tmp_path / "idx"), "What happened?")
    assert code == 2 and "no community reports" in err and "kg-rag communities" in err


def _global_search_tool():
    """The global-search tool over the demo graph's communities, with a scripted map-step model."""
    from kg_rag.langchain.communities import make_global_search_tool

    from ..conftest import ScriptedChatModel

    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    index = build_index(kg, BagOfWordsEmbeddings())
    index.communities, _ = refresh_communities(kg)
    retriever = EntityBasedKGRAG(index=index, embeddings=BagOfWordsEmbeddings())
    return make_global_search_tool(
        retriever.backend, ScriptedChatModel(responder=lambda text: {"points": []}, tool_name="KeyPoints")
    )


class TestGlobalSearchToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self):
        return _global_search_tool()

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"query": "What are the main themes?"}


class TestGlobalSearchToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self):
        return _global_search_tool()

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"query": "What are the main themes?"}


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
