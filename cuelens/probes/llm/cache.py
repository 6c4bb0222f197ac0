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
    """``get(key)`` / ``put(key, …)`` over one SQLite file (created with its folder). A file
    that is not a cache database — corrupt, truncated, replaced while a probe runs — is moved
    aside to ``NAME.corrupt`` and the cache rebuilt empty, with a line in :attr:`warnings`
    (docs/llm-probe.md, "Response cache")."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.warnings: list[str] = []
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create the response cache's folder ({exc.strerror})",
                            path=str(self.path)) from None
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            return self._rebuild(exc)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
            db.execute("SELECT key, response FROM responses LIMIT 1").fetchall()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _rebuild(self, error: sqlite3.DatabaseError) -> sqlite3.Connection:
        """Move the damaged file aside and start an empty cache."""
        aside = self.path.with_name(self.path.name + ".corrupt")
        try:
            self.path.replace(aside)
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            db = self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"the response cache is damaged ({error}) and cannot be rebuilt "
                            f"({exc}); remove it or pass --no-cache", path=str(self.path)) \
                from None
        self.warnings.append(f"{self.path}: the response cache was damaged ({error}); moved "
                             f"to {aside.name} and rebuilt empty (its answers are asked again)")
        return db

    def _healed(self, error: sqlite3.DatabaseError) -> None:
        self._db.close()
        self._db = self._rebuild(error)

    def get(self, key: str) -> dict | None:
        try:
            row = self._db.execute("SELECT response FROM responses WHERE key = ?",
                                   (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            self._healed(exc)
            return None
        return None if row is None else json.loads(row[0])

    def put(self, key: str, response: dict, *, backend: str, model: str, template: str,
            item: str) -> None:
        row = (key, backend, model, template, item, json.dumps(response, ensure_ascii=False))
        for attempt in (1, 2):
            try:
                with self._db:
                    self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                                     row)
                return
            except sqlite3.DatabaseError as exc:
                if attempt == 2:
                    raise UserError(f"cannot write the response cache ({exc}); pass --no-cache",
                                    path=str(self.path)) from None
                self._healed(exc)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()
