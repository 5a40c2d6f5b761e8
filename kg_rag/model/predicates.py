"""Predicate analysis: what a relation's predicate says, read word by word, before any typing.

``analyse`` cleans a predicate (auxiliaries, articles and filler adverbs dropped; negation kept) and keys it by
the lemmas of what is left, so ``born in`` / ``was born in`` / ``is born in`` share a key; ``relation_key`` is a
relation's identity (that key), which retyping never changes. The typer (:mod:`kg_rag.model.relation_types`)
chooses types from these forms; the query side reads the same word lists to match a question's words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from kg_rag.model.lemmas import lemma
from kg_rag.model.names import CURATED_PASSIVES, RELATED, SYNONYM, upper_snake

_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
BE = frozenset("is was are were be been being am 's".split())
MODAL = frozenset("will would can could may might must shall should does did do to".split())
HAVE = frozenset("has have had having".split())
NEGATION = frozenset("not never no cannot".split())
DETERMINERS = frozenset("the a an his her its their this that these those some any".split())
FILLER = frozenset(
    """also originally currently formerly later still then now once often mainly primarily officially
    previously eventually initially subsequently briefly recently jointly already largely widely commonly
    usually generally mostly traditionally reportedly allegedly actually finally again only just even
    further formally publicly personally directly partly partially newly fully successfully posthumously
    famously notably especially particularly nearly almost approximately roughly first""".split()
)
MODIFIERS = frozenset(
    """last former new old large largest small smallest major main great greatest big biggest second third
    official early late current previous next top sole primary principal chief senior junior other own
    several many most more few""".split()
)
ROLE_MODIFIERS = frozenset("parent sister vice deputy assistant honorary co foster".split())
"""Words before a relational noun that change which relation it names: a *parent company of* X owns X, a *company
of* X belongs to it; a *vice president* is no president. Kept in a noun's head phrase."""
PREPOSITIONS = frozenset(
    """in on at of by for to from with into onto as about after before during under over between through
    against near within without across since until among towards toward upon via per like than behind
    beside beyond inside outside along around off out up down beneath underneath below above alongside amid
    amidst amongst atop throughout unlike till despite""".split()
)
_IRREGULAR_PARTICIPLES = frozenset(
    """born borne known held won made built written given taken seen done gone found lost left led sold
    brought grown shown spent taught told begun become drawn driven chosen spoken broken frozen stolen
    hidden risen fallen set put run hit cut shot bought thought caught fought sought paid laid said sent
    meant kept felt dealt struck hung stuck spun bound wound understood stood beaten forgotten ridden
    eaten sworn torn worn flown thrown blown sewn sown""".split()
)
_LATER_PARTICIPLES = frozenset(
    """sung rung swung dug shaken woken forbidden bitten slain withdrawn cast fed bred fled shed lit hurt split
    spread shut bent lent burnt learnt""".split()
)
_ALL_IRREGULAR = _IRREGULAR_PARTICIPLES | _LATER_PARTICIPLES
_PARTICIPLE_PREFIXES = ("co-", "re-", "over", "under", "re", "co", "out", "up", "mis", "with", "fore", "broad")


NOUN_PHRASE = "<np>"
"""First element of the key of a noun-phrase predicate (``is a play by``)."""


def _participle(word: str) -> bool:
    return word.endswith(("ed", "ing")) or word in _IRREGULAR_PARTICIPLES


def passive_participle(word: str) -> bool:
    """``written``, ``overthrown``, ``co-written``, ``broadcast``: a verb form that can head a passive. (Wider
    than :func:`_participle`, which shapes relation keys and so must not change under existing indexes.)"""
    if _participle(word) or word in _LATER_PARTICIPLES:
        return True
    return any(word.startswith(p) and word[len(p) :] in _ALL_IRREGULAR for p in _PARTICIPLE_PREFIXES)


def past_participle(word: str) -> bool:
    """A verb form that can head a passive with its agent after ``by`` (not an ``-ing`` form, which is active:
    ``standing by``)."""
    return passive_participle(word) and not word.endswith("ing")


