"""What the words of a passage stand for: the entity a mention names, the entity a pronoun or a description
(``the song``, the complement of a copula, an apposition) refers to, and the subjects of a clause. The relations
are read from these in :mod:`kg_rag.ingest.nlp.clauses`."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from kg_rag.ingest.nlp.aliases import NameTable
from kg_rag.ingest.nlp.kinds import OFFICES, person_like
from kg_rag.ingest.nlp.mentions import VALUES, Mention, Topic
from kg_rag.ingest.nlp.parse import Parse, list_item
from kg_rag.ingest.nlp.spans import DIVISIONS, PLACE_NOUNS
from kg_rag.ingest.nlp.stance import IMPLICATIVE, negated
from kg_rag.ingest.nlp.things import THING
from kg_rag.model.names import legal_form

COUNTS = frozenset({"NUMBER", "QUANTITY"})
"""Types of a mention that counts a noun: ``4 congressional districts`` is a quantity."""
SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass"})
NOUN_SLOTS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "attr", "appos", "conj", "dative", "oprd"})
COPULAS = frozenset({"be", "become", "remain"})
PERSONAL = frozenset({"he", "she", "him", "his", "her", "hers", "himself", "herself"})
IMPERSONAL = frozenset({"it", "its", "itself"})
PLURAL = frozenset({"they", "them", "their", "theirs", "themselves"})
RELATIVES = frozenset({"who", "whom", "which", "that", "whose"})
NAMING = frozenset({"know", "call", "name", "title", "dub", "nickname", "rename"})
"""Participles that give a noun its name (``a plan known as X``, ``a town called Y``)."""
OBJECT_GERUNDS = frozenset({"from", "for", "against", "into", "of"})
"""Prepositions whose gerund after a verb's object is about that object, or about nothing that happened ("kept
him from leaving", "sued Acme for infringing", "talked her into joining"), unlike "after", "before", "by",
"while", "without", whose gerund is what the clause's subject did."""
LOOK_BACK = 32
"""Earlier occurrences of a description's noun looked at (the nearest one decides; the rest bound the time)."""
COMPANY_NOUNS = frozenset({"company", "firm", "corporation", "conglomerate"})
"""Nouns *the* makes a reference to a company the passage names (:meth:`Passage._salient_company`)."""


@dataclass(frozen=True, slots=True)
class Ref:
    """An end of a relation: the entity's name and type, and whether it was reached through a reference."""

    name: str
    label: str
    resolved: bool = False

    @property
    def is_value(self) -> bool:
        return self.label in VALUES


