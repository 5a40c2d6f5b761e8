"""The NLP extractor's tests parse with the real spaCy pipeline (the ``nlp`` extra, installed by ``make test``)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def extractor():
    from kg_rag.errors import ConfigurationError
    from kg_rag.ingest.nlp import NLPExtractor

    try:
        return NLPExtractor()
    except ConfigurationError as exc:  # pragma: no cover - make test installs the nlp extra
        pytest.skip(f"the NLP extractor cannot run here: {exc}")


def triples(result):
    """``{(source, TYPE, target)}`` of an extraction result."""
    return {(r.source, r.type, r.target) for r in result.relations}
