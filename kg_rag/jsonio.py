"""Reading JSON input files (extraction files, OpenIE output, corpora, questions) with one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError, InputNotFoundError


def load_json(path: str | Path) -> Any:
    """Read an input JSON file. A missing or unreadable file raises ``FileNotFoundError``/``ValueError`` whose
    message starts with the path; so does invalid or absurdly nested JSON."""
    p = Path(path)
    if not p.exists():
        raise InputNotFoundError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p}: is a folder, not a JSON file")
    try:
        with p.open(encoding="utf-8") as fh:
            data = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: not valid JSON ({exc})") from exc
    except RecursionError as exc:
        raise InputError(f"{p}: JSON is nested too deeply") from exc
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from exc
    return data
