"""The core does not depend on LangChain: with every ``langchain*`` module blocked, a graph is built, embedded,
saved, loaded, queried and formatted; only the LangChain bindings need LangChain."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CORE_WITHOUT_LANGCHAIN = textwrap.dedent(
    """
    import importlib.abc, sys, tempfile

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0].startswith(("langchain", "langgraph")):
                raise ImportError(f"blocked: {name}")
            return None

    sys.meta_path.insert(0, Block())
    import kg_rag
    from kg_rag import Chunk, KnowledgeGraph, QueryEngine, build_index, format_context, load_index, save_index
    import kg_rag.eval, kg_rag.store.postgres, kg_rag.ingest, kg_rag.testing.compliance
    from kg_rag.testing import BagOfWordsEmbeddings

    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "Directive 2023-07 supersedes Directive 2019-03.", "orders.md"))
    kg.add_relation("Directive 2023-07", "Directive 2019-03", "SUPERSEDES", chunk_id="c1")
    emb = BagOfWordsEmbeddings()
    folder = tempfile.mkdtemp()
    save_index(build_index(kg, emb), folder)
    engine = QueryEngine(kg_rag.open_store(folder).backend(), emb)
    text = format_context(engine.retrieve("What superseded Directive 2019-03?")).text
    assert "Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07" in text, text
    loaded = [m for m in sys.modules if m.split(".")[0].startswith(("langchain", "langgraph"))]
    assert not loaded, loaded
    try:
        kg_rag.EntityBasedKGRAG
    except ImportError as exc:
        assert "blocked" in str(exc)
    else:
        raise AssertionError("the LangChain binding imported without LangChain")
    print("core ok")
    """
)


def test_core_imports_and_runs_with_langchain_blocked():
    proc = subprocess.run([sys.executable, "-c", CORE_WITHOUT_LANGCHAIN], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "core ok"


def test_public_api_is_importable_from_the_top_level():
    import kg_rag

    for name in (
        "EntityBasedKGRAG",
        "KnowledgeGraph",
        "QueryParams",
        "build_answer_graph",
        "make_retriever_tool",
        "make_path_tool",
        "build_agent",
        "load_index",
        "save_index",
        "open_store",
        "build_index",
        "import_openie",
        "import_graph_documents",
        "import_extraction_file",
        "load_documents",
        "index_documents",
        "LLMExtractor",
        "PostgresStore",
        "DirectoryStore",
    ):
        assert getattr(kg_rag, name) is not None, name
        assert name in kg_rag.__all__, name


def _imports(*, type_checking: bool = False) -> dict[str, dict[str, bool]]:
    """Every ``kg_rag`` import of every ``kg_rag`` module (those under ``if TYPE_CHECKING`` only with
    ``type_checking``): module -> imported module -> whether the import is at module level (``False``: inside a
    function)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = {p: p.relative_to(root).with_suffix("").parts for p in (root / "kg_rag").rglob("*.py")}
    modules = {".".join(parts[:-1] if parts[-1] == "__init__" else parts) for parts in files.values()}

    def resolve(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, dict[str, bool]] = {}
    for path, parts in files.items():
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = (
            set()
            if type_checking
            else {
                id(n)
                for node in ast.walk(tree)
                if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                for n in ast.walk(node)
            }
        )
        inner = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for n in ast.walk(node)
            if n is not node
        }
        out = graph.setdefault(module, {})
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kg_rag"):
                names = [resolve(f"{node.module}.{a.name}") for a in node.names]
            elif isinstance(node, ast.Import):
                names = [resolve(a.name) for a in node.names if a.name.startswith("kg_rag")]
            else:
                continue
            for name in names:
                if name and name != module:
                    out[name] = out.get(name, False) or id(node) not in inner
    return graph


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_store_knows_nothing_of_extraction_or_the_write_path():
    """Stores keep and serve rows; turning documents into rows (``ingest``, ``indexing``) sits above them, so no
    store module imports those, not even inside a function."""
    bad = [
        (module, name)
        for module, names in _imports().items()
        if module.startswith("kg_rag.store")
        for name in names
        if name.startswith(("kg_rag.ingest", "kg_rag.indexing"))
    ]
    assert not bad, bad


def test_no_import_circle_spans_two_packages():
    """Imports (inside functions too) form no loop through two packages (the write path once made one of seven
    files: index, ingest and store importing each other, held open by imports inside functions)."""
    graph = {m: set(names) for m, names in _imports().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for name in graph.get(module, ()):
            if name not in index:
                visit(name)
                low[module] = min(low[module], low[name])
            elif name in stack:
                low[module] = min(low[module], index[name])
        if low[module] == index[module]:
            part = []
            while True:
                name = stack.pop()
                part.append(name)
                if name == module:
                    break
            if len({_package(m) for m in part}) > 1:
                circles.append(sorted(part))

    for module in list(graph):
        if module not in index:
            visit(module)
    assert not circles, circles


LAYERS = (
    ("errors", "tokens", "jsonio", "arrays", "fence", "chat_calls"),
    ("model",),
    ("ingest",),
    ("communities",),
    ("index",),
    ("store",),
    ("context",),
    ("query",),
    ("indexing",),
    ("export", "testing", "demo"),
    ("langchain", "explorer", "eval"),
    ("cli",),
)
"""The layers of ``kg_rag``, ground first, as ``docs/architecture.md`` draws them: a module imports only from
its own layer or those below."""


def _layer(module: str) -> int:
    name = module.split(".")[1]
    return next(i for i, names in enumerate(LAYERS) if name in names)


def test_every_package_has_a_layer():
    modules = {m.split(".")[1] for m in _imports() if m != "kg_rag"}
    assert modules == {name for names in LAYERS for name in names}


def test_no_import_runs_back_up_a_layer():
    """Not even inside a function or only for type checking's sake: the engine takes the context formatter as a
    callable, and the result types, the path notation and the prompt fence sit below both."""
    up = [
        (module, name)
        for module, names in _imports(type_checking=True).items()
        if module != "kg_rag"
        for name in names
        if name != "kg_rag" and _layer(name) > _layer(module)
    ]
    assert not up, up