@dataclass
class Passage:
    """The state of reading one passage: its mentions by token, the names they stand for, the topic and the
    subjects seen so far (what a pronoun refers back to)."""

    doc: Parse
    mentions: list[Mention]
    topic: Topic | None
    names: NameTable
    by_token: dict[int, Mention] = field(default_factory=dict)
    recent: list[Ref] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    lemma_at: dict[str, list[int]] = field(default_factory=dict)
    """Lemma -> its tokens, in order (built on first need: what a definite description may refer back to)."""
    things: dict[int, str] = field(default_factory=dict)
    """Head token -> name of a description the passage uses as a thing's name
    (:func:`~kg_rag.ingest.nlp.things.find_things`): asked last, after what a noun may stand for."""

    def __post_init__(self) -> None:
        for m in self.mentions:
            for i in range(m.start, m.end):
                self.by_token[i] = m

    # -------------------------------------------------------------- references
    def ref(self, i: int, depth: int = 0) -> Ref | None:
        """The entity token ``i`` stands for, or ``None`` (a generic noun phrase, an unresolved pronoun)."""
        m = self.by_token.get(i)
        if m is not None:
            return self.mention_ref(m)
        if depth > 4:
            return None
        d = self.doc
        if d.tag[i] in ("PRP", "PRP$"):
            return self._pronoun(i)
        if d.lower[i] in RELATIVES and d.tag[i] in ("WDT", "WP", "WP$"):
            clause = next((a for a in d.ancestors(i) if d.dep[a] in ("relcl", "acl")), None)
            if clause is None:
                return None
            placed = _placed_thing(d, d.head[clause], clause) if d.dep[clause] == "relcl" else None
            if placed is not None:  # "a label based in Des Moines, Iowa, which was founded by": the label
                return self.ref(placed, depth + 1)
            antecedent = self.ref(d.head[clause], depth + 1)  # "the General Counsel, Amara Eze, who reports to"
            held = (
                titled_person(self, d.head[clause])
                if antecedent is not None and is_role(self, d.head[clause], antecedent)
                else []
            )
            return held[0] if held else antecedent
        if not nominal(d, i):
            return None
        quantity = self._quantity(i)
        if quantity is not None:
            return quantity
        described = self._described(i, depth) or self.called(i)
        if described is None and i in self.things:
            return Ref(self.things[i], THING)
        return described

    def _quantity(self, i: int) -> Ref | None:
        """A counted noun is a quantity: ``4 congressional districts``, ``273,282 TEUs``. A date before a noun is
        no count: "a 1937 film directed by Raoul Walsh" is a film, and stands for what the sentence is about."""
        d = self.doc
        for k in d.kids(i, "nummod"):
            m = self.by_token.get(k)
            if m is not None and m.label in COUNTS and m.start < i:
                return Ref(" ".join(d.span_text(m.start, i + 1).split()), "QUANTITY")
        return None

    def mention_ref(self, m: Mention) -> Ref:
        if m.kind == "topic" and self.topic is not None:
            return Ref(self.topic.name, self.topic.label or "")
        name = self.names.resolve(m)
        return Ref(name, m.label, name != m.name)

    def _described(self, i: int, depth: int) -> Ref | None:
        """A generic noun that only describes an entity: the topic's kind with ``the``/``this`` (``the song``), the
        complement of a copula whose subject is an entity (``X is a ballet``), an apposition to an entity
        (``X, a ballet``), or the place noun of an appositive genitive (``the state of Michigan``)."""
        d = self.doc
        det = d.kid(i, "det")
        if self.topic is not None and det is not None and (d.lemma(i) in self.topic.kinds or self._names_topic(i)):
            if d.lower[det] in ("the", "this"):
                return self._topic_ref(resolved=True)
        if det is not None and d.lower[det] in ("the", "this", "that") and d.kids(i) == [det]:
            named = self._named_before(i)
            if named is not None:  # "The decision was implemented by": the decision named before it
                return named
        if det is not None and d.lower[det] == "the" and d.lemma(i) in COMPANY_NOUNS and not _plural(d, i):
            if set(d.kids(i)) <= {det, *d.kids(i, "case")}:  # "the company", "the company's"
                return self._salient_company(i)
        h = d.head[i]
        if d.dep[i] == "attr" and d.lemma(h) in COPULAS:
            subject = d.kid(h, *SUBJECTS)
            if subject is None:  # a quoted title the parse left hanging ("It'll Be Me" is a song ...)
                titled = subjects_of(self, h, depth + 1) if depth < 3 else []
                return as_resolved(titled[0]) if len(titled) == 1 else None
            return as_resolved(self.ref(subject, depth + 1))
        if d.dep[i] == "appos":
            return as_resolved(self.ref(h, depth + 1))
        if d.lemma(i) in PLACE_NOUNS:
            place = next((o for o in of_objects(d, i) if o in self.by_token), None)
            if place is not None:
                return self.mention_ref(self.by_token[place])
        if d.dep[i] == "pobj" and d.lower[h] == "of" and d.dep[d.head[h]] == "attr":
            # "X is a form of psychotherapy developed by Y": the clause describes X through its kind
            return self.ref(d.head[h], depth + 1)
        return None

    def _named_before(self, i: int) -> Ref | None:
        """The entity a bare definite description (``the decision``, ``the board``) refers back to: the nearest
        earlier occurrence of its noun, when that names or describes a name -- the name's own head (*Governance
        Board*), a common noun written right before a name (*decision CAB-2023-31*) or in apposition to one
        (*Acme, a software company*) or as a copula's complement (*Mummy Mountain is a mountain*). The nearest
        occurrence that names nothing ("bought a small company") is the
        one meant: then no entity. A noun inside a longer name describes nothing (*the world* is not *World War
        II*), nor does one before a role ("Board member Bob Jones" ... "the board")."""
        d = self.doc
        want, plural = d.lemma(i), _plural(d, i)
        earlier = self._lemma_positions(want)
        stop = bisect_left(earlier, i)
        for t in reversed(earlier[max(0, stop - LOOK_BACK) : stop]):
            m = self.by_token.get(t)
            if m is not None and d.span_head(m.start, m.end) != t:
                continue  # a word inside a longer name
            if _plural(d, t) != plural:  # "that territory" is not "the 14 British Overseas Territories"
                continue
            h, after = d.head[t], (m.end if m is not None else t + 1)
            named = self.by_token.get(h) if h != t and d.dep[t] in ("compound", "appos") else None
            if named is not None and (d.dep[t] == "appos" or named.start == after):
                m = named  # "decision CAB-2023-31", "Acme, a software company"
            if m is None and d.dep[t] == "attr" and d.lemma(h) in COPULAS:
                m = self.by_token.get(d.kid(h, *SUBJECTS) or t)  # "Mummy Mountain is a mountain in ..."
            if m is None or m.is_value:
                return None
            if want in PLACE_NOUNS:  # "the U.S. state of New Mexico" ... "the state"
                m = next((self.by_token[o] for o in of_objects(d, t) if o in self.by_token), m)
            return as_resolved(self.mention_ref(m))
        return None

    def _salient_company(self, i: int) -> Ref | None:
        """The company *the company* means where no earlier *company* says which: the passage's main subject -- its
        topic, if the text writes it, else the name it has written most often so far, at least twice (the latest of
        those tied) -- when that is a company (the recogniser's organisation, or a name with a legal form) and the
        company named last before it ("Microsoft will acquire LinkedIn ... The company was founded in 2002" is
        LinkedIn's founding: neither is taken). A name the recogniser mistyped may be the main subject ("Veltrix",
        read as a place), so the count is over every name but a person's."""
        d = self.doc
        if any(t < i for t in self._lemma_positions(d.lemma(i))):
            return None  # an earlier "company" decides (:meth:`_named_before`)
        if self.topic is not None and self.topic.label:  # a passage about what it names: that, or no company
            return self._topic_ref(resolved=True) if self.topic.label == "ORGANIZATION" else None
        counts: dict[str, tuple[int, int, Ref]] = {}
        latest: Ref | None = None  # the company named last before it
        for m in self.mentions:
            if m.start >= i:
                break
            if m.is_value or m.label == "PERSON":
                continue
            ref = self.mention_ref(m)
            n, _, _ = counts.get(ref.name, (0, 0, ref))
            counts[ref.name] = (n + 1, m.start, ref)
            if _company(ref):
                latest = ref
        if not counts or latest is None:
            return None
        n, last, ref = max(counts.values(), key=lambda c: (c[0], c[1]))
        if n < 2 or not _company(ref) or ref.name != latest.name:
            return None
        others = [r.name for _, _, r in counts.values() if r.name != ref.name and _company(r)]
        return None if self._written_after(others, last, i) else as_resolved(ref)

    def _written_after(self, names: list[str], start: int, end: int) -> bool:
        """Whether one of ``names`` is written between tokens ``start`` and ``end`` where the recogniser found no
        name ("LinkedIn chief executive Jeff Weiner": *LinkedIn* inside a person's title)."""
        d = self.doc
        firsts = {name.split()[0]: name.split() for name in names if name.split()}
        for t in range(start + 1, end):
            words = firsts.get(d.text[t])
            if words is not None and [d.text[k] for k in range(t, min(t + len(words), d.n))] == words:
                return True
        return False

    def _lemma_positions(self, want: str) -> list[int]:
        if not self.lemma_at:
            for t in range(self.doc.n):
                self.lemma_at.setdefault(self.doc.lemma(t), []).append(t)
        return self.lemma_at.get(want, [])

    def called(self, i: int) -> Ref | None:
        """The name a participle gives a generic noun that stands for nothing else (a copula's complement or an
        apposition stands for its subject): "a plan known as the Grand Model prepared by John Locke", "a town called
        Ely", "a man named John Smith" (not "named after", which names someone else)."""
        d = self.doc
        for c in d.kids(i, "acl"):
            if d.tag[c] != "VBN" or d.lemma(c) not in NAMING:
                continue
            slots = [o for prep in d.kids(c, "prep") if d.lower[prep] == "as" for o in d.kids(prep, "pobj")]
            slots += d.kids(c, "oprd", "dobj", "attr")
            for o in slots:
                m = self.by_token.get(o)
                if m is not None and not m.is_value:
                    return as_resolved(self.mention_ref(m))
        return None

    def _names_topic(self, i: int) -> bool:
        """``the city`` in a passage about Oklahoma City, ``the fort`` in one about Fort George, ``the policy`` in one
        about Data Retention Policy v3: a common noun the topic's name starts or ends with, before any trailing
        number or code (not a person's: "the snow" is not Hank Snow)."""
        assert self.topic is not None
        words = self.topic.name.casefold().split()
        last = len(words)
        while last > 1 and any(ch.isdigit() for ch in words[last - 1]):
            last -= 1  # "v3", "2023-07": a version or code, no noun
        return len(words) > 1 and self.topic.label != "PERSON" and self.doc.lower[i] in (words[0], words[last - 1])

    def _topic_ref(self, *, resolved: bool) -> Ref | None:
        if self.topic is None:
            return None
        return Ref(self.topic.name, self.topic.label or "", resolved)

    def _pronoun(self, i: int) -> Ref | None:
        """What a pronoun refers to: an object *it* to the latest earlier object (:meth:`_earlier_object`), any
        other pronoun to the latest subject that fits (:meth:`antecedent`) — but an object pronoun never to its own
        clause's subject ("Gamma Ltd acquired it": that would be *itself*): then to nothing, as an older subject
        is no likelier than the object the sentence before was about ("Google released Chrome. Firefox competed
        with it")."""
        d = self.doc
        if d.lower[i] == "it" and d.dep[i] in ("dobj", "pobj"):
            found, ref = self._earlier_object(i)
            if found:
                return ref
        ref = self.antecedent(d.lower[i])
        return None if ref is not None and ref.name in self._own_subjects(i) else ref

    def _earlier_object(self, i: int) -> tuple[bool, Ref | None]:
        """An object *it* refers to the latest object before it, in its sentence or the one before, that could be
        a thing ("Google developed Android. Samsung adopted it": Android; a person or a value is skipped): a named
        one is that entity; one that names nothing is the referent all the same, and *it* names no entity
        ("Nokia sold its handset business to Microsoft, which later wrote it off"). ``(False, None)`` when there is
        none. Only for a direct object *it*, as parallel roles; after a preposition ("recorded for it") an
        unnamed object in the same sentence only blocks the subject reading."""
        d = self.doc
        first = d.sent_start(i)
        if d.dep[i] == "dobj" and first:  # a direct object looks back into the sentence before too
            first = d.sent_start(first - 1)
        above = set(d.ancestors(i))  # "mapped a portion of it": the object *it* is part of is no referent
        for k in range(i - 1, first - 1, -1):
            if d.dep[k] != "dobj" or d.pos[k] not in ("NOUN", "PROPN") or k in above:
                continue
            m = self.by_token.get(k)
            if m is None:
                return True, None
            if m.label == "PERSON" or m.is_value:
                continue
            return (True, as_resolved(self.mention_ref(m))) if d.dep[i] == "dobj" else (False, None)
        return False, None

    def _own_subjects(self, i: int) -> frozenset[str]:
        """The names of the subject of the verb whose object pronoun ``i`` is: an object pronoun never refers to its
        own clause's subject ("Gamma Ltd acquired it": not Gamma Ltd; that would be *itself*)."""
        d = self.doc
        if d.lower[i] in ("itself", "himself", "herself", "themselves") or d.dep[i] not in ("dobj", "pobj"):
            return frozenset()
        v = d.head[i] if d.dep[i] == "dobj" else d.head[d.head[i]]
        names = (self.by_token.get(s) for s in d.kids(v, "nsubj"))
        return frozenset(self.mention_ref(m).name for m in names if m is not None)

    def antecedent(self, pronoun: str) -> Ref | None:
        """The latest subject a pronoun can refer to (a person for *he*/*she*, anything else for *it*/*they*), else
        the passage's topic when it can be one."""
        if pronoun in PERSONAL:
            fits = [r for r in self.recent if r.label == "PERSON"]
            topic_fits = self.topic is not None and (
                self.topic.label == "PERSON" or (self.topic.label in ("", None) and self.topic.personal)
            )
        elif pronoun in IMPERSONAL or pronoun in PLURAL:
            fits = [r for r in self.recent if r.label != "PERSON" and not r.is_value]
            topic_fits = self.topic is not None and self.topic.label != "PERSON"
        else:
            return None
        if fits:
            return as_resolved(fits[-1])
        return self._topic_ref(resolved=True) if topic_fits else None

    def note_subject(self, ref: Ref) -> None:
        if not ref.is_value and ref.label != THING:  # a pronoun refers to a name (or the topic), as before things
            self.recent.append(ref)
            del self.recent[:-8]

    def note_agent(self, ref: Ref) -> None:
        """Note a person who is a passive's agent as whom *he* or *she* may refer to next ("The Compliance Office
        is led by Tomasz Nowak. He reports to ..."), unless a person is already a candidate in the paragraph (a
        subject is the likelier referent: "Ana Ruiz drafted the policy. It was approved by Tom Lind. She moved"), or
        the passage's topic may be a person: *he* then means the topic more often ("Some of his compositions were
        published by Oliver Ditson ... He died in 1902")."""
        if ref.label == "PERSON" and not any(_personal(r) for r in self.recent) and not self._personal_topic():
            self.note_subject(ref)

    def _personal_topic(self) -> bool:
        return self.topic is not None and self.topic.personal


