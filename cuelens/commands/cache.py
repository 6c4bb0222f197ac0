"""``audit cache``: inspect or empty the parse cache of the ICQ features (docs/cache.md)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from cuelens.commands.common import CacheDirOpt, console, user_errors
from cuelens.wording import plural

app = typer.Typer(help="The parse cache of the ICQ feature cues (docs/cache.md).\n\n"
                       "Example: audit cache info", no_args_is_help=True)


def _mib(n: int) -> str:
    return f"{n / 1024**2:,.1f} MiB"


def _root(cache_dir: Path | None) -> Path:
    """``--cache-dir``, else the default; a path that is, or lies under, a file is an error
    (it was reported as an empty cache, and "cleared")."""
    from cuelens.atomic import existing_ancestor
    from cuelens.audit.parse_cache import default_cache_dir
    from cuelens.errors import UserError

    root = cache_dir or default_cache_dir()
    existing = existing_ancestor(root)
    if not existing.is_dir():
        raise UserError(f"not a parse cache: {existing} is not a directory "
                        "(--cache-dir, $CUELENS_CACHE_DIR)", path=str(root))
    return root


@app.command("info")
@user_errors
def info(cache_dir: CacheDirOpt = None) -> None:
    """Where the cache is, how big it is, and its size limit."""
    from cuelens.audit.parse_cache import cache_info

    root = _root(cache_dir)
    facts = cache_info(root)
    where = "" if root.is_dir() else " (not created yet: no scan has cached a parse here)"
    typer.echo(f"path: {facts['path']}{where}\nsize: {_mib(facts['bytes'])} in "
               f"{plural(facts['shards'], 'shard')}, {plural(facts['namespaces'], 'namespace')}\n"
               f"limit: {_mib(facts['max_bytes'])} "
               "(least recently used shards are evicted; $CUELENS_CACHE_MAX_BYTES)")


@app.command("clear")
@user_errors
def clear(cache_dir: CacheDirOpt = None) -> None:
    """Delete every cached parse (the next scan parses again)."""
    from cuelens.audit.parse_cache import clear_cache

    root = _root(cache_dir)
    console.print(f"freed {_mib(clear_cache(root))} in {escape(str(root))}", highlight=False)
