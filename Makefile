# Two commands do everything on a fresh machine: `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# torch is pinned here, in the install step: an unpinned torch pulls a multi-GB CUDA build.
TORCH_PIN := torch==2.13.0

.PHONY: install run test display-deps clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH_PIN)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/dtmr-studio

# Xvfb and two xcb libraries are needed for the real-window tests; install them when we can.
display-deps:
	@missing=""; \
	command -v Xvfb >/dev/null 2>&1 || missing="$$missing xvfb"; \
	ldconfig -p 2>/dev/null | grep -q libxcb-icccm.so.4 || missing="$$missing libxcb-icccm4"; \
	ldconfig -p 2>/dev/null | grep -q libxcb-keysyms.so.1 || missing="$$missing libxcb-keysyms1"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing"; \
	    apt-get install -y -q $$missing >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null && apt-get install -y -q $$missing >/dev/null; }; \
	  else \
	    echo "missing:$$missing. Install them with: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

test: install display-deps
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build dist *.egg-info
