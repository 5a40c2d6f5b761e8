"""Issue 29: the extraction schema (entity types, relation types with meanings, system prompt) from a YAML, TOML
or JSON file, checked with one-line errors, and the same object behind ``LLMExtractor(...)``."""

from __future__ import annotations

import json

import pytest

from kg_rag.ingest import LLMExtractor
from kg_rag.ingest.extraction_schema import SYSTEM_PROMPT, ExtractionSchema, load_schema

YAML = """
entity_types:
  PERSON: a named person
  POLICY: a policy, directive or order
relation_types:
  SUPERSEDES: source supersedes or replaces target
  REPORTS_TO: source reports to target
strict_vocabulary: true
gleaning: 1
"""
TOML = """
strict_vocabulary = true
gleaning = 1
[entity_types]
PERSON = "a named person"
POLICY = "a policy, directive or order"
[relation_types]
SUPERSEDES = "source supersedes or replaces target"
REPORTS_TO = "source reports to target"
"""
DATA = {
    "entity_types": {"PERSON": "a named person", "POLICY": "a policy, directive or order"},
    "relation_types": {"SUPERSEDES": "source supersedes or replaces target", "REPORTS_TO": "source reports to target"},
    "strict_vocabulary": True,
    "gleaning": 1,
}


def test_yaml_toml_and_json_give_the_same_schema(tmp_path):
    (tmp_path / "s.yaml").write_text(YAML)
    (tmp_path / "s.toml").write_text(TOML)
    (tmp_path / "s.json").write_text(json.dumps(DATA))
    schemas = [load_schema(tmp_path / name) for name in ("s.yaml", "s.toml", "s.json")]
    assert schemas[0] == schemas[1] == schemas[2]
    schema = schemas[0]
    assert list(schema.relation_types) == ["SUPERSEDES", "REPORTS_TO", "RELATED"]  # the fallback is added
    assert schema.strict_vocabulary and schema.gleaning == 1
    assert ExtractionSchema.from_dict(schema.to_dict()) == schema
    rendered = schema.rendered_system_prompt()
    assert "Allowed entity types: PERSON (a named person), POLICY (a policy, directive or order)." in rendered
    assert "- SUPERSEDES: source supersedes or replaces target\n- REPORTS_TO: source reports to target" in rendered


def test_the_default_schema_renders_the_prompt_as_before_and_has_no_key():
    schema = ExtractionSchema()
    assert schema.key() is None  # indexes built before schemas existed stay "unchanged"
    assert schema.rendered_system_prompt().startswith("You extract a knowledge graph from text.")
    assert "Allowed entity types: PERSON, ORGANIZATION, ROLE," in schema.rendered_system_prompt()
    custom = ExtractionSchema(relation_types=["SUPERSEDES"])
    assert custom.key() is not None and custom.key() == ExtractionSchema(relation_types=["SUPERSEDES"]).key()
    assert custom.key() != ExtractionSchema(relation_types=["SUPERSEDES"], gleaning=1).key()


def test_a_prompt_file_is_read_beside_the_schema(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "extract.txt").write_text(
        "Find the {entity_types} in legal text and how they relate:\n{relation_types}\nJSON looks like {{...}}."
    )
    (tmp_path / "schema.yaml").write_text("relation_types: [REVOKES]\nsystem_prompt_file: prompts/extract.txt\n")
    schema = load_schema(tmp_path / "schema.yaml")
    assert schema.rendered_system_prompt().endswith(
        "- REVOKES\n- RELATED: any other relation; describe it in the description\nJSON looks like {...}."
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("entity_type: [PERSON]", "unknown setting 'entity_type'; known: entity_types"),
        ("relation_types: {reports to: x}", "'reports to' is not UPPER_SNAKE (write REPORTS_TO)"),
        ("relation_types: []", "relation_types is empty"),
        ("entity_types: PERSON", "entity_types must be a list of types or a mapping"),
        ("system_prompt: Extract {entity_types}.", "system_prompt must contain {relation_types}"),
        ("system_prompt: '{entity_types} {relation_types} {\"name\": 1}'", "unknown placeholder"),
        ("system_prompt: '{entity_types} {relation_types} }'", "write literal braces as {{ and }}"),
        ("gleaning: -1", "gleaning must be an integer >= 0"),
        ("strict_vocabulary: 'yes'", "strict_vocabulary must be true or false"),
        ("system_prompt_file: missing.txt", "system_prompt_file"),
        ("entity_types: [PERSON\n", "not valid YAML"),
        ("- a list", "must be a mapping of settings"),
    ],
)
def test_bad_schema_files_are_one_line_errors_naming_the_file(tmp_path, text, message):
    path = tmp_path / "schema.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        load_schema(path)
    assert message in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"\.yaml, \.yml, \.toml or \.json"):
        load_schema(tmp_path / "schema.ini")
    with pytest.raises(ValueError, match="no such schema file"):
        load_schema(tmp_path / "nope.yaml")


def test_the_extractor_takes_the_schema_as_keyword_arguments(tmp_path, scripted_llm):
    (tmp_path / "s.yaml").write_text(YAML)
    schema = load_schema(tmp_path / "s.yaml")
    extractor = LLMExtractor(scripted_llm(lambda _: {}), **schema.extractor_kwargs())
    assert extractor.schema == schema and extractor.gleaning == 1
    by_hand = LLMExtractor(
        scripted_llm(lambda _: {}),
        entity_types={"PERSON": "a named person", "POLICY": "a policy, directive or order"},
        relation_types={
            "SUPERSEDES": "source supersedes or replaces target",
            "REPORTS_TO": "source reports to target",
        },
        strict_vocabulary=True,
        gleaning=1,
        system_prompt=SYSTEM_PROMPT,
    )
    assert by_hand.schema == schema
    # strict: a curated phrase cannot bring in a type the schema leaves out ("leads" -> MANAGES by default)
    assert extractor.typer("leads") == "RELATED" and extractor.typer("replaced") == "SUPERSEDES"
    assert LLMExtractor(scripted_llm(lambda _: {})).typer("leads") == "MANAGES"
    with pytest.raises(ValueError, match="not UPPER_SNAKE"):
        LLMExtractor(scripted_llm(lambda _: {}), relation_types=["supersedes"])


def test_a_prompt_file_that_is_not_utf8_is_a_one_line_error(tmp_path):
    (tmp_path / "prompt.txt").write_bytes(b"Extract \xff\xfe {entity_types} {relation_types}")
    (tmp_path / "schema.yaml").write_text("relation_types: [REVOKES]\nsystem_prompt_file: prompt.txt\n")
    with pytest.raises(ValueError, match="system_prompt_file .*prompt.txt: not UTF-8 text"):
        load_schema(tmp_path / "schema.yaml")
