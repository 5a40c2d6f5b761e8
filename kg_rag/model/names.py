"""Names, types and the curated relation vocabulary: how surface strings become canonical keys and types.

Direction is never touched here: a predicate only chooses a *type*. Passive phrasings ("superseded by",
"owned by") are deliberately absent from the curated pattern map, because mapping them to the active type
would silently invert the edge; a curated verb's passive gets its type's passive (``was replaced by`` ->
``SUPERSEDED_BY``: :data:`CURATED_PASSIVES`), any other its own passive type, from
:mod:`kg_rag.model.relation_types`, with the predicate kept.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

RELATED = "RELATED"
SYNONYM = "SYNONYM_OF"
"""Type of the similarity links added by entity resolution. Such edges also carry ``kind="synonym"``
and are never counted or rendered as extracted relations."""

DEFAULT_ENTITY_TYPE = "ENTITY"

MONTHS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr jun "
    "jul aug sep sept oct nov dec".split()
)
"""Month names and their abbreviations, lower case: what makes a number a date."""

DEFAULT_ENTITY_TYPES: tuple[str, ...] = (
    "PERSON",
    "ORGANIZATION",
    "ROLE",
    "LOCATION",
    "DOCUMENT",
    "POLICY",
    "REGULATION",
    "DECISION",
    "EVENT",
    "PRODUCT",
    "PROJECT",
    "DATE",
    "CONCEPT",
)

DEFAULT_RELATION_TYPES: dict[str, str] = {
    "MANAGES": "source manages or leads target",
    "REPORTS_TO": "source reports to target",
    "OWNS": "source owns target",
    "MEMBER_OF": "source is a member of target",
    "PART_OF": "source is a part or subdivision of target",
    "LOCATED_IN": "source is located in target",
    "FOUNDED": "source founded or established target",
    "CREATED": "source created, wrote or produced target",
    "DECIDED": "source decided target",
    "APPROVED": "source approved target",
    "CAUSED": "source caused or led to target",
    "BLOCKED": "source blocked or prevented target",
    "PRECEDED": "source came before target",
    "SUPERSEDES": "source supersedes or replaces target",
    "REVOKES": "source revokes, repeals or rescinds target",
    "IMPLEMENTS": "source implements target",
    RELATED: "any other relation; describe it in the description",
}

# Predicate phrase -> relation type (matched on lemma keys: "replaced", "replaces", "has replaced" alike). Only
# active-voice phrasings where the subject is the source; their passives are CURATED_PASSIVES (module docstring).
DEFAULT_RELATION_PATTERNS: dict[str, str] = {
    **dict.fromkeys(
        [
            "manages",
            "managed",
            "manage",
            "leads",
            "led",
            "heads",
            "headed",
            "oversees",
            "oversaw",
            "supervises",
            "supervised",
        ],
        "MANAGES",
    ),
    **dict.fromkeys(["reports to", "reported to", "reports directly to", "answers to"], "REPORTS_TO"),
    **dict.fromkeys(["owns", "owned", "own", "is owner of", "owner of"], "OWNS"),
    **dict.fromkeys(["member of", "a member of", "is a member of", "joined", "belongs to", "belonged to"], "MEMBER_OF"),
    **dict.fromkeys(
        [
            "part of",
            "a part of",
            "is part of",
            "component of",
            "subsidiary of",
            "a subsidiary of",
            "division of",
            "a division of",
        ],
        "PART_OF",
    ),
    **dict.fromkeys(
        ["located in", "located at", "situated in", "lies in", "based in", "headquartered in", "located on"],
        "LOCATED_IN",
    ),
    **dict.fromkeys(["founded", "co-founded", "established", "set up"], "FOUNDED"),
    **dict.fromkeys(
        ["created", "wrote", "composed", "produced", "designed", "invented", "authored", "developed"], "CREATED"
    ),
    **dict.fromkeys(["decided", "decided on", "decided to"], "DECIDED"),
    **dict.fromkeys(["approved", "approves", "ratified", "signed off", "authorized", "authorised"], "APPROVED"),
    **dict.fromkeys(
        ["caused", "causes", "led to", "leads to", "resulted in", "results in", "triggered", "gave rise to"], "CAUSED"
    ),
    **dict.fromkeys(["blocked", "blocks", "prevented", "prevents", "vetoed", "halted"], "BLOCKED"),
    **dict.fromkeys(["preceded", "precedes", "came before", "predecessor of", "the predecessor of"], "PRECEDED"),
    **dict.fromkeys(
        [
            "supersedes",
            "superseded",
            "replaces",
            "replaced",
            "succeeds",
            "succeeded",
            "successor of",
            "the successor of",
        ],
        "SUPERSEDES",
    ),
    **dict.fromkeys(
        [
            "revokes",
            "revoked",
            "repeals",
            "repealed",
            "rescinds",
            "rescinded",
            "overturned",
            "annulled",
            "cancels",
            "cancelled",
            "canceled",
        ],
        "REVOKES",
    ),
    **dict.fromkeys(["implements", "implemented", "enforces", "enforced", "executes", "executed"], "IMPLEMENTS"),
}

CURATED_PASSIVES: dict[str, str] = {
    "MANAGES": "MANAGED_BY",
    "OWNS": "OWNED_BY",
    "FOUNDED": "FOUNDED_BY",
    "DECIDED": "DECIDED_BY",
    "APPROVED": "APPROVED_BY",
    "CAUSED": "CAUSED_BY",
    "BLOCKED": "BLOCKED_BY",
    "PRECEDED": "PRECEDED_BY",
    "SUPERSEDES": "SUPERSEDED_BY",
    "REVOKES": "REVOKED_BY",
    "IMPLEMENTS": "IMPLEMENTED_BY",
}
"""The passive of each curated type: a curated verb with "by" after it (``was replaced by``, ``is led by``)
types as its type's passive (``SUPERSEDED_BY``, ``MANAGED_BY``), so one relation has one type whichever voice
states it and a chain of supersessions reads as one type. ``CREATED`` has none: its verbs name different roles
(``written by``, ``produced by``, ``designed by`` stay apart)."""


AMBIGUOUS_PASSIVES = frozenset(["execute"])
"""Curated verbs whose passive says something else: "was executed by" a state is no implementation."""


_SNAKE = re.compile(r"[^0-9A-Za-z]+")
_FOLDED_MARKS = frozenset(
    [*range(0x0591, 0x05BE), 0x05BF, 0x05C1, 0x05C2, 0x05C4, 0x05C5, 0x05C7]  # Hebrew points and accents
    + [*range(0x0610, 0x061B), *range(0x064B, 0x0660), 0x0670, 0x0640]  # Arabic harakat, dagger alif, tatweel
    + [*range(0x06D6, 0x06DD), *range(0x06DF, 0x06E5), 0x06E7, 0x06E8, *range(0x06EA, 0x06EE)]  # Quranic marks
    + [*range(0x0730, 0x074B)]  # Syriac points
)
"""Vowel points of abjads (Arabic harakat, Hebrew niqqud, Syriac points): optional in writing, so
``مُحَمَّد`` and ``محمد`` are one name. Marks of other scripts (Devanagari vowel signs: राम / रीमा / रूम) are
letters' parts and are kept."""
_KEEP_ALWAYS = frozenset("+#&%$@♯♭℃°€£¥©®™")
"""Symbols that distinguish names (``C++``, ``C#``, ``AT&T``, ``@openai``, ``C♯``) and are never folded."""
_BETWEEN_DIGITS = frozenset("./-:,")
"""Punctuation kept between two digits: ``Release 1.5``, ``1/5`` and ``1-5`` are different names."""