def _company(ref: Ref) -> bool:
    return ref.label == "ORGANIZATION" or legal_form(ref.name)


def _personal(ref: Ref) -> bool:
    """A person, or a name shaped as one the recogniser left untyped ("Ana Ruiz")."""
    return ref.label == "PERSON" or (ref.label == "" and person_like(ref.name))


def _plural(d: Parse, i: int) -> bool:
    return d.tag[i] in ("NNS", "NNPS")


def of_objects(d: Parse, n: int) -> list[int]:
    """The objects of a noun's "of" (``the city of Rome``, ``much of Britain``, ``the capital of France``)."""
    return [o for prep in d.kids(n, "prep") if d.lower[prep] == "of" for o in d.kids(prep, "pobj")]


def nominal(d: Parse, i: int) -> bool:
    """A noun, or an adjective used as one (``a 1974 single``, ``the single``)."""
    return d.pos[i] in ("NOUN", "PROPN") or (
        d.pos[i] == "ADJ" and d.dep[i] in NOUN_SLOTS and d.kid(i, "det") is not None
    )


def listed_names(p: Passage, i: int) -> list[Ref]:
    """The entities a list in apposition names a generic noun with (``four members: A, B and C``), or a bulleted
    list after its colon."""
    if i in p.by_token and not p.by_token[i].is_value:
        return []
    return [r for a in p.doc.kids(i, "appos") for r in refs_of(p, a)] or _bulleted(p, i)


