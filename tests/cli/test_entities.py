"""``kg-rag entities merge|split|list`` (``kg_rag/cli/entities.py``): resolution by hand from the command line,
recorded so a re-index keeps it; one-line errors. Issue 43 §5."""

from __future__ import annotations

import json
import shutil

from kg_rag.demo import DEMO_CORPUS
from kg_rag.store import open_store

from ..cli_support import one_line_error, run


def _names(idx) -> set[str]:
    return {e.name for e in open_store(str(idx)).load().kg.entities()}


def test_merge_split_and_list_from_the_command_line(demo_idx, tmp_path, capsys):
    idx = tmp_path / "idx"
    shutil.copytree(demo_idx, idx)
    code, out, _ = run(capsys, "entities", "merge", str(idx), "Maria Chen", "Operations Board")
    assert code == 0 and "merged 'Operations Board' into 'Maria Chen'" in out
    assert "Operations Board" not in _names(idx)
    code, out, _ = run(capsys, "entities", "list", str(idx))
    assert code == 0 and "Operations Board\t-> Maria Chen\t(manual)" in out
    # a re-index of the same file keeps the decision
    assert run(capsys, "index", "--extractions", str(DEMO_CORPUS), "--out", str(idx), "-q")[0] == 0
    assert "Operations Board" not in _names(idx)
    code, out, _ = run(capsys, "entities", "split", str(idx), "Maria Chen", "Operations Board")
    assert code == 0 and "split 'Operations Board' from 'Maria Chen'" in out
    assert "Operations Board" in _names(idx)
    assert "(kept apart)" in run(capsys, "entities", "list", str(idx))[1]
    assert run(capsys, "index", "--extractions", str(DEMO_CORPUS), "--out", str(idx), "-q")[0] == 0
    assert "Operations Board" in _names(idx)  # the split holds on a re-index too


def test_what_cannot_be_merged_or_split_is_one_line_exit_2(demo_idx, tmp_path, capsys):
    idx = tmp_path / "idx"
    shutil.copytree(demo_idx, idx)
    one_line_error(capsys, ["entities", "merge", str(idx), "Maria Chen", "Nobody"], "no entity named 'Nobody'")
    one_line_error(capsys, ["entities", "split", str(idx), "Maria Chen", "Lars Eriksen"], "was not merged")
    one_line_error(capsys, ["entities", "list", str(tmp_path / "none")], "no such index directory")
    assert "no entity was merged into another" in run(capsys, "entities", "list", str(idx))[1]


def test_relations_lists_what_the_graph_says_in_its_stored_direction(demo_idx, capsys):
    code, out, _ = run(capsys, "relations", str(demo_idx), "--entity", "Directive 2023-07", "--evidence")
    assert code == 0
    said = '"Directive 2023-07 supersedes Directive 2019-03"'
    assert f"Directive 2023-07 -[SUPERSEDES]-> Directive 2019-03  {said}" in out
    assert "Operations Board -[CREATED]-> Directive 2023-07" in out  # touching it as the target counts too
    assert all("Directive 2023-07" in line for line in out.splitlines()[:-1])
    code, out, _ = run(capsys, "relations", str(demo_idx), "--type", "supersedes")
    assert code == 0 and out.splitlines() == ["Directive 2023-07 -[SUPERSEDES]-> Directive 2019-03", "1 relation"]
    code, out, _ = run(capsys, "relations", str(demo_idx), "--limit", "1")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 and "-[" in lines[0] and "; the first 1 shown (--limit)" in lines[1]
    code, out, _ = run(capsys, "relations", str(demo_idx), "--type", "SUPERSEDES", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows and all(r["type"] == "SUPERSEDES" and r["source"] and r["target"] for r in rows)


def test_relations_of_an_unknown_entity_is_one_line_exit_2(demo_idx, tmp_path, capsys):
    one_line_error(capsys, ["relations", str(demo_idx), "--entity", "Nobody"], "no entity named 'Nobody'")
    one_line_error(capsys, ["relations", str(tmp_path / "none")], "no such index directory")


def test_relations_of_a_merged_name_are_its_entitys_and_an_unknown_type_gets_a_hint(demo_idx, tmp_path, capsys):
    idx = tmp_path / "idx"
    shutil.copytree(demo_idx, idx)
    assert run(capsys, "entities", "merge", str(idx), "Maria Chen", "Operations Board")[0] == 0
    code, out, _ = run(capsys, "relations", str(idx), "--entity", "Operations Board")
    assert code == 0 and "Maria Chen -[" in out  # the merged name stands for the entity it was merged into
    code, out, _ = run(capsys, "relations", str(idx), "--type", "SUPERSEDE")
    assert code == 0 and "0 relations; no relation is of type SUPERSEDE (did you mean SUPERSEDES" in out