@lru_cache(maxsize=131072)
def canonical_key(name: str) -> str:
    """Key that merges surface variants of one entity name, and only those.

    NFKC, case-folded (``İstanbul`` folds to ``istanbul``); letters, digits and combining marks of every
    script kept, except the optional vowel points of abjads (``مُحَمَّد`` = ``محمد``); symbols that distinguish
    names kept (``C++``, ``C#``, ``C♯``, ``@openai``, and ``-40`` / ``1.5`` / ``1/5`` between or before digits);
    other punctuation (including ``_`` and ``-`` between words) folded to single spaces, so ``"EO_14028"``,
    ``"eo 14028"`` and ``"EO-14028."`` share one key. Names made only of punctuation keep their case-folded
    text so they still get a non-empty key.
    """
    text = unicodedata.normalize("NFKC", str(name)).casefold().replace("i\u0307", "i")
    text = "".join(ch for ch in text if ord(ch) not in _FOLDED_MARKS)
    out: list[str] = []
    n = len(text)
    for i, ch in enumerate(text):
        cat = unicodedata.category(ch)
        if cat[0] in "LMN" or ch in _KEEP_ALWAYS or cat in ("Sm", "So", "Sc"):
            out.append(ch)
            continue
        prev = text[i - 1] if i > 0 else ""
        nxt = text[i + 1] if i + 1 < n else ""
        if ch in _BETWEEN_DIGITS and prev.isdigit() and nxt.isdigit():
            out.append(ch)
        elif ch in "-−+" and nxt.isdigit() and not (prev and (prev.isalnum() or prev in "-−+")):
            out.append("-" if ch == "−" else ch)  # a sign: "-40" is not "40"
        else:
            out.append(" ")
    key = " ".join("".join(out).split())
    return key or " ".join(text.split())


