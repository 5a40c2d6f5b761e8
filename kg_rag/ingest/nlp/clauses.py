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
* a list that names a generic object (``three members: A, B and C``, or a bulleted list after the colon);
* with no verb of their own (:mod:`kg_rag.ingest.nlp.nouns`): appositions (``Jan, the editor of J``), possessives
  (``Canada's capital, Ottawa``; ``its editor is Jan``), places written ``Town, State``, and lifespans in brackets
  (``X (born 9 August 1957)``, ``X (1920 – 2010)``);
* pronouns and definite descriptions of the topic's kind (``the song``) resolved to the entity they refer back to
  (:mod:`kg_rag.ingest.nlp.refs`: what a word stands for).
"""

from __future__ import annotations

from collections.abc import Iterator

from kg_rag.ingest.nlp.nouns import EVENTS, after_noun, has_doer, lifespans, not_held, noun, places
from kg_rag.ingest.nlp.parse import Parse, paragraph_start
from kg_rag.ingest.nlp.refs import (
    COPULAS,
    NAMING,
    PLACING_VERBS,
    SUBJECTS,
    SUCCEEDING_VERBS,
    Passage,
    Ref,
    conjuncts,
    listed_names,
    nominal,
    refs_of,
    subjects_of,
)
from kg_rag.ingest.nlp.stance import unasserted
from kg_rag.ingest.nlp.things import THING
from kg_rag.ingest.nlp.triples import (
    BIRTH,
    Triple,
    article,
    behind_thing,
    describe,
    emit,
    noun_words,
    places_in,
    predicate_of,
    prep_objects,
    relative,
    role_words,
    via,
)
from kg_rag.model.predicates import PARTICLES


def _verb_group(d: Parse, v: int) -> list[int]:
    """The verb with its auxiliaries, negation and particle (``has not been included``, ``set up``; an adverb that
    makes a phrasal verb, ``rolled back``, too)."""
    particles = [
        a
        for a in d.kids(v, "advmod")
        if a == v + 1
        and d.lower[a] in PARTICLES
        and d.lemma(v) not in MOTION
        and d.tag[a] in ("RB", "RP")
        and (a + 1 >= d.n or d.text[a + 1] != "-")
    ]  # right after the verb: "played defensive back", "won back-to-back titles" have none; after a verb of motion
    # "back" only says which way ("came back to Liverpool" is "came to")
    return [v, *d.kids(v, "aux", "auxpass", "neg", "prt"), *particles]


def read_clauses(p: Passage) -> Iterator[Triple]:
    """Every relation the passage's sentences state (see the module docstring)."""
    d = p.doc
    for start, end in d.sents:
        if start and paragraph_start(d.source, d.idx[start]):
            p.recent.clear()  # a pronoun refers back within its paragraph (or to the topic), never across a heading
        evidence = " ".join(d.span_text(start, end).split())
        yield from lifespans(p, start, end, evidence)
        yield from places(p, start, end, evidence)
        for i in range(start, end):
            pos = d.pos[i]
            if pos in ("VERB", "AUX") and d.dep[i] not in ("aux", "auxpass"):
                yield from _verb(p, i, evidence)
            elif pos in ("NOUN", "PROPN"):
                yield from noun(p, i, evidence)
            elif d.dep[i] == "amod" and d.head[i] < i and d.kids(i, "prep"):
                yield from after_noun(p, i, evidence)


COMPLEMENTS = frozenset({"dobj", "dative", "prep", "agent", "attr", "acomp", "oprd"})


def _complements(d: Parse, v: int) -> list[int]:
    """What a verb says of its subject: its objects and complements, and the prepositional phrases after it (a
    fronted one, ``Via the river, X is ...``, is circumstance) — except a fronted date (``On 4 February 1948, Ceylon
    was granted ...``) or a relative (``the town in which ...``). A verb with none shares those of the verb
    coordinated with it: ``written and recorded by X`` says who wrote it too."""
    own = [c for c in d.children[v] if d.dep[c] in COMPLEMENTS and (c > v or d.dep[c] not in ("prep", "agent"))]
    # an apposition hangs off nouns only: a name after a verb labelled so is the verb's object, mislabelled
    own += [c for c in d.kids(v, "appos") if c > v and d.pos[v] == "VERB" and not d.kids(v, "dobj")]
    own += [c for c in d.kids(v, "prep") if c < v and (relative(d, c) or _dated(d, c))]
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
        return  # "X (born 31 May 1955 in Y)": the bracket after a name is read whole (lifespans), not as a clause
    if d.dep[v] == "acl" and d.tag[v] == "VBN" and d.lemma(v) in NAMING:
        called = p.called(d.head[v])
        if called is not None and p.ref(d.head[v]) == called:
            return  # "a success known in the US as Betty Blue": the name the noun stands for, no relation of its own
    if unasserted(d, v):
        return
    subjects = [s for s in subjects_of(p, v) if not s.is_value]
    if d.dep[v] in ("ROOT", "conj"):
        agents = [r for a in d.kids(v, "agent") for r in prep_objects(p, a)]
        if len(agents) == 1 and agents[0].label == "PERSON":  # the sentence's only person ("John Smith's novel was
            # praised by Mary Jones. He won ...": he may be John Smith); read off the sentence's own tokens
            in_sentence = (p.by_token.get(t) for t in range(d.sent_start(v), d.sent_end(v)))
            people = {p.mention_ref(m).name for m in in_sentence if m is not None and m.label == "PERSON"}
            if people <= {agents[0].name}:
                p.note_agent(agents[0])
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
        group = group + noun_words(d, complement)
    # "became a monthly publication in 1963", "was granted independence on": a generic complement or object is part
    # of what the verb's prepositions say
    generic = next(
        (
            c
            for c in d.kids(v, "attr" if copula else "dobj")
            if (nominal(d, c) and d.pos[c] != "PROPN" and c not in p.by_token and (copula or _generic(p, c)))
            or (copula and _role_name(p, c))
        ),
        None,
    )
    described = noun_words(d, generic) if generic is not None else []
    for c in _complements(d, v):
        dep = d.dep[c]
        # "born in Ogidi, not in Lagos": a phrase ruled out (a "not" after it rules out an alternative hung on it:
        # "met Bob Smith, not Carl Jones"); a preposition's alternative after it stands, below
        ruled_out = any(k < c for k in d.kids(c, "neg"))
        if dep == "dative" and d.pos[c] == "ADP":  # "sold its unit to Intel": a recipient's "to" is a preposition
            dep = "prep"
        if ruled_out and dep not in ("prep", "agent"):
            continue
        if dep in ("oprd", "dobj") and _held_complement(p, v, c):  # "was elected President of Mexico": the role,
            for role in [c, *(k for k in d.kids(c, "conj") if _role_name(p, k))]:  # held of Mexico ("and later
                yield from _complement_role(p, subjects, role, predicate_of(d, group), evidence)  # Governor of X")
            continue
        if dep in ("dobj", "dative", "appos") or (dep == "oprd" and c != complement):
            listed = listed_names(p, c)
            if listed:  # "had four members: A, B and C"
                yield from emit(subjects, predicate_of(d, group, *noun_words(d, c)), listed, evidence)
                continue
            objects = refs_of(p, c)
            if objects and all(o.label == THING for o in objects):
                named = behind_thing(p, subjects, predicate_of(d, group), c, evidence)
                if named:
                    yield from named
                    continue
            if objects:
                yield from emit(subjects, predicate_of(d, group), objects, evidence)
            elif dep == "oprd":  # "was made an Officer of the Order of Canada": the subject holds that role
                yield from _complement_role(p, subjects, c, predicate_of(d, group, *noun_words(d, c)), evidence)
            else:  # "took part in X": the generic object belongs to the predicate
                for prep in d.kids(c, "prep"):
                    if d.lemma(c) in EVENTS and d.lower[prep] == "of" and has_doer(d, c):
                        continue  # "completed its purchase of X": the event noun says what (nouns._event)
                    det = article(d, c, prep)
                    yield from via(p, subjects, predicate_of(d, group, *det, *noun_words(d, c), prep), prep, evidence)
        elif dep in ("prep", "agent"):
            if not ruled_out:
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
                    and bool(places_in(p, c))
                )
                active_by = generic is not None and not d.kids(v, "auxpass") and not copula
                det = article(d, generic, c) if active_by and generic is not None else []
                said = ["located"] if placed else [*det, *described]
                holders = _as_holders(p, v, c, subjects)
                if holders is subjects:
                    yield from via(p, subjects, predicate_of(d, group, *said, c), c, evidence)
                else:  # "stars Emma Thompson as P. L. Travers and Tom Hanks as Walt Disney": her part only
                    parts = [r for o in d.kids(c, "pobj")[:1] for r in [p.ref(o)] if r is not None]
                    yield from emit(holders, predicate_of(d, group, *said, c), parts, evidence)
            for also in d.kids(c, "conj"):  # "is used in Belgium and in the Netherlands"; "sailed not on the
                if d.pos[also] == "ADP" and not d.kids(also, "neg"):  # Endeavour but on HMS Beagle"
                    yield from via(p, subjects, predicate_of(d, group, *described, also), also, evidence)
            for o in [] if ruled_out else d.kids(c, "pobj"):  # "born on 7 November 1867 in Warsaw": a date takes no
                if d.ent[o] in ("DATE", "TIME"):  # place, the verb does
                    for inner in d.kids(o, "prep"):
                        yield from via(p, subjects, predicate_of(d, group, *described, inner), inner, evidence)
        elif dep == "attr" and copula:
            yield from _copula(p, v, group, c, subjects, evidence)
        elif dep == "acomp" and copula:
            for prep in d.kids(c, "prep"):  # "is similar to", "is adjacent to"
                yield from via(p, subjects, predicate_of(d, group, c, prep), prep, evidence)
        elif c == complement:
            yield from _complement_role(p, subjects, c, predicate_of(d, group), evidence)


