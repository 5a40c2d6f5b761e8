"""OpenIE (HippoRAG format) import: small self-made data, and the real MuSiQue files when present."""

from __future__ import annotations

import json

import pytest

from kg_rag import KnowledgeGraph, build_index, load_index, save_index
from kg_rag.cli import main
from kg_rag.ingest import import_openie
from kg_rag.ingest.openie import passage_id

from ..conftest import require_musique

CORPUS = [
    {"title": "Lyon", "text": "Lyon is located in France. Lyon is a city."},
    {"title": "Lyon", "text": "Another Lyon passage with the same title."},
    {"title": "Orphan", "text": "A passage without OpenIE output."},
]
OPENIE = {
    "docs": [
        {
            "passage": "Lyon\n" + CORPUS[0]["text"],
            "extracted_entities": ["Lyon", "France", 7],
            "extracted_triples": [
                ["Lyon", "is located in", "France"],
                ["Lyon", "is a"],
                ["Lyon", "is", "city", "x"],
                ["Lyon", 3, "France"],
                ["Lyon", "is", "  "],
                ["Lyon", "same as", "lyon"],
            ],
        },
        {
            "title": "Lyon",
            "text": CORPUS[1]["text"],
            "extracted_entities": [],
            "extracted_triples": [["Paris", "superseded by", "Lyon"]],
        },
        {"title": "Nowhere", "text": "not in corpus", "extracted_triples": [["A", "x", "B"]]},
    ]
}


def test_import_small_openie_counts_skips_and_keeps_direction(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(CORPUS))
    (tmp_path / "o.json").write_text(json.dumps(OPENIE))
    kg = KnowledgeGraph()
    report = import_openie(kg, tmp_path / "o.json", tmp_path / "c.json")
    assert dict(report.skipped) == {
        "wrong_arity": 2,
        "non_string_member": 1,
        "empty_member": 1,
        "self_loop": 1,
        "bad_entity": 1,
        "passage_not_in_corpus": 1,
    }
    assert len(kg.chunks) == 3 and kg.chunks[passage_id(2)].text == CORPUS[2]["text"]
    assert [kg.docs[passage_id(i)].title for i in range(3)] == ["Lyon", "Lyon", "Orphan"]  # `stats --docs` shows it
    rel = kg.find_relations("Lyon", "France")[0]
    assert rel.relation_type == "LOCATED_IN" and rel.predicate == "is located in"
    assert rel.chunk_id == passage_id(0)
    passive = kg.find_relations("Paris", "Lyon")[0]  # kept as extracted, not turned into Lyon SUPERSEDES Paris
    assert passive.relation_type == "SUPERSEDED_BY" and passive.description == "superseded by"
    assert kg.find_relations("Lyon", "Paris") == []


