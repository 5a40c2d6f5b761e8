"""``chain``: greedy evidence chains over chunks linked by shared entities (the recommended strategy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kg_rag.arrays import unique_ints
from kg_rag.index.lexical import tokenize
from kg_rag.model.names import canonical_key
from kg_rag.query.senses import common_noun, title_sense
from kg_rag.query.strategies.base import Strategy, StrategyInput, StrategyOutput, check_number, register_strategy
from kg_rag.store.base import Pairs

if TYPE_CHECKING:
    from kg_rag.query.workspace import Workspace

I64 = np.int64


def link_specificity(mention_counts: np.ndarray, k: float) -> np.ndarray:
    """Per-entity link strength ``min(1, k / (other chunks mentioning it))``: an entity shared by two chunks
    links them fully; one mentioned in hundreds of chunks (a country, "film") barely links anything."""
    others = np.maximum(np.asarray(mention_counts, dtype=np.float32) - 1.0, 1.0)
    return np.minimum(1.0, k / others).astype(np.float32)


def filtered_walk(ws: Workspace) -> bool:
    """Whether type or direction filters narrow how the graph may be walked."""
    return ws.edge_filter.restricts_types or ws.edge_filter.direction != "both"


def walk_entities(ws: Workspace, chunk: int) -> np.ndarray:
    """The entities a picked chunk links onward through: all it mentions, or — under type or direction
    filters — the ends of the allowed relations it states, on the permitted side."""
    if not filtered_walk(ws):
        return unique_ints(ws.chunk_entities(np.asarray([chunk], dtype=I64)).right)
    ef = ws.edge_filter
    _, edges = ws.view.chunk_relations(np.asarray([chunk], dtype=I64), ef)
    sides = []
    if ef.direction in ("out", "both"):
        sides.append(edges.dst)
    if ef.direction in ("in", "both"):
        sides.append(edges.src)
    return np.unique(np.concatenate(sides)) if sides else np.zeros(0, I64)


def without_kinds(
    ws: Workspace, entities: np.ndarray, question_words: frozenset[str], through_edges: bool = False
) -> np.ndarray:
    """The entities minus the kinds: names with no capital and no digit ("unincorporated community",
    "snowfall", see :func:`~kg_rag.query.senses.common_noun`). A kind picks out one thing only within one
    passage, so two passages that share it are about two things of that kind — *Johnnycake* and *Klondike* are
    both unincorporated communities — and a link through it leads to a sibling, not to the next hop (paths
    never join at a kind either: :func:`~kg_rag.query.senses.same_thing`). A kind the question itself writes
    ("the snowfall in the city ...") still links: the passages about it are what the question asks for. When
    none of the entities has a capital, the extraction does not write case, and all are kept. Only the
    entities of more than one chunk are read (the others link nothing), unless all of those are kinds, or links
    also follow relation edges (``through_edges``: an entity of one chunk then links through its relations)."""
    if entities.size == 0:
        return entities
    linking = np.arange(entities.size) if through_edges else np.flatnonzero(ws.mention_counts(entities) > 1)
    if linking.size == 0:
        return entities
    names = ws.view.names(entities[linking])
    kind = [n is not None and common_noun(n) for n in names]
    if all(kind):  # a caseless extraction, unless an entity of this chunk alone has a capital
        alone = np.setdiff1d(np.arange(entities.size), linking)
        if all(n is not None and common_noun(n) for n in ws.view.names(entities[alone])):
            return entities
    keep = np.ones(entities.size, dtype=bool)
    keep[linking] = [
        not k or (bool(words := set(tokenize(n or ""))) and words <= question_words) for n, k in zip(names, kind)
    ]
    return entities[keep]


def walk_continuations(ws: Workspace, entities: np.ndarray) -> Pairs:
    """Under filters: ``(entity, chunk)`` for the chunks that state an allowed relation continuing the walk
    from the entity (as its source for ``out``, its target for ``in``, either for ``both``)."""
    ef = ws.edge_filter
    edges = ws.view.edges_of(entities, ef)
    members = set(entities.tolist())
    ends: list[int] = []
    keep: list[int] = []
    for i, (a, b) in enumerate(zip(edges.src.tolist(), edges.dst.tolist())):
        if ef.direction in ("out", "both") and a in members:
            ends.append(a)
            keep.append(i)
        if ef.direction in ("in", "both") and b in members:
            ends.append(b)
            keep.append(i)
    if not keep:
        return Pairs.empty()
    ids = edges.ids[np.asarray(keep, dtype=I64)]
    evidence = ws.view.relation_chunks(np.unique(ids))
    end_of: dict[int, list[int]] = {}
    for e, end in zip(ids.tolist(), ends):
        end_of.setdefault(e, []).append(end)
    left = [end for e in evidence.left.tolist() for end in end_of.get(e, [])]
    right = [c for e, c in zip(evidence.left.tolist(), evidence.right.tolist()) for _ in end_of.get(e, [])]
    return Pairs(np.asarray(left, dtype=I64), np.asarray(right, dtype=I64))


def named_passages(
    ws: Workspace, proper: frozenset[int], walk_filtered: bool, included: frozenset[int] = frozenset()
) -> dict[int, frozenset[int]]:
    """Local chunk position -> the specific proper-named question entities it mentions (under type or
    direction filters: states an allowed relation of). An entity is specific when at most twice as many chunks
    as are returned mention it — a name that many passages share ("France") pins down none of them — unless
    the caller included it: then a passage about it is wanted whatever its specificity (so every chunk that
    mentions a very common included entity is scored — the price of asking for it)."""
    blocked = ws.edge_filter.blocked
    ents = np.asarray(sorted(e for e in proper | included if e not in blocked), dtype=I64)
    if ents.size == 0:
        return {}
    wanted = np.isin(ents, np.fromiter(included, dtype=I64, count=len(included))) if included else False
    ents = ents[(ws.mention_counts(ents) <= ws.params.specific_mentions) | wanted]
    if ents.size == 0:
        return {}
    pairs = ws.entity_chunks(ents) if not walk_filtered else walk_continuations(ws, ents)
    found: dict[int, set[int]] = {}
    for e, c in zip(pairs.left.tolist(), ws.chunks.add(pairs.right).tolist()):
        found.setdefault(c, set()).add(e)
    return {c: frozenset(es) for c, es in found.items()}


def own_passages(ws: Workspace, cover_of: dict[int, frozenset[int]]) -> list[int]:
    """Local positions of the passages *about* an entity the question names (among ``cover_of``, see
    :func:`named_passages`): titled by its name, as its own article is (``Brother`` or ``Brother (Pearl Jam
    song)`` for *Brother*). A multi-hop question's chain starts at what it names — "the snowfall in the city
    where the performers of *Brother* were formed" — while the passage most like the whole question is often a
    look-alike of the last hop (another city's snowfall) that no link leads on from. A passage that only
    mentions the name may be about anything else, and a bare number or date ("1930") names no subject."""
    if not cover_of:
        return []
    ents = np.asarray(sorted(set().union(*cover_of.values())), dtype=I64)
    keys = {
        h: label[0]
        for h, label in zip(ents.tolist(), ws.view.labels(ents))
        if label is not None and any(ch.isalpha() for ch in label[1])
    }
    if not keys:
        return []
    positions = np.asarray(sorted(cover_of), dtype=I64)
    own = []
    for i, rec in zip(positions.tolist(), ws.view.chunks(ws.chunks.ids[positions])):
        title = str((rec.metadata or {}).get("title") or "") if rec is not None else ""
        if not title:
            continue
        sense = title_sense(title)
        about = {canonical_key(title), sense[0] if sense else ""}
        if any(keys.get(e) in about for e in cover_of[i]):
            own.append(i)
    return own


class QuestionRest:
    """The words of the question that no picked chunk contains yet, and the lexical relevance of chunks to them.

    A chunk a chain links to is a candidate next hop: it is about what a picked passage adds (the bridge), and
    the question's words that the picked passages already contain ("26th Chess Olympiad", "Henry Worrall died")
    say nothing about whether it carries the next hop — they make a sibling of the picked passage (another chess
    olympiad) look relevant. Such a chunk earns lexical credit only for the rest of the question ("TEUs",
    "handle", "2010"). Words are BM25's tokens; a picked chunk's words include its title."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.words = tokenize(ws.text)
        self.scorer = ws.terms
        self.matched: set[str] = set()
        self._text: str | None = None
        self._best = 0.0

    def pick(self, handle: int) -> None:
        """A chunk was picked: its words are no longer the rest of the question."""
        self.matched.update(self.scorer.words_in(handle))
        self._text = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = " ".join(w for w in self.words if w not in self.matched)
            self._best = self.scorer.best(self._text) if self._text else 0.0
        return self._text

    def relevance(self, positions: np.ndarray) -> np.ndarray:
        """Query relevance of local chunks with the lexical channel reading only the rest of the question:
        cosine similarity + ``lexical_weight`` x BM25 of the rest, normalised by the best chunk's."""
        ws = self.ws
        dense = ws.dense(positions).astype(np.float64)
        text = self.text
        if not text or self._best <= 0:
            return dense
        lexical = self.scorer.scores(text, ws.chunks.ids[positions]).astype(np.float64)
        return dense + ws.params.lexical_weight * lexical / self._best


@register_strategy
@dataclass(frozen=True)
class Chain(Strategy):
    """Chunks are picked one at a time. Each pick links every chunk that shares a specific entity with it (strength
    :func:`link_specificity`; ``edge_weight`` also follows one allowed relation edge, in the permitted direction)
    and gives those chunks a boost of ``weight`` x the picked chunk's query relevance. A chunk's score is its own
    relevance plus its best boost, so the second passage of a multi-hop answer — about the bridge entity, unlike the
    question — can follow the first. ``seed_weight`` can add a boost to every chunk that mentions a query entity
    (seed); it is off by default, since the named-entity coverage below does that job for what the question names,
    and the other seeds are only what the question resembles (measured: evaluation/README.md). A chain links onward
    only through what a picked chunk adds to the question: never through an entity the question names (unless
    ``link_named``), since the passages about that entity already rank by their relevance and the coverage boost,
    while the next hop is about the bridge; nor through a kind (a common noun) the question does not write (unless
    ``link_kinds``, :func:`without_kinds`): two unincorporated communities are siblings, not hops. The question
    itself links too: each entity it names by a proper name that is specific enough to pin down a passage (mentioned
    in at most twice as many chunks as are returned) gives the chunks mentioning it the boost a picked chunk of the
    best relevance would (``cover_named``), until one of them is picked, so a question naming two things gets a
    passage about each before a chain from one of them goes deeper; and when what it names has a passage of its own
    (titled by the name), the chain starts at one of those (``start_at_named``, :func:`own_passages`). A chunk
    reached by a link is ranked by the rest of the question (``rest_of_question``): its lexical relevance counts
    only the question's words that no picked chunk contains, since the next hop is about what the picked passage
    adds, not about what it already matched (:class:`QuestionRest`). A chain is at most ``max_hops`` links long.
    Under type or direction filters a chain walks relations: a picked chunk links onward only through the ends of
    the allowed relations it states (their targets for ``out``, their sources for ``in``), to chunks that state an
    allowed relation continuing from there; excluded entities never link.
    """

    name = "chain"
    consumes = frozenset({"candidates"})

    weight: float = 0.5
    """Boost a linked chunk by this times the relevance of the chunk it is linked from."""
    link_specificity: float = 30.0
    """An entity links chunks fully when at most this many other chunks mention it (less beyond)."""
    seed_weight: float = 0.0
    """Extra score for chunks mentioning query-matched entities (times the best relevance); 0.1 until the
    named-entity coverage made it redundant."""
    edge_weight: float = 0.0
    """Also link through one allowed relation edge, at this strength (0 = shared mentions only)."""
    link_named: bool = False
    """Also link through the entities the question names (measured worse: evaluation/README.md)."""
    cover_named: bool = True
    """Boost the passages about each specific entity the question names until one of them is picked."""
    rest_of_question: bool = True
    """Rank a linked chunk by the rest of the question: its lexical relevance counts only the question's words
    that no picked chunk contains (measured: evaluation/README.md; off = the whole question, as before)."""
    link_kinds: bool = False
    """Also link through kinds (common nouns) the question does not write (measured worse:
    evaluation/README.md)."""
    start_at_named: bool = True
    """Start the chain at a passage about an entity the question names, when one is titled by its name
    (measured: evaluation/README.md; off = the first pick is the best-scoring chunk, as before)."""

    def check(self) -> list[str]:
        problems = super().check()
        problems += check_number("chain.link_specificity", self.link_specificity, low=1e-9)
        return problems

    def score(self, s: StrategyInput) -> StrategyOutput:
        ws, p = s.ws, s.ws.params
        space = ws.chunks
        blocked = ws.edge_filter.blocked
        spec_cache: dict[int, float] = {}

        def spec(entities: np.ndarray) -> np.ndarray:
            handles = entities.tolist()  # Python ints: no NumPy scalar per element
            todo = [e for e in dict.fromkeys(handles) if e not in spec_cache]
            if todo:
                values = link_specificity(ws.mention_counts(np.asarray(todo, dtype=I64)), self.link_specificity)
                spec_cache.update(zip(todo, values.tolist()))
            out = np.asarray([spec_cache[e] for e in handles], dtype=np.float32)
            if blocked:
                out[[e in blocked for e in handles]] = 0.0
            return out

        cand = s.candidates
        if cand.size == 0 and not s.seeds:
            return StrategyOutput(np.zeros(0, I64), np.zeros(0, np.float32), np.zeros(0, np.float32))
        top_relevance = max(float(np.max(ws.relevance(cand))) if cand.size else 0.0, 0.0)

        walk_filtered = filtered_walk(ws)
        named = s.named if not self.link_named else frozenset()
        question_words = frozenset(tokenize(ws.text)) if not self.link_kinds else frozenset()

        # seed boost: chunks mentioning query entities (under filters: stating an allowed relation of theirs)
        seed_boost: dict[int, float] = {}
        if s.seeds and self.seed_weight > 0:
            seeds = np.fromiter(s.seeds.keys(), dtype=I64, count=len(s.seeds))
            w = np.fromiter(s.seeds.values(), dtype=np.float32, count=len(s.seeds)) * spec(seeds)
            pairs = ws.entity_chunks(seeds) if not walk_filtered else walk_continuations(ws, seeds)
            if len(pairs):
                weight_of = dict(zip(seeds.tolist(), w.tolist()))
                pos = space.add(pairs.right)
                total = np.zeros(len(space), dtype=np.float32)
                np.add.at(total, pos, np.asarray([weight_of[int(e)] for e in pairs.left], dtype=np.float32))
                for i in np.unique(pos).tolist():
                    value = self.seed_weight * top_relevance * min(float(total[i]), 1.0)
                    if value > 0:
                        seed_boost[i] = value

        # the question links to the passages about what it names, until each named entity has one picked
        cover_of = named_passages(ws, s.proper, walk_filtered, s.included) if self.cover_named else {}
        cover_value = self.weight * top_relevance
        covered: set[int] = set()
        start = np.asarray(own_passages(ws, cover_of) if self.start_at_named else [], dtype=I64)

        def links(t: int) -> tuple[np.ndarray, np.ndarray]:
            """Local chunk positions linked from the chunk at position ``t``, and each link's strength."""
            none = (np.zeros(0, I64), np.zeros(0, np.float64))
            handle = int(space.ids[t])
            ents = walk_entities(ws, handle)
            if named:  # a handful of names: set look-ups, not an array set operation
                ents = ents[np.fromiter((e not in named for e in ents.tolist()), dtype=bool, count=ents.size)]
            if not self.link_kinds:
                ents = without_kinds(ws, ents, question_words, through_edges=self.edge_weight > 0)
            if ents.size == 0:
                return none
            u = dict(zip(ents.tolist(), spec(ents).tolist()))
            if self.edge_weight > 0:
                u = self._follow_edges(ws, u, spec)
                if named:  # one edge further may reach a named entity again
                    u = {e: v for e, v in u.items() if e not in named}
            active = np.asarray([e for e, v in u.items() if v > 0], dtype=I64)
            if active.size == 0:
                return none
            pairs = ws.entity_chunks(active) if not walk_filtered else walk_continuations(ws, active)
            pos = space.add(pairs.right)
            weights = np.asarray([u[e] for e in pairs.left.tolist()], dtype=np.float64)
            linked, at = np.unique(pos, return_inverse=True)
            strength = np.bincount(at, weights=weights, minlength=linked.size)  # summed in pair order
            return linked, np.minimum(strength, 1.0)

        rest = QuestionRest(ws) if self.rest_of_question and p.lexical_weight > 0 else None
        k = s.depth
        chosen: list[int] = []
        picked: list[float] = []
        graph_at_pick: list[float] = []
        boost = np.zeros(len(space), dtype=np.float64)  # by local position; grows with the space
        boost_depth = np.zeros(len(space), dtype=I64)
        seeded = np.zeros(len(space), dtype=np.float64)
        for i, v in seed_boost.items():
            seeded[i] = v
        max_depth = p.max_hops  # 0: no links at all, chunks by relevance (and query entities) only
        while len(chosen) < k:
            n = len(space)
            if n == 0:
                break
            if boost.size < n:  # links added chunks to the space
                boost = np.concatenate([boost, np.zeros(n - boost.size)])
                boost_depth = np.concatenate([boost_depth, np.zeros(n - boost_depth.size, dtype=I64)])
                seeded = np.concatenate([seeded, np.zeros(n - seeded.size)])
            rel = ws.relevance(np.arange(n, dtype=I64))
            total = np.where(np.isnan(rel), -np.inf, rel).astype(np.float64)
            if rest is not None:  # a linked chunk is a next hop: ranked by the rest of the question
                linked = np.flatnonzero(boost > 0)
                if linked.size:
                    total[linked] = np.where(np.isfinite(total[linked]), rest.relevance(linked), -np.inf)
            total += seeded
            total += self.weight * boost
            open_cover = [i for i, named_here in cover_of.items() if not named_here <= covered]
            total[open_cover] += cover_value
            total[chosen] = -np.inf
            t = int(np.argmax(total))
            if not chosen and start.size and np.isfinite(np.max(total[start])):
                t = int(start[np.argmax(total[start])])  # the chain starts at what the question names
            if not np.isfinite(total[t]):
                break
            chosen.append(t)
            picked.append(float(total[t]))
            cover_now = 0.0
            if t in open_cover:
                cover_now = cover_value
                covered |= cover_of[t]
            # the graph's share of the score that picked it (later picks may still link back to it)
            graph_at_pick.append(self.weight * float(boost[t]) + float(seeded[t]) + cover_now)
            depth = int(boost_depth[t]) if boost[t] > 0 else 0
            if depth < max_depth and len(chosen) < k:  # the last pick links nowhere: nothing is picked after it
                gain_base = max(float(rel[t]), 0.0)
                linked, strength = links(t)
                if linked.size:
                    if boost.size < len(space):
                        grow = len(space) - boost.size
                        boost = np.concatenate([boost, np.zeros(grow)])
                        boost_depth = np.concatenate([boost_depth, np.zeros(grow, dtype=I64)])
                        seeded = np.concatenate([seeded, np.zeros(grow)])
                    gain = gain_base * strength
                    better = gain > boost[linked]
                    boost[linked[better]] = gain[better]
                    boost_depth[linked[better]] = depth + 1
            if rest is not None and len(chosen) < k:  # after the links: a database reads the chunk with them
                rest.pick(int(space.ids[t]))
        order = np.asarray(chosen, dtype=I64)
        scores = np.minimum.accumulate(np.asarray(picked, dtype=np.float32)) if picked else np.zeros(0, np.float32)
        graph = np.asarray(graph_at_pick, np.float32)
        # entity scores: what the chosen chunks mention, weighted by chunk rank and specificity, plus the seeds
        entity_scores: dict[int, float] = {}
        if chosen:
            pairs = ws.chunk_entities(space.ids[order])
            rank_of = {int(h): 1.0 / (1.0 + i) for i, h in enumerate(space.ids[order].tolist())}
            if len(pairs):
                specs = spec(pairs.right)
                for c, e, sp_ in zip(pairs.left.tolist(), pairs.right.tolist(), specs.tolist()):
                    entity_scores[e] = entity_scores.get(e, 0.0) + rank_of[c] * sp_
        for seed, w in s.seeds.items():
            entity_scores[seed] = entity_scores.get(seed, 0.0) + w
        return StrategyOutput(order, scores, graph, entity_scores)

    def _follow_edges(self, ws, u: dict[int, float], spec) -> dict[int, float]:
        """Spread link strength one allowed relation edge further (in the permitted direction)."""
        ents = np.fromiter(u.keys(), dtype=I64, count=len(u))
        edges = ws.view.edges_of(ents, ws.edge_filter)
        if not len(edges):
            return u
        direction = ws.edge_filter.direction
        reach: dict[int, float] = {}
        for a, b in zip(edges.src.tolist(), edges.dst.tolist()):
            if direction in ("out", "both") and a in u:
                reach[b] = reach.get(b, 0.0) + u[a]
            if direction in ("in", "both") and b in u:
                reach[a] = reach.get(a, 0.0) + u[b]
        if not reach:
            return u
        targets = np.fromiter(reach.keys(), dtype=I64, count=len(reach))
        specs = spec(targets)
        out = dict(u)
        for e, total, sp_ in zip(targets.tolist(), reach.values(), specs.tolist()):
            out[e] = max(out.get(e, 0.0), self.edge_weight * min(total, 1.0) * sp_)
        return out