@dataclass(frozen=True)
class PredicateForm:
    """A predicate after cleaning: the words kept (``surface``), their lemma key, and what was dropped."""

    surface: tuple[str, ...]
    key: tuple[str, ...]
    copula: bool
    """The predicate started with a form of *be* (``is the capital of``): its content is a noun phrase."""
    active: bool = False
    """An object with its article follows the verb, before a final "by", with no *be* before the verb
    ("published a novel by", "recorded a song by"): the verb is active, and "by" names the object's maker. (A
    passive's object complement has no article: "proclaimed emperor by", "taken prisoner by"; a preposition may
    come first: "put on the throne by".)"""

    @property
    def preposition(self) -> str | None:
        return self.surface[-1] if len(self.surface) > 1 and self.surface[-1] in PREPOSITIONS else None

    @property
    def passive(self) -> bool:
        return self.preposition == "by"

    @property
    def passive_head(self) -> tuple[str, ...] | None:
        """The participle (with its particle) and ``by`` of a passive: ``has music written by`` -> ``written
        by``, ``was carried out by`` -> ``carried out by``; with an object complement or an adverb between the
        participle and ``by``, the participle and ``by`` (``proclaimed emperor by`` -> ``proclaimed by``,
        ``taken prisoner by`` -> ``taken by``, ``challenged legally by`` -> ``challenged by``). None when the
        predicate is not a passive whose object is the agent (no ``by`` at its end, or no past participle
        before it)."""
        if not self.passive or self.active:
            return None
        for start in (len(self.surface) - 2, len(self.surface) - 3):  # a phrasal verb's particle may intervene
            if start < 0 or not passive_participle(self.surface[start]):
                continue
            if all(w in PREPOSITIONS for w in self.surface[start + 1 : -1]):
                return self.surface[start:]
        first = next((w for w in self.surface[:-1] if past_participle(w)), None)
        return (first, "by") if first is not None else None

    @property
    def agent_inside(self) -> bool:
        """Whether a passive's ``by`` stands inside the predicate, not at its end (``affected by the loss of``,
        ``is protected by state law in``): the agent is in the predicate, the object is something else, and
        neither the verb alone nor its head phrase says which way round the two ends relate."""
        if self.passive or "by" not in self.surface[:-1]:
            return False
        at = self.surface.index("by")
        return any(past_participle(w) for w in self.surface[:at])


def tokens(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(unicodedata.normalize("NFKC", str(text)).replace("_", " "))]


def written_words(text: str) -> set[str]:
    """The words of ``text`` as written (case kept: a capitalised word in a predicate is a name)."""
    return set(_TOKEN.findall(unicodedata.normalize("NFKC", str(text))))


@lru_cache(maxsize=65536)
def analyse(predicate: str) -> PredicateForm:
    """Clean a predicate: drop auxiliaries, articles and filler adverbs (keep negation); key it by lemmas."""
    toks = tokens(predicate)
    copula = bool(toks) and toks[0] in BE
    kept: list[str] = []
    for i, t in enumerate(toks):
        last = i == len(toks) - 1
        if t in DETERMINERS or t in FILLER:
            continue
        if (t in BE or t in MODAL) and not last:
            continue
        if t in HAVE and not last and (toks[i + 1] in BE or _participle(toks[i + 1])):
            continue
        kept.append(t)
    while len(kept) > 1 and kept[-1] in BE:  # "aims to be": the trailing copula adds nothing
        kept.pop()
    if not kept and toks:  # the predicate is only a copula / auxiliary: keep its meaning
        first = toks[0]
        kept = ["is"] if first in BE else ["has"] if first in HAVE else [first]
    key = tuple("be" if t in BE else t if t in PREPOSITIONS or t in NEGATION else lemma(t) for t in kept)
    # "is a play by": a copula with an article makes a noun phrase, which must not share a key with the verb
    # of the same stem ("played by"); the marker keeps them apart (``fit`` rejoins "is the capital of" with a
    # plain "capital of", whose words are the same). So does a copula with a word that is no participle, written
    # without its article ("is play by", as a parser's predicate reads): a noun or an adjective, not the verb
    after_copula = [t for t in toks[1:] if t not in FILLER and t not in BE and t not in NEGATION][:1]
    if copula and after_copula and kept and kept[0] not in BE and starts_noun_phrase(after_copula[0]):
        key = (NOUN_PHRASE, *key)
    return PredicateForm(tuple(kept), key, copula, _active(toks))


def starts_noun_phrase(word: str) -> bool:
    """Whether a word after a copula starts a noun phrase or an adjective ("a", "play", "similar"), not a passive
    or progressive verb ("located", "born", "overseen", "playing") nor a preposition ("in")."""
    if word in ("a", "an", "the"):
        return True
    return not (passive_participle(word) or word in FUNCTION_WORDS or word in PREPOSITIONS or word in HAVE)