_UNSTORABLE = re.compile("[\x00-\x08\x0e-\x1f\x7f\ud800-\udfff]")
"""Characters no store keeps as text: NUL and other control characters (tab, newlines and form feeds stay), and
lone surrogates (from truncated JSON or undecodable file names), which are not valid UTF-8."""


def clean_text(text: str) -> str:
    """Text every store can hold: each control character becomes a space (as :func:`canonical_key` already
    read it, so keys do not change and words are never joined), each lone surrogate U+FFFD."""
    if not _UNSTORABLE.search(text):
        return text
    return _UNSTORABLE.sub(lambda m: "\ufffd" if "\ud800" <= m.group() <= "\udfff" else " ", text)


def one_line(text: str) -> str:
    """:func:`clean_text` with whitespace (including newlines) collapsed: predicates, quotes, descriptions."""
    return " ".join(clean_text(str(text)).split())


def clean_display_name(name: str) -> str:
    """Display name: NFKC, whitespace (including newlines) collapsed, kept otherwise verbatim."""
    return " ".join(unicodedata.normalize("NFKC", clean_text(str(name))).split())


NO_VALUE_NAMES = frozenset(
    [
        *"unknown none n/a null unspecified unnamed".split(),
        *("not specified", "not mentioned", "not stated", "not given", "not known"),
    ]
)
"""What an extractor writes when it has no value, in any case ("Unknown", "N/A", "NULL")."""
PRONOUN_NAMES = frozenset(
    "someone somebody something anyone anybody anything nothing he she it they him her them his hers its their "
    "theirs we our me my you your".split()
)
"""Pronouns, placeholders only in lower case: "It" and "Her" are also titles ("us" and "i" are not listed:
an extractor that lower-cases everything would lose the US and roman numerals)."""


_NO_VALUE_KEYS = frozenset(canonical_key(n) for n in NO_VALUE_NAMES)


def is_placeholder(name: str) -> bool:
    """Whether an extracted name stands for no entity: an extractor's "unknown" / "none" / "N/A", or a
    lower-case pronoun. As an entity it would join every passage whose extractor wrote it (in MuSiQue,
    "Betrayed (1917 film) survives: unknown" linked that film to True Detective's season 2). The price: a
    work titled "Unknown" or "None" must be extracted with a qualifier ("Unknown (2011 film)") to be kept."""
    text = clean_display_name(name)
    key = canonical_key(text)  # "(unknown)", "Unknown." and "n.a." share the key the rule is about
    return key in _NO_VALUE_KEYS or (text == text.lower() and key in PRONOUN_NAMES)


MAX_NAME_CHARS = 500
"""Longest entity name kept: above the longest real name of a benchmark's OpenIE graph (measured:
evaluation/design-figures.md); a longer "name" is a paragraph an extractor put in the wrong field, and would fill the
context as a name."""


def name_problem(name: str) -> str | None:
    """Why an extracted name cannot be an entity (``"placeholder"``, ``"long_name"``), or ``None``."""
    if is_placeholder(name):
        return "placeholder"
    if len(clean_display_name(name)) > MAX_NAME_CHARS:
        return "long_name"
    return None


def shown_name(name: str, limit: int = 60) -> str:
    """A name for a report example: quoted, and cut with its length when long."""
    text = clean_display_name(name)
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


LEGAL_FORMS = frozenset(
    """inc incorporated corp corporation co company ltd limited llc llp lp plc holding holdings ag gmbh sa se nv bv as
    asa ab oy srl kk""".split()
)
"""Words that write a company's legal form, not which company it is: *Meridian Holdings* is *Meridian*, *Apple Inc.*
is *Apple*. (*Veltrix Systems* is not *Veltrix*: a descriptive word may tell two companies apart; nor is *Group*
a form: the *Stock Plan Group* is a team, not the *Stock Plan*.) Dots are ignored (*N.V.*, *S.A.*, *L.P.*)."""
_ARTICLES = ("the", "a", "an")


