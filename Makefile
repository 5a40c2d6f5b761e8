# Two entry points (see README): `make demo` and `make test`. Each creates .venv itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kg-rag-installed
TORCH_INDEX ?=

.PHONY: demo test lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, as the CPU build: otherwise the `test` extra (sentence-transformers) pulls a multi-GB CUDA torch. On plain PyPI the
	# Linux wheel is the CUDA one, so name PyTorch's CPU index: make demo TORCH_INDEX=https://download.pytorch.org/whl/cpu
	$(BIN)/python -m pip install -q torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install -q -e ".[local,postgres,serve,test,nlp]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kg-rag demo

test: $(STAMP)
	$(BIN)/ruff check kg_rag tests notebooks
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check kg_rag tests notebooks
	$(BIN)/ruff format --check kg_rag tests

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
