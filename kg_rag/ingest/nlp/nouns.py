"""Relations a sentence states without a verb of its own: a noun with its preposition (``the mayor of Oslo``), an
apposition or a possessive (``Canada's capital, Ottawa``), an adjective after its noun (``native to Sonora``), the
topic's attribute (``The capital is Nashville``), places written ``Town, State`` and lifespans in brackets
(``X (born 9 August 1957)``). Read by :func:`kg_rag.ingest.nlp.clauses.read_clauses`, sentence by sentence."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kg_rag.ingest.nlp.kinds import OFFICES, head_word, person_like
from kg_rag.ingest.nlp.mentions import VALUES, Mention
from kg_rag.ingest.nlp.parse import Parse
from kg_rag.ingest.nlp.refs import (
    PARTITIVES,
    SUBJECTS,
    Passage,
    Ref,
    conjuncts,
    is_role,
    of_objects,
    refs_of,
    titled_person,
)
from kg_rag.ingest.nlp.spans import ARTICLES, DIVISIONS, PLACE_NOUNS
from kg_rag.ingest.nlp.stance import happened, negated
from kg_rag.ingest.nlp.triples import (
    BIRTH,
    Triple,
    describe,
    emit,
    noun_words,
    places_in,
    predicate_of,
    prep_objects,
    relative,
    via,
)

DEATH = frozenset({"died", "d.", "death"})
"""Words that mark the death half of a birth bracket: "(born 1909, Boston, died 1973, Paris)", "(b. 1909; d. 1973)"."""


DASHES = frozenset({"-", "–", "—", "to"})


def _located(p: Passage, n: int, evidence: str) -> Iterator[Triple]:
    """A named thing with an ``in`` phrase of places is located there: "The Consulate General of the United States
    in Frankfurt" as a sentence's subject or in apposition (a person is not: "met Smith in Paris" says where they
    met; nor a name of no recognised type, such as the *C* of "−37.8 °C in Pfaffenhofen"; nor an object, whose
    "in" phrase the parse often takes from the verb: "competes with Samsung in Korea")."""
    d = p.doc
    m = p.by_token[n]
    if n != m.end - 1 or not m.label or m.label in ("PERSON", *VALUES):
        return
    head = d.span_head(m.start, m.end)
    if d.dep[head] not in ("nsubj", "nsubjpass", "appos"):
        return  # an object's "in" phrase is often the verb's ("demand for the iPhone in China declined")
    ref = p.mention_ref(m)
    for prep in d.kids(n, "prep"):
        yield from emit([ref], "is located in", places_in(p, prep), evidence)


WHOLES = PARTITIVES | PLACE_NOUNS | {"rest", "remainder", "majority", "bulk"}
"""Nouns whose "of" complement is no owner: a part of a whole (``much of Britain``, ``the rest of Europe``) or
the place itself (``the city of Oslo``)."""


def _of_owner(p: Passage, n: int) -> list[Ref]:
    """The entities an attribute noun subject of a copula belongs to through "of" (``the capital of France is``,
    ``the southernmost point of Africa is``); none for a part of a whole (``much of Britain is``)."""
    d = p.doc
    if d.dep[n] != "nsubj" or d.lemma(d.head[n]) != "be" or d.pos[n] != "NOUN" or d.lemma(n) in WHOLES:
        return []
    owners = [r for o in of_objects(d, n) for r in refs_of(p, o)]
    return [r for r in owners if not r.is_value]


def after_noun(p: Passage, a: int, evidence: str) -> Iterator[Triple]:
    """An adjective after the noun it describes, with its own preposition: "a lizard native to Sonora", "a suburb
    close to Colombo" say what the noun's entity is to the object (``native to``), as "X is native to Y" does."""
    d = p.doc
    if d.title[a] or d.stop[d.head[a]]:  # "The Life Aquatic with": a title's word; "none other than": no noun
        return
    subject = p.ref(d.head[a])
    if subject is None or subject.is_value:
        return
    for prep in d.kids(a, "prep"):
        if not relative(d, prep):
            yield from via(p, [subject], predicate_of(d, [a], prep), prep, evidence)


