"""A parsed passage as plain lists, read once from the spaCy ``Doc``; and the masking of codes before parsing.

Every rule reads tags, dependencies and heads many times; through spaCy's ``Token`` objects each access builds a
new object, which cost more than the parse the rules read. Here each token is an index into lists.

Codes (``IR-2023-14``, ``Directive 2019-03``, ``EO 14028``) are what policies and filings name things by, and a small
tagger reads their digits and hyphens as punctuation and numbers, which breaks the parse of the whole sentence
("supersedes" becomes a plural noun). They are masked before parsing by a capitalised word of the same length
(``Qxxxxxx``), which the tagger reads as the proper noun a code is, and every text is read back from the original
at the same offsets. So are the other words a small tagger misreads inside names: a lower-case system name
(``payments-api``), a regnal *I* (``Elizabeth I``, read as the pronoun) and a capitalised number word that
designates (``Policy Two``, read as a count).
"""

from __future__ import annotations

import re
from typing import Any

from kg_rag.model.lemmas import lemma
from kg_rag.model.names import DEFAULT_RELATION_PATTERNS, heading_text, plain_markdown

_CODE = re.compile(
    r"(?<![\w-])[A-Z][A-Za-z]{0,7}-\d+(?:[-/.]\d+)*(?![\w-])"  # IR-2023-14, POL-7, COVID-19
    r"|(?<=[A-Za-z] )\d+(?:[-/.]\d+)*(?:/[A-Z]{1,4})?(?![\w/-])"  # Directive 2019-03, Release 1.5.2, 95/46/EC
)
_DESIGNATOR = re.compile(r"([A-Za-z][\w.]*)\s$")
_NOT_DESIGNATORS = frozenset(
    """january february march april may june july august september october november december jan feb mar apr jun jul
    aug sep sept oct nov dec in on at by from to since until before after around about over under between and or of
    the a an for with during than as per circa nearly approximately some only just almost all every each top than
    page pages figure table no number""".split()
)


def _listed(text: str, end: int) -> bool:
    """Whether a plain number is followed by another name or number (``Germany 1690 Barclays England 1692``: a table
    flattened into text) rather than by running prose (``Statute 2021 revokes ...``)."""
    rest = text[end : end + 3].lstrip()
    return bool(rest) and (rest[0].isupper() or rest[0].isdigit())


def mask_codes(text: str) -> str:
    """``text`` with each code replaced by a capitalised word of the same length (see the module docstring); a
    number after a month or a preposition (``March 2019-03``, ``in 1990-91``) is left alone."""

    def masked(m: re.Match[str]) -> str:
        word = m.group()
        if word[0].isdigit():
            before = _DESIGNATOR.search(text, max(0, m.start() - 30), m.start())
            designator = before.group(1) if before is not None else ""
            if (
                not designator[:1].isupper()
                or designator.casefold() in _NOT_DESIGNATORS
                or designator.casefold().endswith("ly")
                or (
                    "." not in word
                    and "-" not in word
                    and "/" not in word
                    and (len(word) < 2 or _listed(text, m.end()))
                )
            ):
                return word
        return "Q" + "x" * (len(word) - 1)

    if " I" in text:
        text = _REGNAL.sub(_regnal, text)
    text = _NUMBERED.sub(_numbered, text)
    if "-" in text or "_" in text:
        text = _IDENTIFIER.sub(
            lambda m: "Q" + "x" * (len(m.group()) - 1) if _identifier(m.group()) else m.group(), text
        )
    return _CODE.sub(masked, text) if any(ch.isdigit() for ch in text) else text


_IDENTIFIER = re.compile(r"(?<![\w/.-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w/-])")
"""A lower-case word in hyphenated or underscored parts; :func:`_identifier` says whether it names a system."""


