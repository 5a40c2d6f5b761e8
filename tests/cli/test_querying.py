"""``kg-rag query`` (``kg_rag/cli/querying.py``): presets, filters and entity flags, budgets, empty indexes and paths,
and what ``--json`` lists."""

from __future__ import annotations

import json

import pytest

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, build_index
from kg_rag.cli import main
from kg_rag.testing import BagOfWordsEmbeddings

from ..cli_support import one_line_error, run
from ..communities.graphs import big_graph

BOW = "kg_rag.testing:BagOfWordsEmbeddings"


# ------------------------------------------------------------------------- query --json and the community reports


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


QUESTION = "Who does Lars Eriksen report to, and who manages the Data Platform team?"


def test_an_entity_name_with_a_comma_is_one_name_on_the_command_line(tmp_path, capsys):
    """ "Washington, D.C." used to be split into "Washington" and "D.C.": the wrong entity was excluded, and the
    one named stayed. A flag value that names an entity is one name; otherwise a list, quotes honoured."""
    from kg_rag.cli import main
    from kg_rag.store import DirectoryStore
    from kg_rag.testing import BagOfWordsEmbeddings

    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "The agency moved from Washington, D.C. to Denver.", "d1"))
    kg.add_chunk(Chunk("c2", "Washington signed the charter of the agency.", "d2"))
    kg.add_relation("Agency", "Washington, D.C.", "MOVED_FROM", chunk_id="c1")
    kg.add_relation("Agency", "Denver", "MOVED_TO", chunk_id="c1")
    kg.add_relation("Washington", "Agency", "SIGNED_CHARTER_OF", chunk_id="c2")
    DirectoryStore(tmp_path / "idx").save(build_index(kg, BagOfWordsEmbeddings()))
    argv = ["query", str(tmp_path / "idx"), "Where did the agency move from?", "--no-answer"]
    argv += ["--embeddings", "kg_rag.testing:BagOfWordsEmbeddings"]

    def graph_half(*flags: str) -> tuple[str, str]:
        assert main([*argv, *flags]) == 0
        out, err = capsys.readouterr()
        return out.split("-----Sources-----")[0], err

    shown, _ = graph_half()
    assert "|Washington, D.C.|" in shown and "|Washington|" in shown
    shown, err = graph_half("--exclude-entities", "Washington, D.C.")
    assert "Washington, D.C." not in shown and "|Washington|" in shown and "warning" not in err
    shown, err = graph_half("--exclude-entities", '"Washington, D.C.",Denver')
    assert "Washington, D.C." not in shown and "Denver" not in shown and "|Washington|" in shown
    shown, err = graph_half("--exclude-entities", "Denver, Nowhere")
    assert "Denver" not in shown and "no entity named 'Nowhere'" in err


def test_entity_filters_are_cli_flags(demo_index, tmp_path, capsys):
    from kg_rag.cli import main
    from kg_rag.store import DirectoryStore

    DirectoryStore(tmp_path / "idx").save(demo_index)
    argv = [
        "query",
        str(tmp_path / "idx"),
        QUESTION,
        "--no-answer",
        "--embeddings",
        "tests.conftest:BagOfWordsEmbeddings",
    ]
    assert main(argv) == 0
    assert "-[REPORTS_TO]-> Priya Nair" in capsys.readouterr().out
    assert main([*argv, "--exclude-entities", "Priya Nair", "--include-entities", "Lars Eriksen,Nobody"]) == 0
    out, err = capsys.readouterr()
    graph_half = out.split("-----Sources-----")[0]
    assert "Priya Nair" not in graph_half and "Lars Eriksen" in graph_half
    assert "warning: include_entities: no entity named 'Nobody'" in err


def test_unknown_preset_is_named(demo_idx, capsys):
    argv = ["query", str(demo_idx), "who?", "--preset", "bogus", "--embeddings", "fake:16"]
    one_line_error(capsys, argv, "unknown preset 'bogus'; choose one of default, seed003")


def test_query_on_an_empty_index_says_so(tmp_path, capsys):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from kg_rag import KnowledgeGraph

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "empty.txt").write_text("   \n")
    argv = ["index", "--docs", str(tmp_path / "docs"), "--no-extract", "--out", str(tmp_path / "idx")]
    assert main([*argv, "--embeddings", "fake:16", "-q"]) == 2  # no document: nothing to build
    assert "no document could be read from the input (1 item skipped); nothing was written" in capsys.readouterr().err
    # at most the writer's lock file is left (removing a lock file another writer may be waiting on is unsafe),
    # and a later build there is not refused because of it
    assert [p.name for p in (tmp_path / "idx").iterdir()] == [".kg-rag-writer.lock"]
    (tmp_path / "docs" / "one.txt").write_text("One line of text.")
    assert main([*argv, "--embeddings", "fake:16", "-q"]) == 0
    assert main(["delete", str(tmp_path / "idx"), "--doc", "docs/one.txt"]) == 0  # every document deleted: empty index
    capsys.readouterr()
    code = main(["query", str(tmp_path / "idx"), "who?", "--embeddings", "fake:16"])
    out, err = capsys.readouterr()
    assert code == 0 and "warning: the index has no chunks" in err and "Traceback" not in err
    retriever = EntityBasedKGRAG.from_graph(KnowledgeGraph(), DeterministicFakeEmbedding(size=16))
    assert retriever.invoke("who?") == []