def _active(toks: list[str]) -> bool:
    """See :attr:`PredicateForm.active`."""
    if len(toks) < 3 or toks[-1] != "by":
        return False
    verb = next((k for k, t in enumerate(toks[:-1]) if past_participle(t)), None)
    if verb is None or verb + 2 >= len(toks) or any(t in BE for t in toks[:verb]):
        return False
    return toks[verb + 1] in ("a", "an", "the", "his", "her", "its", "their")  # not "put on the throne by"


def typing_form(predicate: str) -> PredicateForm:
    """The form a predicate is typed by: :func:`analyse`'s, except that a bare passive keeps its *be* (``was
    appointed``, ``is called``, ``was elected`` + a role): without it the participle reads as the active verb,
    the other way round (``X -[APPOINTED]-> ambassador``), so it is typed ``WAS_APPOINTED``, apart from the active
    ``appointed``. A number in a predicate (``is 302 of``, ``filed 6,212,663``: a table or a list the parse ran
    together) is a value, not a word of the relation: the type is read without it, so ``is 302 of`` is ``RELATED``,
    not ``302_OF`` (a type given as one, ``SECTION_302_OF``, is kept).
    The relation's identity (:func:`relation_key`) stays the lemma key."""
    form = analyse(predicate)
    if not _GIVEN_TYPE.fullmatch(predicate.strip()):  # a type a model or a file gives is kept as given
        form = _without_numbers(form, numbered=bool(_NUMBERED.search(predicate)))
    words = [w for w in form.surface if w not in NEGATION]
    if len(words) != 1 or not past_participle(words[0]) or words[0] in BE:
        return form
    toks = tokens(predicate)
    be = next((t for t in toks[: toks.index(words[0])] if t in BE), None) if words[0] in toks else None
    if be is None:  # "claimed to be", "used to be": an active verb before an infinitive
        return form
    negated = tuple(w for w in form.surface if w in NEGATION)[:1]
    tense = "was" if be in ("was", "were") else "is"  # "are called", "has been named": IS_CALLED, IS_NAMED
    surface = (tense, *negated, words[0])  # "was not elected": WAS_NOT_ELECTED
    return PredicateForm(surface, (BARE_PASSIVE, *negated, lemma(words[0])), form.copula)


def _without_numbers(form: PredicateForm, *, numbered: bool = False) -> PredicateForm:
    """The form without its numbers (``302``, ``6,212,663``; with the *No.* that numbers one, ``numbered``: ``ranked
    No. 1``, not the *no* of "had no 2021 revenue"), key and surface alike. An ordinal or a code is a word (``12th
    most populous`` is not ``most populous``)."""
    words = form.surface
    drop = {k for k, w in enumerate(words) if _number(w)}
    if numbered:
        drop |= {k - 1 for k in drop if k > 0 and words[k - 1] in ("no", "nos", "number")}
    if not drop:
        return form
    marker = form.key[:1] if form.key[:1] == (NOUN_PHRASE,) else ()
    kept = [(w, key) for k, (w, key) in enumerate(zip(words, form.key[len(marker) :], strict=True)) if k not in drop]
    return PredicateForm(tuple(w for w, _ in kept), (*marker, *(key for _, key in kept)), form.copula, form.active)


_GIVEN_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")
"""A snake-case type as an extractor gives it (``SECTION_302_OF``, ``section_302_of``), not a predicate read from
text."""
_NUMBERED = re.compile(r"\b(?:[Nn]o|[Nn]os)\.\s*\d|\bnumber\s+\d", re.IGNORECASE)
"""A number after *No.* or *number* ("ranked No. 1"): the word numbers it and goes with it."""


def _number(word: str) -> bool:
    return any(ch.isdigit() for ch in word) and all(ch.isdigit() or ch in ",.:/-" for ch in word)


BARE_PASSIVE = "<be>"
"""First element of the typing key of a bare passive (``was appointed``): never the active verb's key."""


DIRECTIONS = frozenset(
    """north south east west northeast northwest southeast southwest north-east north-west south-east
    south-west""".split()
)
"""Words that make a preposition of place with "of": ``southwest of`` says where, as ``in`` does."""

MEASURES = frozenset("km kilometres kilometers mile miles mi metres meters m feet ft yards minutes hours".split())
"""Units of a distance before a direction ("18 miles south of"): the direction says the relation."""