def test_bad_openie_files_give_clear_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not valid JSON"):
        import_openie(KnowledgeGraph(), bad)
    (tmp_path / "shape.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="docs"):
        import_openie(KnowledgeGraph(), tmp_path / "shape.json")
    with pytest.raises(FileNotFoundError, match="missing.json"):
        import_openie(KnowledgeGraph(), tmp_path / "missing.json")


@pytest.mark.shared_data
def test_musique_import_round_trips(tmp_path, fake_embeddings):
    data = require_musique()
    kg = KnowledgeGraph()
    report = import_openie(kg, data / "openie_gpt-3.5-turbo-1106.json", data / "corpus.json")
    stats = kg.stats()
    assert stats["chunks"] == 1890 and stats["documents"] == 1890
    assert stats["relations"] > 15000 and stats["entities"] > 15000
    assert report.skipped["wrong_arity"] == 185
    assert sum(report.skipped.values()) >= 185

    index = build_index(kg, fake_embeddings, report=report)
    save_index(index, tmp_path / "musique")
    loaded = load_index(tmp_path / "musique")
    assert list(loaded.kg.entity_records()) == list(kg.entity_records())
    assert list(loaded.kg.relation_records()) == list(kg.relation_records())  # direction, type, provenance
    assert list(loaded.kg.chunk_records()) == list(kg.chunk_records())
    assert loaded.report.to_dict() == report.to_dict()
    assert (loaded.entities.vectors == index.entities.vectors).all()


def test_placeholder_names_become_no_entity(tmp_path):
    """An OpenIE "unknown" object would join every passage whose extractor wrote it; a lower-case pronoun
    likewise. Both are skipped and counted; a capitalised title ("It", the novel) stays an entity."""
    corpus = [
        {"title": "Betrayed", "text": "Betrayed is a 1917 film. Whether it survives is unknown."},
        {"title": "Caspere", "text": "Ben Caspere is killed; the killer is unknown."},
        {"title": "It", "text": "It is a novel by Stephen King."},
    ]
    openie = {
        "docs": [
            {
                "passage": "Betrayed\n" + corpus[0]["text"],
                "extracted_entities": ["Betrayed", "unknown"],
                "extracted_triples": [["Betrayed", "survives", "unknown"], ["it", "is a", "1917 film"]],
            },
            {
                "passage": "Caspere\n" + corpus[1]["text"],
                "extracted_entities": ["Ben Caspere", "unknown"],
                "extracted_triples": [["Ben Caspere", "is killed by", "unknown"]],
            },
            {
                "passage": "It\n" + corpus[2]["text"],
                "extracted_entities": ["It", "Stephen King"],
                "extracted_triples": [["It", "is a novel by", "Stephen King"]],
            },
        ]
    }
    (tmp_path / "c.json").write_text(json.dumps(corpus))
    (tmp_path / "o.json").write_text(json.dumps(openie))
    kg = KnowledgeGraph()
    report = import_openie(kg, tmp_path / "o.json", tmp_path / "c.json")
    assert report.skipped["placeholder_member"] == 3 and report.skipped["placeholder_entity"] == 2
    assert "'Betrayed' -> 'unknown'" in report.examples["placeholder_member"]
    assert kg.get_entity("unknown") is None and kg.get_entity("it") is not None  # "It" the novel
    assert [r.target for r in kg.find_relations("It", "Stephen King")] == ["stephen king"]


def test_lists_that_are_strings_and_empty_passages_are_counted_not_read(tmp_path):
    """A string where the triple or entity list belongs used to be read letter by letter (one-letter
    entities); a `passage: null` became an empty chunk."""
    openie = {
        "docs": [
            {"passage": "Lyon\nLyon is in France.", "extracted_entities": "Lyon", "extracted_triples": "Lyon in"},
            {"passage": None, "extracted_entities": ["Ghost"], "extracted_triples": [["Ghost", "in", "Nowhere"]]},
            {"passage": "Paris\nParis is in France.", "extracted_triples": [["Paris", "is in", "France"]]},
        ]
    }
    (tmp_path / "o.json").write_text(json.dumps(openie))
    kg = KnowledgeGraph()
    report = import_openie(kg, tmp_path / "o.json")
    assert report.skipped["entities_not_a_list"] == 1 and report.skipped["triples_not_a_list"] == 1
    assert report.skipped["empty_passage"] == 1
    assert len(kg.chunks) == 2 and all(c.text.strip() for c in kg.chunks.values())
    assert kg.get_entity("L") is None and kg.get_entity("Ghost") is None
    assert kg.find_relations("Paris", "France")


def test_a_paragraph_in_a_name_field_is_no_entity(tmp_path):
    long_name = "Lyon " + "and more words " * 40_000  # ~600 000 characters
    openie = {
        "docs": [
            {
                "passage": "Lyon\nLyon is in France.",
                "extracted_entities": [long_name, "Lyon"],
                "extracted_triples": [[long_name, "is in", "France"], ["Lyon", "is in", "France"]],
            }
        ]
    }
    (tmp_path / "o.json").write_text(json.dumps(openie))
    kg = KnowledgeGraph()
    report = import_openie(kg, tmp_path / "o.json")
    assert report.skipped["long_name_entity"] == 1 and report.skipped["long_name_member"] == 1
    assert len(report.examples["long_name_member"][0]) < 200  # the report names it without printing it
    assert {e.name for e in kg.entities()} == {"Lyon", "France"}


def test_a_blank_passage_never_lends_its_triples_to_another(tmp_path):
    """After a junk doc, a blank passage's triples used to land on the next real passage by position."""
    openie = {
        "docs": [
            "junk",
            {
                "passage": None,
                "extracted_entities": ["Yvonne Blank"],
                "extracted_triples": [["Yvonne Blank", "in", "Nowhere"]],
            },
            {"passage": "Bea\nBea lives in Berlin.", "extracted_triples": [["Bea", "lives in", "Berlin"]]},
        ]
    }
    (tmp_path / "o.json").write_text(json.dumps(openie))
    kg = KnowledgeGraph()
    report = import_openie(kg, tmp_path / "o.json")
    assert report.skipped["bad_doc"] == 1 and report.skipped["empty_passage"] == 1
    assert kg.get_entity("Yvonne Blank") is None and kg.get_entity("Nowhere") is None
    (tmp_path / "c.json").write_text(json.dumps([{"title": "Bea", "text": "Bea lives in Berlin."}]))
    kg2 = KnowledgeGraph()
    report2 = import_openie(kg2, tmp_path / "o.json", tmp_path / "c.json")
    assert report2.skipped["empty_passage"] == 1 and "passage_not_in_corpus" not in report2.skipped
    assert kg2.get_entity("Yvonne Blank") is None and kg2.find_relations("Bea", "Berlin")


def test_a_second_corpus_file_never_replaces_the_first_ones_passages_by_position(tmp_path, monkeypatch):
    """Position ids (``passage-00000``) of a second corpus file used to replace the first file's passages."""

    first = [{"title": "Lyon", "text": "Lyon is located in France."}, {"title": "Oslo", "text": "Oslo is in Norway."}]
    second = [{"title": "Bergen", "text": "Bergen is a city in Norway."}]
    triples = {
        "docs": [{"title": "Bergen", "text": second[0]["text"], "extracted_triples": [["Bergen", "in", "Norway"]]}]
    }
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    files = {"a/corpus.json": first, "b/corpus.json": second, "ob.json": triples, "oa.json": {"docs": []}}
    for name, data in files.items():
        (tmp_path / name).write_text(json.dumps(data))
    idx, fake = str(tmp_path / "idx"), ["--embeddings", "fake:16", "-q"]

    def index(corpus: str, openie: str, *extra: str) -> int:
        return main(
            [
                "index",
                "--corpus",
                str(tmp_path / corpus),
                "--openie",
                str(tmp_path / openie),
                "--out",
                idx,
                *extra,
                *fake,
            ]
        )

    assert index("a/corpus.json", "oa.json") == 0
    assert index("b/corpus.json", "ob.json", "--update") == 2  # the same file name, another file
    kg = load_index(idx).kg
    assert sorted(c.text for c in kg.chunks.values()) == sorted(p["text"] for p in first)  # nothing replaced
    (tmp_path / "a/corpus.json").write_text(json.dumps([*first, *second]))  # appended to the first file instead
    assert index("a/corpus.json", "ob.json", "--update") == 0
    kg = load_index(idx).kg
    assert [kg.chunks[f"passage-0000{i}"].text for i in range(3)] == [p["text"] for p in [*first, *second]]
    assert kg.find_relations("Bergen", "Norway")[0].chunk_id == "passage-00002"
    (tmp_path / "a/corpus.json").write_text(json.dumps([{**first[0], "text": "Lyon is in France."}, *first[1:]]))
    assert index("a/corpus.json", "oa.json", "--update") == 0  # the same file, edited: its passage is updated
    assert load_index(idx).kg.chunks["passage-00000"].text == "Lyon is in France."
    rel = tmp_path / "rel"  # the same file named relative to two different folders is still the same file
    (rel / "data").mkdir(parents=True)
    (rel / "data/c.json").write_text(json.dumps(first))
    here = KnowledgeGraph()
    monkeypatch.chdir(rel)
    import_openie(here, {"docs": []}, "data/c.json")
    (rel / "data/c.json").write_text(json.dumps([first[0], {**first[1], "text": "Oslo is the capital."}]))
    monkeypatch.chdir(rel / "data")
    import_openie(here, {"docs": []}, "c.json")
    assert here.chunks["passage-00001"].text == "Oslo is the capital."
    (rel / "other/data").mkdir(parents=True)  # another file at the same relative path is another file
    (rel / "other/data/c.json").write_text(json.dumps(second))
    monkeypatch.chdir(rel / "other")
    with pytest.raises(ValueError, match="already names another passage"):
        import_openie(here, {"docs": []}, "data/c.json")
    old = KnowledgeGraph()  # passages recorded without a file (older releases, parsed inputs) are not refused
    import_openie(old, {"docs": []}, first)
    import_openie(old, {"docs": []}, second, names=("o", str(tmp_path / "b/corpus.json")))
    assert old.chunks["passage-00000"].text == second[0]["text"]


# one OpenIE passage about Alpha (its title, then its text) and the corpus passage it comes from
ALPHA_OPENIE = {
    "docs": [
        {
            "passage": "Alpha\nAlpha supersedes Beta.",
            "extracted_entities": ["Alpha", "Beta"],
            "extracted_triples": [["Alpha", "supersedes", "Beta"]],
        }
    ]
}


ALPHA_CORPUS = [{"title": "Alpha", "text": "Alpha supersedes Beta."}]


def test_openie_mismatch_leaves_the_graph_unchanged(tmp_path):
    from kg_rag import KnowledgeGraph, import_openie

    kg = KnowledgeGraph()
    import_openie(kg, ALPHA_OPENIE, ALPHA_CORPUS)
    before = kg.stats()
    with pytest.raises(ValueError, match="none of its passages is in the corpus"):
        import_openie(kg, ALPHA_OPENIE, [{"title": "Other", "text": "Something else."}])
    assert kg.stats() == before and before["relations"] == 1
