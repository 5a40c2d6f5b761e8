"""The explorer's web server: a FastAPI app over one retriever, serving the page and a small read-only JSON API.

``GET /`` the page; ``GET /api/overview``; ``GET /api/search?q=``; ``POST /api/query`` (a question and the
retriever's filters); ``POST /api/entity`` (an entity and the same filters). Bad input — an unknown filter or
value, a relation type the index does not have, an unknown entity, an over-long question or body — is a 4xx
with a one-line ``{"error": ...}``; any other failure is a 500 with one line, and the server keeps serving. No
endpoint writes to the index.

Every request first passes :class:`RequestGuard`: a ``Host`` the explorer does not serve is refused (400), so a
web page whose DNS name is rebound to 127.0.0.1 cannot reach a loopback-bound explorer, and a body is counted
as it arrives, so one over :data:`MAX_BODY_BYTES` is refused (413) after at most that many bytes were read,
whether it declares a ``Content-Length`` or is chunked.
"""

import logging
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from kg_rag.errors import InputError
from kg_rag.explorer import views
from kg_rag.query import limits

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024
"""Largest request body accepted."""
# the limits every entry point shares (kg_rag.query.limits): the same question length as kg-rag query and MCP
MAX_QUESTION_CHARS = limits.MAX_QUESTION_CHARS
MAX_NAMES = limits.MAX_FILTER_NAMES
MAX_HOPS = limits.MAX_SERVED_HOPS
MAX_K = limits.MAX_SERVED_K
STATIC = Path(__file__).with_name("static")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
"""Host names every explorer answers (a loopback address reached by its own name)."""
WILDCARD_ADDRESSES = ("0.0.0.0", "::", "")


def vis_network_dir() -> Path:
    """The vis-network build shipped by the ``pyvis`` package (a declared dependency of the ``serve`` extra)."""
    try:
        root = resources.files("pyvis")
    except ModuleNotFoundError as exc:
        raise ImportError("the explorer needs the serve extra: pip install 'kg-rag[serve]'") from exc
    lib = Path(str(root)) / "lib"
    builds = sorted(p for p in lib.glob("vis-*") if (p / "vis-network.min.js").is_file())
    if not builds:
        raise ImportError(f"no vis-network build found in {lib} (reinstall pyvis)")
    return builds[-1]


class Filters(BaseModel):
    """The retriever's filters (the same names and meaning as ``kg-rag query`` flags)."""

    model_config = ConfigDict(extra="forbid")
    edge_types: list[str] | None = Field(default=None, max_length=MAX_NAMES)
    exclude_edge_types: list[str] | None = Field(default=None, max_length=MAX_NAMES)
    direction: Literal["out", "in", "both"] | None = None
    max_hops: int | None = Field(default=None, ge=0, le=MAX_HOPS)
    include_entities: list[str] | None = Field(default=None, max_length=MAX_NAMES)
    exclude_entities: list[str] | None = Field(default=None, max_length=MAX_NAMES)
    k: int | None = Field(default=None, ge=1, le=MAX_K)

    def settings(self) -> dict[str, Any]:
        """The retrieval settings the user set (unset filters keep the retriever's own)."""
        return {k: getattr(self, k) for k in Filters.model_fields if getattr(self, k) is not None}


class QuestionRequest(Filters):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)


class EntityRequest(Filters):
    entity: str = Field(min_length=1, max_length=limits.MAX_NAME_CHARS)


def error(status: int, message: str) -> JSONResponse:
    """The one-line ``{"error": ...}`` every refusal is."""
    return JSONResponse({"error": " ".join(str(message).split())[:500]}, status_code=status)


