"""A parsed passage as plain lists, read once from the spaCy ``Doc``.

Every rule reads tags, dependencies and heads many times; through spaCy's ``Token`` objects each access builds a
new object, which cost more than the parse the rules read. Here each token is an index into lists.
"""

from __future__ import annotations

from typing import Any

from kg_rag.model.relation_types import lemma


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
        "children",
        "sents",
        "sent_of",
    )

    def __init__(self, doc: Any) -> None:
        toks = list(doc)
        self.doc = doc
        self.n = len(toks)
        self.text = [t.text for t in toks]
        self.lower = [t.lower_ for t in toks]
        self.tag = [t.tag_ for t in toks]
        self.pos = [t.pos_ for t in toks]
        self.dep = [t.dep_ for t in toks]
        self.head = [t.head.i for t in toks]
        self.ent = [t.ent_type_ for t in toks]
        self.title = [t.is_title for t in toks]
        self.upper = [t.is_upper for t in toks]
        self.num = [t.like_num for t in toks]
        self.punct = [t.is_punct for t in toks]
        self.alpha = [t.is_alpha for t in toks]
        self.stop = [t.is_stop for t in toks]
        self.idx = [t.idx for t in toks]
        self.children: list[list[int]] = [[] for _ in toks]
        for i, h in enumerate(self.head):
            if h != i:
                self.children[h].append(i)
        self.sents = [(s.start, s.end) for s in doc.sents]
        self.sent_of = [0] * self.n
        for k, (a, b) in enumerate(self.sents):
            for i in range(a, b):
                self.sent_of[i] = k

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

    def left_edge(self, i: int) -> int:
        """The first token of ``i``'s subtree."""
        edge = i
        todo = [i]
        while todo:
            j = todo.pop()
            edge = min(edge, j)
            todo.extend(c for c in self.children[j] if c < j)
        return edge

    def span_text(self, start: int, end: int) -> str:
        """The text of tokens ``[start, end)`` as written."""
        if end <= start:
            return ""
        last = end - 1
        return self.doc.text[self.idx[start] : self.idx[last] + len(self.text[last])]

    def ancestors(self, i: int) -> list[int]:
        out = []
        while self.head[i] != i and len(out) < self.n:
            i = self.head[i]
            out.append(i)
        return out
