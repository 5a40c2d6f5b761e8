"""The NLP extractor: a typed, directed graph from a dependency parse, without a language model.

``NLPExtractor`` (spaCy, the ``nlp`` extra) reads names (:mod:`.mentions`), then relations from the grammar
(:mod:`.clauses`); the pipeline is loaded by name (:mod:`.loading`).
"""

from __future__ import annotations

from kg_rag.ingest.nlp.extractor import NLPExtractor, NLPSettings, read_passage
from kg_rag.ingest.nlp.loading import load_pipeline, pipeline_name

__all__ = ["NLPExtractor", "NLPSettings", "load_pipeline", "pipeline_name", "read_passage"]