def _between(p: Passage, n: int, evidence: str) -> Iterator[Triple]:
    """A noun that joins two named parties by *between* ("the agreement between Acme Corp and Globex Ltd", "the
    Treaty of Paris between Spain and the United States"): ``A -[agreement with]-> B``, the parties in the order
    written. Only a noun of a bond or dealing between parties: "the creek between Hutto and Round Rock" is where
    the creek is, "the distance between" compares; nor one that is denied ("no agreement between")."""
    d = p.doc
    if d.lemma(n) not in BONDS or any(d.lower[k] == "no" for k in d.kids(n, "det")):
        return
    for prep in d.kids(n, "prep"):
        objects = d.kids(prep, "pobj")
        if d.lower[prep] != "between" or len(objects) != 1:
            continue
        listed = conjuncts(d, objects[0])
        parties = [r for t in listed for r in [p.ref(t)] if r is not None and not r.is_value]
        if len(listed) == 2 and len(parties) == 2 and parties[0].name != parties[1].name:
            yield from emit(parties[:1], predicate_of(d, [], d.lemma(n), "with"), parties[1:], evidence)


BONDS = frozenset(
    """agreement treaty pact accord deal contract lease licence license settlement partnership alliance union
    merger venture collaboration cooperation co-production coproduction war conflict dispute lawsuit litigation
    battle feud rivalry match game final series negotiation talk summit meeting relationship relation marriage
    truce armistice ceasefire border boundary frontier trade competition""".split()
)
"""Nouns of a bond or dealing that *between* joins two parties by ("the treaty between Spain and France")."""


def noun(p: Passage, n: int, evidence: str) -> Iterator[Triple]:
    """Relations a noun phrase states without a verb: an apposition with a relational noun (``Jan, the editor of
    J``: ``Jan -[is editor of]-> J``), a possessive (``Canada's capital, Ottawa``; ``its editor is Jan``: the owner's
    attribute, ``Canada -[has capital]-> Ottawa``)."""
    d = p.doc
    yield from _between(p, n, evidence)
    if n in p.by_token:
        yield from _located(p, n, evidence)
        yield from _owned_role(p, n, evidence)
        yield from _held_role(p, n, evidence)
        return
    events = list(_event(p, n, evidence)) if d.lemma(n) in EVENTS else []
    if events:  # "the acquisition of LinkedIn by Microsoft"; without its doer the noun reads as any other
        yield from events  # ("the most remarkable creation of MTV is Madonna": MTV has it)
        return
    if d.dep[n] == "appos" and not not_held(d, n, n, n + 1):
        head = p.ref(d.head[n])
        if head is not None and head.label == "LOCATION" and d.lemma(n) in KINSHIP:
            head = _clause_subject(p, n)  # "born in Mysen, Norway, the only child of C": the child is who was born
        if head is not None and not head.is_value:
            describe(p, head.name, n)
            if p.topic is not None and head.name == p.topic.name:
                p.topic.kinds.add(d.lemma(n))
            for prep in d.kids(n, "prep"):
                yield from emit(
                    [head], predicate_of(d, [], "is", *noun_words(d, n), prep), prep_objects(p, prep), evidence
                )
    owner_tok = d.kid(n, "poss")
    if owner_tok is None:
        owners = _of_owner(p, n)
        if owners:  # "The capital of France is Paris": France -[has capital]-> Paris, as "France's capital is"
            things = [r for a in d.kids(d.head[n], "attr") for r in refs_of(p, a)]
            if any(not r.is_value for r in things):  # "is Cape Agulhas about 150 kilometres to the east": how far
                things = [r for r in things if not r.is_value]
            yield from emit(owners, _attribute(d, n), things, evidence)
            return
        yield from _topic_attribute(p, n, evidence)
        return
    owner = p.ref(owner_tok)
    if owner is None or owner.is_value:
        return
    named = [r for a in d.kids(n, "appos") for r in [p.ref(a)] if r is not None]
    h = d.head[n]
    if d.dep[n] == "compound" and h in p.by_token:  # "Acme's CEO Paul Smith"
        named.append(p.mention_ref(p.by_token[h]))
    if d.dep[n] in SUBJECTS and d.lemma(h) == "be":  # "its editor is Jan"
        named += [r for a in d.kids(h, "attr") for r in refs_of(p, a)]
    yield from emit([owner], _attribute(d, n), named, evidence)


