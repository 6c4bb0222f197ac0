# Fresh-machine entry points (see README). Both set up .venv first (idempotent).
.PHONY: setup demo test

setup:
	bash scripts/setup.sh

demo: setup
	.venv/bin/audit demo --out demo-output

# two workers (pytest-xdist; a file's tests on one worker, so that its module fixtures and its Ray
# cluster are built once), then the tests that bound wall-clock time, alone
test: setup
	.venv/bin/python -m pytest -n 2 --dist loadfile -m "not timing" --durations=20
	.venv/bin/python -m pytest -m timing
