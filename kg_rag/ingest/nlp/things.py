"""Descriptions a passage uses as names: ``the checkout service``, ``the payment-gateway service``, ``the sensor
network``.

Technical and organisational documents talk about things that have no proper name: a postmortem's services and
their dependencies, a research group's sensor network. Without them the relations that answer ("the checkout
service depends on the payment-gateway service") have no ends. A common noun is taken for such a thing only when
the passage *names* a kind of thing with it and *keeps* talking about it:

* a noun with a compound noun modifier (``checkout service``, ``database connection leak``): the modifier picks
  out which service; an adjective only describes (``a new service``), and a bare noun (``the service``) is a
  reference, not a name;
* never said of something else: a description that is the complement of a copula or an apposition (``WXYZ is a
  radio station``) is that thing's kind, and ``the radio station`` after it is WXYZ again;
* referred to as one thing: written with ``the``, ``this`` or a possessive at least once (a bare plural that never
  is speaks of the kind: "tuition fees were introduced"), never counted or set beside another of its kind
  ("another heavy snow event occurred", "4930 wind turbines", "several data centers"), never told apart in two
  ways ("the load balancer in Frankfurt" ... "the load balancer in Virginia", "the old payment service" ... "the
  new payment service": two things of a kind), and never written just before a name it describes ("the chip maker
  Nvidia"), nor with a name among its modifiers ("the Japan net sales decrease");
* written at least twice in the passage: a description used once is a passing mention. A bare noun that may
  refer back to it (``a database connection leak`` ... ``the leak``) does not count: ``a Toronto-based data
  company`` ... ``the company`` is as often another company.

Its name is the description lower-cased (as written: hyphens kept), so the query treats it as a kind
(:func:`kg_rag.query.senses.common_noun`): it joins relations of one passage only, and two passages that write
``radio station`` are not linked through it. A noun that describes an entity (the complement of a copula, an
apposition) still stands for that entity (:mod:`kg_rag.ingest.nlp.refs` asks here last).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kg_rag.ingest.nlp.mentions import Mention
from kg_rag.ingest.nlp.parse import Parse

THING = "CONCEPT"
"""The entity type of a description taken for a thing."""
DESCRIBING = frozenset({"attr", "appos", "oprd"})
"""Where a noun describes another (``is a radio station``, ``X, a radio station``, ``was made an officer``)."""
DEFINITE = frozenset({"the", "this", "that", "these", "those"})
COUNTING = frozenset(
    """another other each every any some no either neither both all several many multiple numerous various
    few""".split()
)
"""Words that count a kind's members or set one beside another: no name of one thing."""
MIN_USES = 2
"""Times a passage writes a description before it is taken for a thing."""


def find_things(doc: Parse, mentions: Sequence[Mention]) -> dict[int, str]:
    """Head token -> name of every description ``doc`` uses as a thing's name (see the module docstring)."""
    named = {i for m in mentions if not m.is_value for i in range(m.start, m.end)}
    valued = {i for m in mentions if m.is_value for i in range(m.start, m.end)}
    starts = {m.start for m in mentions if not m.is_value}
    taken = named | valued
    found: list[tuple[int, str]] = []  # (head, key) in text order
    names: dict[str, str] = {}
    kinds: set[str] = set()
    told: dict[str, set[tuple[str, ...]]] = {}  # key -> the different ways its uses are told apart
    for h in range(doc.n):
        start = _described_from(doc, h, taken)
        if start is None:
            continue
        key = " ".join([*(doc.lower[i] for i in range(start, h) if not doc.punct[i]), doc.lemma(h)])
        found.append((h, key))
        names.setdefault(key, _name(doc, start, h))
        before = range(doc.left_edge(h), start)
        if any(i in named or doc.pos[i] == "PROPN" or (doc.ent[i] and i not in valued) for i in before):
            kinds.add(key)  # "the Japan net sales decrease": the name makes it one region's, not the passage's thing
        if doc.dep[h] in DESCRIBING or h + 1 in starts or _counted(doc, h, before, valued):
            kinds.add(key)  # "the chip maker Nvidia" describes the name after it
        apart = _told_apart(doc, h)
        if apart:
            told.setdefault(key, set()).add(apart)
    uses = Counter(key for _, key in found)
    definite = {key for h, key in found if _definite(doc, h)}
    several = {key for key, ways in told.items() if len(ways) > 1}  # "the load balancer in Frankfurt ... in Virginia"
    return {
        h: names[key]
        for h, key in found
        if uses[key] >= MIN_USES and key in definite and key not in kinds and key not in several
    }


def _described_from(doc: Parse, h: int, taken: set[int]) -> int | None:
    """The first token of the compound modifiers before common noun ``h`` (``None``: no such modifier)."""
    if doc.pos[h] != "NOUN" or doc.dep[h] == "compound" or h in taken or not doc.alpha[h]:
        return None
    start = h
    j = h - 1
    while j >= 0 and j not in taken and start <= doc.head[j] <= h and j < doc.head[j]:
        if doc.dep[j] == "compound" and doc.pos[j] == "NOUN" and doc.alpha[j] and not doc.ent[j]:
            start = j
        elif not (doc.tag[j] == "HYPH" and j > 0 and doc.dep[j - 1] == "compound"):  # "payment-gateway"
            break
        j -= 1
    if start == h or (start > 0 and doc.tag[start - 1] == "HYPH"):
        return None  # no compound, or one cut inside a hyphenated word ("long-term investments")
    return start


def _told_apart(doc: Parse, h: int) -> tuple[str, ...]:
    """How a use singles out one of its kind: its adjectives, possessor and prepositional phrases ("the old payment
    service", "our support team", "the load balancer in Frankfurt"). Two uses told apart differently are two
    things; a use with none is compatible with any."""
    words = [doc.lower[a] for a in doc.kids(h, "amod", "poss")]
    for prep in doc.kids(h, "prep"):
        words += [doc.lower[prep], *(doc.lower[o] for o in doc.kids(prep, "pobj"))]
    return tuple(sorted(words))


def _definite(doc: Parse, h: int) -> bool:
    return bool(doc.kids(h, "poss")) or any(doc.lower[d] in DEFINITE for d in doc.kids(h, "det"))


def _counted(doc: Parse, h: int, before: range, valued: set[int]) -> bool:
    """Whether a use counts its kind: "4930 wind turbines", "two data centers", "several data centers"."""
    return (
        bool(doc.kids(h, "nummod"))
        or any(doc.lower[d] in COUNTING for d in doc.kids(h, "det", "amod", "predet"))
        or any(doc.num[i] or i in valued for i in before)
    )


def _name(doc: Parse, start: int, h: int) -> str:
    """The description as written, lower-cased: a kind's name (``API gateway`` is ``api gateway``)."""
    return " ".join(doc.span_text(start, h + 1).lower().split())
