"""Issue 29 §2: every command in evaluation/README.md can be pasted as it stands — it parses, names only methods
that exist, and holds no placeholder."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from kg_rag.cli import build_parser
from kg_rag.eval.methods import load_method_specs

REPO = Path(__file__).resolve().parents[2]


def _commands() -> list[list[str]]:
    text = (REPO / "evaluation" / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("kg-rag "):
                out.append(shlex.split(line)[1:])
    return out


def test_the_evaluation_commands_parse_and_name_real_methods():
    commands = _commands()
    assert len([c for c in commands if c[0] == "eval"]) >= 3
    parser = build_parser()
    known = load_method_specs(REPO / "methods")
    for argv in commands:
        assert not any("<" in a or ">" in a for a in argv), argv  # a placeholder cannot be pasted
        args = parser.parse_args(argv)
        if argv[0] == "eval":
            names = [m for m in args.methods.split(",") if m]
            assert names and set(names) <= set(known), set(names) - set(known)
