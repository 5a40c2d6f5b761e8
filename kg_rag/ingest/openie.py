"""Import of HippoRAG-format OpenIE output plus its corpus.

OpenIE file: ``{"docs": [{"passage"|"title"+"text", "extracted_entities": [...],
"extracted_triples": [[subject, predicate, object], ...]}]}``; corpus file: ``[{"title", "text"}]`` in the
same order. Triples are directed as extracted (subject -> object). Malformed triples (wrong arity,
non-string or empty members, self-loops) are skipped and counted by reason in the report.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.jsonio import load_json
from kg_rag.model.change import replace_documents
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.names import canonical_key, clean_display_name, shown_name
from kg_rag.model.records import Chunk
from kg_rag.model.relation_types import RelationTyper
from kg_rag.model.report import IngestReport
from kg_rag.tokens import count_tokens

logger = logging.getLogger(__name__)


def passage_id(index: int) -> str:
    """Document/chunk id of the ``index``-th corpus passage (titles repeat, positions do not)."""
    return f"passage-{index:05d}"


_UNNAMED_SOURCES = ("corpus", "openie")
"""What older releases recorded as the source of passages from parsed inputs: the file is unknown."""


def _resolved(source: str) -> str | None:
    try:
        return str(Path(source).resolve())
    except (OSError, RuntimeError):
        return None


def _same_file(recorded: str, recorded_path: str | None, source: str) -> bool:
    """Whether a passage recorded from ``recorded`` (and its resolved path, when the index kept it) comes from
    this run's corpus file. Without a kept path (older indexes) the recorded name is resolved from here."""
    if recorded in _UNNAMED_SOURCES or source in _UNNAMED_SOURCES:
        return True
    here = _resolved(source)
    if recorded_path:
        return recorded_path == here
    return recorded == source or (here is not None and _resolved(recorded) == here)


def _check_no_clash(target: KnowledgeGraph, passages: dict[str, str], source: str) -> None:
    """Refuse passages whose position ids already name different passages of another corpus file: by position,
    this file would silently replace them (``--update`` with a second file). ``passages``: id -> text."""
    theirs = [
        (cid, target.docs[cid].source)
        for cid, text in passages.items()
        if cid in target.docs
        and target.docs[cid].source
        and not _same_file(str(target.docs[cid].source), (target.docs[cid].metadata or {}).get("path"), source)
        and (cid not in target.chunks or target.chunks[cid].text != text)
    ]
    if theirs:
        cid, other = theirs[0]
        raise InputError(
            f"{source}: passage id {cid} already names another passage, from {other} ({len(theirs)} such ids); "
            f"passages are identified by their position in their corpus file, so this file would replace that "
            f"one's. Append the new passages to {other} and --update with it, or index this file into another folder"
        )


def _split_passage(doc: dict[str, Any]) -> tuple[str, str]:
    if isinstance(doc.get("text"), str):
        return str(doc.get("title") or ""), doc["text"]
    passage = str(doc.get("passage") or "")
    title, _, text = passage.partition("\n")
    return (title, text) if text else ("", passage)


