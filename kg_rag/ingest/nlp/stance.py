"""What a clause asserts: a relation is a fact the text states, not one it rules out, supposes or only intends.

"Salesforce, not Microsoft, acquired Slack" rules Microsoft out; "If the deal is approved, Broadcom will acquire
VMware" and "Nvidia would have acquired Arm" suppose; "Microsoft failed to acquire Yahoo" and "tried to acquire" only
intend. The readers (:mod:`kg_rag.ingest.nlp.clauses`, :mod:`kg_rag.ingest.nlp.nouns`) ask here before they state
a relation; a plain negation ("did not acquire") stays in the predicate (``NOT_ACQUIRE``).
"""

from __future__ import annotations

from kg_rag.ingest.nlp.parse import Parse

CONDITIONS = frozenset({"if", "unless"})
SPECULATIVE = frozenset("would could might should may must".split())
"""Modals that, before *have*, say what would or might have happened ("would have acquired")."""
PREDICTIVE = frozenset({"will", "would", "could", "might", "may", "'ll", "’ll", "'d"})
"""Modals by which a main clause says what a condition would bring about; *must*, *shall*, *should* make it a rule
("If a breach occurs, the DPO must notify the Commission"), which stands."""


def hypothetical(d: Parse, v: int) -> bool:
    """A clause that states no fact: a condition ("If the deal is approved, ...") or an indirect question ("whether
    Microsoft acquires Activision"), what a condition says will or would follow ("..., Broadcom will acquire VMware";
    "Had the regulators approved, Nvidia would ..."), what would or might have happened ("Nvidia would have acquired
    Arm"). A rule stays ("If a breach is detected, the Security Team notifies the DPO"; "... the DPO
    must notify"), as do a concession ("even if", "as if", "if anything") and what follows "whether or not"; "He
    would later become mayor" is narrative, and stays."""
    aux = [d.lower[a] for a in d.kids(v, "aux")]
    if _marked(d, v, CONDITIONS | {"whether"}):
        return True
    if any(a in SPECULATIVE for a in aux) and "have" in aux:
        return True
    if not any(a in PREDICTIVE for a in aux):
        return False
    for c in d.kids(v, "advcl"):
        if _marked(d, c, CONDITIONS):
            return True
        first = d.left_edge(c)  # "Had the regulators approved, ...": an inverted condition
        if d.lower[first] == "had" and d.dep[first] == "aux" and d.is_sent_start(first):
            return True
    return False


def unasserted(d: Parse, v: int) -> bool:
    """Whether verb ``v`` states no fact: its clause is :func:`hypothetical`, it is an infinitive after a verb of
    :data:`UNFULFILLED` ("failed to acquire"), or it is joined to such a verb without a subject or auxiliary of its
    own ("tried to acquire Yahoo and merge it with MSN", "would have acquired Arm and moved its headquarters")."""
    if d.dep[v] == "conj" and d.head[v] != v and not d.kids(v, "nsubj", "nsubjpass", "aux", "auxpass"):
        return unasserted(d, d.head[v])
    if d.dep[v] == "ccomp" and d.lemma(d.head[v]) in ALLEGING:  # "the complaint asserted that NVIDIA violated"
        return True
    return hypothetical(d, v) or (d.dep[v] == "xcomp" and d.lemma(d.head[v]) in UNFULFILLED)


ALLEGING = frozenset("allege assert claim contend accuse speculate suspect deny dispute".split())
"""Verbs that report a claim someone contests or has yet to prove: what their clause says is no fact the text
states ("The complaint alleged that X violated Y"; "said", "reported", "announced that" report what happened, and
"historians argue that" states a reading)."""


def _marked(d: Parse, c: int, marks: frozenset[str]) -> bool:
    """Whether clause ``c`` is marked by one of ``marks`` as a condition (not "even if", "as if", "if anything")."""
    for m in d.kids(c, "mark"):
        if d.lower[m] not in marks:
            continue
        before = d.lower[m - 1] if m else ""
        after = d.lower[m + 1] if m + 1 < d.n else ""
        if before in ("even", "as") or after == "anything":
            continue
        return True
    return False


IMPLICATIVE = frozenset({"go", "carry"})
"""Particle verbs whose infinitive after them happened ("went on to found", "carried on to win"): the parse hangs
the infinitive on them as an adverbial clause, and their subject is its subject."""
UNFULFILLED = frozenset(
    """fail refuse decline neglect forget avoid try attempt seek plan intend hope want wish aim threaten propose offer
    expect rumour rumor consider""".split()
)
"""Verbs whose infinitive complement did not, or need not, happen: "failed to acquire Yahoo", "tried to acquire",
"was rumoured to be acquiring" state no acquisition. (Most others, "decided to", "agreed to", "was selected to
host", report what followed, and their complement is read as stated.)"""


def negated(d: Parse, t: int) -> bool:
    """A noun written after "not" that no verb's negation governs, or after "instead of" or "rather than": the
    alternative a sentence rules out ("Salesforce, not Microsoft, acquired Slack"; "reports to Meera Iyer instead of
    Paul Grant"; "not Microsoft" after *is* is the clause's own negation)."""
    k = d.left_edge(t) - 1
    if k >= 1 and d.pos[k] == "ADP" and not _instead(d, k):
        k -= 1  # "rather than by Harborline", "instead of to Dallas", "not of Chile": the alternative's preposition
    if _instead(d, k):
        return True
    if d.dep[t] == "conj" and d.head[t] != t and d.head[t] < t and negated(d, d.head[t]):
        return True  # "instead of Paul Grant or Anna Berg": both are ruled out
    return k >= 0 and d.lower[k] in ("not", "never") and d.pos[d.head[k]] not in ("VERB", "AUX")


def _instead(d: Parse, k: int) -> bool:
    """Whether tokens ``k - 1, k`` are "instead of" or "rather than"."""
    return k >= 1 and (d.lower[k - 1], d.lower[k]) in (("instead", "of"), ("rather", "than"))


UNREALISED = frozenset(
    """proposed planned failed attempted potential possible pending abandoned aborted cancelled canceled rumoured
    rumored blocked unsuccessful expected intended prospective alleged contemplated""".split()
)
"""Words before an event noun that say it did not (or not yet) happen."""

DONE = frozenset(
    """complete close finalize finish conclude begin start end mark cause trigger lead prompt spark bring follow
    precede""".split()
)
"""Verbs that say of an event noun, their subject or object, that the event happened ("The acquisition of LinkedIn
by Microsoft was completed", "Germany's invasion of Poland began the war", "Disney completed its purchase of ...").
Any other verb may say it did not ("fell through", "regulators blocked", "lawmakers debated the repeal of")."""
SINCE = frozenset({"after", "following", "since", "upon", "before"})
"""Prepositions whose event noun happened ("after the acquisition of YouTube by Google")."""


def happened(d: Parse, n: int) -> bool:
    """Whether the sentence says the event noun ``n`` happened (:data:`DONE`, :data:`SINCE`), in a clause that states
    a fact, and no word before it says it did not (:data:`UNREALISED`)."""
    if any(d.lower[k] in UNREALISED for k in d.kids(n, "amod", "compound")):
        return False
    h = d.head[n]
    if d.dep[n] == "pobj" and d.lower[h] in SINCE:
        h = d.head[h]
    elif not (d.dep[n] in ("nsubj", "nsubjpass", "dobj") and d.lemma(h) in DONE):
        return False
    return d.pos[h] not in ("VERB", "AUX") or not (d.kids(h, "neg") or unasserted(d, h))