EVENTS = {
    "acquisition": "acquired",
    "purchase": "purchased",
    "takeover": "took over",
    "founding": "founded",
    "creation": "created",
    "establishment": "established",
    "repeal": "repealed",
    "revocation": "revoked",
    "amendment": "amended",
    "ratification": "ratified",
    "invasion": "invaded",
    "conquest": "conquered",
    "annexation": "annexed",
    "capture": "captured",
    "occupation": "occupied",
    "liberation": "liberated",
    "assassination": "assassinated",
    "murder": "murdered",
    "discovery": "discovered",
    "invention": "invented",
    "publication": "published",
    "construction": "built",
}
"""Nouns of events with a doer and a thing done to, and the verb they name: "the acquisition of LinkedIn by
Microsoft" and "Microsoft's acquisition of LinkedIn" say ``Microsoft -[acquired]-> LinkedIn``, as the clause does,
typed alike."""


def has_doer(d: Parse, n: int) -> bool:
    """Whether an event noun writes who did it: a possessor ("its purchase of") or "by"."""
    return d.kid(n, "poss") is not None or any(d.lower[b] == "by" for b in d.kids(n, "prep"))


def _event(p: Passage, n: int, evidence: str) -> Iterator[Triple]:
    """``Y -[verb]-> X`` from an event noun with its "of" object X and its doer Y, after "by" or, with an "of"
    object, as its possessor (``LinkedIn's acquisition by Microsoft``: the possessor is what was acquired, and it
    is read only with "by"); only where the sentence says the event happened
    (:func:`~kg_rag.ingest.nlp.stance.happened`: "Regulators blocked Nvidia's acquisition of Arm", "Nvidia's
    acquisition of Arm fell through" state nothing)."""
    d = p.doc
    if not happened(d, n):
        return
    done = [r for o in of_objects(d, n) for r in refs_of(p, o) if not r.is_value]
    doers = [r for b in d.kids(n, "prep") if d.lower[b] == "by" for r in prep_objects(p, b) if not r.is_value]
    owner = d.kid(n, "poss")
    if owner is not None:
        possessor = p.ref(owner)
        if possessor is not None and not possessor.is_value:
            if doers and not done:  # "LinkedIn's acquisition by Microsoft"
                done = [possessor]
            elif not doers:  # "Microsoft's acquisition of LinkedIn"
                doers = [possessor]
    if done and doers:
        yield from emit(doers, EVENTS[d.lemma(n)], done, evidence)


def _owned_role(p: Passage, n: int, evidence: str) -> Iterator[Triple]:
    """A role written as a name, with its owner and its holder: "Harborline's Chief People Officer, Grace Obi" and
    "Rahul Desai, Harborline's Chief Information Security Officer" are ``Harborline -[has chief people officer]->
    Grace Obi``, as "Meridian's chairman, Willem de Jong" is."""
    d = p.doc
    owner_tok = d.kid(n, "poss")
    m = p.by_token[n]
    role = p.ref(n)
    if owner_tok is None or role is None or not _current_office(p, n, role):
        return
    owner = p.ref(owner_tok)
    if owner is None or owner.is_value or owner.name == role.name:
        return
    words = [i for i in range(m.start, m.end) if d.alpha[i] and d.lower[i] not in ARTICLES]
    yield from emit([owner], predicate_of(d, [], "has", *words), _holders(p, n), evidence)


