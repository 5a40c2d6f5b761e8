"""Does the graph half show the chain that answers? Chain metrics from MuSiQue's ``question_decomposition``.

A multi-hop question is answered by a chain of steps, each with its answer: "Hello Love >> performer" -> *Hank
Snow*, "What city did #1 live when he died?" -> *Tennessee*, ... A step starts from the answers of the steps it
refers to (``#1``), or, when it refers to none, from what it names: the subject of a knowledge-base step
(``Hello Love >> performer``) or the names written in its question. Each step is a *hop* from those entities to
its answer (the last step's answer with its aliases).

- **chain coverage**: the share of a question's hops whose two ends are joined in the context's graph half — by
  a relationship row or a step of a shown path, or by two of them through one entity (OpenIE often states a hop
  in two: ``Hank Snow -[DIED_IN]-> Madison`` and ``Madison -[LOCATED_IN]-> Tennessee``);
- **complete chains**: the share of questions with every hop covered;
- **rows on the chain**: the share of shown relationship rows whose two ends are the two ends of a hop;
- **shown relations on the chain**: the same over every relation the graph half shows, as a row or a step of a
  path (each once);
- **chain reachable**: the share of hops the relations of the returned passages join (the same rule): the
  coverage a perfect choice of rows from them would reach.

An entity stands for a chain element when the element's words occur in its name as whole words (SQuAD
normalisation, as answer-in-context; ``Tennessee`` in *Nashville, Tennessee*), or, for two words or more, in order
with others between (``Barry Wesson`` in *Barry Jarvis Wesson*); the element may be written with a leading
preposition (``in London``) or an encyclopedia qualifier (``Johnnycake, West Virginia`` -> *Johnnycake*). An
entity stands for what a step's question names when its name — not only function words — is written in the
question (as written when the question uses capitals; in any case when it is all lower case).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kg_rag.eval.metrics import answer_in_text, normalise_answer
from kg_rag.model.predicates import FUNCTION_WORDS, PREPOSITIONS, tokens
from kg_rag.query.senses import title_sense

CHAIN_METRICS = ("chain_coverage", "chain_complete", "chain_rows", "chain_shown", "chain_reachable")
"""The chain metrics (see the module docstring); ``None`` for chunk-only methods and questions without steps."""

HOP_EDGES = 2
"""A hop is joined by at most this many edges of the context (one entity between its ends)."""

_REF = re.compile(r"#(\d+)")


@dataclass(frozen=True)
class Hop:
    """One step of a question's chain: from ``sources`` (names, or ``text`` whose written names count) to
    ``targets`` (the step's answer, with its aliases for the last step)."""

    sources: tuple[str, ...]
    targets: tuple[str, ...]
    text: str = ""
    """The step's question when it refers to no earlier step and has no ``>>`` subject: the names it writes."""


def question_hops(item: dict[str, Any]) -> list[Hop]:
    """The hops of a MuSiQue question (``question_decomposition`` with ``question`` and ``answer`` per step);
    an empty list when it has none or a step cannot be read."""
    steps = [s for s in item.get("question_decomposition") or [] if isinstance(s, dict)]
    answers: list[str] = [str(s.get("answer", "")).strip() for s in steps]
    if not steps or not all(answers):
        return []
    final = (answers[-1], *(str(a) for a in item.get("answer_aliases") or [] if str(a).strip()))
    hops = []
    for n, step in enumerate(steps):
        question = str(step.get("question", ""))
        refs = [int(r) for r in _REF.findall(question)]
        if any(r < 1 or r > n for r in refs):
            return []
        targets = final if n == len(steps) - 1 else (answers[n],)
        if refs:
            hops.append(Hop(tuple(dict.fromkeys(answers[r - 1] for r in refs)), targets))
        elif ">>" in question:
            hops.append(Hop((question.split(">>", 1)[0].strip(),), targets))
        else:
            hops.append(Hop((), targets, question))
    return hops


def _variants(element: str) -> list[str]:
    """An element; without a leading preposition (an answer written "in London" names *London*); and, when it
    is an encyclopedia title, its name without the qualifier."""
    out = [element]
    first, _, rest = element.strip().partition(" ")
    if first.lower() in PREPOSITIONS and rest.strip():
        out.append(rest.strip())
    for text in list(out):
        if title_sense(text):
            base = re.split(r" \(|, ", text, maxsplit=1)[0].strip()
            if base and base != text:
                out.append(base)
    return out


def writes(text: str, elements: Iterable[str]) -> bool:
    """Whether a passage's text writes one of the chain elements (an element or a variant of it, whole words, as
    :func:`stands_for` reads an entity's name): where a hop's ends are written, whether or not a relation joins
    them (``evaluation/chain_misses.py``)."""
    return any(answer_in_text([v], text) for element in elements for v in _variants(element))


def _in_order(words: list[str], name: list[str]) -> bool:
    """Whether ``words`` occur in ``name`` in this order (others between): *Barry Wesson* in *Barry Jarvis
    Wesson*."""
    it = iter(name)
    return all(w in it for w in words)


def stands_for(name: str, elements: Iterable[str]) -> bool:
    """Whether an entity name stands for one of the chain elements (see the module docstring)."""
    elements = list(elements)
    if writes(name, elements):
        return True
    written = normalise_answer(name).split()
    for element in elements:
        for v in _variants(element):
            words = normalise_answer(v).split()
            if len(words) >= 2 and _in_order(words, written):
                return True
    return False


def written_in(name: str, text: str) -> bool:
    """Whether a name that is not only function words is written in a step's question (as written when the
    question uses capitals beyond its first letter; in any case when it is lower case)."""
    words = tokens(name)
    if not words or all(w in FUNCTION_WORDS for w in words):
        return False
    caseless = text[1:] == text[1:].lower()
    pattern = r"(?<!\w)" + r"\W+".join(re.escape(w) for w in re.findall(r"\w+", name)) + r"(?!\w)"
    return re.search(pattern, text, 0 if not caseless else re.IGNORECASE) is not None


Edge = tuple[str, str, str]
"""``(source name, target name, relation id)``."""


def _ends(hop: Hop, names: Iterable[str]) -> tuple[set[str], set[str]]:
    """The names (among ``names``) that stand for the hop's sources and for its targets."""
    names = set(names)
    if hop.text:
        sources = {n for n in names if written_in(n, hop.text)}
    else:
        sources = {n for n in names if stands_for(n, hop.sources)}
    return sources, {n for n in names if stands_for(n, hop.targets)}


def joined(hop: Hop, edges: Sequence[Edge]) -> bool:
    """Whether ``edges`` (either way round) join the hop's ends, directly or through one entity."""
    names = {x for a, b, _ in edges for x in (a, b)}
    sources, targets = _ends(hop, names)
    if not sources or not targets:
        return False
    if sources & targets:  # one entity stands for both (the answer is written in the subject's name)
        return True
    near: dict[str, set[str]] = {}
    for a, b, _ in edges:
        near.setdefault(a, set()).add(b)
        near.setdefault(b, set()).add(a)
    reach = set().union(*(near.get(s, set()) for s in sources))
    if reach & targets:
        return True
    if HOP_EDGES < 2:
        return False
    return any(near.get(m, set()) & targets for m in reach)


def on_chain(hops: Sequence[Hop], edges: Sequence[Edge]) -> set[str]:
    """The relation ids among ``edges`` whose two ends are the two ends of a hop (either way round)."""
    names = {x for a, b, _ in edges for x in (a, b)}
    out = set()
    for hop in hops:
        sources, targets = _ends(hop, names)
        for a, b, rid in edges:
            if (a in sources and b in targets) or (b in sources and a in targets):
                out.add(rid)
    return out


def context_edges(result: Any, formatted: Any) -> tuple[list[Edge], list[Edge]]:
    """The relationship rows shown and the steps of the paths shown, as :data:`Edge`\\ s."""
    by_id = {r.relation_id: r for r in result.relations}
    rows = [(by_id[r].source, by_id[r].target, r) for r in formatted.relations if r in by_id]
    names = result.names
    steps = [
        (names.get(s.source, s.source), names.get(s.target, s.target), s.relation_id)
        for i in formatted.paths
        for s in result.paths[i].steps
    ]
    return rows, steps


def chain_metrics(
    hops: Sequence[Hop], result: Any, formatted: Any, stated: Sequence[Edge] | None = None
) -> dict[str, float]:
    """The chain metrics of one question's context (NaN where undefined: no hops, no rows, no ``stated``)."""
    nan = math.nan
    if not hops:
        return dict.fromkeys(CHAIN_METRICS, nan)
    rows, steps = context_edges(result, formatted)
    shown = rows + steps
    covered = [joined(h, shown) for h in hops]
    chain_rows = on_chain(hops, rows)
    distinct = list({rid: (a, b, rid) for a, b, rid in shown}.values())
    return {
        "chain_coverage": sum(covered) / len(hops),
        "chain_complete": float(all(covered)),
        "chain_rows": len(chain_rows) / len(rows) if rows else nan,
        "chain_shown": len(on_chain(hops, distinct)) / len(distinct) if distinct else nan,
        "chain_reachable": (sum(joined(h, list(stated) + shown) for h in hops) / len(hops))
        if stated is not None
        else nan,
    }