def as_resolved(ref: Ref | None) -> Ref | None:
    return None if ref is None else Ref(ref.name, ref.label, True)


def conjuncts(d: Parse, i: int) -> list[int]:
    """``i`` and the words coordinated with it (``A, B and C``)."""
    out, todo = [], [i]
    while todo:
        t = todo.pop()
        out.append(t)
        todo.extend(d.kids(t, "conj"))
    return sorted(out)


def refs_of(p: Passage, i: int) -> list[Ref]:
    refs: list[Ref] = []
    d = p.doc
    listed = conjuncts(d, i)
    if any(d.lower[k] in ("neither", "nor") for t in listed for k in d.kids(t, "cc", "det", "preconj")):
        return []  # "Neither Amazon nor Google acquired Slack": nothing is said of either
    first = p.by_token.get(i)
    for t in listed:
        if negated(d, t):
            continue
        m = p.by_token.get(t)
        if t != i and first is not None and first.is_value and not (m is not None and _dated_name(m)):
            continue  # "founded Veltrix in 2011 and Nordwind in 2015": a name is no date's conjunct (a gapped clause),
            # unless it names a thing of a year, as the date does ("at the 1920 and the 1924 Summer Olympics")
        named = _named_after(p, t) or _bulleted(p, t) or _named_before_participle(p, t)
        ref = None if named else p.ref(t)
        if ref is not None and is_role(p, t, ref) and d.dep[t] != "appos":
            named = titled_person(p, t)  # "reports to the Chief Technology Officer, Kwame Mensah"
        if named:
            refs += named
        elif ref is not None:
            refs.append(ref)
            refs += _more_places(p, t)
        elif d.dep[t] != "appos":  # "three members: A, B and C" -- the list names the noun
            refs += [r for a in d.kids(t, "appos") if not negated(d, a) for r in [p.ref(a)] if r is not None]
    return list(dict.fromkeys(refs))