LOCATIVE = frozenset(
    "in on at near along across within inside outside around behind beside beneath below above over under off".split()
)
"""Prepositions that say where: before a noun of position and its "of" (``on the shore of``) they say it alone."""

POSITION_NOUNS = frozenset(
    """shore shores side sides end edge mouth intersection junction confluence corner border borders bank banks top
    bottom foot centre center middle heart outskirts suburbs vicinity campus grounds property coast tip base summit
    site part area community""".split()
)
"""Nouns of a position within or at a thing: "at the mouth of" Y, "on the campus of" Y is at, on Y. Not "in the
reign of", "in honor of", "in front of", "in the arms of": those say no place of Y."""

LINKING = frozenset(["become", "remain"])
"""Verbs that link their subject to a noun as a copula does: "became mayor of" says *mayor of*."""


def head_form(form: PredicateForm) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The head phrase of a predicate (surface words, lemma key): its main verb — or, after a copula or a
    linking verb with "of", its head noun — plus its final preposition and any negation. ``has the
    administrative seat in`` -> ``has seat in``, ``became the first mayor of`` -> ``mayor of``.

    A direction and "of" is one preposition (``located southwest of``), and "in the south of" says *in* (``is a
    river in the south of`` -> ``river in``), as a locative preposition before a noun of position
    (:data:`POSITION_NOUNS`) and its "of" says where (``located on the shore of`` -> ``located on``). A noun's own
    "of" chain is kept whole: "the son of the king of" is no son of the kingdom, and the subject is no king. So is
    an active verb with a noun before "by": the object made the noun, not what the verb did (``directing the
    screenplay by`` is not ``directing by``, whose key is the passive ``directed by``'s), and *have* with a
    preposition before its last noun ("has close links with the government of" has no government)."""
    prep = form.preposition
    words = list(form.surface[:-1] if prep else form.surface)
    tail = [prep] if prep else []
    if prep == "of" and words and words[-1] in DIRECTIONS:
        words, tail = (words[:-2], ["in"]) if words[-2:-1] == ["in"] else (words[:-1], [words[-1], "of"])
        while words and (words[-1] in MEASURES or words[-1].replace(".", "").isdigit()):
            words = words[:-1]  # "is 5 km south of": SOUTH_OF, no KM
    elif prep == "of" and len(words) >= 3:  # "located on the shore of", "at the west end of": on, at
        at = max((k for k, w in enumerate(words) if w in PREPOSITIONS), default=-1)
        if 0 < at and words[at] in LOCATIVE and 1 <= len(words) - at - 1 <= 2 and words[-1] in POSITION_NOUNS:
            words, tail = words[:at], [words[at]]
    negated = [w for w in words if w in NEGATION]
    content = [w for w in words if w not in NEGATION and w not in PREPOSITIONS and w not in MODIFIERS] or [
        w for w in words if w not in NEGATION
    ]
    if not content:
        head: list[str] = []
    elif len(content) == 1:
        head = content[:1]
    elif lemma(content[0]) == "have":  # the noun it has: "has temperatures ranging from" has temperatures
        if PREPOSITIONS & set(words[words.index(content[0]) + 1 :]):
            return form.surface, form.key  # "has close links with the government of": no government is had
        nouns = [w for w in content[1:] if not _participle(w)]
        head = [content[0], nouns[-1] if nouns else content[-1]]
    elif (form.copula and not _participle(content[0])) or (
        prep == "of" and lemma(content[0]) in LINKING and not PREPOSITIONS & set(words)  # not "became king after
    ):  # the death of": the linked noun is the one "of" follows
        head = content[-1:]
        while len(head) < len(content) and content[-len(head) - 1] in ROLE_MODIFIERS:
            head.insert(0, content[-len(head) - 1])  # "is the parent company of" is no company of it
    else:
        head = content[:1]
        k = words.index(content[0])
        if k + 1 < len(words) and words[k + 1] in PARTICLES:  # "rolled back", "bought back": the particle is
            head.append(words[k + 1])  # part of the verb, which alone says something else
    if prep == "by" and head and head[-1] != words[-1] and (form.active or not past_participle(head[0])):
        return form.surface, form.key
    if prep == "of" and "of" in words and head == content[-1:] and len(content) > 1:
        return form.surface, form.key  # "is the son of the king of": no son of the kingdom, and no king
    surface = tuple(negated[:1] + head + tail)
    key = tuple(w if w in PREPOSITIONS or w in NEGATION else lemma(w) for w in surface)
    if form.key[:1] == (NOUN_PHRASE,):  # a noun phrase backs off to a noun phrase, never to a verb
        key = (NOUN_PHRASE, *key)
    return surface, key


PARTICLES = frozenset("back away apart aside".split())
"""Adverbs that make a phrasal verb of the verb before them, as a particle does ("rolled back" is no "rolled")."""


def display_type(surface: Iterable[str]) -> str:
    """UPPER_SNAKE type of a cleaned surface (``born in`` -> ``BORN_IN``; a lone copula -> ``IS_A``)."""
    words = list(surface)
    if words in (["is"], ["was"], ["are"], ["were"], ["be"]):
        return "IS_A"
    if words in (["has"], ["had"], ["have"]):
        return "HAS"
    snake = upper_snake(" ".join(words))
    return "IS_SYNONYM_OF" if snake == SYNONYM else snake  # SYNONYM_OF is reserved for resolution links


def meaningful(form: PredicateForm) -> bool:
    """Whether a cleaned predicate names a relation: a lone copula or *have* does (``IS_A``, ``HAS``); otherwise
    it needs a word that is not a function word (``is in``, ``of``, ``more than`` name none)."""
    words = [w for w in form.surface if sum(ch.isalnum() for ch in w) >= 2]
    if not words:
        return False
    if len(form.surface) == 1 and (form.surface[0] in BE or form.surface[0] in HAVE):
        return True
    return any(w not in BARE_WORDS for w in words)


FUNCTION_WORDS = (
    PREPOSITIONS
    | DETERMINERS
    | FILLER
    | BE
    | HAVE
    | MODAL
    | frozenset(
        """and or but nor so yet if because while although whether which who whom whose what where when there here
        it its he him his she her hers they them their theirs we us our you your i me my mine very too not""".split()
    )
)
"""Words that name no relation on their own: a rare predicate reduced to one of them stays ``RELATED``."""

COMPARATIVES = frozenset("more less fewer most least".split())
"""Quantity words that, with ``than``, only compare (``more than``, ``less than``): no relation named."""

BARE_WORDS = (FUNCTION_WORDS - BE - HAVE) | NEGATION | COMPARATIVES
"""Words a predicate needs more than (``is in``, ``not of``, ``less than``): prepositions, conjunctions, articles,
pronouns, auxiliaries, filler adverbs, negation and bare comparatives. A lone copula (``IS_A``) or *have*
(``HAS``) still names a relation: class membership, possession."""


def names_relation(relation_type: str | None) -> bool:
    """Whether a relation type names a relation: not ``RELATED`` (nor a synonym link), and not made only of
    function words (``IN``, ``OF``, ``THAN``, ``NOT_IN``, ``MORE_THAN``). This is what "typed" means in the
    index statistics and the evaluation: a type that is only a preposition says no more than ``RELATED``.
    ``IS_A`` and ``HAS`` name class membership and possession."""
    if not relation_type or relation_type in (RELATED, SYNONYM):
        return False
    if relation_type in ("IS_A", "HAS"):
        return True
    words = [w for w in relation_type.casefold().split("_") if w]
    return any(w not in BARE_WORDS for w in words)


def relation_key(predicate: str | None, relation_type: str | None) -> str:
    """What identifies a relation between two entities besides its ends: the lemma key of its predicate (or of
    its type when it has none). Variants of one predicate give one relation; retyping never changes it."""
    text = predicate if predicate and str(predicate).strip() else (relation_type or RELATED)
    form = analyse(str(text))
    key = form.key[1:] if form.key[:1] == (NOUN_PHRASE,) else form.key  # identity: the words, not the reading
    return " ".join(key) or str(text).strip().casefold()


def inverse_types(a: str, b: str) -> bool:
    """Whether ``X -[a]-> Y`` and ``Y -[b]-> X`` state one fact in two voices: a curated type and its passive
    (``SUPERSEDES`` / ``SUPERSEDED_BY``), or a past verb and its passive (``ACQUIRED`` / ``ACQUIRED_BY``) — not a
    present verb and a phrasal one (``STANDS`` / ``STANDS_BY``) nor a noun and its maker (``SONG`` / ``SONG_BY``)."""
    return _passive_of(a, b) or _passive_of(b, a)


def _passive_of(active: str, passive: str) -> bool:
    if CURATED_PASSIVES.get(active) == passive:
        return True
    return passive == f"{active}_BY" and past_participle(active.rsplit("_", 1)[-1].casefold())
