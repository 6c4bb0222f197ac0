"""One module per ``audit`` sub-command; each stays light at import time (heavy imports inside)."""
