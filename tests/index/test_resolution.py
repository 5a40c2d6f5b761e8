"""Entity resolution at index time (``kg_rag/index/resolution.py``): spelling variants of one thing become one
entity when the evidence agrees — a name rule, similar embeddings, agreeing types — and never homonyms or kinds.
Issue 43 §4."""

from __future__ import annotations

import hashlib

import numpy as np

from kg_rag import Chunk, KnowledgeGraph, build_index
from kg_rag.index.resolution import acronym_letters, find_candidates, initials, resolve_entities, resolve_index
from kg_rag.model.resolution import Resolution


class ConceptEmbeddings:
    """Each text's vector is its concept's (``concepts``: text -> concept name; others: a vector of their own),
    plus a little of its own, so spellings of one concept are ~0.95 similar and everything else ~0."""

    def __init__(self, concepts: dict[str, str], own: float = 0.3, size: int = 64) -> None:
        self.concepts, self.own, self.size = concepts, own, size
        self.model = f"concepts-{size}"

    def _unit(self, text: str) -> np.ndarray:
        rng = np.random.default_rng(int(hashlib.md5(text.encode()).hexdigest()[:8], 16))
        v = rng.standard_normal(self.size)
        return v / np.linalg.norm(v)

    def _vec(self, text: str) -> list[float]:
        concept = self.concepts.get(text)
        v = self._unit(text) if concept is None else self._unit(concept) + self.own * self._unit(text)
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


class BetweenEmbeddings(ConceptEmbeddings):
    """A concept may lie between two others (``between``: concept -> (a, b)), as similar to both (about 0.7) while
    they are unlike each other: an acronym with two different expansions."""

    def __init__(self, concepts: dict[str, str], between: dict[str, tuple[str, str]]) -> None:
        super().__init__(concepts, own=0.0)
        self.between = between

    def _vec(self, text: str) -> list[float]:
        pair = self.between.get(self.concepts.get(text, ""))
        if pair is None:
            return super()._vec(text)
        v = self._unit(pair[0]) + self._unit(pair[1])
        return (v / np.linalg.norm(v)).tolist()


US = ["United States", "U.S.", "US", "USA", "U.S.A.", "the United States", "United States of America"]


def _graph(names: list[str], types: dict[str, str] | None = None) -> KnowledgeGraph:
    kg = KnowledgeGraph()
    for i, name in enumerate(names):
        kg.add_chunk(Chunk(f"c{i}", f"{name} signed treaty {i}.", f"d{i}"))
        kg.add_entity(name, (types or {}).get(name), chunk_id=f"c{i}")
        kg.add_relation(name, f"Treaty {i}", "SIGNED", predicate="signed", chunk_id=f"c{i}")
    return kg


def test_name_rules():
    assert acronym_letters("U.S.A.") == acronym_letters("USA") == "USA" and acronym_letters("U.S") == "US"
    assert acronym_letters("Usa") is None and acronym_letters("A") is None
    assert initials("United States of America") == "USA" and initials("North Atlantic Treaty Organization") == "NATO"
    assert initials("united states") is None  # a kind's words are no acronym's


def test_spelling_variants_of_one_thing_become_one_entity():
    emb = ConceptEmbeddings(dict.fromkeys(US, "usa"))
    index = build_index(_graph(US), emb)
    resolution = Resolution()
    counts = resolve_entities(index, resolution)
    kg = index.kg
    assert counts == {"manual": 0, "auto": len(US) - 1}
    assert [k for k in kg.graph.nodes if k.startswith(("u", "the u"))] == ["united states"]
    merged = kg.graph.nodes["united states"]
    assert merged["name"] == "United States" and sorted(merged["chunk_ids"]) == [f"c{i}" for i in range(len(US))]
    assert {v for _, v in kg.graph.out_edges("united states")} == {f"treaty {i}" for i in range(len(US))}
    assert {m.name for m in resolution.merges.values()} == set(US) - {"United States"}
    assert {m.how for m in resolution.merges.values()} <= {"acronym", "acronym spelling", "article", "of"}


def test_no_merge_without_agreeing_embeddings_types_or_a_name_rule():
    apart = ConceptEmbeddings({})  # the spellings' embeddings do not agree
    assert not find_candidates(build_index(_graph(["United States", "USA"]), apart))
    same = ConceptEmbeddings({"United States": "x", "Unites": "x"})  # similar, but no rule relates the names
    assert not find_candidates(build_index(_graph(["United States", "Unites"]), same))
    emb = ConceptEmbeddings({"United States": "x", "USA": "x"})
    typed = _graph(["United States", "USA"], {"United States": "LOCATION", "USA": "ORGANIZATION"})
    assert not find_candidates(build_index(typed, emb))