def _dated_name(m: Mention) -> bool:
    return m.is_value or any(ch.isdigit() for ch in m.name)


MAX_ITEMS = 50
"""Most items of a bulleted list read as the names a noun before a colon lists."""


def _bulleted(p: Passage, i: int) -> list[Ref]:
    """The names a bulleted list gives a noun that ends its line with a colon ("owns the following
    subsidiaries:" and an item per line, "- Nordlys Software"): the list written on one line ("A, B and C"),
    one item per line. An item counts when it is a name (what follows it on the line, if anything, after a comma,
    colon, bracket or dash); the list ends at the first line that is no item."""
    d = p.doc
    end = d.sent_end(i)
    if i + 1 >= end or (i in p.by_token and not p.by_token[i].is_value):
        return []  # a name before a colon is itself the object ("owned by Acme Corp:")
    colon = i + 1 if d.text[i + 1] == ":" else None
    if colon is None or d.head[colon] != i:
        return []
    after = d.source.find("\n", d.idx[colon])
    if after < 0 or d.source[d.idx[colon] + 1 : after].strip():
        return []  # the list goes on on the colon's line: the parse reads it
    out: list[Ref] = []
    k = colon + 1
    while k < d.n and len(out) < MAX_ITEMS:
        if not d.text[k].strip():
            k += 1
            continue
        starts = list_item(d.source, d.idx[k])
        if starts is None:
            break
        first = next((j for j in range(k, d.n) if d.idx[j] >= starts and d.text[j].strip()), d.n)
        m = p.by_token.get(first)
        nxt = d.source.find("\n", starts)
        if m is not None and m.start == first and not m.is_value:
            after = d.idx[m.end - 1] + len(d.text[m.end - 1])
            rest = d.source[after : nxt if nxt >= 0 else len(d.source)].strip()
            if not rest or rest[0] in ",;:(\u2014\u2013-":  # the item is the name ("- Oslo staff report to" is not)
                out.append(p.mention_ref(m))
        k = next((j for j in range(first, d.n) if nxt >= 0 and d.idx[j] > nxt), d.n)
    return out


