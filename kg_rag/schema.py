"""Names, types and the relation taxonomy: how surface strings become canonical keys and typed relations.

Direction is never touched here: normalising a predicate only chooses a *type*. Passive phrasings
("superseded by", "owned by") are deliberately absent from the default pattern map, because mapping
them to the active type would silently invert the edge; they stay ``RELATED`` with the predicate kept.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

RELATED = "RELATED"
SYNONYM = "SYNONYM_OF"
"""Type of the similarity links added by entity resolution. Such edges also carry ``kind="synonym"``
and are never counted or rendered as extracted relations."""

DEFAULT_ENTITY_TYPE = "ENTITY"

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

# Normalised predicate phrase -> relation type. Only active-voice phrasings where the subject is the
# source of the typed relation; see the module docstring for why passives are left out.
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
            "directs",
            "directed",
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

_AUXILIARIES = ("is ", "was ", "are ", "were ", "has been ", "have been ", "had been ", "be ", "been ")
_NON_WORD = re.compile(r"[^\w+#&%$]+", re.UNICODE)
_SNAKE = re.compile(r"[^0-9A-Za-z]+")


def canonical_key(name: str) -> str:
    """Key that merges surface variants of one entity name.

    Unicode-normalised, case-folded, punctuation (including ``_`` and ``-``) folded to single spaces.
    ``"EO_14028"``, ``"eo 14028"`` and ``"EO-14028."`` share one key. Names made only of punctuation
    keep their case-folded text so they still get a non-empty key.
    """
    text = unicodedata.normalize("NFKC", str(name)).casefold()
    key = " ".join(_NON_WORD.sub(" ", text).replace("_", " ").split())
    return key or " ".join(text.split())


def clean_display_name(name: str) -> str:
    """Display name: NFKC, whitespace (including newlines) collapsed, kept otherwise verbatim."""
    return " ".join(unicodedata.normalize("NFKC", str(name)).split())


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


def normalise_predicate(predicate: str) -> str:
    """Lower-case phrase with leading auxiliaries removed: ``"Is located in"`` -> ``"located in"``."""
    text = " ".join(str(predicate).casefold().split())
    changed = True
    while changed:
        changed = False
        for aux in _AUXILIARIES:
            if text.startswith(aux) and len(text) > len(aux):
                text = text[len(aux) :]
                changed = True
    return text.strip(" .,:;")


@dataclass
class RelationTypeNormalizer:
    """Chooses a relation type for a predicate; never changes which end is the source.

    ``vocabulary``: allowed UPPER_SNAKE types. ``patterns``: normalised predicate phrase -> type.
    ``keep_unknown``: when a predicate matches no pattern and is not in the vocabulary, keep it as its
    own UPPER_SNAKE type (useful for LLM output that was *asked* for a type) or fall back to ``RELATED``
    (right for free-text OpenIE predicates, which would otherwise create thousands of types).
    """

    vocabulary: Iterable[str] = field(default_factory=lambda: tuple(DEFAULT_RELATION_TYPES))
    patterns: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_RELATION_PATTERNS))
    keep_unknown: bool = False

    def __post_init__(self) -> None:
        self.vocabulary = frozenset(upper_snake(v) for v in self.vocabulary) | {RELATED}
        self.patterns = {normalise_predicate(k): upper_snake(v) for k, v in dict(self.patterns).items()}

    def __call__(self, predicate: str | None) -> str:
        if predicate is None or not str(predicate).strip():
            return RELATED
        phrase = normalise_predicate(predicate)
        if phrase in self.patterns:
            return self.patterns[phrase]
        snake = upper_snake(predicate)
        if snake in self.vocabulary:
            return snake
        return snake if self.keep_unknown else RELATED
