"""Issue 11, items 3-6: updates keep what they cannot redo, ids stay distinct, delete forgets, revisions replace.

Everything runs through the ``kg-rag`` command line as a user would; extraction goes over real HTTP to the
local OpenAI-compatible test server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.store import DirectoryStore
from kg_rag.store.directory import load_index


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def chat_requests(server) -> int:
    return sum(1 for r in server.requests if r.get("response_format"))


def relations(idx: Path) -> set[tuple[str, str, str]]:
    kg = load_index(idx).kg
    return {(r.source, r.relation_type, r.target) for r in kg.relations()}


@pytest.fixture
def policies(tmp_path, monkeypatch):
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "old.md").write_text("Policy Two supersedes Policy One.\n")
    (folder / "hr.md").write_text("Lars reports to Maria.\n")
    (folder / "misc.txt").write_text("Order Nine revokes Order Eight.\n")
    monkeypatch.chdir(tmp_path)
    return folder


INDEX = ("--out", "idx", "--embeddings", "fake:16", "-q", "--llm-retries", "0")


# ------------------------------------------------------------------ item 3
def test_unchanged_documents_cost_no_llm_calls(openai_server, policies, capsys):
    code, out, _ = run(capsys, "index", "--docs", "policies", *INDEX)
    assert code == 0 and "3 added" in out and "llm usage: 3 chat calls" in out
    first = chat_requests(openai_server)
    assert first == 3

    code, out, _ = run(capsys, "index", "--docs", "policies", *INDEX, "--update")
    assert code == 0 and "3 unchanged" in out
    assert chat_requests(openai_server) == first  # nothing re-extracted

    (policies / "hr.md").write_text("Lars reports to Anna.\n")
    code, out, _ = run(capsys, "index", "--docs", "policies", *INDEX, "--update")
    assert code == 0 and "1 replaced, 2 unchanged" in out
    assert chat_requests(openai_server) == first + 1  # only the changed document
    assert ("lars", "REPORTS_TO", "anna") in relations(Path("idx"))
    assert ("lars", "REPORTS_TO", "maria") not in relations(Path("idx"))  # the old version is gone


@pytest.mark.parametrize("update", [True, False])
def test_a_failing_llm_never_shrinks_the_graph(openai_server, policies, capsys, update):
    assert run(capsys, "index", "--docs", "policies", *INDEX)[0] == 0
    before = relations(Path("idx"))
    assert len(before) == 3
    (policies / "old.md").write_text("Policy One supersedes Policy Two.\n")  # a revision to extract
    (policies / "new.md").write_text("Rule B revokes Rule A.\n")  # and a new document
    openai_server.mode = "error"
    code, out, err = run(capsys, "index", "--docs", "policies", *INDEX, *(["--update"] if update else []))
    assert code == 1
    assert "every extraction failed" in err and "was not changed" in err
    assert "chunks extracted 0, failed 2" in out and "kept the old version of policies/old.md" in out
    assert relations(Path("idx")) == before

    openai_server.mode = "ok"  # the LLM is back: the same command finishes the job
    code, out, _ = run(capsys, "index", "--docs", "policies", *INDEX, *(["--update"] if update else []))
    assert code == 0 and "1 added, 1 replaced, 2 unchanged" in out
    now = relations(Path("idx"))
    assert ("policy one", "SUPERSEDES", "policy two") in now and ("rule b", "REVOKES", "rule a") in now
    assert ("policy two", "SUPERSEDES", "policy one") not in now


def test_a_partly_failing_run_keeps_the_old_version_and_exits_non_zero(openai_server, policies, capsys):
    assert run(capsys, "index", "--docs", "policies", *INDEX)[0] == 0
    before = relations(Path("idx"))
    (policies / "old.md").write_text("Policy One supersedes Policy Two.\n")
    (policies / "new.md").write_text("Rule B revokes Rule A.\n")
    real_reply = openai_server.reply

    def reply(body):  # the revision fails, the new document succeeds
        if "Policy One supersedes" in json.dumps(body):
            raise RuntimeError("boom")
        return real_reply(body)

    openai_server.reply = reply
    code, out, err = run(capsys, "index", "--docs", "policies", *INDEX, "--update")
    assert code == 1 and "extraction failed for 1 chunk;" in err
    assert "1 added" in out and "kept the old version of policies/old.md" in out
    now = relations(Path("idx"))
    assert before <= now and ("rule b", "REVOKES", "rule a") in now


def test_usage_is_printed_even_when_quiet(openai_server, policies, capsys):
    code, out, _ = run(capsys, "index", "--docs", "policies", *INDEX)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("llm usage:"))
    tokens = openai_server.tokens  # what the server reported, summed: the CLI must print exactly that
    assert f"3 chat calls, {tokens['prompt_tokens']} prompt + {tokens['completion_tokens']} completion tokens" in line
    assert tokens["prompt_tokens"] > 1000 and "per 1 000 chunks" in line


# ------------------------------------------------------------------ item 4
def test_document_ids_are_distinct_across_folders_and_delete_takes_what_stats_lists(
    openai_server, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    for team, fact in (("teamA", "Alpha supersedes Beta."), ("teamB", "Gamma supersedes Delta.")):
        (tmp_path / team).mkdir()
        (tmp_path / team / "README.md").write_text(fact)
    assert run(capsys, "index", "--docs", "teamA", *INDEX)[0] == 0
    assert run(capsys, "index", "--docs", "./teamB", *INDEX, "--update")[0] == 0
    code, out, _ = run(capsys, "stats", "idx", "--docs")
    listed = [line.split("\t")[0] for line in out.splitlines()]
    assert listed == ["teamA/README.md", "teamB/README.md"]
    assert ("alpha", "SUPERSEDES", "beta") in relations(Path("idx"))
    code, out, _ = run(capsys, "delete", "idx", "--doc", listed[0], "--embeddings", "fake:16")
    assert code == 0 and "removed 1 document:" in out
    assert [d["id"] for d in DirectoryStore("idx").documents()] == ["teamB/README.md"]
    code, _, err = run(capsys, "delete", "idx", "--doc", "README.md", "--embeddings", "fake:16")
    assert code == 2 and "no document 'README.md'" in err and "stats idx --docs" in err


def test_readme_delete_example_works_after_indexing_a_folder(openai_server, policies, capsys):
    assert run(capsys, "index", "--docs", "./policies", *INDEX)[0] == 0
    code, out, _ = run(capsys, "delete", "idx", "--doc", "policies/old.md", "--embeddings", "fake:16")
    assert code == 0 and "removed 1 document: 1 chunk, 1 relation" in out


# ------------------------------------------------------------------ item 5
SECRET = "CONFIDENTIAL: drafted by Agent Smith"


def extraction_docs(tmp_path: Path, name: str, docs: list[dict]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"format": "kg-rag-extractions", "documents": docs}))
    return str(path)


def test_delete_forgets_everything_the_document_contributed(tmp_path, capsys):
    public = {
        "id": "public.md",
        "text": "Policy X supersedes Policy W. Agent Smith wrote Policy X.",
        "extraction": {
            "entities": [{"name": "Agent Smith", "type": "PERSON", "description": "An author of policies."}],
            "relations": [{"source": "Policy X", "target": "Policy W", "type": "SUPERSEDES"}],
        },
    }
    secret = {
        "id": "secret.md",
        "text": f"{SECRET}. Policy X supersedes Policy W.",
        "extraction": {
            "entities": [{"name": "Agent Smith", "type": "PERSON", "description": SECRET}],
            "relations": [
                {"source": "Policy X", "target": "Policy W", "type": "SUPERSEDES", "description": SECRET},
                {"source": "Agent Smith", "target": "Policy X", "type": "DRAFTED", "evidence": SECRET},
            ],
        },
    }
    src = extraction_docs(tmp_path, "x.json", [public, secret])
    idx = str(tmp_path / "idx")
    assert run(capsys, "index", "--extractions", src, "--out", idx, "--embeddings", "fake:16", "-q")[0] == 0
    # a failed extraction recorded against the secret document is forgotten too
    store = DirectoryStore(idx)
    index = store.load()
    index.report.fail("secret.md", f"{SECRET} failed")
    store.save(index)
    assert run(capsys, "communities", idx, "--extractive")[0] == 0  # reports cite the secret's relations...
    reports = [p for p in Path(idx).rglob("communities*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert reports  # ...so a delete must drop them (a stale report used to keep it, and be served)
    code, out, _ = run(capsys, "query", idx, "Who drafted Policy X?", "--embeddings", "fake:16", "--no-answer")
    assert SECRET in out  # it is there before the delete

    assert run(capsys, "delete", idx, "--doc", "secret.md", "--embeddings", "fake:16")[0] == 0
    code, out, _ = run(capsys, "query", idx, "Who drafted Policy X?", "--embeddings", "fake:16", "--no-answer")
    assert code == 0 and SECRET not in out and "Agent Smith" in out  # the entity stays, its secret does not
    leftovers = [p for p in Path(idx).rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leftovers == []  # not in records, the report, vectors' ids, or an old generation
    kept = load_index(idx)
    assert kept.kg.find_relations("Policy X", "Policy W", "SUPERSEDES")  # still supported by public.md
    assert not kept.kg.find_relations("Agent Smith", "Policy X")
    assert kept.report.failures == {}


# ------------------------------------------------------------------ item 6
def test_a_revised_document_replaces_its_old_version(tmp_path, capsys):
    def version(quote: str, src: str, tgt: str) -> dict:
        return {
            "id": "orders.md",
            "text": quote,
            "extraction": {"relations": [{"source": src, "target": tgt, "type": "SUPERSEDES", "evidence": quote}]},
        }

    idx = str(tmp_path / "idx")
    v1 = extraction_docs(tmp_path, "v1.json", [version("A supersedes B.", "A", "B")])
    v2 = extraction_docs(tmp_path, "v2.json", [version("B supersedes A.", "B", "A")])
    assert run(capsys, "index", "--extractions", v1, "--out", idx, "--embeddings", "fake:16", "-q")[0] == 0
    assert run(capsys, "index", "--extractions", v2, "--out", idx, "--update", "--embeddings", "fake:16", "-q")[0] == 0
    kg = load_index(idx).kg
    rels = list(kg.relations())
    assert [(r.source, r.target) for r in rels] == [("b", "a")]
    assert [e.quote for e in rels[0].evidence] == ["B supersedes A."]


def test_duplicate_ids_in_one_file_are_an_error_naming_them(tmp_path, capsys):
    doc = {"id": "same.md", "text": "A supersedes B.", "extraction": {}}
    other = {"id": "other.md", "text": "C.", "extraction": {}}
    src = extraction_docs(tmp_path, "dup.json", [doc, other, doc])
    code, _, err = run(capsys, "index", "--extractions", src, "--out", str(tmp_path / "idx"), "--embeddings", "fake")
    assert code == 2 and "'same.md'" in err and "more than once" in err
    assert not (tmp_path / "idx" / "kg-rag-index.json").exists()


def test_an_unchanged_update_writes_no_new_generation(tmp_path, capsys, monkeypatch):
    """Issue 46: an unchanged ``index --update`` whose folder holds a file it skips wrote a whole new generation
    (only to count the skip again), which on a nearly full disk failed with ENOSPC. It writes nothing."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Order B supersedes Order A.")
    (tmp_path / "docs" / "notes.odt").write_bytes(b"PK\x03\x04")
    argv = ["index", "--docs", "docs", "--out", "idx", "--no-extract", "--embeddings", "fake:16", "-q"]
    assert main(argv) == 0
    pointer = (tmp_path / "idx" / "kg-rag-index.json").read_text()
    generations = sorted(p.name for p in (tmp_path / "idx").glob("gen-*"))
    capsys.readouterr()
    assert main([*argv, "--update"]) == 0
    out = capsys.readouterr().out
    assert "not read (unsupported format): 1 file: docs/notes.odt" in out and "1 unchanged" in out
    assert (tmp_path / "idx" / "kg-rag-index.json").read_text() == pointer
    assert sorted(p.name for p in (tmp_path / "idx").glob("gen-*")) == generations