def _as_holders(p: Passage, v: int, prep: int, subjects: list[Ref]) -> list[Ref]:
    """Who an "as" phrase is said of: the objects before it after a verb that puts, calls or casts its object as
    something ("appointed Satya Nadella as CEO", "cast Cillian Murphy as Oppenheimer"; the subject neither is CEO
    nor plays the part; "stars Harry Baur as Beethoven, with Jany Holt": not Jany Holt), none when the object
    names nothing, the subject after any other verb ("joined Microsoft as CEO")."""
    d = p.doc
    if d.lower[prep] != "as" or d.lemma(v) not in PLACING_VERBS | EPITHET_VERBS | PLAYING_VERBS:
        return subjects
    if not d.kids(v, "dobj"):
        return subjects
    objects = [o for first in d.kids(v, "dobj") for o in conjuncts(d, first) if o < prep]
    return [r for o in objects for r in [p.ref(o)] if r is not None and not r.is_value]


def _generic(p: Passage, i: int) -> bool:
    """Whether noun ``i`` stands for no name: nothing, or a description the passage uses as a thing's name."""
    ref = p.ref(i)
    return ref is None or (ref.label == THING and i not in p.by_token)


def _complement_role(p: Passage, subjects: list[Ref], c: int, words: str, evidence: str) -> Iterator[Triple]:
    """The prepositional phrases of an object complement ("was made an Officer of the Order", "was named head
    coach of the team", "was proclaimed emperor by the guard"): with *of*, the role the subject holds and what it
    is held of (``X -[is officer of]-> Order``: *made* is how, not what); any other, what the verb phrase says."""
    d = p.doc
    for prep in d.kids(c, "prep"):
        if d.lower[prep] == "of":
            owners = [r for r in prep_objects(p, prep) if not r.is_value]
            yield from emit(subjects, predicate_of(d, [], "is", *role_words(d, c), "of"), owners, evidence)
        else:
            yield from via(p, subjects, f"{words} {d.lower[prep]}", prep, evidence)


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
            yield from emit(subjects, predicate_of(d, [], "is", *noun_words(d, n), "of"), [owner], evidence)


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
            yield from emit(subjects, predicate_of(d, group), named, evidence)
        return
    for t in attrs:
        a = kinds[t]
        if a not in roles and (not nominal(d, a) or d.pos[a] == "PROPN"):
            continue
        for s in subjects:
            if p.topic is not None and s.name == p.topic.name:
                p.topic.kinds.add(d.lemma(a))
            describe(p, s.name, a)
        noun: list[int | str] = [*noun_words(d, a)] if a == t else [*noun_words(d, a)[:-1], d.lemma(a)]
        for prep in d.kids(a, "prep"):
            yield from via(p, subjects, predicate_of(d, group, *noun, prep), prep, evidence)
        yield from _roles(p, subjects, [a], evidence)
        places = _place_modifiers(p, a)
        if places:
            yield from emit(subjects, predicate_of(d, [], "is", a, "from"), places, evidence)


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
    if verb in PLACING_VERBS:
        holders = _as_holders(p, v, prep, subjects)  # the objects (none: no entity), else the subject
    elif verb in SUCCEEDING_VERBS and d.kids(v, "auxpass"):  # "Ballmer was succeeded by Nadella as CEO of
        holders = [*subjects, *(r for a in d.kids(v, "agent") for r in prep_objects(p, a))]  # Microsoft": both
    else:
        holders = subjects
    for role in d.kids(prep, "pobj"):
        if d.lemma(role) in NOT_ROLES or not (
            _role_name(p, role) or (role not in p.by_token and d.pos[role] == "NOUN")
        ):
            continue
        for of in d.kids(role, "prep"):
            if d.lower[of] == "of":
                owners = [r for r in prep_objects(p, of) if not r.is_value]
                yield from emit(holders, predicate_of(d, [], "is", *role_words(d, role), "of"), owners, evidence)


MOTION = frozenset("come go move fly return travel head sail drive walk run get turn look".split())
"""Verbs that "back" gives a direction, not another meaning."""
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


SURE_AUX = frozenset("was were is are been be has have had".split())
"""Auxiliaries of a passive that says it happened ("was elected", "has been appointed"); a modal ("may be
elected") or a negation ("was not elected") says it did not, or not yet."""


def _held_complement(p: Passage, v: int, c: int) -> bool:
    """Whether a passive's role complement is a role its subject now holds of an owner ("was elected President of
    Mexico"): a role name (:func:`_role_name`), after a passive that says it happened."""
    d = p.doc
    if not d.kids(v, "auxpass") or d.kids(v, "neg") or not _role_name(p, c) or not_held(d, c, c, c + 1):
        return False  # "was named former CEO of Meridian", "... until 2019"
    return all(d.lower[a] in SURE_AUX for a in d.kids(v, "aux", "auxpass"))


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


"""Value types that count a noun (``4 districts``); a date or an amount before a noun does not."""
