"""``kg-rag communities`` and ``kg-rag global`` (``kg_rag/cli/communities.py``): levels, index checks before the chat
model, reports and global search over HTTP."""

from __future__ import annotations

import json
import re
import shutil

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS

from ..cli_support import one_line_error, run

BOW = "kg_rag.testing:BagOfWordsEmbeddings"


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


def test_communities_level_above_the_highest_names_the_levels(demo_idx, tmp_path, capsys, no_chat_model):
    idx = shutil.copytree(demo_idx, tmp_path / "idx")
    assert main(["communities", str(idx), "--json"]) == 0
    levels = sorted({c["level"] for c in json.loads(capsys.readouterr().out)["communities"]})
    assert levels and levels[0] == 0
    shown = ", ".join(map(str, levels))
    err = one_line_error(capsys, ["communities", str(idx), "--level", "5"], "--level 5: the index has no communities")
    assert f"(it has levels {shown})" in err
    assert main(["communities", str(idx), "--level", "0"]) == 0
    assert " level 0 " in capsys.readouterr().out
    one_line_error(capsys, ["global", str(idx), "q", "--level", "5"], f"(the index has levels {shown})")


def test_global_checks_the_index_before_the_chat_model(tmp_path, demo_idx, capsys, no_chat_model):
    one_line_error(capsys, ["global", str(tmp_path / "nonexist"), "x"], "nonexist: no such index directory")
    one_line_error(capsys, ["global", str(demo_idx), "x"], "no community reports (run `kg-rag communities")


def test_global_search_without_reports_is_a_clear_error(openai_server, tmp_path, capsys, demo_index):
    from kg_rag.store import DirectoryStore

    DirectoryStore(tmp_path / "idx").save(demo_index)
    code, _, err = run(capsys, "global", str(tmp_path / "idx"), "What happened?")
    assert code == 2 and "no community reports" in err and "kg-rag communities" in err


# ------------------------------------------------------------------------------------------- the listing
def _many_communities(tmp_path) -> str:
    """An index of 30 separate three-person teams: 30 communities at level 0."""
    from kg_rag import Chunk, KnowledgeGraph, build_index, save_index
    from kg_rag.testing import BagOfWordsEmbeddings

    kg = KnowledgeGraph()
    for t in range(30):
        kg.add_chunk(Chunk(f"c{t}", f"Team {t}: Ann{t} and Bob{t} report to Cy{t}.", f"team-{t}.md"))
        for a in (f"Ann{t}", f"Bob{t}"):
            kg.add_relation(a, f"Cy{t}", "REPORTS_TO", chunk_id=f"c{t}")
    save_index(build_index(kg, BagOfWordsEmbeddings()), tmp_path / "many")
    return str(tmp_path / "many")


def test_communities_prints_a_summary_and_all_lines_with_all(tmp_path, capsys, no_chat_model):
    """A large corpus has thousands of communities: by default each level's count and its largest ones, and how
    to see the rest; ``--all`` lists every one, as the command did before."""
    from kg_rag.cli.communities import SUMMARY_PER_LEVEL

    idx = _many_communities(tmp_path)
    code, out, _ = run(capsys, "communities", idx)
    assert code == 0
    lines = [line for line in out.splitlines() if re.match(r"L\d-[0-9a-f]+  level", line)]
    assert len(lines) == SUMMARY_PER_LEVEL < 30
    assert re.search(r"^level 0: 30 communities, 3-3 entities each \(median 3\); the 10 largest:$", out, re.M)
    assert "... and 20 more (--all lists every one" in out
    code, out, _ = run(capsys, "communities", idx, "--all")
    assert code == 0 and len([line for line in out.splitlines() if re.match(r"L\d-[0-9a-f]+  level", line)]) == 30
    assert "more (--all" not in out
