"""The kind a name's own head noun says: *Victoria Falls* is a place and *Chippewa Salt Company* an organisation,
whatever a small recogniser guessed (it calls waterfalls people and rivers organisations).

An English proper name usually ends in the kind of thing it names (``Humboldt Peak``, ``Snake River``, ``Howard
University``); with "of", the kind comes before it (``University of Missouri``, ``Battle of Cedar Creek``: a
battle). The head overrides only a guess of another kind of thing: a work's or an event's title may end in any
noun (*Run to the Hills*), and a landform that is also a surname (*Faith Hill*, *Michael Bay*, *Ricki Lake*) keeps
the recogniser's guess; a settlement noun says nothing either (*Manchester City*, *Derby County* are clubs).

A person's name says so by its shape (:func:`person_like`), and a capitalised word before a surname is a title
when it names a rank, an office or an agent (:func:`title_word`), else a given name.
"""

from __future__ import annotations

from kg_rag.model.lemmas import known_word
from kg_rag.model.names import legal_form

LANDFORMS = frozenset(
    """peak peaks mountain mountains range river lake island islands bay valley creek glacier sea ocean desert forest
    canyon falls hill hills gulf strait peninsula reservoir harbor harbour coast plateau volcano cape beach lagoon
    fjord archipelago""".split()
)
"""Head nouns of landforms and waters: places even when the recogniser calls them organisations."""

DIVISION_HEADS = frozenset("district province region oblast prefecture governorate municipality".split())
"""Head nouns of administrative divisions: places, unless the recogniser reads a body ("Unified School
District")."""

SURNAMES = frozenset("hill hills lake bay ocean beach strait forest island cape coast".split())
"""Landform heads that are also common surnames: they never turn a name into a place (the recogniser may not have
called *Faith Hill* a person at all)."""

ORGANISATION_HEADS = frozenset(
    """university college institute foundation association society council committee agency ministry party club
    academy department division bureau commission directorate unit team""".split()
)
"""Head nouns of organisations; a name that ends in a legal form (*Chippewa Salt Company*,
:func:`~kg_rag.model.names.legal_form`) is one too."""

DOCUMENT_HEADS = frozenset(
    """policy procedure standard standards act regulation directive guideline guidelines code plan programme program
    agreement framework charter protocol handbook manual""".split()
)
"""Head nouns of a named document or scheme (*Travel and Expense Policy*, *Gifts and Hospitality Procedure*)."""

UNITS = frozenset("department division unit".split())
"""Organisation heads that also name administrative divisions (*Montevideo Department*): they only correct a person
(*the Engineering department*, which the recogniser reads as a person's name)."""

OFFICES = frozenset(
    """officer counsel president director chair chairman chairwoman chairperson head manager lead leader secretary
    treasurer vp svp evp ceo cfo cto coo cio ciso cmo editor founder minister governor commissioner dean provost
    controller administrator coordinator superintendent chief executive commander""".split()
)
"""Words that name an office: a name holding one, followed by a person's name, is the role that person holds."""

OVERRIDDEN = frozenset({"", "PERSON", "ORGANIZATION", "LOCATION"})
"""The recogniser's guesses a head noun corrects: no type, or another kind of named thing (not a work, an event, a
law or a product, whose titles end in any word)."""


def head_word(name: str) -> str:
    """A name's head noun, lower case: its last word, or the last word before "of" (``University of Missouri``)."""
    before, of, _ = name.partition(" of ")
    words = before.split()
    return words[-1].casefold().rstrip(".,") if words and (of or len(words) >= 2) else ""


def kind_of(name: str, label: str) -> str:
    """The entity type of a name recognised as ``label``: the kind its head noun says when that corrects the guess,
    else ``label``."""
    if label not in OVERRIDDEN:
        return label
    head = head_word(name)
    if head in LANDFORMS and head not in SURNAMES:
        return "LOCATION"
    if head in DIVISION_HEADS and label != "ORGANIZATION":
        return "LOCATION"
    body = head in ORGANISATION_HEADS or legal_form(name)
    if body and label != "ORGANIZATION" and (head not in UNITS or label == "PERSON"):
        return "ORGANIZATION"
    return label


SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
PEERAGE = frozenset("baron baroness lord lady earl count countess duke duchess viscount marquess sir dame".split())
"""A title after a person's name and a comma (*Peter Mandelson, Baron Mandelson*): no unit of a place."""


def place_title(title: str) -> bool:
    """Whether an encyclopedia title names a place by the unit it lies in after a comma (``Charleston, South
    Carolina``, ``Midway, Floyd County, Iowa``): no person, so *he* and *she* never refer to it. A lower-case
    qualifier (``Mary, mother of Jesus``), a name's suffix (``Martin Luther King, Jr.``) or a peerage is no unit."""
    head, comma, unit = str(title).partition(", ")
    words = unit.replace(",", " ").split()
    if not comma or not head.strip() or not 1 <= len(words) <= 4:
        return False
    first = words[0].casefold().rstrip(".")
    return all(w[:1].isupper() for w in words) and first not in SUFFIXES and first not in PEERAGE


HONORIFICS = frozenset(
    """mr mrs ms miss dr sir lady lord president senator governor mayor king queen prince princess general colonel
    captain judge justice rev reverend father saint st""".split()
)
"""Words before a surname that name someone else than the titled person: a relative or another office holder."""

RANKS = HONORIFICS | frozenset(
    """lieutenant sergeant admiral major commander marshal brigadier corporal private chief bishop archbishop cardinal
    pope emperor empress sultan duke duchess earl count countess baron baroness sheikh emir chancellor minister
    professor prof doctor coach pastor rabbi imam sister brother uncle aunt agent officer detective inspector
    constable premier senior junior sheriff deputy attorney principal nurse tsar czar shah prophet dame pharaoh
    ayatollah warden magistrate chef representative""".split()
)
"""Words that may stand before a person's name without being part of it: titles, ranks, offices, kin."""


AGENT_ENDINGS = ("man", "woman", "person", "er", "or", "ist", "ary", "ess", "ent", "ant", "ian", "eer", "ee")
"""Endings of English agent nouns (*chairman*, *manager*, *senator*, *economist*, *secretary*, *president*): how a
common word names what a person does, and so can stand as a title before a name."""


def title_word(word: str) -> bool:
    """Whether a capitalised word before a surname is a title: a rank, honorific or office, or a dictionary word that
    is an agent noun ("Chairman Mao", "Sheriff Taylor", "Striker Kane"). A dictionary word of another shape is a given
    name ("Ana Souza", "Will Grace", "Rose Kennedy"): English forms the nouns for a person's role with an agent
    ending, and a given name rarely has one."""
    w = word.casefold()
    return w in RANKS or w in OFFICES or (known_word(w) and w.endswith(AGENT_ENDINGS) and len(w) > 4)


_NOT_PEOPLE = frozenset(
    """city county river lake mount mountain cape island islands bay park street road state states university college
    school church cathedral company corporation museum airport station bridge valley national international
    united new north south east west fort port saint st. san santa district province region republic kingdom
    empire range peak hill hills falls house hall tower castle palace war battle treaty act party council holdings
    inc inc. ltd ltd. llc plc gmbh ag group committee board team department ministry agency fleet army navy""".split()
)
"""Words of a title that name a kind of place, body or event: such a title is no person's name."""


def person_like(name: str) -> bool:
    """A title that may be a person's name: two to four capitalised words, no digit, no function word, no kind of
    place or body (``Hank Snow``, ``James Glisson``; not ``Lake Colac``, ``Kansas City``, ``Cape of Good Hope``)."""
    words = name.split()
    return (
        2 <= len(words) <= 4
        and all(w[:1].isupper() and w.replace(".", "").replace("-", "").replace("'", "").isalpha() for w in words)
        and not any(w.casefold() in _NOT_PEOPLE for w in words)
    )