def is_role(p: Passage, i: int, ref: Ref) -> bool:
    """Whether the name token ``i`` stands for may be a role written as a name: untyped ("Chief People Officer"),
    or typed an organisation by a recogniser that reads capitalised offices so, when a word of it names an office
    ("VP of Engineering", "General Counsel")."""
    return ref.label == "" or (ref.label == "ORGANIZATION" and office(p, i))


def office(p: Passage, i: int) -> bool:
    """Whether the name token ``i`` stands in holds a word that names an office (:data:`OFFICES`)."""
    m = p.by_token.get(i)
    span = range(m.start, m.end) if m is not None else range(i, i + 1)
    return any(p.doc.lower[w] in OFFICES for w in span)


def titled_person(p: Passage, i: int) -> list[Ref]:
    """The person a role written as a name stands for when the person follows in apposition ("the Chief Technology
    Officer, Kwame Mensah"; "Harborline's Chief People Officer, Grace Obi, owns ..."): the relation is with the
    person, who holds the role now and may not later. Only for a role (:func:`is_role`) and a name shaped as a
    person's (:func:`person_like`), which the recogniser may have typed an organisation (it often reads an
    unfamiliar name so): after a place ("Bergheim, Rhein-Erft-Kreis", "Folkestone, Kent") the apposition is a
    larger place, whatever the recogniser calls it."""
    d = p.doc
    m = p.by_token.get(i)
    words = range(m.start, m.end) if m is not None else range(i, i + 1)
    after = [a for w in words for a in d.kids(w, "appos")]  # "the VP of Engineering, Sam Okoro": of its last word
    # "the General Counsel, Amara Eze, who", "the VP of Engineering, Sam Okoro" read as a list (no "and")
    for w in sorted({i, *words}):
        if not any(d.kids(c, "cc") for c in conjuncts(d, w)):
            after += d.kids(w, "conj")
    holds_office = office(p, i)
    return [
        r
        for a in after
        for r in [p.ref(a)]
        if r is not None
        and (r.label == "PERSON" or (holds_office and r.label == "ORGANIZATION"))
        and person_like(r.name)
    ]


def _more_places(p: Passage, i: int) -> list[Ref]:
    """The other places of a place noun's appositive "of" list: "the states of New York and New Jersey"."""
    d = p.doc
    if i in p.by_token or d.lemma(i) not in PLACE_NOUNS:
        return []
    out = []
    for prep in d.kids(i, "prep"):
        obj = d.kid(prep, "pobj") if d.lower[prep] == "of" else None
        if obj is not None and obj in p.by_token:
            out += [r for c in conjuncts(d, obj) if c != obj and c in p.by_token for r in [p.ref(c)] if r is not None]
    return out


def _named_before_participle(p: Passage, i: int) -> list[Ref]:
    """A name right before a lower-case *-ing* word that the parse made the name's head noun ("published by Phoebe
    Atwood Taylor writing as Alice Tilton": the small pipeline reads "Phoebe Atwood Taylor writing" as one noun):
    the name is the word's referent, and the participle that follows it says something of its own. Only when the
    word takes what a participle takes (an object, "as"): "NASA funding", "Biden spending" are nouns."""
    d = p.doc
    m = p.by_token.get(i - 1) if i else None
    if m is None or m.end != i or m.is_value or i in p.by_token or not d.text[i].endswith("ing"):
        return []
    if not d.text[i].islower() or d.tag[i] not in ("NN", "VBG") or d.head[i - 1] != i:
        return []
    if d.kids(i, "det", "amod", "poss", "nummod") or d.left_edge(i) < m.start:
        return []  # "a top Elo rating of 2543": a noun in -ing with its article is a noun
    if not (d.kids(i, "dobj") or any(d.lower[c] == "as" for c in d.kids(i, "prep"))):
        return []  # "approved NASA funding for the program": a noun compound; a participle takes an object or "as"
    return [p.mention_ref(m)]