class BodyTooLarge(StarletteHTTPException):
    """A request body passed :data:`MAX_BODY_BYTES` while it was read (413)."""

    def __init__(self) -> None:
        super().__init__(413, f"request body too large (at most {MAX_BODY_BYTES} bytes)")


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port, lower-case: ``[::1]:8765`` -> ``::1``."""
    host = header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


class RequestGuard:
    """ASGI middleware in front of every route: refuses a ``Host`` not in ``allowed_hosts`` (``"*"`` allows any)
    and counts the body as it streams (see the module docstring)."""

    def __init__(self, app: Any, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.allowed = {host_name(h) for h in allowed_hosts}
        self.any_host = "*" in self.allowed

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or ()}
        host = host_name(headers.get("host", ""))
        if not self.any_host and host not in self.allowed:
            shown = host or "(none)"
            refusal = error(
                400, f"host {shown!r} is not served here (start kg-rag serve with --allow-host {shown} to serve it)"
            )
            await refusal(scope, receive, send)
            return
        size = headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_BODY_BYTES):
            await error(413, BodyTooLarge().detail)(scope, receive, send)
            return
        read = 0
        started = False

        async def counted() -> dict[str, Any]:
            nonlocal read
            message = await receive()
            if message.get("type") == "http.request":
                read += len(message.get("body", b""))
                if read > MAX_BODY_BYTES:
                    raise BodyTooLarge()  # FastAPI passes an HTTPException on from reading the body
            return message

        async def watched(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message.get("type") == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge as exc:  # read outside a route that turns it into its 413
            if started:
                raise
            await error(413, exc.detail)(scope, receive, send)


def create_app(
    retriever: Any, *, title: str = "kg-rag explorer", allowed_hosts: Iterable[str] | None = None
) -> FastAPI:
    """The ASGI app for ``retriever`` (an :class:`~kg_rag.langchain.retriever.EntityBasedKGRAG`). It answers
    requests for the loopback names (:data:`LOOPBACK_HOSTS`) and ``allowed_hosts`` (``"*"``: any host)."""
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static/vis", StaticFiles(directory=vis_network_dir()), name="vis")
    app.mount("/static/app", StaticFiles(directory=STATIC), name="app")
    app.add_middleware(RequestGuard, allowed_hosts=[*LOOPBACK_HOSTS, *(allowed_hosts or ())])

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return error(422, f"{where}: {first.get('msg', 'invalid request')}" if where else first.get("msg", "invalid"))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("explorer request failed")
        return error(500, f"internal error: {type(exc).__name__}: {exc}")

    def current() -> None:
        """Follow a directory index to its newest generation (one small file read when nothing changed;
        PostgreSQL reads the newest committed version anyway)."""
        retriever.refresh()

    def settings_of(body: Filters) -> tuple[dict[str, Any], Any]:
        settings = body.settings()
        check_types(settings)
        return settings, retriever.params_for(**settings)  # ValueError (one line) for a bad value

    def check_types(settings: dict[str, Any]) -> None:
        """A relation type the index does not have, in the allow or the deny list, is a mistake (a typo, another
        index's vocabulary): refused, naming it, rather than answered with an empty or unfiltered graph."""
        from kg_rag.query.stages import unknown_relation_types

        if not settings.get("edge_types") and not settings.get("exclude_edge_types"):
            return
        problems = []
        with retriever.backend.reader() as view:
            for name in ("edge_types", "exclude_edge_types"):
                unknown = unknown_relation_types(view, settings.get(name))
                if unknown:
                    problems.append(f"{name}: no relation of type {', '.join(map(repr, unknown))} in this index")
        if problems:
            raise InputError("; ".join(problems) + " (the overview lists the relation types)")

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/api/overview")
    def get_overview() -> JSONResponse:
        current()
        return JSONResponse(views.overview(retriever.backend, retriever.params.walk.filter))

    @app.get("/api/search")
    def search(q: str = Query(min_length=1, max_length=200), limit: int = Query(10, ge=1, le=50)) -> JSONResponse:
        try:
            found = views.search_entities(
                retriever.backend, retriever.embeddings, q, limit, retriever.params.walk.filter
            )
            return JSONResponse(found)
        except ValueError as exc:
            return error(422, str(exc))

    @app.post("/api/query")
    def query(body: QuestionRequest) -> JSONResponse:
        current()
        try:
            settings, _ = settings_of(body)
            return JSONResponse(views.question_view(retriever, body.question, settings))
        except ValueError as exc:
            return error(422, str(exc))

    @app.post("/api/entity")
    def entity(body: EntityRequest) -> JSONResponse:
        current()
        try:
            _, params = settings_of(body)
            return JSONResponse(views.entity_view(retriever.backend, body.entity, params, retriever.engine.embed))
        except views.NotFound as exc:
            return error(404, str(exc))
        except ValueError as exc:
            return error(422, str(exc))

    return app


def serve(
    retriever: Any,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    log_level: str = "warning",
    allowed_hosts: Iterable[str] = (),
) -> None:
    """Run the explorer with uvicorn until interrupted. It answers requests for the loopback names, for ``host``
    unless that is a wildcard address, and for ``allowed_hosts``."""
    import uvicorn

    own = [] if host in WILDCARD_ADDRESSES else [host]
    app = create_app(retriever, allowed_hosts=[*own, *allowed_hosts])
    uvicorn.run(app, host=host, port=port, log_level=log_level)