def _identifier(word: str) -> bool:
    """Whether a lower-case hyphenated or underscored word is a system's name (``payments-api``, ``us-east-1``,
    ``auth_service``, ``ec2-prod``): an underscore, a part with letters and digits, three parts one of them a
    number, or a last part that names a kind of software — not an English compound (``long-term``, ``e-mail``,
    ``pre-1990``, ``top-10``, ``under-21``)."""
    parts = re.split(r"[-_]", word)
    mixed = any(
        any(ch.isdigit() for ch in w) and any(ch.isalpha() for ch in w) and not _DECADE.fullmatch(w) for w in parts
    )
    if parts[0] in _PREFIXES:
        return False  # "post-covid-19", "co-worker", "mid-2000s": an English prefix
    numbered = len(parts) >= 3 and any(w.isdigit() for w in parts)
    kind = parts[-1] in SYSTEM_KINDS and parts[0] not in _NOT_SYSTEMS
    return "_" in word or mixed or numbered or kind


_DECADE = re.compile(r"\d+(?:s|st|nd|rd|th)")
_NOT_SYSTEMS = frozenset(
    "self full multi cross in on off end customer social public civil military community national secret field".split()
)
"""First parts of English compounds with a software-kind word ("customer-service", "self-service")."""
_PREFIXES = frozenset("pre post mid non anti ex co re sub semi over under".split())


SYSTEM_KINDS = frozenset(
    """api apis service svc server db database cache queue gateway proxy cluster app bucket lambda cron daemon
    broker backend frontend sdk cli plugin bot pipeline""".split()
)
"""Last parts of a hyphenated name that say it names a system ("checkout-service", "payments-api")."""


_NUMBERED = re.compile(r"(?<=[a-z] )(?:One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Eleven|Twelve)\b")
"""A capitalised number word after a word (:func:`_numbered` checks that the word is capitalised): its designator
("Policy Two", "Formula One", "World War Two"), masked as a code: the tagger reads a bare *Two* as a count, and the
name loses its number."""


def _word_before(m: re.Match[str]) -> str:
    """The word before a match (the patterns ask for one and a space)."""
    words = m.string[max(0, m.start() - 40) : m.start() - 1].split()
    return words[-1] if words else ""


def _named_before(word: str) -> bool:
    """Whether a word may be a name's first part: capitalised, and no word a pronoun or count follows ("When I")."""
    return word[:1].isupper() and word.isalpha() and word.casefold() not in _BEFORE_PRONOUN


def _numbered(m: re.Match[str]) -> str:
    named = _named_before(_word_before(m))
    return "Q" + "X" * (len(m.group()) - 1) if named else m.group()


_REGNAL = re.compile(r"(?<=[a-z]{2} )I(?=[\s,;:)’']|\.(?!\s+[A-Z])|$)")
_NUMERAL_NEXT = re.compile(r"\s*(?:[,;:)’']|\.|$|(?:of|and|or|as)\b)")
"""What follows a regnal *I* and never the pronoun: punctuation, "of", "and", "as" ("King Albert I of Belgium",
"Nicholas I, Lord of Mecklenburg", "executed by Elizabeth I.")."""
_THIRD_PERSON = re.compile(r"\s+(?:was|is|had|has|became|died|reigned|ruled|succeeded|married|was)\b")
"""Verbs after which an *I* opening a sentence after a name is a numeral: "Elizabeth I was", "Charles I died";
the pronoun says "I am", "I have", and "Sunday I was" opens with no name."""


def _regnal(m: re.Match[str]) -> str:
    """A regnal numeral ``I`` after a given name ("Elizabeth I was the daughter of") as ``V``: the tagger reads a
    lone *I* as the pronoun, which leaves the sentence without its subject, and *V* (Henry V) as the numeral it
    is. Only where the pronoun cannot stand: before punctuation, "of", "and" or "as", or opening a sentence with a
    name and a third-person verb ("Charles I was executed"). "On Monday I visited", "At Microsoft I led", "Paris
    I loved" keep their pronoun."""
    text = m.string
    before = _word_before(m)
    if not _named_before(before):
        return "I"
    if _NUMERAL_NEXT.match(text, m.end()):
        return "V"
    at = m.start() - 1 - len(before)
    opens = at <= 0 or text[:at].rstrip()[-1:] in ("", ".", "!", "?", "\n") or text[at - 1] == "\n"
    weekday = before.casefold() in _TIME_WORDS
    return "V" if opens and not weekday and _THIRD_PERSON.match(text, m.end()) else "I"


