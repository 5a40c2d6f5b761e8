"""Names a document gives itself (:mod:`kg_rag.ingest.defined`): the definitions read from raw text, and a
defined term standing for its company in every chunk of its document, and only there."""

from __future__ import annotations

import pytest

from kg_rag.ingest.defined import annotate, definitions, document_terms, terms_by_document
from kg_rag.model import Chunk
from kg_rag.model.names import short_form

DEFINITIONS = [
    # (case, text, term key -> name)
    (
        "a filer with its subsidiaries and a short name",
        "Apple Inc. and its wholly owned subsidiaries (collectively \u201cApple\u201d or the \u201cCompany\u201d)",
        {"company": "Apple Inc.", "apple": "Apple Inc."},
    ),
    (
        "straight quotes, a comma in the name",
        'Amazon.com, Inc. and its consolidated entities (collectively, the "Company")',
        {"company": "Amazon.com, Inc.", "amazon com": "Amazon.com, Inc."},
    ),
    (
        "a defined party in an agreement",
        "between you and Intel Corporation (the \u201cCorporation\u201d)",
        {"corporation": "Intel Corporation", "intel": "Intel Corporation"},
    ),
    (
        "a sentence's opening article is no part of the name",
        'The Acme Corp. (the "Issuer")',
        {"issuer": "Acme Corp.", "acme": "Acme Corp."},
    ),
    ("a blank name defines nothing", "Name: (the \u201cParticipant\u201d)", {}),
    (
        "a heading above the name is no part of it",
        'PART I\nItem 1. Business\nOverview\nNVIDIA Corporation (the "Company") designs',
        {"company": "NVIDIA Corporation", "nvidia": "NVIDIA Corporation"},
    ),
    (
        "a word and a comma before the name",
        'WHEREAS, Acme Corp. (the "Company")',
        {"company": "Acme Corp.", "acme": "Acme Corp."},
    ),
    (
        "an ampersand inside the name",
        'The Procter & Gamble Company (the "Company")',
        {"company": "Procter & Gamble Company", "procter & gamble": "Procter & Gamble Company"},
    ),
    ("the end of a longer name defines nothing", 'Bank of America Corporation (the "Corporation")', {}),
    ("a name cut at a star defines nothing", 'E*TRADE Securities LLC ("E*TRADE")', {}),
    (
        "a dotted legal form",
        'ASML Holding N.V. (the "Company")',
        {"company": "ASML Holding N.V.", "asml": "ASML Holding N.V."},
    ),
    ("an agreement's title is no company", 'Agreement and Plan of Merger (the "Merger Agreement")', {}),
]


@pytest.mark.parametrize("case, text, expected", DEFINITIONS, ids=[d[0] for d in DEFINITIONS])
def test_definitions(case, text, expected):
    assert definitions(text) == expected, case


def test_short_form_drops_only_a_legal_form():
    assert short_form("Meridian Holdings") == "Meridian"
    assert short_form("Amazon.com, Inc.") == "Amazon.com"
    assert short_form("Veltrix Systems") is None  # a descriptive word tells two companies apart
    assert short_form("Holdings") is None
    assert short_form("Vilnius group") is None  # a common noun: the group of countries, not a company
    assert short_form("Stock Plan Group") is None  # a team; "Group" is no legal form
    assert short_form("SoftBank Group Corp") == "SoftBank Group"
    assert short_form("Co. Ltd") is None and short_form("Chengdu) Co., Ltd.") is None
    assert short_form("The Walt Disney Company") == "Walt Disney" and short_form("Also Known As") is None


def test_a_term_defined_two_ways_stands_for_neither():
    texts = ['NVIDIA Corporation (the "Company") reported.', 'Mellanox Technologies Ltd. (the "Company") agreed.']
    assert "company" not in document_terms(texts)


def test_terms_belong_to_their_document():
    terms = terms_by_document(["a", "a", "b"], ['NVIDIA Corporation (the "Company")', "The Company grew.", "x"])
    assert terms["a"]["company"] == "NVIDIA Corporation"
    assert terms["b"] == {}


def test_split_documents_stores_a_documents_definitions_on_every_chunk():
    from langchain_core.documents import Document

    from kg_rag.ingest.documents import split_documents

    pages = [
        Document('This report is filed by NVIDIA Corporation (the "Company").', metadata={"doc_id": "nvda"}),
        Document("The Company acquired Mellanox.", metadata={"doc_id": "nvda"}),
        Document("The Company acquired Nuvia.", metadata={"doc_id": "qcom"}),
    ]
    chunks = split_documents(pages, chunk_size=16, chunk_overlap=0)
    by_doc = {c.doc_id: c.metadata.get("defined") for c in chunks}
    assert by_doc == {"nvda": {"company": "NVIDIA Corporation", "nvidia": "NVIDIA Corporation"}, "qcom": None}
    annotate(chunks)  # a second pass changes nothing
    assert {c.doc_id: c.metadata.get("defined") for c in chunks} == by_doc


def test_a_defined_name_is_grounded_where_its_term_is_written():
    """The grounding check drops a name the chunk does not mention (a model's invention); the name a document
    defines "the Company" as is mentioned wherever "the Company" is, and only there."""
    from kg_rag.ingest.extract import ExtractionResult, apply_extraction
    from kg_rag.model import KnowledgeGraph
    from kg_rag.model.relation_types import RelationTyper

    defined = {"defined": {"company": "NVIDIA Corporation"}}
    said = Chunk("c1", "The Company acquired Mellanox.", "nvda", dict(defined))
    unsaid = Chunk("c2", "Revenue grew at Mellanox.", "nvda", dict(defined))
    kg = KnowledgeGraph()
    for chunk in (said, unsaid):
        kg.add_chunk(chunk)
        result = ExtractionResult.model_validate(
            {"entities": [], "relations": [{"source": "NVIDIA Corporation", "target": "Mellanox", "type": "ACQUIRED"}]}
        )
        apply_extraction(kg, chunk, result, RelationTyper())
    edges = [(s, t, [ev["chunk_id"] for ev in d["evidence"]]) for s, t, d in kg.graph.edges(data=True)]
    assert edges == [("nvidia corporation", "mellanox", ["c1"])]