def legal_form_word(word: str) -> bool:
    """Whether a word is a legal form as a name writes one: capitalised, and a two-letter form in capitals or with a
    dot (*AS*, *Co.*; not the *As* of "Also Known As")."""
    bare = word.replace(".", "")
    if not word[:1].isupper() or bare.casefold() not in LEGAL_FORMS:
        return False
    return len(bare) > 2 or bare.isupper() or "." in word


def legal_form(name: str) -> bool:
    """Whether a name ends in a legal form (:func:`legal_form_word`: *Rank Holdings*, not the *Vilnius group* of
    countries) after at least one word of its own."""
    words = name.replace(",", " ").split()
    return len(words) >= 2 and legal_form_word(words[-1])


def short_form(name: str) -> str | None:
    """The name without its legal form and its article (*Amazon.com, Inc.* -> *Amazon.com*, *The Walt Disney
    Company* -> *Walt Disney*), or ``None`` when it has none."""
    if not legal_form(name) or any(ch in name for ch in "()[]"):
        return None  # "Chengdu) Co., Ltd.": a name the text broke off
    words = name.replace(",", " ").split()
    while len(words) > 1 and (legal_form_word(words[-1]) or words[-1] in ("&", "and")):
        words.pop()
    if words and words[0].casefold() in _ARTICLES:
        words = words[1:]
    if not words or legal_form_word(words[-1]) or not any(ch.isalpha() for ch in words[-1]):
        return None  # "Co. Ltd": nothing but a legal form
    return " ".join(words)


def _snake(value: str | None) -> str:
    if value is None:
        return ""
    return _SNAKE.sub("_", unicodedata.normalize("NFKD", str(value))).strip("_").upper()


def upper_snake(value: str | None) -> str:
    """``"reports to"`` -> ``"REPORTS_TO"``; empty, ``None`` or punctuation-only -> ``RELATED``.

    Only ``[A-Z0-9_]`` survive, so a hostile type such as ``"-[X]->"`` can never break rendered paths.
    """
    return _snake(value) or RELATED


def normalise_entity_type(value: str | None, default: str = DEFAULT_ENTITY_TYPE) -> str:
    """UPPER_SNAKE entity type, ``default`` when missing."""
    return _snake(value) or default


_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_EMPHASIS = re.compile(r"(?<!\w)[*_]+|[*_]+(?!\w)|`+")


def plain_markdown(text: str) -> str:
    """Inline Markdown read as plain text (``*Two*`` -> ``Two``, ``[Foo](url)`` -> ``Foo``), whitespace collapsed;
    an underscore inside a word stays (``my_module``)."""
    return " ".join(_EMPHASIS.sub("", _LINK.sub(r"\1", text)).split())


def heading_text(line: str) -> str | None:
    """The text of a Markdown ATX heading line (``## Early *life* ##`` -> ``Early life``); ``None`` for any other
    line. Read without a regular expression, which would backtrack on a long run of spaces."""
    body = line.rstrip("\r\n")
    stripped = body.lstrip(" ")
    if len(body) - len(stripped) > 3 or not stripped.startswith("#"):
        return None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and rest[0] not in " \t"):
        return None  # "#hashtag", "#######"
    rest = rest.strip(" \t")
    closing = rest.rstrip("#")
    if closing != rest and (not closing or closing[-1] in " \t"):  # an optional closing run of #
        rest = closing.rstrip(" \t")
    return plain_markdown(rest)


def heading_level(line: str) -> int:
    """How many ``#`` open a Markdown ATX heading line (0 for any other line)."""
    if heading_text(line) is None:
        return 0
    stripped = line.lstrip(" ")
    return len(stripped) - len(stripped.lstrip("#"))


def after_title(text: str, title: str | None) -> str | None:
    """``text`` after its opening line when that line writes ``title`` (a Markdown heading, ``# Title``, or the
    title line of a setext one), else ``None``: a document's first chunk names its title already."""
    wanted = " ".join(str(title or "").split()).casefold()
    if not wanted:
        return None
    first, _, rest = text.lstrip().partition("\n")
    heading = heading_text(first)
    written = heading if heading is not None else plain_markdown(first)
    return rest if written.casefold() == wanted else None