def _held_role(p: Passage, n: int, evidence: str) -> Iterator[Triple]:
    """A role written as a name in apposition with its holder and no owner: "Ines Moreau, the Head of Finance
    Operations", "the General Counsel, Amara Eze" are ``Ines Moreau -[serves as]-> Head of Finance Operations``
    (an owner's role is the owner's attribute: :func:`_owned_role`). Only an office held now
    (:func:`_current_office`; ``Site Reliability Engineering`` after a name is a team), written with *the* (or a
    pronoun's *our*) and no complement of its own."""
    d = p.doc
    m = p.by_token[n]
    role = p.ref(n)
    if role is None or not _current_office(p, n, role):
        return
    owner_tok = d.kid(n, "poss")
    if owner_tok is not None and (d.tag[owner_tok] != "PRP$" or p.ref(owner_tok) is not None):
        return  # the owner's attribute (:func:`_owned_role`); "our Chief Financial Officer, Mary Ortiz" has none
    preps = [c for w in range(m.start, m.end) for c in d.kids(w, "prep") if not m.start <= c < m.end]
    owned = [c for c in preps if d.lower[c] == "of"]
    set_off = d.dep[n] == "appos" and m.start > 0 and d.text[m.start - 1] == ","
    if owner_tok is None and not any(d.lower[t] == "the" for t in d.kids(n, "det")) and not (owned and set_off):
        return  # "Jeff Colyer Lieutenant Governor": a flattened table, not an apposition
    if preps:  # "Jacob Zuma, the President of South Africa", "Tomasz Nowak, CEO of Veltrix": the owner's role
        if d.dep[n] == "appos":
            words = [i for i in range(m.start, m.end) if d.alpha[i] and d.lower[i] not in ARTICLES]
            for prep in owned:  # a recognised owner: "Secretary of State for War" is an office's own name
                owners = [r for r in prep_objects(p, prep) if r.label and not r.is_value]
                yield from emit(_holders(p, n), predicate_of(d, [], "is", *words, prep), owners, evidence)
        return
    yield from emit(_holders(p, n), "serves as", [Ref(role.name, "ROLE")], evidence)


FORMER = frozenset({"former", "previous", "late", "erstwhile", "outgoing", "past", "ex", "then", "onetime"})
"""Words that say a role was held and is no longer: "the former General Counsel, Amara Eze" serves as nothing now."""


ENDED = frozenset({"until", "till", "before"})
"""Prepositions after a role that say when it ended ("CEO of Veltrix until 2019")."""


def _current_office(p: Passage, n: int, role: Ref) -> bool:
    """Whether the name at ``n`` (its head) is an office held now: its head word names one ("Chief People Officer",
    "VP of Engineering"; not "Executive Committee"), and nothing says it was held before ("the former CFO")."""
    d = p.doc
    m = p.by_token[n]
    if n != d.span_head(m.start, m.end) or d.lower[n] not in OFFICES or not is_role(p, n, role):
        return False
    return not not_held(d, n, m.start, m.end)


def not_held(d: Parse, n: int, start: int, end: int) -> bool:
    """Whether a role written at ``start:end`` (head ``n``), in apposition or as a complement, is said not to be held
    now: "the former CFO", "not the CEO of Veltrix", "CEO of Veltrix until 2019"."""
    before = range(max(d.left_edge(n) - 1, 0), start)
    stop = next((k for k in range(end, d.sent_end(n)) if d.text[k] in (",", ")", ";", "–", "—")), d.sent_end(n))
    phrase = range(end, stop)  # up to the comma or bracket that ends the apposition (the parse may hang "until" on
    # the holder)
    if any(d.lower[w] in ("not", "never") for w in before) or any(d.lower[w] in ENDED for w in phrase):
        return True
    if any(d.lower[w] == "from" for w in phrase) and any(d.lower[w] == "to" for w in phrase):
        return True  # "CEO of Veltrix from 2010 to 2019"
    return any(d.lower[w].rstrip("-") in FORMER for w in (*before, *range(start, end)))


