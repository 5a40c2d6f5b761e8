"""The question's grammar gives the direction of the relation it asks about (``kg_rag/query/roles.py``):
"Who founded Publix?" asks for ``X -[FOUNDED]-> Publix``, and ``Publix -[FOUNDED]-> Y`` answers another
question. Such an edge is not of the asked kind and no path steps along it (issue 43: types never read backwards,
paths follow the question's chain)."""

from __future__ import annotations

import pytest

from kg_rag import EntityBasedKGRAG
from kg_rag.query.roles import AGENT, PATIENT, question_roles, reads_backwards, type_voice

ROLES = [
    ("the asked thing is an active verb's subject", "Who founded Publix?", "Publix", {"found": PATIENT}),
    ("a verb in the present", "Who manages Priya Nair?", "Priya Nair", {"manage": PATIENT}),
    ("a verb with its preposition", "Who reports to Priya Nair?", "Priya Nair", {"report": PATIENT}),
    ("which with a noun", "Which directive replaced Directive 2019-03?", "Directive 2019-03", {"replace": PATIENT}),
    (
        "the name after an auxiliary",
        "What did Statute 2021 revoke?",
        "Statute 2021",
        {"revoke": AGENT, "implement": None},
    ),
    ("an adverb before the verb", "Who does Lars Eriksen ultimately report to?", "Lars Eriksen", {"report": AGENT}),
    ("a passive's subject", "Who was Publix founded by?", "Publix", {"found": PATIENT}),
    ("a passive's agent", "Which company was founded by George Jenkins?", "George Jenkins", {"found": AGENT}),
    (
        "an agent noun with of",
        "In which state was the performer of Hello Love born?",
        "Hello Love",
        {"performer": PATIENT},
    ),
    ("an agent noun after a possessive", "Who is Lars Eriksen's manager?", "Lars Eriksen", {"manager": PATIENT}),
    ("a possessive's noun is the subject", "Who did Barry Wesson's team play?", "Barry Wesson", {"play": None}),
    (
        "of a possessive is no agent noun's object",
        "Who was the president of Damerjog's country?",
        "Damerjog",
        {"president": None},
    ),
    (
        "the verb is another clause's",
        "What county borders the county in which Johnnycake is located?",
        "Johnnycake",
        {},
    ),
    (
        "a role holds in its clause only",
        "Which regulation did Statute 2021 revoke, and which policy implemented it?",
        "Statute 2021",
        {"revoke": AGENT},
    ),
    ("no shape, no role", "Tell me about Publix.", "Publix", {"tell": None}),
    (
        "a passive after another auxiliary",
        "What has Regulation 2020 been revoked by?",
        "Regulation 2020",
        {"revoke": PATIENT},
    ),
    ("a passive with get", "Who did Instagram get acquired by?", "Instagram", {"acquire": PATIENT}),
    (
        "a plural after what is no verb",
        "What acquisitions did Facebook make?",
        "Facebook",
        {"acquisition": None, "make": AGENT},
    ),
    (
        "a name inside a relative clause is no object",
        "Who directed the film Clint Eastwood starred in?",
        "Clint Eastwood",
        {"direct": None},
    ),
    ("a co-agent is no object", "Who founded Microsoft with Bill Gates?", "Bill Gates", {"found": None}),
    ("a possessor of the object is no object", "Who produced Apple's iPhone?", "Apple", {"produce": None}),
    (
        "an event noun is no agent noun",
        "Which candidate received Oprah Winfrey's endorsement?",
        "Oprah Winfrey",
        {"endorsement": None},
    ),
    ("a symmetric verb has no acting end", "Which state borders Tennessee to the east?", "Tennessee", {"border": None}),
]


@pytest.mark.parametrize("case, question, name, expected", ROLES, ids=[r[0] for r in ROLES])
def test_the_question_says_which_part_a_named_entity_plays(case, question, name, expected):
    roles = question_roles(question, [name]).get(name.casefold(), {})
    assert {w: roles.get(w) for w in expected} == expected  # None: no role for that word
    assert roles or all(r is None for r in expected.values())


VOICES = [
    ("MANAGES", "active"),
    ("SUPERSEDES", "active"),
    ("REPORTS_TO", "active"),
    ("FOUNDED", "active"),
    ("FOUNDED_BY", "passive"),
    ("SUPERSEDED_BY", "passive"),
    ("WAS_ELECTED", None),  # its target is the office, not who elected
    ("WAS_FOUNDED_IN", None),
    ("MARRIED", None),  # symmetric: neither end acts on the other
    ("BORDERED_BY", None),
    ("HUNDRED", None),
    ("FOUNDED_IN", None),  # "Publix, founded in 1930": a reduced passive as often as not
    ("SPOUSE", None),
    ("MEMBER_OF", None),
    ("MEMBERS", None),  # a plural noun as often as a verb
    ("RELATED", None),
]


@pytest.mark.parametrize("relation_type, voice", VOICES, ids=[v[0] for v in VOICES])
def test_a_type_says_which_end_does_what_its_verb_says(relation_type, voice):
    assert type_voice(relation_type) == voice


def test_an_edge_reads_the_question_backwards_when_the_named_entity_is_at_the_wrong_end():
    # "Who founded Publix?": Publix is the patient
    assert reads_backwards("FOUNDED", True, PATIENT)  # Publix -[FOUNDED]-> X: what Publix founded
    assert not reads_backwards("FOUNDED", False, PATIENT)  # X -[FOUNDED]-> Publix
    assert not reads_backwards("FOUNDED_BY", True, PATIENT)  # Publix -[FOUNDED_BY]-> X
    assert reads_backwards("FOUNDED_BY", False, PATIENT)
    assert not reads_backwards("FOUNDED_IN", True, PATIENT)  # the type does not say: nothing is ruled out


def _steps(result) -> set[tuple[str, str, str]]:
    names = result.names
    return {(names[s.source], s.relation_type, names[s.target]) for pa in result.paths for s in pa.steps}


def test_no_path_steps_along_a_relation_the_question_reads_the_other_way(demo_index, bow_embeddings):
    retriever = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3)
    managed = _steps(retriever.retrieve("Who manages Priya Nair?"))
    assert ("Priya Nair", "MANAGES", "Platform Engineering") not in managed  # what Priya manages
    assert ("Priya Nair", "REPORTS_TO", "Daniel Okafor") in managed
    manages = _steps(retriever.retrieve("Whom does Priya Nair manage?"))
    assert ("Priya Nair", "MANAGES", "Platform Engineering") in manages
    lars = _steps(retriever.retrieve("Who is Lars Eriksen's manager?"))
    assert ("Lars Eriksen", "MANAGES", "Data Platform team") not in lars


def test_a_chain_followed_past_max_hops_takes_no_step_the_question_reads_the_other_way(demo_index, bow_embeddings):
    retriever = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3)
    steps = _steps(retriever.retrieve("What ultimately caused Decision SC-2024-19?"))
    assert not any(s == "Decision SC-2024-19" and t == "CAUSED" for s, t, _ in steps)  # its effects, not its cause
    assert ("INC-2024-11", "CAUSED", "Decision SC-2024-19") in steps
