"""A local OpenAI-compatible chat-completions server for tests (real HTTP on 127.0.0.1, canned answers).

It understands just enough of ``POST /v1/chat/completions`` to drive langchain-openai end to end:
structured output (``response_format`` json_schema) gets a well-formed extraction, a request with ``tools``
gets a scripted tool-calling dialogue, anything else gets an answer built from the context it was sent.
``mode`` switches to failures: ``"error"`` (HTTP 500) or ``"slow"`` (sleeps past client timeouts).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

EDGE = re.compile(r"^(.*?(?:-\[[A-Z0-9_]+\]->|<-\[[A-Z0-9_]+\]-).*)$", re.M)
COMMUNITY_REF = re.compile(r"^point score=\d+ communities=([^,\s]+)", re.M)
REPORT_HEAD = re.compile(r"^community=(\S+) level=\d+ rating=\S+(?: extractive)? title=(.*)$")
ENTITY_TYPES = re.compile(r"^Allowed entity types: (.*?)\.?$", re.M)
FACT = re.compile(r"(\w[\w ]*?\w) (supersedes|revokes|reports to) (\w[\w ]*?\w)(?=[.,;]|$)", re.I | re.M)


def usage(body: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
    """Token counts as a real server would report them (tiktoken over what was sent and returned), so cost
    figures measured against this server reflect the prompts kg-rag actually builds."""
    from kg_rag.tokens import count_tokens

    sent = [str(m.get("content", "")) for m in body.get("messages", [])]
    sent += [json.dumps(body[k]) for k in ("response_format", "tools") if body.get(k)]
    prompt = sum(count_tokens(t) + 4 for t in sent)  # + a few tokens of per-message framing
    completion = count_tokens(str(message.get("content") or "")) + count_tokens(
        json.dumps(message.get("tool_calls") or "")
    )
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def edges_in(text: str) -> list[str]:
    """Rendered graph edges in ``text``, skipping section headers and tool preambles."""
    return [e.strip() for e in EDGE.findall(text) if not e.startswith("-----") and not e.rstrip().endswith(":")]


class FakeOpenAI:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.tokens = {"prompt_tokens": 0, "completion_tokens": 0}
        """Tokens this server reported in its responses, summed (what a client's cost accounting must match)."""
        self.mode = "ok"
        self.slow_seconds = 3.0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # ----------------------------------------------------------------- replies
    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages", [])
        if body.get("response_format"):
            schema = body["response_format"].get("json_schema", {}).get("name", "")
            if schema == "CommunityReportOutput":
                return {"role": "assistant", "content": json.dumps(self.community_report(messages))}
            if schema == "KeyPoints":
                return {"role": "assistant", "content": json.dumps(self.key_points(messages))}
            if schema == "ReasonedAnswer":
                context = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
                edges = edges_in(context)
                reasoning = f"The context says {edges[0]}." if edges else "Nothing relevant."
                # the target of the path's first step: "A -[T]-> B -[T]-> C" answers "what is A's T" with B
                first = re.match(r".*?\]->? (.+?)(?: -\[| <-\[|$)", edges[0]) if edges else None
                answer = first.group(1) if first else "unknown"
                return {"role": "assistant", "content": json.dumps({"reasoning": reasoning, "answer": answer})}
            return {"role": "assistant", "content": json.dumps(self.extraction(messages))}
        if body.get("tools"):
            return self.agent_turn(messages, [t["function"]["name"] for t in body["tools"]])
        context = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
        if "Key points:" in context:  # the reduce step of global search
            cited = COMMUNITY_REF.findall(context)
            point = next((ln[2:] for ln in context.splitlines() if ln.startswith("| ")), "")
            answer = f"{point} [c:{cited[0]}]" if cited else "I do not know."
            return {"role": "assistant", "content": answer}
        edges = edges_in(context)
        answer = f"According to [1]: {edges[0]}" if edges else "I do not know."
        return {"role": "assistant", "content": answer}

    @staticmethod
    def extraction(messages: list[dict[str, Any]]) -> dict[str, Any]:
        """Relations for the "X supersedes/revokes/reports to Y" sentences of the text; entities typed POLICY, or,
        when the system prompt's "Allowed entity types:" line leaves POLICY out, its first type (so a test sees
        an extraction schema reach the model)."""
        text = str(messages[-1].get("content", ""))
        system = str(messages[0].get("content", "")) if len(messages) > 1 else ""
        allowed = ENTITY_TYPES.search(system)
        listed = [t.split(" (")[0].strip() for t in allowed.group(1).split(", ")] if allowed else []
        entity_type = "POLICY" if not listed or "POLICY" in listed else listed[0]
        relations, names = [], []
        for src, verb, tgt in FACT.findall(text):
            rtype = verb.upper().replace(" ", "_")
            relations.append(
                {
                    "source": src,
                    "target": tgt,
                    "type": rtype,
                    "description": verb,
                    "evidence": f"{src} {verb} {tgt}",
                    "confidence": 0.9,
                }
            )
            names += [src, tgt]
        entities = [{"name": n, "type": entity_type, "description": ""} for n in dict.fromkeys(names)]
        return {"entities": entities, "relations": relations}

    @staticmethod
    def community_report(messages: list[dict[str, Any]]) -> dict[str, Any]:
        text = str(messages[-1].get("content", ""))
        names = [ln[2:].split(" [")[0] for ln in text.splitlines() if ln.startswith("- ")]
        relations = [ln for ln in text.splitlines() if ln.startswith("[r:")]
        ids = [ln[3:].split("]", 1)[0] for ln in relations]
        findings = [
            {"summary": ln.split("] ", 1)[1].split(" — ")[0], "explanation": "stated in the sources"}
            for ln in relations[:3]
        ]
        return {
            "title": " and ".join(names[:2]) or "Community",
            "summary": f"{len(names)} entities around {names[0] if names else 'nothing'}.",
            "findings": findings,
            "rating": 6.5,
            "rating_explanation": "central to the collection",
            "cited_relation_ids": ids[:3],
        }

    @staticmethod
    def key_points(messages: list[dict[str, Any]]) -> dict[str, Any]:
        text = str(messages[-1].get("content", ""))
        points = []
        for line in text.splitlines():
            match = REPORT_HEAD.match(line)
            if match:
                title = match.group(2).strip('"')
                points.append({"description": title, "score": 60, "communities": [match.group(1)]})
        return {"points": points}

    @staticmethod
    def agent_turn(messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
        tool_messages = [m for m in messages if m.get("role") == "tool"]
        question = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")

        def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{len(tool_messages)}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }

        if len(tool_messages) == 0 and "knowledge_graph_search" in tools:
            return call("knowledge_graph_search", {"query": question})
        if len(tool_messages) == 1 and "find_connection" in tools:
            return call(
                "find_connection", {"source": "Lars Eriksen", "target": "Maria Chen", "relation_types": ["REPORTS_TO"]}
            )
        last = str(tool_messages[-1].get("content", "")) if tool_messages else ""
        edges = edges_in(last)
        return {"role": "assistant", "content": f"Answer: {edges[0] if edges else 'unknown'}"}

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(body)
                if server.mode == "error":
                    self._send(500, {"error": {"message": "simulated failure", "type": "server_error"}})
                    return
                if server.mode == "slow":
                    time.sleep(server.slow_seconds)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"unknown path {self.path}"}})
                    return
                message = server.reply(body)
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                counted = usage(body, message)
                for key in server.tokens:
                    server.tokens[key] += counted[key]
                if body.get("stream"):  # a client streaming tokens (e.g. under astream_events)
                    self._stream(body, message, finish, counted)
                    return
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": counted,
                    },
                )

            def _stream(self, body: dict[str, Any], message: dict[str, Any], finish: str, counted: dict) -> None:
                """The same reply as server-sent events: the content in a few deltas, then the finish reason,
                the usage when asked for, and ``[DONE]``."""
                base = {"id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion.chunk", "created": 0}
                base["model"] = body.get("model", "fake")
                content = message.get("content") or ""
                pieces = [content[i : i + 16] for i in range(0, len(content), 16)] or [""]
                deltas: list[dict[str, Any]] = [{"role": "assistant", "content": pieces[0]}]
                deltas += [{"content": piece} for piece in pieces[1:]]
                if message.get("tool_calls"):
                    deltas.append(
                        {"tool_calls": [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]}
                    )
                events = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
                events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
                if (body.get("stream_options") or {}).get("include_usage"):
                    events.append({**base, "choices": [], "usage": counted})
                data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:
                    pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:  # the client gave up (timeout test)
                    pass

        return Handler