def test_edge_type_spellings_and_an_empty_allow_list(tmp_path, capsys, bow_embeddings, demo_index):

    r = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings)
    result = r.retrieve("Who does Lars Eriksen report to?", edge_types=["reports to"])
    assert not result.warnings and {x.relation_type for x in result.relations} == {"REPORTS_TO"}
    result = r.retrieve("Who does Lars Eriksen report to?", edge_types=[])
    assert "edge_types is empty: no relation may be walked or shown" in result.warnings and not result.relations
    assert main(["query", str(tmp_path), "who?", "--edge-types", ","]) == 2
    assert "--edge-types names no relation type" in capsys.readouterr().err


def test_query_budget_below_the_minimum_is_refused_by_the_flag(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["query", "idx", "question", "--max-context-tokens", "5"])
    assert exit_info.value.code == 2 and "at least 50" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags", [["--k", "0"], ["--max-hops", "-1"], ["--direction", "sideways"]], ids=["k", "hops", "direction"]
)
def test_a_bad_flag_value_is_one_line_that_names_the_help(capsys, flags):
    with pytest.raises(SystemExit) as exit_info:
        main(["query", "idx", "question", *flags])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert err.startswith("kg-rag query: error: argument " + flags[0]) and "kg-rag query --help" in err


def test_query_with_an_empty_index_path_says_so(capsys):
    assert main(["query", "", "Who approved it?"]) == 2
    assert "the index path is empty" in capsys.readouterr().err


def test_a_relation_type_the_index_does_not_have_is_refused_in_one_line(demo_idx, capsys):
    """A new user's report: ``--edge-types NOPE_TYPE`` only warned, and answered with no graph at all (the
    explorer already refused it). Spellings of a known type ("reports to") still pass."""
    q = ["query", str(demo_idx), "Who does Lars Eriksen report to?", "--no-answer"]
    err = one_line_error(capsys, [*q, "--edge-types", "REPORTS_TO,NOPE_TYPE"], "--edge-types: no relation of type")
    assert "'NOPE_TYPE'" in err and "'REPORTS_TO'" not in err and f"kg-rag stats {demo_idx} --types" in err
    one_line_error(capsys, [*q, "--exclude-edge-types", "nope"], "--exclude-edge-types: no relation of type 'nope'")
    code, out, _ = run(capsys, *q, "--edge-types", "reports to")
    assert code == 0 and "-[REPORTS_TO]->" in out


def test_ids_on_the_terminal_are_quoted(tmp_path, capsys):
    """Issue 46: the top-chunks list printed raw ids, so a file name with line breaks wrote lines of its own on
    stderr (``[9] chunk=FORGED doc=official``). Every id that is not one plain token is now JSON-quoted, line
    breaks and other unprintable characters escaped."""
    from kg_rag.cli.common import shown_id

    docs = tmp_path / "docs"
    docs.mkdir()
    forged = "note\n[9] chunk=FORGED doc=official\n  9.9999  FORGED\u2028.md"
    (docs / forged).write_text("Directive 2023-07 supersedes Directive 2019-03.")
    (docs / "plain.md").write_text("Directive 2019-03 was issued by the Board.")
    idx = str(tmp_path / "idx")
    assert run(capsys, "index", "--docs", str(docs), "--out", idx, "--no-extract", "--embeddings", "fake:16")[0] == 0
    code, out, err = run(capsys, "query", idx, "Directive", "--no-answer", "--embeddings", "fake:16")
    assert code == 0, err
    listed = err[err.index("top chunks") :].splitlines()[1:3]
    assert len(listed) == 2 and all(line.startswith("  ") for line in listed), err
    quoted = next(line for line in listed if "FORGED" in line)
    assert [line for line in err.splitlines() if "FORGED" in line] == [quoted]  # no line of its own
    assert '"docs/note\\n[9] chunk=FORGED doc=official\\n  9.9999  FORGED\\u2028.md#0000-' in quoted
    assert any(line.split()[1].startswith("docs/plain.md#0000-") for line in listed)  # a plain id is as it was
    assert shown_id("L0-3") == "L0-3" and shown_id("a b") == '"a b"' and shown_id("x\u202ey") == '"x\\u202ey"'