def _holders(p: Passage, n: int) -> list[Ref]:
    """Who holds the role written as a name at ``n``: the person after it ("the General Counsel, Amara Eze") or
    the person it is an apposition to ("Ines Moreau, the Head of Finance Operations"): of several names in a row, the
    persons ("the Commander, US Pacific Fleet, Admiral John Aquilino")."""
    d = p.doc
    holders = titled_person(p, n)
    if d.dep[n] == "appos" and not not_held(d, n, n, n + 1):
        head = p.ref(d.head[n])
        if head is not None and (head.label == "PERSON" or (not head.is_value and person_like(head.name))):
            holders.append(head)
    m = p.by_token[n]
    chain = [a for w in range(m.start, m.end) for a in d.kids(w, "appos")]
    for a in list(chain):  # "Director, Product Management, Lea Fox": the names in a row after the role
        chain += [b for w in _words(p, a) for b in d.kids(w, "appos")]
    people = [r for a in chain for r in [p.ref(a)] if r is not None and r.label == "PERSON"]
    people += [r for r in holders if r.label == "PERSON" and r not in people]
    return people or holders[:1]


def _words(p: Passage, i: int) -> range:
    m = p.by_token.get(i)
    return range(m.start, m.end) if m is not None else range(i, i + 1)


def _clause_subject(p: Passage, n: int) -> Ref | None:
    """The subject of the clause token ``n`` sits in (``Garbarek was born in Mysen, Norway, the only child of C``:
    *Garbarek*), or ``None`` when it is no person-like entity."""
    d = p.doc
    verb = next((a for a in d.ancestors(n) if d.pos[a] in ("VERB", "AUX")), None)
    if verb is None:
        return None
    subject = next((k for k in (*d.kids(verb, "nsubj"), *d.kids(verb, "nsubjpass"))), None)
    ref = p.ref(subject) if subject is not None else None
    return ref if ref is not None and ref.label not in ("LOCATION", *VALUES) else None


def _topic_attribute(p: Passage, n: int, evidence: str) -> Iterator[Triple]:
    """``The capital is Nashville`` in a passage about Tennessee: a relational noun subject with no possessor and a
    named or measured complement is an attribute of the passage's topic (``Tennessee -[has capital]-> Nashville``)."""
    d = p.doc
    h = d.head[n]
    if p.topic is None or d.dep[n] not in ("nsubj",) or d.lemma(h) != "be" or d.pos[n] != "NOUN":
        return
    det = d.kid(n, "det")
    if det is not None and d.lower[det] != "the":
        return
    if d.lemma(n) in p.topic.kinds or p._names_topic(n) or (d.kids(n) == [det] and p._named_before(n)) or p.called(n):
        return  # "The battle was the decisive engagement of": the battle named before, no attribute of the topic
    itself = p.ref(n)  # "The slave trade was the principal exchange": the complement is the subject, no attribute
    things = [r for a in d.kids(h, "attr") for r in refs_of(p, a) if itself is None or r.name != itself.name]
    topic = p._topic_ref(resolved=True)
    if things and topic is not None:
        yield from emit([topic], _attribute(d, n), things, evidence)


def _attribute(d: Parse, n: int) -> str:
    """The predicate of an attribute read off a relational noun: ``Canada's capital, Ottawa`` and ``its capital is
    Ottawa`` are both ``Canada -[has capital]-> Ottawa``, the owner first (so a value, ``6.8 inches``, is an object)
    and *has* saying which way it reads."""
    adjectives = [c for c in d.kids(n, "amod") if c < n and d.pos[c] == "ADJ" and not d.ent[c] == "ORDINAL"]
    return predicate_of(d, [], "has", *sorted(adjectives + noun_words(d, n)))


