"""Which clauses state a fact (:mod:`kg_rag.ingest.nlp.stance`): read on the real parse of each sentence's main verb."""

from __future__ import annotations

import pytest

from kg_rag.ingest.nlp.parse import Parse
from kg_rag.ingest.nlp.stance import hypothetical, negated, unasserted

MAIN_CLAUSES = [
    # (sentence, whether its main clause states no fact)
    ("If the deal is approved, Broadcom will acquire VMware.", True),
    ("Had the regulators approved, Nvidia would have acquired Arm.", True),
    ("Nvidia could have acquired Arm.", True),
    ("Broadcom will acquire VMware if regulators approve.", True),
    ("Broadcom acquired VMware in 2023.", False),
    ("Ann Lee would later become mayor of Paris.", False),  # narrative "would"
    ("If a breach is detected, the Security Team notifies the Data Protection Officer.", False),  # a rule
    ("Microsoft acquired GitHub in 2018, even if the deal drew criticism.", False),  # a concession
    ("Einstein moved to Princeton in 1933, as if he had foreseen the war.", False),
    ("Whether by design or by accident, Fleming discovered penicillin in 1928.", False),
]


@pytest.fixture(scope="module")
def parse(extractor):
    return lambda text: Parse(next(iter(extractor._parse([text]))), text)


@pytest.mark.parametrize("text, supposed", MAIN_CLAUSES, ids=[c[0][:40] for c in MAIN_CLAUSES])
def test_a_supposed_main_clause_states_no_fact(parse, text, supposed):
    d = parse(text)
    root = next(i for i in range(d.n) if d.dep[i] == "ROOT")
    assert hypothetical(d, root) is supposed


def test_a_name_after_not_is_ruled_out_but_not_a_clauses_own_negation(parse):
    d = parse("Salesforce Inc, not Microsoft, acquired Slack.")
    assert negated(d, d.lower.index("microsoft")) and not negated(d, d.lower.index("slack"))
    d = parse("The winner was not Microsoft.")
    assert not negated(d, d.lower.index("microsoft"))


@pytest.mark.parametrize(
    "text, alleged",
    [
        ("The amended complaint asserted that NVIDIA violated Section 10(b) of the Exchange Act.", True),
        ("The plaintiffs allege that Acme Corp breached the agreement.", True),
        ("Apple denied that it acquired Shazam.", True),
        ("Reuters reported that Microsoft acquired GitHub.", False),  # a report of what happened
        ("Acme Corp announced that it acquired Globex Ltd.", False),
        ("Historians argue that Napoleon was born in Corsica.", False),  # a reading, not a claim in dispute
    ],
)
def test_a_clause_that_reports_a_claim_states_no_fact(parse, text, alleged):
    d = parse(text)
    clause = next(i for i in range(d.n) if d.dep[i] == "ccomp")
    assert unasserted(d, clause) is alleged
