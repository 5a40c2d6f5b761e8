"""``NLPExtractor``: entities and typed, directed relations from a dependency parse, with no language model.

It is a drop-in for :class:`~kg_rag.ingest.extract.LLMExtractor` wherever an extractor is taken
(``index_documents``, ``IndexWriter.index_documents``, ``kg-rag index --extractor nlp``): ``extract`` returns the
same :class:`~kg_rag.ingest.extract.ExtractionRun`, one :class:`~kg_rag.ingest.extract.ExtractionResult` per chunk,
so updates, deletes and re-indexing follow the same rules. Relations carry their predicate as written and are typed
by the relation typer (and re-typed over the whole index, as OpenIE triples are); evidence is the sentence,
provenance the chunk, confidence lower where an end was reached through a pronoun or a description.

Speed comes from spaCy's ``nlp.pipe`` (batched; ``workers`` processes); the rules that follow the parse are a
small share of the time.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from kg_rag.errors import ConfigurationError
from kg_rag.ingest.defined import annotate, defined_terms
from kg_rag.ingest.extract import (
    ExtractedEntity,
    ExtractionResult,
    ExtractionRun,
    ParsedRelation,
)
from kg_rag.ingest.formats import MARKDOWN_SUFFIXES
from kg_rag.ingest.nlp.aliases import NameTable
from kg_rag.ingest.nlp.clauses import read_clauses
from kg_rag.ingest.nlp.kinds import place_title
from kg_rag.ingest.nlp.loading import load_pipeline, pipeline_id
from kg_rag.ingest.nlp.mentions import (
    LABELS,
    PASSAGE_VALUES,
    VALUES,
    Topic,
    bare_title,
    find_mentions,
    has_nickname,
    title_name,
)
from kg_rag.ingest.nlp.parse import Parse, blocks, hide_title_heading, mask_codes, unwrap_lines
from kg_rag.ingest.nlp.refs import Passage
from kg_rag.ingest.nlp.things import find_things
from kg_rag.model import Chunk
from kg_rag.model.lemmas import known_word
from kg_rag.model.names import DEFAULT_ENTITY_TYPE, DEFAULT_RELATION_PATTERNS, RELATED, canonical_key
from kg_rag.model.relation_types import RelationTyper

logger = logging.getLogger(__name__)

RULES_VERSION = 28
"""Bumped when the rules change what is extracted, so documents extracted under older rules are extracted again."""
MAX_CHARS = 200_000
"""Longest chunk text parsed whole; a longer one (a corpus passage nobody split) is parsed up to here."""


@dataclass(frozen=True)
class NLPSettings:
    """What decides an NLP extraction's output: the pipeline (name and version) and the rules' version."""

    pipeline: str
    rules: int = RULES_VERSION

    def key(self) -> str:
        """Stored with each extracted document: another pipeline or rule set re-extracts it."""
        return f"nlp:{self.pipeline}:{self.rules}"


class NLPExtractor:
    """Extracts entities and directed, typed relations from chunks with a spaCy pipeline (no chat model).

    Args:
        pipeline: a spaCy pipeline name (default: ``$KG_RAG_SPACY_MODEL``, else ``en_core_web_sm``, else the copy the
            ``nlp`` extra installs) or a loaded ``Language``.
        batch_size: texts per ``nlp.pipe`` batch. workers: parsing processes (``nlp.pipe(n_process=...)``).
        relation_patterns: predicate phrase -> curated type, as for the LLM path.

    A chunk's title (``chunk.metadata["title"]``: a corpus passage's title, a document's heading) is its topic:
    the entity its pronouns and descriptions ("the song") refer to.
    """

    calls_model = False
    """No chat model is called (callers print no token usage)."""

    def __init__(
        self,
        pipeline: str | Any | None = None,
        *,
        batch_size: int = 64,
        workers: int = 1,
        relation_patterns: Mapping[str, str] = DEFAULT_RELATION_PATTERNS,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigurationError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigurationError(f"workers must be an integer >= 1, got {workers!r}")
        self.nlp: Any = pipeline if hasattr(pipeline, "pipe") else load_pipeline(pipeline)
        self.batch_size = batch_size
        self.workers = workers
        self.typer = RelationTyper(relation_patterns)
        self.model_name = pipeline_id(self.nlp)
        self.schema = NLPSettings(self.model_name)

    def __repr__(self) -> str:
        return f"NLPExtractor({self.model_name!r}, workers={self.workers})"

    # ------------------------------------------------------------- extraction
    def parse(self, text: str, title: str | None = None) -> ExtractionResult:
        """The extraction of one text (``title``: what it is about)."""
        chunk = Chunk("text", text, "text", {"title": title} if title else {})
        return self.extract([chunk]).results.get("text", ExtractionResult())

    def extract(self, chunks: Sequence[Chunk], *, progress: bool = False, config: Any = None) -> ExtractionRun:
        """Parse every chunk (batched) and read its entities and relations. A chunk that fails is recorded in
        ``failures``, never raised. ``config`` is accepted for the extractor interface (no model is called)."""
        from tqdm.auto import tqdm

        run = ExtractionRun()
        raw = [_parsable(c.text) for c in chunks]
        # a heading that writes the chunk's title (a Markdown document's) is its topic, not a sentence: the text is
        # read without it, and the title names the subject as a corpus passage's does ("titled")
        texts = [hide_title_heading(t, _title(c)) for c, t in zip(chunks, raw)]
        annotate(chunks)  # a document's defined terms, for every chunk of it (split_documents has done so already)
        docs = self._parse(mask_codes(unwrap_lines(t, prose=_markdown(c))) for c, t in zip(chunks, texts))
        with tqdm(total=len(chunks), desc="extracting (nlp)", unit="chunk", disable=not progress) as bar:
            for chunk, before, text, doc in zip(chunks, raw, texts, docs):
                try:
                    corpus = bool((chunk.metadata or {}).get("titled"))
                    heading = not corpus and text != before
                    run.results[chunk.id] = read_passage(
                        doc,
                        _title(chunk),
                        text,
                        titled=corpus or heading,
                        heading=heading,
                        defined=defined_terms(chunk),
                    )
                except Exception as exc:  # one odd parse never sinks the run
                    logger.warning("NLP extraction failed for chunk %s: %s", chunk.id, exc)
                    run.failures[chunk.id] = exc
                bar.update(1)
        harmonise(run.results.values())
        self._type(run)
        return run

    def _parse(self, texts: Iterable[str]) -> Iterator[Any]:
        """One spaCy ``Doc`` per text, each block of it (:func:`~kg_rag.ingest.nlp.parse.blocks`) parsed on its own
        and the blocks joined back (the same text, offsets and annotations)."""
        from spacy.tokens import Doc

        pieces = [blocks(t) for t in texts]
        parsed = self.nlp.pipe(
            (b for piece in pieces for b in piece), batch_size=self.batch_size, n_process=self.workers
        )
        for piece in pieces:
            docs = [next(parsed) for _ in piece]
            yield docs[0] if len(docs) == 1 else Doc.from_docs(docs, ensure_whitespace=False)

    def _type(self, run: ExtractionRun) -> None:
        """Type the run's predicates together (:meth:`RelationTyper.fit`: variants share a type, rare ones back off),
        as an OpenIE import types its corpus; the predicate stays on each relation for a later ``retype``."""
        counts = Counter(
            r.predicate for result in run.results.values() for r in result.relations if isinstance(r, ParsedRelation)
        )
        types = self.typer.fit(counts)
        for result in run.results.values():
            for r in result.relations:
                if isinstance(r, ParsedRelation):
                    r.type = types.get(r.predicate, RELATED)

    async def aextract(self, chunks: Sequence[Chunk], *, progress: bool = False, config: Any = None) -> ExtractionRun:
        """:meth:`extract` in a worker thread (parsing is CPU work; the event loop stays free)."""
        return await asyncio.to_thread(self.extract, chunks, progress=progress, config=config)


def _parsable(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS]


def _markdown(chunk: Chunk) -> bool:
    """Whether the chunk comes from a Markdown file, whose paragraphs may be wrapped anywhere."""
    return PurePath(str((chunk.metadata or {}).get("source") or "")).suffix.lower() in MARKDOWN_SUFFIXES


def _title(chunk: Chunk) -> str | None:
    title = (chunk.metadata or {}).get("title")
    return str(title).strip() or None if title else None


def read_passage(
    spacy_doc: Any,
    title: str | None,
    source: str | None = None,
    *,
    titled: bool = False,
    heading: bool = False,
    defined: Mapping[str, str] | None = None,
) -> ExtractionResult:
    """Entities and relations of one parsed passage. ``title``: what it is about when the text writes it, or
    whether or not it does when ``titled`` (a corpus passage whose title is its subject's name, or a document's
    ``heading``, which may name anything: *he* and *she* refer to it only when the recogniser types it a person);
    ``source``: the text before :func:`~kg_rag.ingest.nlp.parse.mask_codes`; ``defined``: what the document's defined
    terms stand for (:mod:`kg_rag.ingest.defined`)."""
    doc = Parse(spacy_doc, source)
    name = title_name(title, doc.source) if title else None
    if name is None and title and titled:
        name = bare_title(title)
    topic = Topic(name, personal=not heading and not place_title(title or "")) if name else None
    mentions, inside = find_mentions(doc, topic)
    if topic is not None:
        topic.label = _topic_label(doc, mentions)
    passage = Passage(
        doc, mentions, topic, NameTable.of(doc, mentions, topic, defined), things=find_things(doc, mentions)
    )
    triples = list(read_clauses(passage))
    entities: dict[str, tuple[str, Counter[str]]] = {}

    def note(name: str, label: str) -> None:
        key = canonical_key(name)
        if key not in entities:
            entities[key] = (name, Counter())
        if label:
            entities[key][1][label] += 1

    if topic is not None:
        note(topic.name, topic.label or "")
        head = topic.name.partition(", ")[0]
        named = " " in head or not known_word(head.casefold())  # "Nicholas I", "Charleston"; not "Hello, Dolly!"
        if head != topic.name and named and any(m.kind == "topic" for m in mentions):  # written in full: the
            note(head, topic.label or "")  # passage writes the name before the comma too
    for m in mentions:
        if m.is_value and m.label not in PASSAGE_VALUES:
            continue
        ref = passage.mention_ref(m)
        note(ref.name, ref.label)
    for m in inside:
        note(m.name, m.label)
    relations: dict[tuple[str, str, str], ParsedRelation] = {}
    for t in triples:
        note(t.source.name, t.source.label)
        note(t.target.name, t.target.label)
        key = (canonical_key(t.source.name), t.predicate, canonical_key(t.target.name))
        if key not in relations:
            relations[key] = ParsedRelation(
                source=t.source.name,
                target=t.target.name,
                type=RELATED,
                predicate=t.predicate,
                evidence=t.evidence,
                confidence=t.confidence,
            )
    return ExtractionResult(
        entities=[
            ExtractedEntity(
                name=name,
                type=labels.most_common(1)[0][0] if labels else DEFAULT_ENTITY_TYPE,
                description=passage.descriptions.get(name, ""),
            )
            for name, labels in entities.values()
        ],
        relations=list(relations.values()),
    )


def _topic_label(doc: Parse, mentions: Sequence[Any]) -> str | None:
    """The recogniser's type for the topic where the text writes it (``None``: not written, or not recognised). A
    passage is about a thing, never a value: the recogniser reads *Salt March* as a date, which would leave the
    passage's subject out of every relation."""
    for m in mentions:
        if m.kind != "topic":
            continue
        if m.label == "PERSON":
            return "PERSON"  # a title written with middle names or a nickname (the recogniser may say otherwise)
        for ent in doc.doc.ents:
            if ent.start < m.end and m.start < ent.end and ent.label_ in LABELS:
                label = LABELS[ent.label_]
                if label == "WORK" and has_nickname(doc, ent.start, ent.end):
                    return "PERSON"
                return None if label in VALUES else label
    return None