def lifespans(p: Passage, start: int, end: int, evidence: str) -> Iterator[Triple]:
    """``X (born 9 August 1957 in Y)`` and ``X (1920 – 2010)``: the bracket after a name gives its dates."""
    d = p.doc
    for m in p.mentions:
        if m.is_value or not start <= m.start < end or m.end >= d.n or d.text[m.end] != "(":
            continue
        # the bracket may close past the sentence: the small pipeline often ends one at "(born ... )"
        close = next((i for i in range(m.end, min(d.n, m.end + 25)) if d.text[i] == ")"), None)
        if close is None:
            continue
        inside = [x for x in p.mentions if m.end < x.start and x.end <= close]
        subject = p.mention_ref(m)
        dates = [x for x in inside if x.label == "DATE"]
        if m.end + 1 < close and d.lower[m.end + 1] in BIRTH:
            for j, x in enumerate(inside):
                after = inside[j + 1] if j + 1 < len(inside) else None
                if x.label == "NUMBER" and after is not None and after.label == "DATE" and after.start == x.end:
                    # "born 31 May 1955": the small pipeline reads the day apart from the month and year
                    yield Triple(
                        subject, "born on", Ref(" ".join(d.span_text(x.start, after.end).split()), "DATE"), evidence
                    )
                    continue
                if x.label == "DATE" and j > 0 and inside[j - 1].label == "NUMBER" and inside[j - 1].end == x.start:
                    continue
                placed = x.label == "LOCATION" or (not x.is_value and x.start > 0 and d.lower[x.start - 1] == "in")
                # "(born March 12, 1909, St Louis, died October 8, 1973, Los Angeles)": what follows "died" is death
                # (the recogniser may take "d." into the date: "d. 1973")
                verb = "died" if any(d.lower[i] in DEATH for i in range(m.end + 1, x.start + 1)) else "born"
                word = f"{verb} on" if x.label == "DATE" else f"{verb} in" if placed else None
                target = p.mention_ref(x)
                if x.label == "DATE" and d.lower[x.start] in DEATH and x.end - x.start > 1:
                    target = Ref(" ".join(d.span_text(x.start + 1, x.end).split()), "DATE")
                if word:
                    yield Triple(subject, word, target, evidence)
        elif len(dates) == 2 and any(d.text[i] in DASHES for i in range(dates[0].end, dates[1].start)):
            yield Triple(subject, "born on", p.mention_ref(dates[0]), evidence)
            yield Triple(subject, "died on", p.mention_ref(dates[1]), evidence)


