"""What a clause asserts: a relation is a fact the text states, not one it rules out, supposes or only intends.

"Salesforce, not Microsoft, acquired Slack" rules Microsoft out; "If the deal is approved, Broadcom will acquire
VMware" and "Nvidia would have acquired Arm" suppose; "Microsoft failed to acquire Yahoo" and "tried to acquire" only
intend. The readers (:mod:`kg_rag.ingest.nlp.clauses`, :mod:`kg_rag.ingest.nlp.nouns`) ask here before they state
a relation; a plain negation ("did not acquire") stays in the predicate (``NOT_ACQUIRE``).
"""

from __future__ import annotations

from kg_rag.ingest.nlp.parse import Parse

CONDITIONS = frozenset({"if", "unless", "whether"})
SPECULATIVE = frozenset("would could might should may must".split())
FUTURE = SPECULATIVE | {"will", "shall", "'ll", "’ll", "'d"}


def hypothetical(d: Parse, v: int) -> bool:
    """A clause that states no fact: a condition ("If the deal is approved, ..."), what a condition says will or
    would follow ("..., Broadcom will acquire VMware"; "Had the regulators approved, Nvidia would ..."), or what
    would or might have happened ("Nvidia would have acquired Arm"). A rule in the present stays ("If a breach is
    detected, the Security Team notifies the DPO"), as do a concession ("even if", "as if", "if anything") and
    "whether ... or" ("Whether by design or by accident, Fleming discovered penicillin"); "He would later become
    mayor" is narrative, and stays."""
    aux = [d.lower[a] for a in d.kids(v, "aux")]
    if _condition(d, v):
        return True
    if any(a in SPECULATIVE for a in aux) and "have" in aux:
        return True
    if not any(a in FUTURE for a in aux):
        return False
    for c in d.kids(v, "advcl"):
        if _condition(d, c):
            return True
        first = d.left_edge(c)  # "Had the regulators approved, ...": an inverted condition
        if d.lower[first] == "had" and d.dep[first] == "aux" and d.is_sent_start(first):
            return True
    return False


def _condition(d: Parse, c: int) -> bool:
    """Whether clause ``c`` is a condition: marked "if", "unless" or "whether" (not "even if", "as if", "if
    anything", "whether ... or")."""
    for m in d.kids(c, "mark"):
        word = d.lower[m]
        if word not in CONDITIONS:
            continue
        before = d.lower[m - 1] if m else ""
        after = d.lower[m + 1] if m + 1 < d.n else ""
        if before in ("even", "as") or after == "anything":
            continue
        if word == "whether" and any(d.lower[k] == "or" for k in range(m, d.right_edge(c) + 1)):
            continue
        return True
    return False


IMPLICATIVE = frozenset("go continue begin start manage proceed come return use force compel help".split())
"""Verbs whose infinitive complement happened ("went on to found", "managed to escape"): the relation is the
complement's own, whoever the parse hangs it on."""
UNFULFILLED = frozenset(
    """fail refuse decline neglect forget avoid try attempt seek plan intend hope want wish aim threaten propose offer
    expect rumour rumor consider""".split()
)
"""Verbs whose infinitive complement did not, or need not, happen: "failed to acquire Yahoo", "tried to acquire",
"was rumoured to be acquiring" state no acquisition. (Most others, "decided to", "agreed to", "was selected to
host", report what followed, and their complement is read as stated.)"""


def negated(d: Parse, t: int) -> bool:
    """A noun written after "not" that no verb's negation governs: the alternative a sentence rules out
    ("Salesforce, not Microsoft, acquired Slack"; "not Microsoft" after *is* is the clause's own negation)."""
    k = d.left_edge(t) - 1
    return k >= 0 and d.lower[k] in ("not", "never") and d.pos[d.head[k]] not in ("VERB", "AUX")


UNREALISED = frozenset(
    """proposed planned failed attempted potential possible pending abandoned aborted cancelled canceled rumoured
    rumored blocked unsuccessful expected intended prospective alleged contemplated""".split()
)
"""Words before an event noun that say it did not (or not yet) happen."""

NOT_DONE = frozenset(
    """block reject oppose abandon cancel terminate scrap prohibit prevent propose plan consider seek pursue explore
    discuss announce challenge investigate delay halt stop veto deny fail refuse attempt try collapse stall""".split()
)
"""Verbs whose object event did not (or not yet) happen: "regulators blocked Nvidia's acquisition of Arm"."""