_THE = re.compile(r"^the\s+", re.IGNORECASE)


def harmonise(results: Sequence[ExtractionResult] | Any) -> None:
    """One name and one type per thing across a run: a name written both with a leading ``The`` that may belong to
    it (capitalised mid-sentence, or in a title) and without takes the form most passages write, and an entity typed
    differently by different passages takes its most frequent type."""
    results = list(results)
    with_article: dict[str, str] = {}
    votes: Counter[tuple[str, bool]] = Counter()  # (key without the article, written with it): passages
    types: dict[str, Counter[str]] = {}
    for result in results:
        seen: set[tuple[str, bool]] = set()
        for e in result.entities:
            article = bool(_THE.match(e.name)) and e.name[:1] == "T"
            key = canonical_key(_THE.sub("", e.name) if article else e.name)
            seen.add((key, article))
            if article:
                with_article.setdefault(key, e.name)
        votes.update(seen)
    # the article belongs to the name where most passages write it so ("The Beatles"), not where one title does
    with_article = {k: v for k, v in with_article.items() if votes[k, True] > votes[k, False]}
    bare = {k for (k, article) in votes if article and k not in with_article}

    def named(name: str) -> str:
        if _THE.match(name) and name[:1] == "T":
            key = canonical_key(_THE.sub("", name))
            return _THE.sub("", name) if key in bare else name
        return with_article.get(canonical_key(name), name)

    for result in results:
        for e in result.entities:
            e.name = named(e.name)
            if e.type != DEFAULT_ENTITY_TYPE:
                types.setdefault(canonical_key(e.name), Counter())[e.type] += 1
        for r in result.relations:
            r.source, r.target = named(r.source), named(r.target)
    usual = {k: c.most_common(1)[0][0] for k, c in types.items()}
    for result in results:
        for e in result.entities:
            e.type = usual.get(canonical_key(e.name), e.type)
