"""A persistent response cache in SQLite (stdlib ``sqlite3``) for the LLM probe: JSON values
(never pickle) stored as they arrive, keyed by a hash of everything that changes an answer, never
the API key (docs/methods.md §6; docs/llm-probe.md, "Response cache")."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from cuelens.errors import UserError

_SCHEMA = ("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, backend TEXT, model TEXT, "
           "template TEXT, item TEXT, response TEXT NOT NULL)")


def cache_key(*parts) -> str:
    """SHA-256 of the JSON of ``parts`` (all plain data)."""
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """``get(key)`` / ``put(key, …)`` over one SQLite file (created with its folder)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise UserError(f"cannot open the response cache ({exc})", path=str(self.path)) \
                from None

    def get(self, key: str) -> dict | None:
        row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, response: dict, *, backend: str, model: str, template: str,
            item: str) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                             (key, backend, model, template, item,
                              json.dumps(response, ensure_ascii=False)))

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()
