"""Directed relations read off a dependency parse: subject -[predicate]-> object, as the sentence writes it.

A relation is emitted only when both ends are entities of the passage (:mod:`kg_rag.ingest.nlp.mentions`) or,
for the object, a specific value (a date, an amount): a row between two generic noun phrases ("the grounds were
assigned to the church") names nothing a reader can follow. The predicate keeps the verb's auxiliaries, negation,
particle and preposition exactly as written — ``was founded by``, ``was proclaimed emperor by``, ``is the capital
of`` — so the relation typer gives a passive its own ``..._BY`` type and never reads an edge backwards.

The grammatical shapes handled, each from its syntax rather than from a word list:

* a verb with its subject and its object or prepositional complement, the subject shared by coordinated verbs,
  inherited by a participle clause (``Founded in 1930 by Jenkins, Publix is ...``) and by an infinitive
  complement (subject control; object control when the governing verb has an object);
* a relative or reduced relative clause, whose subject is the noun it modifies (``a ballet written by Strauss``),
  and a noun that is only a description of an entity (the complement of a copula, an apposition) standing for it;
* a copula with a relational noun (``X is the capital of Y``) or adjective (``X is similar to Y``), and an inverted
  passive (``Located in Paris is the Louvre``);
* appositions (``Jan, the editor of J``), possessives (``Canada's capital, Ottawa``; ``its editor is Jan``), a list
  that names a generic object (``three members: A, B and C``), places written ``Town, State``, and lifespans in
  brackets (``X (born 9 August 1957)``, ``X (1920 – 2010)``);
* pronouns and definite descriptions of the topic's kind (``the song``) resolved to the entity they refer back to
  (:mod:`kg_rag.ingest.nlp.refs`: what a word stands for).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kg_rag.ingest.nlp.mentions import VALUES
from kg_rag.ingest.nlp.parse import Parse, paragraph_start
from kg_rag.ingest.nlp.refs import (
    COPULAS,
    NAMING,
    PARTITIVES,
    PLACE_NOUNS,
    RELATIVES,
    SUBJECTS,
    Passage,
    Ref,
    conjuncts,
    listed_names,
    nominal,
    of_objects,
    refs_of,
    subjects_of,
)

DEATH = frozenset({"died", "d.", "death"})
"""Words that mark the death half of a birth bracket: "(born 1909, Boston, died 1973, Paris)", "(b. 1909; d. 1973)"."""
BIRTH = frozenset({"born", "b."})
DASHES = frozenset({"-", "–", "—", "to"})

DIRECT, RESOLVED = 1.0, 0.8
"""Confidence of a relation whose ends are both written as names, and of one where an end was resolved from a
pronoun, a description or a clause it belongs to."""


@dataclass(frozen=True, slots=True)
class Triple:
    source: Ref
    predicate: str
    target: Ref
    evidence: str

    @property
    def confidence(self) -> float:
        return RESOLVED if self.source.resolved or self.target.resolved else DIRECT


# ------------------------------------------------------------------ predicates
_CONTRACTED = {
    "'s": "is",
    "’s": "is",
    "'re": "are",
    "’re": "are",
    "'ve": "have",
    "’ve": "have",
    "n't": "not",
    "n’t": "not",
}


ARTICLES = frozenset(["a", "an", "the"])


def _article(d: Parse, noun: int, prep: int) -> list[str]:
    """The article of a noun before "by" ("published a novel by X", "from a screenplay by X"): kept in the
    predicate, it says the verb is active and "by" names the noun's maker, not an agent, which the typer would
    read in "published novel by" (:attr:`~kg_rag.model.predicates.PredicateForm.active`)."""
    if d.lower[prep] != "by":
        return []
    return [d.lower[k] for k in d.kids(noun, "det") if d.lower[k] in ARTICLES]


def _words(d: Parse, group: list[int], *rest: int | str) -> str:
    """The predicate: the verb group in its order, then what follows it in the order it is said (a fronted
    preposition, ``Via the river, X is ...``, still follows the verb); contractions written out (``'s`` -> ``is``)."""
    words = (w if isinstance(w, str) else d.lower[w] for w in [*sorted(group), *rest])
    return " ".join(_CONTRACTED.get(w, w) for w in words)


def _verb_group(d: Parse, v: int) -> list[int]:
    """The verb with its auxiliaries, negation and particle (``has not been included``, ``set up``)."""
    return [v, *d.kids(v, "aux", "auxpass", "neg", "prt")]


def _noun_words(d: Parse, n: int) -> list[int]:
    """A relational noun with the words that make it one (``impact factor``, ``head coach``), no numbers."""
    return [c for c in d.kids(n, "compound") if c < n and not d.num[c] and d.pos[c] != "PROPN"] + [n]


def _relative(d: Parse, prep: int) -> bool:
    """``in which``, ``by whom``: a preposition fronted with the relative pronoun it governs."""
    return any(d.lower[o] in RELATIVES for o in d.kids(prep, "pobj"))


def _prep_objects(p: Passage, prep: int) -> list[Ref]:
    return [r for o in p.doc.kids(prep, "pobj") for r in refs_of(p, o)]


def read_clauses(p: Passage) -> Iterator[Triple]:
    """Every relation the passage's sentences state (see the module docstring)."""
    d = p.doc
    for start, end in d.sents:
        if start and paragraph_start(d.source, d.idx[start]):
            p.recent.clear()  # a pronoun refers back within its paragraph (or to the topic), never across a heading
        evidence = " ".join(d.span_text(start, end).split())
        yield from _lifespans(p, start, end, evidence)
        yield from _places(p, start, end, evidence)
        for i in range(start, end):
            pos = d.pos[i]
            if pos in ("VERB", "AUX") and d.dep[i] not in ("aux", "auxpass"):
                yield from _verb(p, i, evidence)
            elif pos in ("NOUN", "PROPN"):
                yield from _noun(p, i, evidence)
            elif d.dep[i] == "amod" and d.head[i] < i and d.kids(i, "prep"):
                yield from _after_noun(p, i, evidence)


COMPLEMENTS = frozenset({"dobj", "dative", "prep", "agent", "attr", "acomp", "oprd"})


def _complements(d: Parse, v: int) -> list[int]:
    """What a verb says of its subject: its objects and complements, and the prepositional phrases after it (a
    fronted one, ``Via the river, X is ...``, is circumstance) — except a fronted date (``On 4 February 1948, Ceylon
    was granted ...``) or a relative (``the town in which ...``). A verb with none shares those of the verb
    coordinated with it: ``written and recorded by X`` says who wrote it too."""
    own = [c for c in d.children[v] if d.dep[c] in COMPLEMENTS and (c > v or d.dep[c] not in ("prep", "agent"))]
    # an apposition hangs off nouns only: a name after a verb labelled so is the verb's object, mislabelled
    own += [c for c in d.kids(v, "appos") if c > v and d.pos[v] == "VERB" and not d.kids(v, "dobj")]
    own += [c for c in d.kids(v, "prep") if c < v and (_relative(d, c) or _dated(d, c))]
    # "died aged 66 in Schenectady": an age is no predicate, its phrase is the verb's
    own += [x for c in d.kids(v, "acomp", "advcl") if d.lower[c] == "aged" for x in d.kids(c, "prep")]
    if not own:
        for c in d.kids(v, "conj"):
            if d.pos[c] in ("VERB", "AUX") and not d.kids(c, *SUBJECTS):
                return [x for x in d.children[c] if d.dep[x] in ("agent", "prep", "dobj") and x > c]
    return own


def _dated(d: Parse, prep: int) -> bool:
    return any(d.ent[o] in ("DATE", "TIME") for o in d.kids(prep, "pobj"))


def _verb(p: Passage, v: int, evidence: str) -> Iterator[Triple]:
    d = p.doc
    if v > 1 and d.text[v - 1] == "(" and d.lower[v] in BIRTH and (v - 2) in p.by_token:
        return  # "X (born 31 May 1955 in Y)": the bracket after a name is read whole (_lifespans), not as a clause
    if d.dep[v] == "acl" and d.tag[v] == "VBN" and d.lemma(v) in NAMING:
        called = p.called(d.head[v])
        if called is not None and p.ref(d.head[v]) == called:
            return  # "a success known in the US as Betty Blue": the name the noun stands for, no relation of its own
    subjects = [s for s in subjects_of(p, v) if not s.is_value]
    if d.dep[v] in ("ROOT", "conj"):
        agents = [r for a in d.kids(v, "agent") for r in _prep_objects(p, a)]
        start, end = d.sent_start(v), d.sent_end(v)
        people = {p.mention_ref(m).name for m in p.mentions if start <= m.start < end and m.label == "PERSON"}
        if len(agents) == 1 and people <= {agents[0].name}:  # the sentence's only person ("John Smith's novel was
            p.note_agent(agents[0])  # praised by Mary Jones. He won ...": he may be John Smith)
        for s in subjects:  # the subject is noted last: the latest
            p.note_subject(s)
    if not subjects:  # "parliament elected X as President of Somalia": the object holds the role all the same
        for c in d.kids(v, "prep"):
            if d.lower[c] == "as" and c > v:
                yield from _held_roles(p, v, c, [], evidence)
        return
    group = _verb_group(d, v)
    copula = d.lemma(v) in COPULAS
    complement = next((c for c in d.kids(v, "oprd") if d.pos[c] == "NOUN"), None)
    if complement is not None:  # "was proclaimed emperor by": the complement is part of what is said
        group = group + _noun_words(d, complement)
    # "became a monthly publication in 1963", "was granted independence on": a generic complement or object is part
    # of what the verb's prepositions say
    generic = next(
        (
            c
            for c in d.kids(v, "attr" if copula else "dobj")
            if (nominal(d, c) and d.pos[c] != "PROPN" and c not in p.by_token and (copula or p.ref(c) is None))
            or (copula and _role_name(p, c))
        ),
        None,
    )
    described = _noun_words(d, generic) if generic is not None else []
    for c in _complements(d, v):
        dep = d.dep[c]
        if dep in ("dobj", "dative", "appos") or (dep == "oprd" and c != complement):
            listed = listed_names(p, c)
            if listed:  # "had four members: A, B and C"
                yield from _emit(subjects, _words(d, group, *_noun_words(d, c)), listed, evidence)
                continue
            objects = refs_of(p, c)
            if objects:
                yield from _emit(subjects, _words(d, group), objects, evidence)
            elif dep == "oprd":  # "was made an Officer of the Order of Canada": the subject holds that role
                yield from _complement_role(p, subjects, c, _words(d, group, *_noun_words(d, c)), evidence)
            else:  # "took part in X": the generic object belongs to the predicate
                for prep in d.kids(c, "prep"):
                    det = _article(d, c, prep)
                    yield from _via(p, subjects, _words(d, group, *det, *_noun_words(d, c), prep), prep, evidence)
        elif dep in ("prep", "agent"):
            if d.lower[c] == "as":  # "wound up as Djibouti's first president": the subject is in that role
                yield from _roles(p, subjects, d.kids(c, "pobj"), evidence)
                held = list(_held_roles(p, v, c, subjects, evidence))
                if held:  # "elected Hassan Sheikh Mohamud as the new President of Somalia"
                    yield from held
                    continue
            placed = (  # "is in New York": where it is (not "was active in Paris", nor where a person was)
                copula
                and not described
                and not d.kids(v, "acomp")
                and all(x.label != "PERSON" for x in subjects)
                and bool(_places_in(p, c))
            )
            active_by = generic is not None and not d.kids(v, "auxpass") and not copula
            det = _article(d, generic, c) if active_by and generic is not None else []
            said = ["located"] if placed else [*det, *described]
            yield from _via(p, subjects, _words(d, group, *said, c), c, evidence)
            for also in d.kids(c, "conj"):  # "is used in Belgium and in the Netherlands"
                if d.pos[also] == "ADP":
                    yield from _via(p, subjects, _words(d, group, *described, also), also, evidence)
            for o in d.kids(c, "pobj"):  # "born on 7 November 1867 in Warsaw": a date takes no place, the verb does
                if d.ent[o] in ("DATE", "TIME"):
                    for inner in d.kids(o, "prep"):
                        yield from _via(p, subjects, _words(d, group, *described, inner), inner, evidence)
        elif dep == "attr" and copula:
            yield from _copula(p, v, group, c, subjects, evidence)
        elif dep == "acomp" and copula:
            for prep in d.kids(c, "prep"):  # "is similar to", "is adjacent to"
                yield from _via(p, subjects, _words(d, group, c, prep), prep, evidence)
        elif c == complement:
            yield from _complement_role(p, subjects, c, _words(d, group), evidence)


def _complement_role(p: Passage, subjects: list[Ref], c: int, words: str, evidence: str) -> Iterator[Triple]:
    """The prepositional phrases of an object complement ("was made an Officer of the Order", "was named head
    coach of the team", "was proclaimed emperor by the guard"): with *of*, the role the subject holds and what it
    is held of (``X -[is officer of]-> Order``: *made* is how, not what); any other, what the verb phrase says."""
    d = p.doc
    for prep in d.kids(c, "prep"):
        if d.lower[prep] == "of":
            owners = [r for r in _prep_objects(p, prep) if not r.is_value]
            yield from _emit(subjects, _words(d, [], "is", d.lemma(c), "of"), owners, evidence)
        else:
            yield from _via(p, subjects, f"{words} {d.lower[prep]}", prep, evidence)


def _places_in(p: Passage, prep: int) -> list[Ref]:
    """The places an ``in`` phrase governs when it governs places only (else none): "X is in New York" says where
    X is located (a copula with "in" says nothing more; "was in the army" or "in 1990" is no location)."""
    if p.doc.lower[prep] not in ("in", "within"):
        return []
    objects = _prep_objects(p, prep)
    return objects if objects and all(r.label == "LOCATION" for r in objects) else []


def _via(p: Passage, subjects: list[Ref], words: str, prep: int, evidence: str) -> Iterator[Triple]:
    """The relations a prepositional phrase gives: to the entities it governs, or through a generic noun with a
    preposition of its own (``on behalf of X``, ``in collaboration with X``). A time after "by" is a deadline, not
    an agent ("by the 6th century BC it was replaced by ...", "by early 2011 ... took charge"): no relation —
    unless the parse reads a passive's agent there and no number says it is a time (the recogniser calls "the
    Qing dynasty" a date). A "by" before its verb is never the agent ("By the Late Middle Ages, Britain was
    separated"; an agent follows the passive it completes)."""
    d = p.doc
    objects = _prep_objects(p, prep)
    if d.lower[prep] == "by":
        relative = any(d.tag[o] in ("WDT", "WP") for o in d.kids(prep, "pobj"))  # "by which it was acquired"
        if prep < d.head[prep] and not relative:  # "By the Late Middle Ages, Britain was separated": not an agent
            return
        times = [r.name for r in objects if r.label in ("DATE", "TIME")]
        if times and (d.dep[prep] != "agent" or any(ch.isdigit() for t in times for ch in t)):
            return
    if objects:
        yield from _emit(subjects, words, objects, evidence)
        return
    for o in d.kids(prep, "pobj"):
        if d.pos[o] == "NOUN":
            for inner in d.kids(o, "prep"):
                noun = [*_article(d, o, inner), *(d.lower[w] for w in _noun_words(d, o))]
                longer = f"{words} {' '.join(noun)} {d.lower[inner]}"
                yield from _emit(subjects, longer, _prep_objects(p, inner), evidence)


def _roles(p: Passage, subjects: list[Ref], nouns: list[int], evidence: str) -> Iterator[Triple]:
    """``X is Y's president``, ``X served as Y's first president``: the subject holds the role, ``X -[is president
    of]-> Y`` (the verb that put it there is not the relation)."""
    d = p.doc
    for n in nouns:
        owner_tok = d.kid(n, "poss")
        if owner_tok is None or d.pos[n] != "NOUN" or n in p.by_token:
            continue
        owner = p.ref(owner_tok)
        if owner is not None and not owner.is_value:
            yield from _emit(subjects, _words(d, [], "is", *_noun_words(d, n), "of"), [owner], evidence)


def _copula(p: Passage, v: int, group: list[int], attr: int, subjects: list[Ref], evidence: str) -> Iterator[Triple]:
    """``X is Y``: a named complement (``X became Y``); a relational noun with its complement (``X is the capital of
    Y``, ``X is Y's president``); a generic complement describes the subject (and gives the topic its kind)."""
    d = p.doc
    attrs = conjuncts(d, attr)
    roles = {t for t in attrs if _role_name(p, t)}
    kinds = {t: _one_of(d, t) for t in attrs}
    named = [
        r for t in attrs if t in p.by_token and t not in roles and kinds[t] == t for r in [p.ref(t)] if r is not None
    ]
    if named:
        if d.lemma(v) != "be":
            yield from _emit(subjects, _words(d, group), named, evidence)
        return
    for t in attrs:
        a = kinds[t]
        if a not in roles and (not nominal(d, a) or d.pos[a] == "PROPN"):
            continue
        for s in subjects:
            if p.topic is not None and s.name == p.topic.name:
                p.topic.kinds.add(d.lemma(a))
            _describe(p, s.name, a)
        noun: list[int | str] = [*_noun_words(d, a)] if a == t else [*_noun_words(d, a)[:-1], d.lemma(a)]
        for prep in d.kids(a, "prep"):
            yield from _via(p, subjects, _words(d, group, *noun, prep), prep, evidence)
        yield from _roles(p, subjects, [a], evidence)
        places = _place_modifiers(p, a)
        if places:
            yield from _emit(subjects, _words(d, [], "is", a, "from"), places, evidence)


def _held_roles(p: Passage, v: int, prep: int, subjects: list[Ref], evidence: str) -> Iterator[Triple]:
    """A role "as" names, with what it is held of: ``X -[is president of]-> Y`` (the verb that put X there is not
    the relation). The object holds it after a verb that puts its object in a role ("parliament elected Hassan
    Sheikh Mohamud as the new President of Somalia"), the subject after any other ("Obama visited Israel as
    President of the United States", "Charles succeeded Elizabeth II as King"). Not a role: what an epithet
    calls someone ("known as the father of"), a part an actor plays ("starred as the captain of"), or a noun that
    names no position ("as a result of", "as a gift of", "as part of")."""
    d = p.doc
    verb = d.lemma(v)
    if verb in EPITHET_VERBS or verb in PLAYING_VERBS:
        return
    if verb in PLACING_VERBS and d.kids(v, "dobj"):
        holders = [r for o in d.kids(v, "dobj") for r in refs_of(p, o)]  # none: the object is no entity
    else:
        holders = subjects
    for role in d.kids(prep, "pobj"):
        if d.lemma(role) in NOT_ROLES or not (
            _role_name(p, role) or (role not in p.by_token and d.pos[role] == "NOUN")
        ):
            continue
        for of in d.kids(role, "prep"):
            if d.lower[of] == "of":
                owners = [r for r in _prep_objects(p, of) if not r.is_value]
                yield from _emit(holders, _words(d, [], "is", d.lemma(role), "of"), owners, evidence)


PLACING_VERBS = frozenset(
    "elect appoint name nominate confirm choose select install designate hire crown proclaim ordain inaugurate "
    "reappoint re-elect".split()
)
"""Verbs that put their object in a role ("elected X as president of Y"): the object holds the role "as" names."""
EPITHET_VERBS = frozenset("know call dub nickname regard consider describe refer hail remember see style".split())
"""Verbs whose "as" gives what someone is called, not a position held ("known as the father of the nation")."""
PLAYING_VERBS = frozenset("star play portray cast voice appear feature act".split())
"""Verbs whose "as" gives a part an actor plays ("starred as the captain of the Maersk Alabama")."""
NOT_ROLES = frozenset(
    "result consequence part gift tribute symbol sign way means form kind type sort example response reward "
    "replacement alternative basis model".split()
)
"""Nouns after "as" that name no position one holds ("as a result of", "as part of", "as a gift of")."""


def _one_of(d: Parse, i: int) -> int:
    """``X is one of the seven arrondissements in Hainaut``: X is an arrondissement in Hainaut (the kind it is one
    of is the complement)."""
    if d.lower[i] != "one":
        return i
    for prep in d.kids(i, "prep"):
        kind = d.kid(prep, "pobj") if d.lower[prep] == "of" else None
        if kind is not None and d.pos[kind] == "NOUN":
            return kind
    return i


def _role_name(p: Passage, i: int) -> bool:
    """A capitalised role with what it is held of, "was King of Sweden", "Duke of Mecklenburg": the role is no name
    of its own (the recogniser gives it no type), and reads as "was king of Sweden" does."""
    d = p.doc
    m = p.by_token.get(i)
    if m is None or m.kind != "name" or m.label or m.end - m.start != 1:
        return False
    det = d.kid(i, "det")
    if det is not None and d.lower[det] in ("a", "an"):
        return False  # "a Game of Thrones character": a name inside a kind
    return any(d.lower[prep] == "of" and d.kid(prep, "pobj") in p.by_token for prep in d.kids(i, "prep"))


def _place_modifiers(p: Passage, n: int) -> list[Ref]:
    """The places a kind noun is modified by: "a 2000 Hong Kong action film", "a Texas state senator" say where the
    thing is from (a place written as an adjective, *British*, is no entity and is not read)."""
    d = p.doc
    out = []
    for k in range(d.left_edge(n), n):
        m = p.by_token.get(k)
        if m is None or m.label != "LOCATION" or k != m.end - 1 or d.dep[k] != "compound" or d.head[k] == k:
            continue
        if d.head[k] == n or (d.head[k] < n and d.dep[d.head[k]] == "compound" and d.head[d.head[k]] == n):
            out.append(p.mention_ref(m))
    return out


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
        yield from _emit([ref], "is located in", _places_in(p, prep), evidence)


def _describe(p: Passage, name: str, n: int) -> None:
    """Note the passage's description of ``name`` (its first): a noun phrase headed by a word, not a figure
    ("the United States, 3.1 %" describes nothing)."""
    if p.doc.alpha[n]:
        p.descriptions.setdefault(name, _description(p.doc, n))


def _description(d: Parse, n: int) -> str:
    """The noun phrase a copula or apposition describes an entity with, without its clauses (``a peer-reviewed
    journal``)."""
    return " ".join(d.span_text(d.left_edge(n), n + 1).split())[:200]


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


def _after_noun(p: Passage, a: int, evidence: str) -> Iterator[Triple]:
    """An adjective after the noun it describes, with its own preposition: "a lizard native to Sonora", "a suburb
    close to Colombo" say what the noun's entity is to the object (``native to``), as "X is native to Y" does."""
    d = p.doc
    if d.title[a] or d.stop[d.head[a]]:  # "The Life Aquatic with": a title's word; "none other than": no noun
        return
    subject = p.ref(d.head[a])
    if subject is None or subject.is_value:
        return
    for prep in d.kids(a, "prep"):
        if not _relative(d, prep):
            yield from _via(p, [subject], _words(d, [a], prep), prep, evidence)


def _noun(p: Passage, n: int, evidence: str) -> Iterator[Triple]:
    """Relations a noun phrase states without a verb: an apposition with a relational noun (``Jan, the editor of
    J``: ``Jan -[is editor of]-> J``), a possessive (``Canada's capital, Ottawa``; ``its editor is Jan``: the owner's
    attribute, ``Canada -[has capital]-> Ottawa``)."""
    d = p.doc
    if n in p.by_token:
        yield from _located(p, n, evidence)
        return
    if d.dep[n] == "appos":
        head = p.ref(d.head[n])
        if head is not None and head.label == "LOCATION" and d.lemma(n) in KINSHIP:
            head = _clause_subject(p, n)  # "born in Mysen, Norway, the only child of C": the child is who was born
        if head is not None and not head.is_value:
            _describe(p, head.name, n)
            if p.topic is not None and head.name == p.topic.name:
                p.topic.kinds.add(d.lemma(n))
            for prep in d.kids(n, "prep"):
                yield from _emit(
                    [head], _words(d, [], "is", *_noun_words(d, n), prep), _prep_objects(p, prep), evidence
                )
    owner_tok = d.kid(n, "poss")
    if owner_tok is None:
        owners = _of_owner(p, n)
        if owners:  # "The capital of France is Paris": France -[has capital]-> Paris, as "France's capital is"
            things = [r for a in d.kids(d.head[n], "attr") for r in refs_of(p, a)]
            yield from _emit(owners, _attribute(d, n), things, evidence)
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
    yield from _emit([owner], _attribute(d, n), named, evidence)


DIVISIONS = frozenset(
    "region province district county state department oblast prefecture municipality governorate territory "
    "canton parish borough emirate voivodeship raion".split()
)
"""Nouns of administrative divisions: ``the Hiran region of Somalia`` names a place even untyped."""

"""Value types that count a noun (``4 districts``); a date or an amount before a noun does not."""

KINSHIP = frozenset(
    "child son daughter wife husband widow widower father mother parent brother sister sibling grandson "
    "granddaughter grandchild nephew niece cousin heir stepson stepdaughter".split()
)
"""Nouns that relate two people: in apposition to a place they are misattached and describe the clause's subject."""


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
    things = [r for a in d.kids(h, "attr") for r in refs_of(p, a)]
    topic = p._topic_ref(resolved=True)
    if things and topic is not None:
        yield from _emit([topic], _attribute(d, n), things, evidence)


def _attribute(d: Parse, n: int) -> str:
    """The predicate of an attribute read off a relational noun: ``Canada's capital, Ottawa`` and ``its capital is
    Ottawa`` are both ``Canada -[has capital]-> Ottawa``, the owner first (so a value, ``6.8 inches``, is an object)
    and *has* saying which way it reads."""
    adjectives = [c for c in d.kids(n, "amod") if c < n and d.pos[c] == "ADJ" and not d.ent[c] == "ORDINAL"]
    return _words(d, [], "has", *sorted(adjectives + _noun_words(d, n)))


def _emit(subjects: list[Ref], predicate: str, objects: list[Ref], evidence: str) -> Iterator[Triple]:
    for s in subjects:
        if s.is_value:
            continue
        for o in objects:
            if o.name.casefold() != s.name.casefold():
                yield Triple(s, predicate, o, evidence)


def _lifespans(p: Passage, start: int, end: int, evidence: str) -> Iterator[Triple]:
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


def _places(p: Passage, start: int, end: int, evidence: str) -> Iterator[Triple]:
    """``Nashville, Tennessee``: a place written with the political unit it lies in after a comma (not a list of
    places: the second is not coordinated with the first, and the first heads no list); ``the Eastern Region of
    Uganda``: a place written with the place it is part of after "of"."""
    d = p.doc
    places = [m for m in p.mentions if start <= m.start < end and m.label == "LOCATION"]
    for a, b in zip(places, places[1:]):
        if b.start != a.end + 1 or d.text[a.end] != "," or d.ent[b.start] not in ("GPE", "LOC"):
            continue
        inside_a, inside_b = set(range(a.start, a.end)), set(range(b.start, b.end))
        heads = {d.head[i] for i in inside_b} - inside_b
        listed = any(d.dep[i] == "conj" for i in inside_b) or any(d.kids(i, "conj") for i in inside_a)
        if not listed and heads <= inside_a | {b.end}:
            yield Triple(p.mention_ref(a), "located in", p.mention_ref(b), evidence)
    # "the Eastern Region of Uganda", "the central Hiran region of Somalia": a place written with "of" and the
    # place it is part of (one name, "the Gulf of Mexico", is one mention and says nothing here)
    for b in places:
        of = d.head[b.start] if d.dep[b.start] == "pobj" else None
        if of is None or d.lower[of] != "of" or of in p.by_token:
            continue
        h = d.head[of]
        named = [p.by_token[t] for t in (h, *d.kids(h, "compound")) if t in p.by_token]
        place = d.lemma(h) in DIVISIONS
        if not any(m.label == "LOCATION" or (place and not m.label) for m in named):
            continue  # "the capital of France": a relational noun, read as such elsewhere
        whole = p.ref(h)
        if whole is not None and whole.label in ("LOCATION", "") and whole.name != b.name:
            yield Triple(whole, "part of", p.mention_ref(b), evidence)
