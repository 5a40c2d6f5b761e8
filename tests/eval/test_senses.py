"""Issue 26 §4: how often one name joins different things is measured (``python -m kg_rag.eval.senses``)."""

from __future__ import annotations

from kg_rag.eval.senses import same_name_joins
from kg_rag.index.build import build_index
from kg_rag.store.memory import LiveBackend
from kg_rag.testing import BagOfWordsEmbeddings
from tests.query.test_senses import CONSULATE, _consulates


def test_same_name_joins_counts_an_entity_located_in_two_places():
    backend = LiveBackend(build_index(_consulates(), BagOfWordsEmbeddings()), BagOfWordsEmbeddings())
    with backend.reader() as view:
        found = same_name_joins(view)
    assert found["entities_located_in_two_things"] == 2  # the consulate, and "clock tower" (two towers)
    consulate, tower = found["examples"]
    assert consulate.startswith(("Frankfurt <-[LOCATED_IN]- ", "Germany <-[LOCATED_IN]- ")) and CONSULATE in consulate
    assert consulate.endswith(("-[LOCATED_IN]-> Shanghai", "-[LOCATED_IN]-> China"))
    assert tower in ("Westminster <-[LOCATED_IN]- clock tower -[LOCATED_IN]-> Brighton",)
    # two consulates (4 joins across their passages) and two clock towers (2 joins across theirs)
    assert found["joins_of_different_things"] == 6 and found["entities_joining_different_things"] == 2