_TIME_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday today tonight yesterday tomorrow""".split()
)


_BEFORE_PRONOUN = frozenset(
    """when then if as so and but or now here there today yesterday tomorrow sometimes later finally first
    because since although though while once after before until unless where what which who that than yes no
    perhaps maybe indeed also still yet thus hence meanwhile afterwards instead otherwise besides""".split()
)


_LINE_BREAK = re.compile(r"(?<=[^\n])\n(?=[^\n])")
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
WRAPPED = 60
"""Length from which a Markdown line counts as wrapped prose (wrapping fills lines to 70-120 characters); a
shorter line before a capital ended on purpose."""
_LIST_ITEM = re.compile(r"\s*(?:[-*+\u2022|]|\d{1,3}[.)])\s")


def list_item(text: str, at: int) -> int | None:
    """Where the item's text starts when the line holding position ``at`` is a list item (``- ``, ``* ``, ``1. ``;
    a table row too), else ``None``."""
    m = _LIST_ITEM.match(text, text.rfind("\n", 0, at) + 1)
    return m.end() if m is not None else None


def hide_title_heading(text: str, title: str | None) -> str:
    """``text`` with each Markdown heading that writes ``title`` blanked (spaces of the same length; an ATX ``#``
    line, or a setext line and its row of ``=``): the document's title is its topic, not a sentence — parsed,
    ``# Kevin Durant`` would be a mention of its own beside the "Kevin Wayne Durant" the first sentence writes,
    and the name the body writes (``Johnnycake`` under ``# Johnnycake, West Virginia``) would lose to the
    heading's. Line endings are kept."""
    if not title or not ("#" in text or "=" in text):
        return text
    wanted = " ".join(title.split()).casefold()
    lines = text.splitlines(keepends=True)
    out = list(lines)
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        heading = heading_text(body)
        if heading is not None and heading.casefold() == wanted:
            out[i] = " " * len(body) + line[len(body) :]
        elif i + 1 < len(lines) and plain_markdown(body).casefold() == wanted:
            under = lines[i + 1].rstrip("\r\n")
            if under.strip() and set(under.strip()) == {"="} and len(under) - len(under.lstrip(" ")) <= 3:
                out[i] = " " * len(body) + line[len(body) :]
                out[i + 1] = " " * len(under) + lines[i + 1][len(under) :]
    return "".join(out)


def unwrap_lines(text: str, *, prose: bool = False) -> str:
    """``text`` with each line break that continues a sentence read as a space (the same length): a line that
    does not end a sentence, followed by one that starts with a lower-case word, is hard-wrapped prose, and a line
    break left in it breaks the parse. Other line breaks stay — in a PDF's cover page or a flattened table they
    are where one name ends and the next begins — and the pipeline ends a sentence at the ones the layout marks
    (:func:`kg_rag.ingest.nlp.loading.line_breaks`). In ``prose`` (Markdown, whose paragraphs are wrapped at will:
    a line break inside one is a space) a full line (:data:`WRAPPED`) that goes on with a capital is joined too:
    "the Site" / "Reliability team" is one name. A short line ended on purpose ("Owner: Jane Smith"), as does a
    Markdown hard break (two trailing spaces or a backslash), a table row and a fenced code block."""
    if "\n" not in text:
        return text
    fences = [m.start() for m in _FENCE.finditer(text)] if prose else []

    def joined(m: re.Match[str]) -> str:
        start = text.rfind("\n", 0, m.start()) + 1
        raw = text[start : m.start()]
        line = raw.rstrip()
        if not line or line[-1] in ".:;!?" or line.lstrip().startswith(("#", "|")) or _LIST_ITEM.match(text, m.end()):
            return "\n"
        if prose and (sum(f < m.end() for f in fences) % 2 or _FENCE.match(text, m.end())):
            return "\n"  # a fenced code block, or its fence: code, not prose
        nxt = text[m.end()]
        if nxt.islower():
            return " "
        capital = nxt.isalnum() or nxt in "\"'(“‘"
        if not prose or not capital or len(line) < WRAPPED or raw.endswith(("  ", "\\")) or "|" in line:
            return "\n"
        return " "

    return _LINE_BREAK.sub(joined, text)


_BLANK_LINES = re.compile(r"\n[ \t\r]*\n\s*")


def blocks(text: str) -> list[str]:
    """``text`` cut after each run of blank lines: its paragraphs, headings and lists, each with the blank lines
    that end it (joined, the pieces are ``text``). Each is parsed on its own: the tagger reads a word in the light
    of its neighbours, across a blank line too, and under "## Ownership" and a blank line it read "In 2016 Veltrix
    was acquired by ..." with *Veltrix* as the object of *In* (the sentence lost its subject); after a paragraph
    ending "... makes sensors." the same sentence gave nothing at all."""
    out, last = [], 0
    for m in _BLANK_LINES.finditer(text):
        if m.end() < len(text):
            out.append(text[last : m.end()])
            last = m.end()
    out.append(text[last:])
    return out


def paragraph_start(text: str, at: int) -> bool:
    """Whether position ``at`` starts a paragraph: a blank line or a heading line stands before its line."""
    start = text.rfind("\n", 0, at)
    if start < 0 or text[start + 1 : at].strip():
        return False
    before = text.rfind("\n", 0, start)
    previous = text[before + 1 : start]
    return not previous.strip() or previous.lstrip().startswith("#")


def layout_break(text: str, at: int) -> bool:
    """Whether the line break at ``at`` in ``text`` ends a sentence whatever the parser reads: a paragraph break
    (a blank line), the end of a Markdown heading, or the start of a list item or a table row."""
    start = text.rfind("\n", 0, at) + 1
    end = at
    while end < len(text) and text[end] in " \t\r\n":
        end += 1
    if text.count("\n", at, end) >= 2:
        return True
    return text[start:at].lstrip().startswith("#") or bool(_LIST_ITEM.match(text, at + 1))


class Parse:
    """Token ``i``'s text, lower-cased text, tag, coarse part of speech, dependency label, head index, lemma,
    recognised-entity type, and flags; ``children[i]`` its dependents in order; ``sents`` the sentences' token
    ranges; ``sent_of[i]`` the index of its sentence."""

    __slots__ = (
        "doc",
        "n",
        "text",
        "lower",
        "tag",
        "pos",
        "dep",
        "head",
        "ent",
        "title",
        "upper",
        "num",
        "punct",
        "alpha",
        "stop",
        "idx",
        "source",
        "masked",
        "children",
        "sents",
        "sent_of",
    )

    def __init__(self, doc: Any, source: str | None = None) -> None:
        """``source``: the text before :func:`mask_codes` (the same length), which every text is read from."""
        toks = list(doc)
        self.doc = doc
        self.n = len(toks)
        self.source = source if source is not None and len(source) == len(doc.text) else doc.text
        self.idx = [t.idx for t in toks]
        if self.source is doc.text:
            self.text = [t.text for t in toks]
            self.masked = [False] * self.n
        else:
            self.text = [self.source[i : i + len(t.text)] for i, t in zip(self.idx, toks)]
            self.masked = [a != t.text for a, t in zip(self.text, toks)]
        # a one-letter designator read as an initial, its full stop with it ("Policy A." ending the text or its line,
        # a masked regnal "Elizabeth V."): the stop ends the sentence and is no part of the name
        for i, t in enumerate(self.text):
            if len(t) == 2 and t[0].isupper() and t[1] == ".":
                if self.masked[i] or self.source[self.idx[i] + 2 : self.idx[i] + 3] in ("", "\n"):
                    self.text[i] = t[0]
        self.lower = [t.lower() for t in self.text]
        self.tag = [t.tag_ for t in toks]
        self.pos = [t.pos_ for t in toks]
        self.dep = [t.dep_ for t in toks]
        self.head = [t.head.i for t in toks]
        self.ent = [t.ent_type_ for t in toks]
        self.title = [t.is_title for t in toks]
        self.upper = [t.is_upper for t in toks]
        self.num = [t.like_num for t in toks]
        # a quote mark is punctuation, the backtick pair of LaTeX-style quotes (``Roman Peace '') too: spaCy tags
        # a backtick as an opening quote but does not call it punctuation, and names would start with it
        self.punct = [t.is_punct or t.tag_ in ("``", "''") for t in toks]
        self.alpha = [t.is_alpha for t in toks]
        self.stop = [t.is_stop for t in toks]
        self.children: list[list[int]] = []
        self._link()
        if self._mend_verbs():
            self._link()
        if self._mend_clauses():
            self._link()
        if self._mend_as():
            self._link()
        self.sents = [(s.start, s.end) for s in doc.sents]
        self.sent_of = [0] * self.n
        for k, (a, b) in enumerate(self.sents):
            for i in range(a, b):
                self.sent_of[i] = k

    def _link(self) -> None:
        self.children = [[] for _ in range(self.n)]
        for i, h in enumerate(self.head):
            if h != i:
                self.children[h].append(i)

    def _mend_verbs(self) -> bool:
        """Re-attach a second verb the tagger read as a plural noun joined to the first verb's object: "X leads
        the team and reports to Y" is parsed as *the team and reports*. The shape decides, not a word list: a
        bare plural (no article, modifier or number) after *and*, joined to the object of a verb (or of its
        preposition: "is chaired by Helen Park, a director, and reports to") in the third person singular, with a
        preposition governing a name -- the verb's own agreement, which a plural noun conjoined to the object would
        not need."""
        mended = False
        for t in range(1, self.n):
            h = self.head[t]
            v = self.head[h]
            if self.dep[h] == "pobj" and self.dep[v] in ("prep", "agent"):  # "is chaired by Helen Park, ..., and
                v = self.head[v]  # reports to": the object of the verb's preposition
            elif self.dep[h] != "dobj":
                continue
            if not (
                self.dep[t] == "conj"
                and self.tag[t] == "NNS"
                and self.lower[t - 1] == "and"
                and self.pos[v] in ("VERB", "AUX")
                and (self.tag[v] == "VBZ" or any(self.tag[a] == "VBZ" for a in self.kids(v, "aux", "auxpass")))
                and not self.kids(t, "det", "amod", "compound", "poss", "nummod")
            ):
                continue
            preps = [p for p in self.kids(t, "prep") if self.lower[p] not in ("of", "between")]  # "contacts
            # between", "rights of": a noun's
            # "heads the office and reports to Y" with *to* hung on *heads*: the preposition right after the plural
            # is the plural's when the two are a verb phrase the curated vocabulary knows ("reports to", "belongs
            # to"); "sells laptops and tablets to Walmart" is parsed the same, and there *to* is the seller's
            k = t + 2 if t + 2 < self.n and self.tag[t + 1] == "RB" else t + 1  # "reports directly to"
            hung = (
                k < self.n
                and self.dep[k] == "prep"
                and self.head[k] == v
                and f"{self.lower[t]} {self.lower[k]}" in DEFAULT_RELATION_PATTERNS
            )
            if hung:
                preps.append(k)
            if not any(self.pos[o] == "PROPN" for prep in preps for o in self.kids(prep, "pobj")):
                continue
            self.pos[t], self.tag[t], self.head[t] = "VERB", "VBZ", v
            if hung:
                self.head[k] = t
            mended = True
        return mended

    def _mend_clauses(self) -> bool:
        """Give a that-less complement clause its subject back: "knowledge states the southernmost point of Africa
        is Cape Agulhas" is parsed with *the point* as the object of *states* and *is* as a clause with no
        subject. The shape decides: a finite verb of a complement clause with no subject of its own, right after
        the object of the verb it complements -- a clause needs a subject, and the noun just before it is the one
        the parse took away."""
        mended = False
        for c in range(1, self.n):
            h = self.head[c]
            if self.dep[c] != "ccomp" or h >= c or self.tag[c] not in ("VBZ", "VBD", "VBP"):
                continue
            if any(self.dep[k] in ("nsubj", "nsubjpass", "expl", "csubj") for k in self.children[c]):
                continue
            obj = next((o for o in self.children[h] if self.dep[o] == "dobj" and o < c), None)
            if obj is None or self.right_edge(obj) != c - 1:
                continue
            self.dep[obj], self.head[obj] = "nsubj", c
            mended = True
        return mended

    def _mend_as(self) -> bool:
        """Hang on the verb an "as" the parse hung on the verb's named object: "succeeded F. W. de Klerk as
        President of South Africa" says in which role the verb was done, and a name takes no "as" of its own."""
        mended = False
        for a in range(2, self.n):
            o = self.head[a]
            if self.lower[a] != "as" or self.dep[a] != "prep" or o >= a or self.dep[o] != "dobj":
                continue
            if self.pos[o] == "PROPN" and self.pos[self.head[o]] == "VERB":
                self.head[a] = self.head[o]
                mended = True
        return mended

    def lemma(self, i: int) -> str:
        """The lemma of token ``i`` (simplemma, cached: the pipeline's own lemmatizer is not run)."""
        return lemma(self.lower[i])

    def kids(self, i: int, *deps: str) -> list[int]:
        """The dependents of ``i`` with one of ``deps`` (all of them when none is given)."""
        if not deps:
            return self.children[i]
        return [c for c in self.children[i] if self.dep[c] in deps]

    def kid(self, i: int, *deps: str) -> int | None:
        """The first dependent of ``i`` with one of ``deps``."""
        for c in self.children[i]:
            if self.dep[c] in deps:
                return c
        return None

    def sent_start(self, i: int) -> int:
        return self.sents[self.sent_of[i]][0]

    def sent_end(self, i: int) -> int:
        return self.sents[self.sent_of[i]][1]

    def is_sent_start(self, i: int) -> bool:
        return self.sent_start(i) == i

    def span_head(self, start: int, end: int) -> int:
        """The token of ``start:end`` whose head lies outside it (the span's head in the parse; the last token
        when the parse joins none to the rest)."""
        return next((k for k in range(start, end) if not (start <= self.head[k] < end)), end - 1)

    def left_edge(self, i: int) -> int:
        """The first token of ``i``'s subtree."""
        return self._subtree_edge(i, last=False)

    def right_edge(self, i: int) -> int:
        """The last token of ``i``'s subtree."""
        return self._subtree_edge(i, last=True)

    def _subtree_edge(self, i: int, *, last: bool) -> int:
        edge = i
        todo = [i]
        while todo:
            j = todo.pop()
            edge = max(edge, j) if last else min(edge, j)
            todo.extend(c for c in self.children[j] if (c > j) == last)
        return edge

    def span_text(self, start: int, end: int) -> str:
        """The text of tokens ``[start, end)`` as written."""
        if end <= start:
            return ""
        last = end - 1
        return self.source[self.idx[start] : self.idx[last] + len(self.text[last])]

    def ancestors(self, i: int) -> list[int]:
        out: list[int] = []
        while self.head[i] != i and len(out) < self.n:
            i = self.head[i]
            out.append(i)
        return out
