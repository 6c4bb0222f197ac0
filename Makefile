# Fresh-machine entry points (see README). Both set up .venv first (idempotent).
.PHONY: setup demo test

setup:
	bash scripts/setup.sh

demo: setup
	.venv/bin/audit demo --out demo-output

test: setup
	.venv/bin/python -m pytest --durations=20