def _named_after(p: Passage, i: int) -> list[Ref]:
    """A common noun written right before a name stands for it, as a title does: "the father of musicians Neil
    Young and Astrid Young", "written by songwriter Jack Clement" (the parse often hangs the names elsewhere)."""
    d = p.doc
    m = p.by_token.get(i + 1)
    if i in p.by_token or d.tag[i] not in ("NN", "NNS") or m is None or m.start != i + 1 or m.is_value:
        return []
    if d.sent_end(i) <= m.start:
        return []
    head = d.span_head(m.start, m.end)
    if d.dep[head] in ("nsubj", "nsubjpass", "poss"):
        return []  # the name starts a clause or owns what follows: "the man John hated", "the police Smith's gun"
    return [r for t in conjuncts(d, head) for r in [p.ref(t)] if r is not None and not r.is_value]


def subjects_of(p: Passage, v: int, depth: int = 0) -> list[Ref]:
    d = p.doc
    own = d.kids(v, *SUBJECTS)
    if own:  # "much of Britain was conquered by": a part stands for the whole it is part of
        own = [o for s in own for o in (_partitive(d, s) or [s])]
        return [r for s in own for r in refs_of(p, s)]
    for c in d.kids(v, "ccomp", "csubj", "dep"):  # a quoted title parsed as a clause: "Your Love Is a Song" was ...
        m = p.by_token.get(c)
        if m is not None and m.end <= v and m.kind in ("quote", "topic"):
            return [p.mention_ref(m)]
    if d.dep[v] == "ROOT":  # "It'll Be Me" is a song ...: the title's words hang off its quote mark, not the verb
        before = p.by_token.get(v - 1) or (p.by_token.get(v - 2) if v >= 2 and d.pos[v - 1] == "PUNCT" else None)
        if (
            before is not None
            and before.kind in ("quote", "topic")
            and all(d.pos[t] == "PUNCT" for t in range(d.sent_start(v), before.start))
        ):
            return [p.mention_ref(before)]
    for aux in d.kids(v, "auxpass", "aux"):  # inverted: "Located in Paris is the Louvre" = the Louvre is located in
        if aux > v:
            return [r for a in d.kids(aux, "attr") for r in refs_of(p, a)]
    if depth > 3:
        return []
    dep, h = d.dep[v], d.head[v]
    if dep in ("relcl", "acl"):
        placed = _placed_before(p, v, depth)
        if placed:
            return placed
        ref = p.ref(h)
        return [ref] if ref is not None else []
    if dep == "conj" and d.pos[h] in ("VERB", "AUX"):
        return subjects_of(p, h, depth + 1)
    if dep == "xcomp":
        controller = d.kid(h, "dobj") if d.lemma(h) not in PURPOSE_VERBS else None
        if controller is not None:  # "persuaded Y to leave", "paid Foxconn to build": the object is who does it;
            # "left Mercedes to join Ferrari": an infinitive of purpose, parsed the same, is the subject's
            ref = p.ref(controller)
            return [ref] if ref is not None else []
        return subjects_of(p, h, depth + 1)
    works = [o for o in d.kids(h, "dobj") if o < v] if d.lemma(h) in WORK_VERBS and d.kids(v, "dobj") else []
    if dep == "advcl" and d.tag[v] == "VBG" and d.lemma(v) in WORK_PARTICIPLES and works:  # "directed
        return [r for o in works[-1:] for r in refs_of(p, o)]  # Oppenheimer, starring Cillian Murphy": the film
    appointees = d.kids(h, "dobj") if d.lemma(h) in PLACING_VERBS else []
    if dep == "advcl" and d.tag[v] == "VBG" and d.lemma(v) in SUCCEEDING_VERBS and appointees:  # "appointed
        return _placed_person(p, appointees[0])  # Gabriel Attal prime minister, replacing Élisabeth Borne": Attal
    if dep == "advcl" and d.tag[v] in ("VBN", "VBG"):
        return subjects_of(p, h, depth + 1)
    if dep == "advcl" and d.tag[v] == "VB" and d.lemma(h) in IMPLICATIVE and d.kids(v, "aux") and d.kids(h, "prt"):
        return subjects_of(p, h, depth + 1)  # "went on to acquire": who went on acquired (not "went to study")
    verb_phrase = d.pos[h] == "ADP" and d.pos[d.head[h]] in ("VERB", "AUX")
    if dep == "pcomp" and d.tag[v] == "VBG" and v not in p.by_token and verb_phrase:
        if d.lower[h] in OBJECT_GERUNDS and d.kid(d.head[h], "dobj") is not None:
            return []  # "stopped Bob from joining Globex", "thanked Kwame for helping": not who stopped, thanked
        return subjects_of(p, d.head[h], depth + 1)  # "joined X after leaving Contoso": who joined, left
    return []