def places(p: Passage, start: int, end: int, evidence: str) -> Iterator[Triple]:
    """``Nashville, Tennessee``: a place written with the political unit it lies in after a comma (not a list of
    places: the second is not coordinated with the first, and the first heads no list); ``the Eastern Region of
    Uganda``: a place written with the place it is part of after "of"."""
    d = p.doc
    places = [m for m in p.mentions if start <= m.start < end and m.label == "LOCATION"]
    items = _lists(d, places)
    for a, b in zip(places, places[1:]):
        if b.start != a.end + 1 or d.text[a.end] != "," or d.ent[b.start] not in ("GPE", "LOC"):
            continue
        inside_a, inside_b = set(range(a.start, a.end)), set(range(b.start, b.end))
        heads = {d.head[i] for i in inside_b} - inside_b
        listed = any(d.dep[i] == "conj" for i in inside_b) or any(d.kids(i, "conj") for i in inside_a)
        listed = listed or a.start in items
        subject = any(  # "... the eastern coast of India, Delhi was at the centre": a finite clause's subject
            d.dep[i] in ("nsubj", "nsubjpass") and d.tag[d.head[i]] in ("VBD", "VBZ", "VBP", "MD") for i in inside_b
        )
        if not listed and not subject and heads <= inside_a | {b.end}:
            yield Triple(p.mention_ref(a), "located in", p.mention_ref(b), evidence)
    # "the Eastern Region of Uganda", "the central Hiran region of Somalia": a place written with "of" and the
    # place it is part of (one name, "the Gulf of Mexico", is one mention and says nothing here)
    for b in places:
        of = d.head[b.start] if d.dep[b.start] == "pobj" else None
        if of is None or d.lower[of] != "of" or of in p.by_token or negated(d, b.start):
            continue  # "acquired Veltrix instead of Harborline": no place of another
        if any(d.dep[k] not in ("det", "amod") for k in range(of + 1, b.start)):
            continue  # "the U.S. state of Michigan borders Canada" parsed with "Michigan borders" before Canada
        h = d.head[of]
        named = [p.by_token[t] for t in (h, *d.kids(h, "compound")) if t in p.by_token]
        place = d.lemma(h) in DIVISIONS
        if not any(m.label == "LOCATION" or (place and not m.label) for m in named):
            continue  # "the capital of France": a relational noun, read as such elsewhere
        whole = p.ref(h)
        either_way = d.lemma(h) in EITHER_WAY and d.text[h].islower() and h and d.ent[h - 1] in ("GPE", "LOC")
        if whole is not None and whole.label in ("LOCATION", "") and whole.name != b.name and not either_way:
            yield Triple(whole, "part of", p.mention_ref(b), evidence)
        elif whole is not None and whole.name == b.name:  # "the U.S. state of Michigan": the state is Michigan,
            said = "part of" if place else "located in"  # and the place before its noun is whose state it is;
            for m in named:  # a town is in a place, not a division of it ("the Orange County city of Irvine")
                if m.label == "LOCATION" and m.end <= h:
                    yield Triple(p.mention_ref(b), said, p.mention_ref(m), evidence)


EITHER_WAY = frozenset({"borough", "district"})
"""Division nouns a recognised place before them may name or contain: "the Kandy district of Sri Lanka", "the
Westminster borough of London", but "the Paris district of Montmartre", "the London borough of Camden". Only knowing
which place is larger tells them apart, so neither is read."""

LONG_LIST = 5
"""Places set off by commas from this many on are a list even without "and" (a table flattened into text): a place
with the units it lies in is at most a town, a county, a state and a country."""
LIST_GAPS = frozenset({(",",), (",", "and"), (",", "or"), ("and",), ("or",)})
"""What stands between two places of a run (an article aside)."""


def _lists(d: Parse, places: Sequence[Mention]) -> set[int]:
    """The places (by start token) that are items of a list, not a place and the units it lies in: the run of
    places after it, set off by commas, goes on to "and" or "or" ("the United States, Canada, and the United
    Kingdom": not "Avery County and McDowell County, North Carolina", whose "and" comes before), or its whole run is
    long and names no division (a table flattened into text, "Argentina, Australia, Costa Rica, Egypt, Germany";
    not "Shahi Rural District, Sardasht District, Dezful County, Khuzestan Province, Iran")."""

    def gap(x: Mention, y: Mention) -> tuple[str, ...]:
        return tuple(w for w in (d.lower[t] for t in range(x.end, y.start)) if w != "the")

    items: set[int] = set()
    runs: list[list[Mention]] = []
    for m in places:
        if runs and gap(runs[-1][-1], m) in LIST_GAPS:
            runs[-1].append(m)
        else:
            runs.append([m])
    for run in runs:
        gaps = [gap(x, y) for x, y in zip(run, run[1:])]
        last = max((k for k, g in enumerate(gaps) if "and" in g or "or" in g), default=-1)
        items.update(m.start for m in run[: last + 1])  # each place before the run's last "and"/"or"
        if len(run) >= LONG_LIST and not any(head_word(m.name) in DIVISIONS for m in run):
            items.update(m.start for m in run)
    return items


KINSHIP = frozenset(
    "child son daughter wife husband widow widower father mother parent brother sister sibling grandson "
    "granddaughter grandchild nephew niece cousin heir stepson stepdaughter".split()
)
"""Nouns that relate two people: in apposition to a place they are misattached and describe the clause's subject."""
