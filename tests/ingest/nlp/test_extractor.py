"""The NLP extractor as an extractor: the same run and graph model as the LLM path, failures recorded, updates and
deletes by the same rules, the pipeline loaded by name with one-line errors."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.documents import Document

from kg_rag.errors import ConfigurationError
from kg_rag.indexing import index_documents
from kg_rag.ingest.extract import ExtractionRun, ParsedRelation
from kg_rag.ingest.nlp import NLPExtractor, load_pipeline, loading
from kg_rag.model import Chunk, KnowledgeGraph

from .conftest import triples

TEXT = "Directive 2023-07 was issued by the Operations Board. Directive 2023-07 supersedes Directive 2019-03."


def test_extract_returns_the_run_the_llm_path_returns(extractor):
    chunks = [Chunk("a", TEXT, "d1"), Chunk("b", "Lars Eriksen reports to Priya Nair.", "d2")]
    run = extractor.extract(chunks)
    assert isinstance(run, ExtractionRun) and set(run.results) == {"a", "b"} and not run.failures
    assert run.usage.calls == 0  # no chat model
    rel = next(r for r in run.results["a"].relations if r.target == "Directive 2019-03")
    assert isinstance(rel, ParsedRelation) and rel.type == "SUPERSEDES" and rel.predicate == "supersedes"
    assert rel.evidence == "Directive 2023-07 supersedes Directive 2019-03."


def test_a_chunk_that_fails_is_recorded_not_raised(extractor, monkeypatch):
    from kg_rag.ingest.nlp import extractor as module

    real = module.read_passage

    def flaky(doc, title, source=None, **kw):
        if "boom" in doc.text:
            raise RuntimeError("odd parse")
        return real(doc, title, source, **kw)

    monkeypatch.setattr(module, "read_passage", flaky)
    run = extractor.extract([Chunk("ok", TEXT, "d"), Chunk("bad", "boom goes the parser.", "d")])
    assert set(run.results) == {"ok"} and isinstance(run.failures["bad"], RuntimeError)


def test_aextract_and_parse(extractor):
    run = asyncio.run(extractor.aextract([Chunk("a", TEXT, "d")]))
    assert run.results["a"].relations
    assert extractor.parse("Lars Eriksen reports to Priya Nair.").relations[0].type == "REPORTS_TO"


def test_workers_parse_in_processes_to_the_same_result(extractor):
    chunks = [Chunk(str(i), f"# Team {i}\n\n{TEXT} Team {i} reports\nto Priya Nair.", "d") for i in range(6)]
    one = extractor.extract(chunks)
    two = NLPExtractor(extractor.nlp, workers=2, batch_size=2).extract(chunks)
    assert {k: v.model_dump(serialize_as_any=True) for k, v in one.results.items()} == {
        k: v.model_dump(serialize_as_any=True) for k, v in two.results.items()
    }


@pytest.mark.parametrize(
    "text",
    [
        "# Storage policy\n\nDirective 2023-07 supersedes Directive 2019-03.",  # a Markdown heading, a blank line
        "# Storage policy\nDirective 2023-07 supersedes Directive 2019-03.",  # a heading right above its text
        "Storage policy\n\nDirective 2023-07 supersedes Directive 2019-03.",  # a title line, a paragraph break
        "Directive 2023-07\nsupersedes Directive 2019-03.",  # a line break inside a sentence (hard-wrapped prose)
        "Changes:\n- Directive 2023-07 supersedes Directive 2019-03.\n- Lars Eriksen reports to Priya Nair.",
    ],
)
def test_the_layout_ends_sentences_where_it_should_and_only_there(extractor, text):

    assert ("Directive 2023-07", "SUPERSEDES", "Directive 2019-03") in triples(extractor.parse(text))


def test_a_markdown_documents_heading_is_its_topic_not_a_sentence(extractor, tmp_path):
    """A Markdown file's first heading is its title (as an HTML page's ``<title>``): the pronouns and the fuller
    name of the text are about it; the heading itself is not parsed as a sentence, which would make it a mention
    of its own beside "Waylon Malloy Payne"."""
    from kg_rag.ingest import load_documents
    from kg_rag.ingest.nlp.parse import hide_title_heading

    text = "# Waylon Payne\n\nWaylon Malloy Payne is an American singer. He is the son of the singer Sammi Smith."
    (tmp_path / "payne.md").write_text(text)
    (doc,) = load_documents(tmp_path)
    chunk = Chunk("c", doc.page_content, "d", dict(doc.metadata))
    assert ("Waylon Payne", "SON_OF", "Sammi Smith") in triples(extractor.extract([chunk]).results["c"])
    assert not extractor.extract([Chunk("c", text, "d")]).results["c"].relations  # no title: nobody is "He"
    hidden = hide_title_heading("## Career\n# **Waylon  Payne** #\nx", "Waylon Payne")
    assert hidden == "## Career\n" + " " * 21 + "\nx"  # only the title's heading, the same length
    setext = hide_title_heading("Waylon Payne\r\n===\r\nHe sings.", "Waylon Payne")
    assert setext == " " * 12 + "\r\n" + " " * 3 + "\r\nHe sings."


def test_he_or_she_refers_to_a_heading_only_when_it_names_a_person(extractor):
    """A document's heading may name anything ("Installation Guide"): *it* may refer to it, *he* may not, unless
    the recogniser types the topic a person where the text writes it."""

    guide = "# Installation Guide\n\nIt requires Python 3.11. He works at Acme Corp."
    got = triples(extractor.extract([Chunk("g", guide, "d", {"title": "Installation Guide"})]).results["g"])
    assert ("Installation Guide", "REQUIRES", "Python 3.11") in got
    assert not any(s == "Installation Guide" and t.startswith("Acme") for s, _, t in got)


def test_a_title_heading_names_the_subject_as_a_corpus_passages_title_does(extractor):
    """Under its title's heading, "The river" is the titled river (the body never writes its name), and the
    name the body writes (``Johnnycake``) is the topic's, not the heading's longer one."""

    river = Chunk("r", "# Hollow River\n\nThe river rises in Kent.", "d", {"title": "Hollow River"})
    assert ("Hollow River", "RISES_IN", "Kent") in triples(extractor.extract([river]).results["r"])
    text = "# Johnnycake, West Virginia\n\nJohnnycake is an unincorporated community in Braxton County."
    place = Chunk("j", text, "d", {"title": "Johnnycake, West Virginia"})
    names = {e.name for e in extractor.extract([place]).results["j"].entities}
    assert "Johnnycake" in names and "Johnnycake, West Virginia" not in names


def test_unwrap_lines_keeps_the_length_headings_lists_and_paragraphs():
    from kg_rag.ingest.nlp.parse import unwrap_lines

    text = "# Title\nA line\nwrapped here.\n\n- one\n- two\n| a | b |\n| c | d |"
    out = unwrap_lines(text)
    assert len(out) == len(text)
    assert out == "# Title\nA line wrapped here.\n\n- one\n- two\n| a | b |\n| c | d |"


def test_a_description_is_a_noun_phrase_not_a_figure(extractor):
    """An apposition or a copula describes an entity with a noun phrase; a figure in apposition ("Mexico, 7.0%")
    describes nothing and would only lengthen the entity table."""
    result = extractor.parse("Mexico, 7.0%, grew. Acme Corp, a software company, hired Jane Smith.")
    described = {e.name: e.description for e in result.entities if e.description}
    assert described == {"Acme Corp": "a software company"}


def test_a_markdown_paragraph_is_unwrapped_even_before_a_capital(extractor):
    """A Markdown paragraph may be wrapped anywhere, inside a name too ("the Site" / "Reliability team"); in other
    text a line that goes on with a capital may start a new name (a PDF's cover page) and stays a line. A short
    line ended on purpose, a hard break, a table row and a fenced code block stay lines in Markdown too."""
    from kg_rag.ingest.nlp.parse import unwrap_lines

    text = "After the outage, Directive 2023-07 was implemented by the Site\nReliability team.\n- Next item"
    joined = "After the outage, Directive 2023-07 was implemented by the Site Reliability team.\n- Next item"
    assert unwrap_lines(text, prose=True) == joined
    assert unwrap_lines(text) == text
    kept = [
        "Owner: Jane Smith\nApprover: Bob Jones",  # short lines: a list without markers
        "A hard break ends this line on purpose, however long it may be  \nNext line",
        "Name | Role | Team of the person in the organisation chart below\nJane | Lead | Payments",
        "```\nA code line long enough to be taken for wrapped prose by the rule\nNext code line\n```",
    ]
    for markdown in kept:
        assert unwrap_lines(markdown, prose=True) == markdown
    wrapped = {"source": "docs/incident.md"}
    got = triples(extractor.extract([Chunk("m", text, "d", wrapped)]).results["m"])
    assert ("Directive 2023-07", "IMPLEMENTED_BY", "Site Reliability team") in got


def test_the_graph_model_of_the_llm_path(extractor):
    kg = KnowledgeGraph()
    docs = [Document(TEXT, metadata={"doc_id": "policies/d.md", "source": "d.md", "title": "Remote work"})]
    changes = index_documents(kg, docs, extractor=extractor)
    assert changes.added == ["policies/d.md"] and changes.chunks_extracted == 1
    [rel] = kg.find_relations("Directive 2023-07", "Directive 2019-03")
    assert rel.relation_type == "SUPERSEDES" and rel.predicate == "supersedes"
    assert rel.evidence[0].quote == "Directive 2023-07 supersedes Directive 2019-03."
    assert rel.evidence[0].chunk_id and rel.evidence[0].doc_id == "policies/d.md"
    assert kg.get_entity("Operations Board").entity_type == "ORGANIZATION"
    assert kg.docs["policies/d.md"].metadata["schema"] == extractor.schema.key()
    # unchanged: nothing extracted again; changed: replaced; gone with sync: deleted
    assert index_documents(kg, docs, extractor=extractor).unchanged == ["policies/d.md"]
    edited = [Document("Lars Eriksen reports to Maria Chen.", metadata={"doc_id": "policies/d.md", "source": "d.md"})]
    assert index_documents(kg, edited, extractor=extractor).replaced == ["policies/d.md"]
    assert not kg.find_relations("Directive 2023-07", "Directive 2019-03")
    assert kg.find_relations("Lars Eriksen", "Maria Chen")
    other = [Document("Maria Chen chairs the Operations Board.", metadata={"doc_id": "other.md", "source": "o.md"})]
    assert index_documents(kg, other, extractor=extractor, sync=True).removed == ["policies/d.md"]
    assert not kg.find_relations("Lars Eriksen", "Maria Chen")


def test_another_extractor_re_extracts(extractor):
    """An index extracted by a chat model, then indexed with --extractor nlp, is extracted again (and back)."""
    kg = KnowledgeGraph()
    docs = [Document(TEXT, metadata={"doc_id": "d", "source": "d.md"})]
    index_documents(kg, docs)  # chunks only
    assert index_documents(kg, docs, extractor=extractor).replaced == ["d"]
    assert extractor.schema.key().startswith("nlp:")


def test_a_missing_pipeline_is_one_line_naming_the_install(monkeypatch):
    with pytest.raises(ConfigurationError) as exc:
        load_pipeline("en_core_web_nonexistent")
    message = str(exc.value)
    assert "en_core_web_nonexistent" in message and "pip install 'kg-rag[nlp]'" in message and "\n" not in message
    monkeypatch.setattr(loading.importlib.util, "find_spec", lambda name: None)
    loading.load_pipeline.cache_clear()
    try:
        with pytest.raises(
            ConfigurationError, match=r"needs spaCy, which is not installed: pip install 'kg-rag\[nlp\]'"
        ):
            load_pipeline("anything")
    finally:
        loading.load_pipeline.cache_clear()


def test_the_pipeline_is_chosen_by_name_then_environment_then_default(monkeypatch):
    monkeypatch.setenv("KG_RAG_SPACY_MODEL", "my_pipeline")
    assert loading.pipeline_name("given") == "given" and loading.pipeline_name() == "my_pipeline"
    monkeypatch.delenv("KG_RAG_SPACY_MODEL")
    assert loading.pipeline_name() in loading.DEFAULT_PIPELINES


def test_bad_settings_are_refused(extractor):
    for kwargs in ({"batch_size": 0}, {"workers": 0}, {"workers": True}):
        with pytest.raises(ConfigurationError):
            NLPExtractor(extractor.nlp, **kwargs)


def test_a_definition_on_one_chunk_names_the_term_in_another(extractor):
    chunks = [
        Chunk("c1", 'This report is filed by NVIDIA Corporation (the "Company").', "nvda"),
        Chunk("c2", "The Company acquired Mellanox in 2020.", "nvda"),
        Chunk("c3", "The Company acquired Nuvia in 2021.", "other"),  # another document: its own "Company"
    ]
    run = extractor.extract(chunks)
    assert {(r.source, r.target) for r in run.results["c2"].relations} >= {("NVIDIA Corporation", "Mellanox")}
    assert {(r.source, r.target) for r in run.results["c3"].relations} >= {("Company", "Nuvia")}


def test_a_hyphenated_prefix_keeps_a_word_whole_and_the_pipeline_serialisable():
    nlp = load_pipeline()
    words = [t.text for t in nlp("Lena co-founded Acme and re-released it; Inter-Services Intelligence.")]
    assert "co-founded" in words and "re-released" in words
    assert "Inter-Services" not in words  # a capital after the hyphen is a name's, which the recogniser reads split
    assert nlp.tokenizer.to_bytes()


def test_a_short_name_that_is_the_titled_persons_is_no_company(extractor):
    text = "Blokker was born in Amsterdam. From 1976 to 2010 he was general director of Blokker Holding."
    run = extractor.extract([Chunk("c", text, "c", {"title": "Jaap Blokker", "titled": True})])
    got = triples(run.results["c"])
    assert ("Jaap Blokker", "DIRECTOR_OF", "Blokker Holding") in got
    assert not any(s == "Blokker Holding" and t == "Amsterdam" for s, _, t in got)


def test_a_heading_that_names_two_things_lends_neither_its_tail(extractor):
    """A heading "Statute 2021 and Regulation 2020" is no one thing whose short form is *Regulation 2020*: the
    statute revokes the regulation, not the heading."""
    text = (
        "# Statute 2021 and Regulation 2020\n\nStatute 2021 revokes Regulation 2020. Policy v1 implemented"
        " Regulation 2020."
    )
    run = extractor.extract([Chunk("s", text, "d", {"title": "Statute 2021 and Regulation 2020", "source": "s.md"})])
    got = triples(run.results["s"])
    assert ("Statute 2021", "REVOKES", "Regulation 2020") in got
    assert not any("and" in target for _, _, target in got)