def check_corpus_match(
    openie: Any, corpus: Any, *, openie_name: str = "openie", corpus_name: str = "corpus"
) -> list[Any]:
    """The OpenIE docs of ``openie`` (parsed JSON), checked against the parsed ``corpus`` (``None``: no corpus, only
    the shape is checked). The wrong corpus (none of the OpenIE passages in it) raises ``ValueError``, as an index
    with every triple skipped and no graph is no use. Cheap, so callers can run it before they create anything."""
    docs = openie.get("docs") if isinstance(openie, dict) else None
    if not isinstance(docs, list):
        raise InputError(f'{openie_name}: expected {{"docs": [...]}}')
    if corpus is None:
        return docs
    if not isinstance(corpus, list):
        raise InputError(f"{corpus_name}: expected a list of {{title, text}} passages")
    texts = {p["text"] for p in corpus if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"].strip()}
    wanted = [text for d in docs if isinstance(d, dict) for _, text in [_split_passage(d)] if text.strip()]
    if wanted and not any(text in texts for text in wanted):
        raise InputError(
            f"{openie_name}: none of its passages is in the corpus {corpus_name} "
            f"({len(wanted)} checked; is it the corpus the extraction was run on?)"
        )
    return docs


def import_openie(
    kg: KnowledgeGraph,
    openie: str | Path | dict[str, Any],
    corpus: str | Path | Sequence[dict[str, Any]] | None = None,
    *,
    typer: RelationTyper | None = None,
    report: IngestReport | None = None,
    progress: bool = False,
    names: tuple[str, str] | None = None,
) -> IngestReport:
    """Merge an OpenIE extraction (and its corpus passages as chunks) into ``kg``.

    Relations are typed from their predicates over the whole graph (:meth:`KnowledgeGraph.retype`):
    ``was born in`` -> ``BORN_IN``; the original predicate stays on the relation.

    With a corpus, each OpenIE doc is matched to its passage by exact text;
    corpus passages without OpenIE output are still added as chunks. Chunk ids are ``passage-NNNNN`` by corpus
    position, the chunk text is the passage text, the title goes to metadata. A position id that already names a
    different passage of another corpus file raises ``ValueError`` (this file would replace it by position); the
    same file, edited or appended to, updates its passages (parsed inputs given without ``names`` name no file).
    When none of the OpenIE passages is in the corpus (the wrong corpus), ``ValueError`` is raised and ``kg`` is
    left unchanged.
    ``names`` (OpenIE file, corpus file) name already parsed inputs in messages and chunk metadata.
    """
    typer = typer or RelationTyper()
    report = report if report is not None else IngestReport()
    target, kg = kg, KnowledgeGraph()  # built aside, then each passage replaces its earlier version
    data = load_json(openie) if isinstance(openie, (str, Path)) else openie
    given_name, given_source = names or ("openie", "corpus")
    passages = load_json(corpus) if isinstance(corpus, (str, Path)) else corpus
    name = str(openie) if isinstance(openie, (str, Path)) else given_name
    source = str(corpus) if isinstance(corpus, (str, Path)) else (given_source if corpus is not None else name)
    docs = check_corpus_match(data, passages, openie_name=name, corpus_name=source)
    if passages is None:
        passages = [dict(zip(("title", "text"), _split_passage(d))) for d in docs if isinstance(d, dict)]
    clash_check(target, passages, source)
    by_text: dict[str, int] = {}
    for i, chunk in add_passages(kg, passages, source, report):
        by_text.setdefault(chunk.text, i)
    from tqdm.auto import tqdm  # here: importing kg_rag for a query does not pay for tqdm (and asyncio)

    for doc in tqdm(docs, desc="importing OpenIE", disable=not progress):
        if not isinstance(doc, dict):
            report.skip("bad_doc")
            continue
        _, text = _split_passage(doc)
        if not text.strip():  # no passage to attach its triples to (without a corpus: counted above)
            if corpus is not None:
                report.skip("empty_passage")
            continue
        idx = by_text.get(text)
        if idx is None:
            report.skip("passage_not_in_corpus")
            continue
        cid = passage_id(idx)
        entity_names, triples = doc.get("extracted_entities") or [], doc.get("extracted_triples") or []
        if not isinstance(entity_names, list):  # a string would be read letter by letter
            report.skip("entities_not_a_list")
            entity_names = []
        if not isinstance(triples, list):
            report.skip("triples_not_a_list")
            triples = []
        for name in entity_names:
            if not isinstance(name, str) or not clean_display_name(name):
                report.skip("bad_entity")
                continue
            if report.refuses("entity", name):
                continue
            kg.add_entity(name, chunk_id=cid)
        for triple in triples:
            reason = _triple_problem(triple)
            if reason:
                shown = reason == "self_loop"
                report.skip(reason, example=f"{shown_name(triple[0])} -> {shown_name(triple[2])}" if shown else None)
                continue
            if report.refuses("member", triple[0], triple[2]):
                continue
            s, p, o = triple
            kg.add_relation(s, o, typer(p), predicate=p, chunk_id=cid, doc_id=cid)
            report.added["relations"] += 1
    replace_documents(target, kg, report)
    counts = target.retype(typer)  # corpus-level types: variants merged, rare predicates backed off
    logger.info("OpenIE import: %s skipped; %s", dict(report.skipped), counts)
    return report


def clash_check(target: KnowledgeGraph, passages: Sequence[Any], source: str) -> None:
    """Refuse a corpus file whose passage positions name passages of another corpus file in ``target``."""
    with target.lock:
        _check_no_clash(
            target,
            {
                passage_id(i): p["text"]
                for i, p in enumerate(passages)
                if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"].strip()
            },
            source,
        )


def add_passages(
    kg: KnowledgeGraph,
    passages: Sequence[Any],
    source: str,
    report: IngestReport,
    metadata: dict[str, Any] | None = None,
    keep: Any = None,
    chunk_metadata: dict[str, Any] | None = None,
) -> list[tuple[int, Chunk]]:
    """Each corpus passage as a document and one chunk (id ``passage-NNNNN`` by position, the title in metadata);
    malformed and blank passages are skipped and counted. ``keep(i, cid, text)``: passages to leave out (already
    stored unchanged); ``chunk_metadata``: more metadata for each chunk. Returns the chunks added, with their
    positions."""
    resolved = _resolved(source) if source not in _UNNAMED_SOURCES else None
    meta = {**({"path": resolved} if resolved else {}), **(metadata or {})}
    out = []
    for i, p in enumerate(passages):
        if not isinstance(p, dict) or not isinstance(p.get("text"), str):
            report.skip("bad_passage")
            continue
        if not p["text"].strip():  # `"passage": null` or blank: nothing to retrieve
            report.skip("empty_passage")
            continue
        cid = passage_id(i)
        if keep is not None and keep(i, cid, p["text"]):
            continue
        title = str(p.get("title") or "")
        # `stats --docs` shows the title; the resolved path tells this file from another later
        kg.add_document(cid, source=source, title=title or None, metadata=meta or None)
        about = {"title": title, "source": source, "index": i, **(chunk_metadata or {})}
        chunk = Chunk(cid, p["text"], cid, about, count_tokens(p["text"]))
        kg.add_chunk(chunk)
        report.added["chunks"] += 1
        out.append((i, chunk))
    return out


def _triple_problem(triple: Any) -> str | None:
    if not isinstance(triple, (list, tuple)) or len(triple) != 3:
        return "wrong_arity"
    if not all(isinstance(x, str) for x in triple):
        return "non_string_member"
    if not all(clean_display_name(x) for x in triple):
        return "empty_member"
    if canonical_key(triple[0]) == canonical_key(triple[2]):
        return "self_loop"
    return None
