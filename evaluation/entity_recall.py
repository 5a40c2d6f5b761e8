"""Entity recall of a MuSiQue index against GPT-3.5's entity lists (by canonical key), as evaluation/README.md reports.

python evaluation/entity_recall.py idx-musique-nlp ../shared/data/musique/openie_gpt-3.5-turbo-1106.json
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    from kg_rag.eval.entities import musique_entity_recall
    from kg_rag.jsonio import load_json
    from kg_rag.store import open_store

    index, openie = sys.argv[1], sys.argv[2]
    kg = open_store(index).load().kg
    report = musique_entity_recall(kg, load_json(openie)["docs"])
    print(json.dumps({"index": index, **report}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
