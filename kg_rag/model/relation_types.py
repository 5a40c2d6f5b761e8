"""Relation types from real predicates: ``was born in`` -> ``BORN_IN``, ``is the capital of`` -> ``CAPITAL_OF``,
``directed by`` -> ``DIRECTED_BY``.

A predicate is cleaned (auxiliaries, articles and filler adverbs dropped; negation kept) and keyed by the
lemmas of what is left, so variants of one predicate (``born in`` / ``was born in`` / ``is born in``) share a
key and a type. The key keeps the final preposition, so a passive (``directed by``) never shares a key or a
type with its active (``directed``): typing and merging never cross direction. The curated vocabulary
(``SUPERSEDES``, ``MANAGES``, ...) applies wherever its phrases match.

Over a whole corpus (:meth:`RelationTyper.fit`), a type must be attested at least ``min_support`` times.
A rarer predicate falls back, in order, to: its head phrase (``is the largest city in`` -> ``city in``,
``played an important role in`` -> ``play in``) when that is attested often enough; for a passive, its
participle and ``by`` (``has music written by`` -> ``WRITTEN_BY``, ``was superseded by`` -> ``SUPERSEDED_BY``;
also with an object complement or an adverb between them: ``proclaimed emperor by`` -> ``PROCLAIMED_BY``,
``taken prisoner by`` -> ``TAKEN_BY``) and for a relational noun its noun and ``of`` (``is the mayor of`` ->
``MAYOR_OF``, ``widow of`` -> ``WIDOW_OF``), even when rare, because ``by`` and ``of`` alone name no relation;
its head verb when that is attested (``facilitated the formation of`` -> ``FACILITATED``) and says the same —
never for a passive or a verb with its own preposition, which the bare active verb reads the other way round
(``was included in`` is not ``INCLUDE``, ``contained in`` is not ``CONTAINS``), nor when the final preposition
belongs to a noun after the verb (``took part in`` is not ``TOOK``: such a rare predicate is its own short type,
``TOOK_PART_IN``, or ``RELATED``); else the head word itself,
however rare (``annexed`` -> ``ANNEXED``, ``located inside`` -> ``LOCATED_INSIDE``, ``was included in`` ->
``INCLUDED_IN``), since a word that names a relation says more than ``RELATED``. A passive whose ``by`` stands
inside the predicate (``affected by the loss of``, ``is protected by state law in``) writes its agent there:
its object is something else, and a rare one is ``RELATED``, since no fallback says which way round its ends
relate. A preposition, conjunction or other function word is never a type on its own: ``is in``, ``of`` or
``less than`` name no relation (:func:`names_relation`), so they stay ``RELATED``, as do predicates with no
usable word at all (empty, an adverb, a capitalised name in the predicate slot). The original predicate is
always kept on the relation, so nothing is lost by typing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from kg_rag.errors import InputError
from kg_rag.model.lemmas import lemma
from kg_rag.model.names import AMBIGUOUS_PASSIVES, CURATED_PASSIVES, DEFAULT_RELATION_PATTERNS, RELATED, upper_snake
from kg_rag.model.predicates import (
    BARE_PASSIVE,
    COMPARATIVES,
    DIRECTIONS,
    FUNCTION_WORDS,
    LINKING,
    NEGATION,
    NOUN_PHRASE,
    PARTICLES,
    PREPOSITIONS,
    ROLE_MODIFIERS,
    PredicateForm,
    analyse,
    display_type,
    head_form,
    meaningful,
    names_relation,
    passive_participle,
    past_participle,
    starts_noun_phrase,
    typing_form,
    written_words,
)


class RelationTyper:
    """Chooses relation types for predicates; never changes which end of a relation is the source.

    ``patterns``: curated phrase -> type (the default vocabulary's phrases); matched on lemma keys, so
    ``replaced``, ``replaces`` and ``has replaced`` all give ``SUPERSEDES``. ``min_support``: how many relations
    must share a type before :meth:`fit` keeps it (rarer predicates fall back, see the module docstring).
    ``strict``: types outside ``vocabulary`` become ``RELATED`` (for LLM output that must stay in a schema).
    """

    def __init__(
        self,
        patterns: Mapping[str, str] | None = None,
        *,
        min_support: int = 3,
        vocabulary: Iterable[str] | None = None,
        strict: bool = False,
    ) -> None:
        if isinstance(min_support, bool) or not isinstance(min_support, int) or min_support < 1:
            raise InputError(f"min_support must be an integer >= 1, got {min_support!r}")
        phrases = DEFAULT_RELATION_PATTERNS if patterns is None else patterns
        forms = [(analyse(phrase), upper_snake(t)) for phrase, t in phrases.items()]
        self.patterns = {form.key: t for form, t in forms}
        for form, t in forms:  # a noun is the same relation with or without its copula and article: "is owner of"
            if form.key[:1] == (NOUN_PHRASE,):  # is "owner of", "subsidiary of" is "is a subsidiary of"
                self.patterns.setdefault(form.key[1:], t)
            elif form.surface and not form.copula and starts_noun_phrase(form.surface[0]):
                self.patterns.setdefault((NOUN_PHRASE, *form.key), t)
        self.min_support = min_support
        self.vocabulary = frozenset(upper_snake(v) for v in vocabulary) if vocabulary is not None else None
        self.strict = strict
        self.passives: dict[tuple[str, ...], str] = {}
        """The curated verbs' passives ("was replaced by": ``SUPERSEDED_BY``), for a past participle before "by";
        only types the vocabulary allows, when one is given."""
        for key, t in self.patterns.items():
            passive = CURATED_PASSIVES.get(t)
            if (
                passive is not None
                and (self.vocabulary is None or passive in self.vocabulary)
                and key
                and key[0] != NOUN_PHRASE
                and key[-1] not in AMBIGUOUS_PASSIVES
                and not PREPOSITIONS & set(key)
            ):
                self.passives.setdefault((*key, "by"), passive)

    def _curated(self, form: PredicateForm) -> str | None:
        if form.key in self.patterns:
            return self.patterns[form.key]
        if form.key in self.passives and len(form.surface) >= 2 and past_participle(form.surface[-2]):
            return self.passives[form.key]  # "was replaced by", not the present "leads by"
        snake = upper_snake(" ".join(form.surface))
        if self.vocabulary is not None and snake in self.vocabulary:
            return snake
        return None

    def __call__(self, predicate: str | None) -> str:
        """The type of one predicate on its own (no corpus statistics): curated, else its cleaned phrase."""
        if predicate is None or not str(predicate).strip():
            return RELATED
        form = typing_form(str(predicate))
        if not meaningful(form):
            return RELATED
        curated = self._curated(form)
        if curated is not None:
            return curated
        if self.strict:
            return RELATED
        return display_type(form.surface)

    def fit(self, predicates: Mapping[str, int]) -> dict[str, str]:
        """Types for a whole corpus of predicates (predicate -> how many relations use it).

        Variants merge on their key; a key used by fewer than ``min_support`` relations falls back to its
        head phrase (keeping the final preposition, so merges never cross direction), then its head verb unless
        it is a passive or the preposition is the verb's own (the bare verb would invert those); when none of
        those is attested, its own head word, unless that names no relation (a function word, an
        adverb, a capitalised name): then ``RELATED``. A preposition alone is never a type (``THAN``, ``IN``):
        it says how two things relate only together with a word it attaches to.
        """
        forms = {p: typing_form(p) for p in predicates if p and str(p).strip()}
        plain_surfaces = {f.surface: f.key for f in forms.values() if f.key[:1] != (NOUN_PHRASE,)}
        for p, f in list(forms.items()):  # "is the capital of" is "capital of": the same words, no verb reading
            if f.key[:1] == (NOUN_PHRASE,) and f.surface in plain_surfaces:
                forms[p] = PredicateForm(f.surface, plain_surfaces[f.surface], f.copula, f.active)
        support: Counter[tuple[str, ...]] = Counter()
        surfaces: dict[tuple[str, ...], Counter[tuple[str, ...]]] = {}
        for p, form in forms.items():
            support[form.key] += predicates[p]
            surfaces.setdefault(form.key, Counter())[form.surface] += predicates[p]
        types: dict[tuple[str, ...], str] = {}
        for key, counter in surfaces.items():
            surface = _usual(counter)
            if surface is not None:  # a key whose every surface is a bare word ("near", "less") is no type
                types[key] = display_type(surface)
        heads: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        head_support: Counter[tuple[str, ...]] = Counter()
        head_surfaces: dict[tuple[str, ...], Counter[tuple[str, ...]]] = {}
        for p, form in forms.items():
            if support[form.key] < self.min_support and form.key not in self.patterns:
                h_surface, h_key = head_form(form)
                if h_key[:1] == (NOUN_PHRASE,) and h_surface in plain_surfaces:  # "largest city in" -> "city in"
                    h_key = plain_surfaces[h_surface]
                heads[p] = (h_surface, h_key)
                head_support[h_key] += predicates[p]
                head_surfaces.setdefault(h_key, Counter())[h_surface] += predicates[p]
        out: dict[str, str] = {}
        for p, form in forms.items():
            out[p] = self._fit_one(p, form, support, types, heads, head_support, head_surfaces)
        return out

    def _fit_one(self, p, form, support, types, heads, head_support, head_surfaces) -> str:
        if not meaningful(form):
            return RELATED
        curated = self._curated(form)
        if curated is not None:
            return curated
        if self.strict:
            return RELATED
        if support[form.key] >= self.min_support and form.key in types:
            return types[form.key]
        if form.key[:1] == (BARE_PASSIVE,):  # rare: its own words, the active verb would read it backwards
            return display_type(form.surface)
        if form.agent_inside:  # every fallback drops the agent's "by" and may read the relation backwards
            return RELATED
        h_surface, h_key = heads[p]
        if h_key in self.patterns:
            return self.patterns[h_key]
        if support[h_key] >= self.min_support and h_key in types:
            return types[h_key]
        if h_key and head_support[h_key] >= self.min_support and (usual := _usual(head_surfaces[h_key])):
            return display_type(usual)
        moved = form.preposition is not None and h_surface[-1:] != (form.preposition,)  # "lies at ... of"
        where = (moved and h_surface[-1] in PREPOSITIONS) or (h_surface[-2:-1] and h_surface[-2] in DIRECTIONS)
        if (
            where
            and meaningful(PredicateForm(h_surface, h_key, False))
            and _word(p, [w for w in h_surface if w not in NEGATION][0])
        ):
            return display_type(h_surface)  # "located southwest of", "lies at the intersection of": says where
        noun = _relational_noun(form, h_surface)
        if noun is not None:  # "is the mayor of", "widow of": the noun names the relation, "of" alone does not
            return display_type(noun)
        passive = form.passive_head
        if passive is not None:
            negated = tuple(w for w in form.surface if w in NEGATION)[:1]
            p_key = (*negated, *(w if w in PREPOSITIONS else lemma(w) for w in passive))
            attested = support[p_key] >= self.min_support and p_key in types
            return types[p_key] if attested else display_type(negated + passive)
        verb = h_key[:1]
        if (
            verb
            and verb[0] not in PREPOSITIONS
            and support[verb] >= self.min_support
            and verb in types
            and not _verb_alone_differs(form, h_surface)
        ):
            return types[verb]
        word = _rare_head(p, h_surface, form)
        if word is not None:  # "annexed", "detonated", "located inside": rare, but the word names the relation
            return display_type(word)
        return RELATED


def _usual(counter: Counter[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The most used surface of a key that names a relation (``neared``, not the preposition ``near`` that
    shares its lemma key), a finite verb before a gerund (``before forming``, ``after leaving`` are read from a
    clause: ``FORMED_OF``, not ``FORMING_OF``); ``None`` when none does."""
    naming = [s for s in counter if names_relation(display_type(s))]
    return min(naming, key=lambda s: (_gerund(s), -counter[s], len(s), s)) if naming else None


def _gerund(surface: tuple[str, ...]) -> bool:
    return any(len(w) > 4 and w.endswith("ing") for w in surface[:1])


def _verb_alone_differs(form: PredicateForm, h_surface: tuple[str, ...]) -> bool:
    """Whether the head verb alone would say something else than the predicate, so a rare predicate must not
    back off to it: a passive reads the other way round as its active verb (``was included in`` is not
    ``INCLUDE``, ``is located in the city of`` is not ``LOCATE``), and a preposition right after the verb is
    part of what it says (``contained in``, ``formed from``: ``CONTAINS`` and ``FORMS`` would invert them)."""
    head = [w for w in h_surface if w not in NEGATION and w not in PREPOSITIONS]
    if len(head) == 2 and head[1] in PARTICLES:
        return True  # "rolled back" is no "rolled"
    if len(head) != 1:  # the whole predicate: a preposition inside it belongs to a noun ("has links with")
        return bool(head) and (_adjunct(form, head[0]) or bool(PREPOSITIONS & set(h_surface[:-1])))
    word = head[0]
    passive = form.copula and passive_participle(word) and not word.endswith("ing")
    attached = form.preposition is not None and len(form.surface) >= 2 and form.surface[-2] == word
    return passive or attached or _adjunct(form, word)


def _adjunct(form: PredicateForm, word: str) -> bool:
    """Whether the predicate's final preposition belongs to a noun after the verb: in "took part in", "entered into
    partnership with" the object is the noun's adjunct, and the verb alone (``TOOK``, ``ENTERED``) would read it as
    the verb's own object; after an active verb, "by" names the noun's maker ("directing the screenplay by" Y: Y
    wrote the screenplay, and ``DIRECTED`` would say Y was directed); "of" after the participle of a verb that
    gives a role (:data:`ROLE_VERBS`) names what the role is of ("appointed bishop of" Y: ``APPOINTED`` would say
    the subject appointed Y). Elsewhere with "of" the noun is a function of the object (``facilitated the formation
    of`` Y facilitated Y, loosely) and the verb alone may stand; a passive's "by" is its agent
    (:attr:`PredicateForm.passive_head`)."""
    prep = form.preposition
    if prep is None or len(form.surface) < 3 or form.surface[-2] == word:
        return False
    if prep == "of":  # "appointed bishop of": the participle's complement holds the role, of Y
        at = form.surface.index(word)
        # "ruled in favour of", "acted on behalf of": a three-word preposition, no object of the verb as "the
        # formation" is, so the verb alone names nothing about Y
        inside = form.surface[at + 1 : at + 4] in COMPLEX_PREPOSITIONS and at + 4 == len(form.surface)
        return inside or (past_participle(word) and lemma(word) in ROLE_VERBS)
    return prep != "by" or not past_participle(word) or form.active


ROLE_VERBS = frozenset(
    "appoint name elect crown make proclaim declare choose nominate install ordain consecrate".split()
)
"""Verbs whose object takes a role ("appointed X bishop of Y"): their bare participle with a role reads passive."""


def _rare_head(predicate: str, h_surface: tuple[str, ...], form: PredicateForm) -> tuple[str, ...] | None:
    """The head phrase of a predicate too rare for any shared type, when it still names a relation: one content
    word (with its negation, and its final preposition when that follows it: ``fluent in``, but ``launched the
    career of`` -> ``launched``) — not a preposition, pronoun or other function word (``by``, ``him``), not an
    adverb (``repeatedly``) — written in lower case: a capitalised lone word (``California``) is a name the
    extractor put in the wrong slot. *have* with the noun it has names a relation as well (``has capital``)."""
    content = [w for w in h_surface if w not in NEGATION]
    if len(content) in (2, 3) and content[1] in PARTICLES and all(w in PREPOSITIONS for w in content[2:]):
        return h_surface if _word(predicate, content[0]) else None  # "rolled back", "moved back to": phrasal
    whole = False  # "took part in": the whole predicate, TOOK would misread the object
    if len(content) == 2 and lemma(content[0]) == "have" and content[1] not in FUNCTION_WORDS:
        return h_surface if content[1].isalpha() and content[1].islower() else None  # "has capital": HAS_CAPITAL
    if len(content) == 3 and lemma(content[0]) == "have" and content[2] in PREPOSITIONS:  # "has headquarters in"
        noun = content[1]
        return h_surface if noun not in FUNCTION_WORDS and noun.isalpha() and noun.islower() else None
    if len(content) == 2 and content[-1] in PREPOSITIONS and content[0] not in PREPOSITIONS:
        at = form.surface.index(content[0]) if content[0] in form.surface else len(form.surface)
        particles = form.surface[at + 1 : -1]
        if particles and all(w in PREPOSITIONS for w in particles):  # "was taken over in": the verb's own particle
            return (*(w for w in h_surface if w in NEGATION), *form.surface[at:])
        if len(form.surface) >= 2 and form.surface[-2] != content[0]:  # the preposition belongs to another word
            h_surface = tuple(w for w in h_surface if w != content[-1])
            if form.copula and past_participle(content[0]):  # a passive: its bare participle reads it as active
                return _passive_with_preposition(form, h_surface, content[0])
            whole = _adjunct(form, content[0])
        content = content[:1]
    if len(content) > 2 and content[-1] == "by" and _adjunct(form, content[0]):  # "features music by"
        return _whole(form, written_words(predicate))
    if len(content) > 2 and content[-1] == "of" and "of" in content[:-1]:  # "son of the king of": SON_OF_KING_OF
        return _whole(form, written_words(predicate))
    if len(content) != 1:
        return None
    word = content[0]
    if not _word(predicate, word):
        return None  # "by", "the", "him", "very": no relation named
    written = written_words(predicate)
    return _whole(form, written) if whole else h_surface


def _word(predicate: str, word: str) -> bool:
    """Whether a predicate's head word names a relation: a word written in lower case in it, not a function word,
    a bare comparative or an adverb ("gradually"); a capitalised one is a name in the predicate slot."""
    return (
        word.replace("-", "").isalpha()
        and word not in FUNCTION_WORDS
        and word not in COMPARATIVES
        and not (word.endswith("ly") and not word.endswith("ply") and len(word) > 4)
        and word in written_words(predicate)
    )


def _whole(form: PredicateForm, written: set[str]) -> tuple[str, ...] | None:
    """A short predicate as the type it names (``took part in`` -> ``TOOK_PART_IN``); a long one says too much
    for a type (``RELATED``, the predicate stays on the relation). ``written``: the predicate's words as written
    (a capitalised one is a name)."""
    words = tuple(w for w in form.surface if not (w.endswith("ly") and len(w) > 4))  # "unconditionally"
    if len(words) > MAX_TYPE_WORDS or not all(w.replace("-", "").isalpha() and w in written for w in words):
        return None  # long, or a capitalised word: a name the extractor put in the predicate
    return words


MAX_TYPE_WORDS = 4
"""Longest predicate kept whole as a type."""


def _passive_with_preposition(form: PredicateForm, h_surface: tuple[str, ...], word: str) -> tuple[str, ...] | None:
    """A rare passive whose final preposition belongs to a later word (``was formed after the outage of``,
    ``was issued in response to``): its participle with the preposition that follows it (``formed after``,
    ``issued in``), else nothing (``RELATED``). The participle alone (``FORMED``) would read the subject as the
    one who formed the object."""
    at = form.surface.index(word)
    after = form.surface[at + 1] if at + 1 < len(form.surface) else None
    if after is None or after not in PREPOSITIONS or after == "by":
        return None
    complex_ = form.surface[at + 1 : at + 4]
    if complex_ in COMPLEX_PREPOSITIONS:  # "issued in response to": ISSUED_IN_RESPONSE_TO, not ISSUED_IN
        return (*h_surface, *complex_)
    return (*h_surface, after)


COMPLEX_PREPOSITIONS = frozenset(
    tuple(p.split())
    for p in (
        "in response to",
        "in place of",
        "in collaboration with",
        "in cooperation with",
        "in association with",
        "in partnership with",
        "in addition to",
        "in front of",
        "in charge of",
        "in honor of",
        "in honour of",
        "in memory of",
        "in favor of",
        "in favour of",
        "in support of",
        "in violation of",
        "in accordance with",
        "on behalf of",
        "by means of",
        "as part of",
    )
)
"""Prepositions written in three words: the first alone (``in``) says something else (``ISSUED_IN``)."""


def _relational_noun(form: PredicateForm, h_surface: tuple[str, ...]) -> tuple[str, ...] | None:
    """``(noun, "of")`` (negation kept) when the predicate is a relational noun with ``of``: after a copula
    (``is the mother church of`` -> ``church of``) or a linking verb (``became mayor of``) or on its own
    (``widow of``, ``not aware of``, ``died of``).
    A longer predicate without a copula (``launched the career of``) may start with a verb, so it is left
    alone."""
    if form.preposition != "of":
        return None
    negated = tuple(w for w in h_surface if w in NEGATION)
    head = tuple(w for w in h_surface if w not in NEGATION)
    noun = [w for w in head[:-2] if w not in ROLE_MODIFIERS] + list(head[-2:])  # "parent company of"
    if len(noun) != 2 or noun[0] in PREPOSITIONS:
        return None
    before = [w for w in form.surface[:-1] if w not in NEGATION]
    linked = (  # "became mayor of"; not "became king after the death of"
        len(before) > 1 and lemma(before[0]) in LINKING and before[-1] == noun[0] and not PREPOSITIONS & set(before)
    )
    if before == list(head[:-1]) or linked or (form.copula and not passive_participle(noun[0])):
        return negated + head
    return None