def test_homonyms_kinds_and_ambiguous_acronyms_stay_apart():
    """The sense guard: a qualified name is merged with nothing but its own spellings, a kind (no capital) is never
    one thing, numbers must agree; an acronym with two expansions about as similar names neither."""
    concepts = {
        "Rochester": "r",
        "Rochester, New York": "r",
        "the city": "c",
        "city": "c",
        "the 1990s": "y",
        "1980s": "y",
        "BJP": "b",
        "Bharatiya Janata Party": "b1",
        "Bangalore Joint Panel": "b2",
    }
    index = build_index(_graph(list(concepts)), BetweenEmbeddings(concepts, {"b": ("b1", "b2")}))
    assert not find_candidates(index)
    clear = {"BJP": "b", "Bharatiya Janata Party": "b"}
    index = build_index(_graph([*clear, "Bangalore Joint Panel"]), ConceptEmbeddings(clear))
    assert [(c.key, c.into) for c in find_candidates(index)] == [("bjp", "bharatiya janata party")]


def test_of_and_a_name_is_merged_only_when_the_embeddings_hardly_tell_the_two_apart():
    """ "Nicholas I of Russia" is one Nicholas I among several; "United States of America" is the name itself."""
    concepts = {"Nicholas I": "n", "Nicholas I of Russia": "n", "Heilongjiang Province": "h"}
    concepts["Heilongjiang Province of China"] = "h"
    emb = ConceptEmbeddings(concepts, own=0.6)  # ~0.86 similar: not near-identical
    assert not find_candidates(build_index(_graph(list(concepts)), emb))
    close = ConceptEmbeddings(concepts, own=0.2)  # ~0.98 similar
    found = {(c.key, c.into) for c in find_candidates(build_index(_graph(list(concepts)), close))}
    assert ("heilongjiang province of china", "heilongjiang province") in found


def test_a_companys_name_with_and_without_its_legal_form_is_one_entity():
    """*Amazon.com, Inc.* is *Amazon.com* (the comma before a legal form is no qualifier); *Veltrix Systems* is not
    *Veltrix* (a descriptive word is no legal form); types and embeddings must still agree."""
    concepts = {"Amazon.com, Inc.": "a", "Amazon.com": "a", "Meridian Holdings": "m", "Meridian": "m"}
    concepts |= {"Veltrix Systems": "v", "Veltrix": "v"}
    index = build_index(_graph(list(concepts)), ConceptEmbeddings(concepts))
    found = {(c.key, c.into, c.rule) for c in find_candidates(index)}
    assert found == {("amazon com inc", "amazon com", "legal form"), ("meridian holdings", "meridian", "legal form")}
    for long, short, short_type in (("Boston Holdings", "Boston", "LOCATION"), ("Chengdu) Co., Ltd.", "Chengdu", None)):
        typed = _graph([long, short], {long: "ORGANIZATION", short: short_type or "ENTITY"})
        alike = ConceptEmbeddings(dict.fromkeys([long, short], "b"))
        assert not find_candidates(build_index(typed, alike)), long  # a place's company; a broken name


def test_decisions_by_hand_come_first_and_hold_against_the_evidence():
    emb = ConceptEmbeddings(dict.fromkeys(["United States", "USA"], "usa"))
    decisions = Resolution(apart={("united states", "usa")})
    index, counts = resolve_index(build_index(_graph(["United States", "USA", "Canada"]), emb), emb, decisions)
    assert counts == {"manual": 0, "auto": 0} and "usa" in index.kg.graph
    from kg_rag.model.resolution import Merge

    by_hand = Resolution(merges={"canada": Merge("canada", "Canada", "usa", "USA")})
    index, counts = resolve_index(build_index(_graph(["United States", "USA", "Canada"]), emb), emb, by_hand)
    assert counts["manual"] == 1 and "canada" not in index.kg.graph
    assert index.report.resolution.merges["canada"].manual  # recorded with the index
    assert not index.stale  # the vectors follow the merged graph


def test_names_are_compared_not_the_descriptions_an_entity_gathered():
    """An entity met in many passages gathers descriptions its vector also embeds; a spelling of it must still
    be compared with its name (``resolve_index`` passes its embeddings)."""
    emb = ConceptEmbeddings(dict.fromkeys(["United States", "US"], "usa"))
    kg = _graph(["United States", "US"])
    kg.add_entity("United States", description="a two-party system", chunk_id="c0")
    index = build_index(kg, emb)
    assert not find_candidates(index)  # the index's vector of "United States" holds its description too
    assert [(c.key, c.into) for c in find_candidates(index, None, emb)] == [("us", "united states")]
    index, counts = resolve_index(index, emb)
    assert counts["auto"] == 1 and "us" not in index.kg.graph


def test_an_acronym_goes_to_the_best_attested_of_expansions_that_are_one_name():
    """Two expansions nearly identical to each other ("United States", a one-passage "United State") are one
    candidate, not an ambiguity: the acronym goes to the one most passages write."""
    emb = ConceptEmbeddings(dict.fromkeys(["US", "United States", "United State"], "usa"))
    kg = _graph(["US", "United State", "United States"])
    for i in (7, 8):
        kg.add_chunk(Chunk(f"c{i}", f"United States signed treaty {i}.", f"d{i}"))
        kg.add_entity("United States", chunk_id=f"c{i}")
    found = [(c.key, c.into) for c in find_candidates(build_index(kg, emb), None, emb)]
    assert found == [("us", "united states")]