def _placed_person(p: Passage, o: int) -> list[Ref]:
    """Who a placing verb's object puts in a role: the object's name, or the person the parse hung on the role noun
    ("appointed Gabriel Attal prime minister" reads *Attal* as a modifier of *minister*)."""
    refs = refs_of(p, o)
    if refs:
        return refs
    return [r for c in p.doc.kids(o, "nmod", "compound") for r in [p.ref(c)] if r is not None and r.label == "PERSON"]


def _placed_thing(d: Parse, h: int, v: int) -> int | None:
    """The thing a "City, Region" pair places, when relative clause ``v`` follows the pair ("a label based in Des
    Moines, Iowa, which was founded by ...", "an office in Austin, Texas, which is led by ..."): the parse hangs the
    clause on the city, but a writer describing the label does not turn to the city mid-phrase and back; the
    clause is the label's. Where the pair is a verb's ("born in Portland, Oregon, which ...") the city is the
    only candidate (``None``)."""
    if not any(d.dep[a] == "appos" and h < a < v for a in d.children[h]) or d.dep[h] != "pobj":
        return None
    holder = d.head[d.head[h]]
    if d.dep[holder] == "acl" and d.tag[holder] == "VBN":
        holder = d.head[holder]  # "a label based in"
    return holder if d.pos[holder] in ("NOUN", "PROPN") else None


WORK_PARTICIPLES = frozenset("star co-star costar feature".split())
"""Participles that describe a work, never its maker ("starring", "featuring"), when they take an object ("starring
in The Irishman" is the subject's part)."""
WORK_VERBS = frozenset(
    "direct produce release distribute write film make create publish broadcast air premiere stream remake adapt "
    "record compose develop finance co-produce co-write".split()
)
"""Verbs whose object is a work, which a following "starring ..." describes."""

PLACING_VERBS = frozenset(
    "elect appoint name nominate confirm choose select install designate hire crown proclaim ordain inaugurate "
    "reappoint re-elect".split()
)
"""Verbs that put their object in a role ("elected X as president of Y"): the object holds the role "as" names."""
SUCCEEDING_VERBS = frozenset("succeed replace".split())
"""Verbs whose "as" role the successor takes from its predecessor: both held it."""
PURPOSE_VERBS = frozenset("leave left quit depart exit abandon resign sell buy acquire use borrow spend".split())
"""Verbs (and "left", which the lemmatiser reads as the adjective) whose infinitive after an object says why the
subject acted ("left Mercedes to join Ferrari", "sold the unit to focus on chips"); after others the object does
what it says ("persuaded Y to leave", "paid Foxconn to build the iPhone", "hired Y to lead")."""


LOCATIVE = frozenset("locate situate".split())
"""Participles that say where something is: set off by a comma after a place, they place what that place holds."""


def _placed_before(p: Passage, v: int, depth: int) -> list[Ref]:
    """``Walden is a community in the province of Nova Scotia, located in the Lunenburg Municipal District``: a
    locative participle set off by a comma after the division a thing is said to be in ("is a community in the
    province of") says where that thing is, wherever the parse hangs it. Read of the province, it would put the
    province inside the district; read of the community, it is true either way (what lies in a division lies where
    the division lies). Only then: "an analyst at Morgan Stanley, located in", "lived in Princeton, located in" are
    not inside what they are at."""
    d = p.doc
    h = d.head[v]
    if d.dep[v] != "acl" or d.tag[v] != "VBN" or d.lemma(v) not in LOCATIVE or not v or d.text[v - 1] != ",":
        return []
    ref = p.ref(h)
    if ref is None or ref.is_value:
        return []
    while d.dep[h] == "pobj" and d.lower[d.head[h]] == "of" and d.pos[d.head[d.head[h]]] == "NOUN":
        h = d.head[d.head[h]]  # "in the Canadian province of Nova Scotia": the province is Nova Scotia
    if d.dep[h] != "pobj" or d.lower[d.head[h]] not in ("in", "within") or d.lemma(h) not in DIVISIONS:
        return []  # "an analyst at Morgan Stanley, located in", "lived in Princeton, located in": not inside it
    holder = d.head[d.head[h]]
    if d.pos[holder] != "NOUN" or d.dep[holder] not in ("attr", "appos"):
        return []  # "a community in ...": the thing that is in the division
    found = p.ref(holder)
    return [found] if found is not None and found != ref and not found.is_value else []


PARTITIVES = frozenset("much most part parts all some half portion portions large".split())
"""Words that, with "of", name a part of a whole (``much of Britain``)."""


def _partitive(d: Parse, s: int) -> list[int]:
    """The whole a partitive subject names a part of (``much of Britain``: *Britain*), or nothing."""
    if d.lower[s] not in PARTITIVES or d.pos[s] == "PROPN":
        return []
    return of_objects(d, s)
