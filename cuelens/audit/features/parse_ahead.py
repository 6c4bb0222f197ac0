"""Parse ahead (docs/icq-features.md, "Speed"): the texts the spaCy features miss in the parse
cache, parsed by a separate Python process while the scan computes its word cues; the feature
audit then reads them from the cache (and parses itself whatever that process left undone)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from cuelens.atomic import atomic_write_text
from cuelens.audit.features.annotate import annotate, default_n_process, uncached
from cuelens.audit.features.base import DocFeature, Feature
from cuelens.audit.features.registry import get_features
from cuelens.audit.parse_cache import ParseCache
from cuelens.data.dataset import Instances

#: Fewer texts to parse than this: the feature audit parses them itself (the process costs
#: ~0.7 CPU-s to start and, on data as small as COPA, saves no time; docs/icq-features.md).
AHEAD_MIN_TEXTS = 4000
#: The Python that runs the parse: this one.
PYTHON = sys.executable


class ParseAhead:
    """A parse running in a fresh Python process (:func:`main`, on this process's ``sys.path``;
    not multiprocessing's spawn, which re-runs the caller's script when it lacks a
    ``__main__`` guard); :meth:`wait` before reading the parse cache, :meth:`stop` on leaving."""

    def __init__(self, features: list[str], texts: list[str], premises: list[str] | None,
                 cache_dir: str | Path, n_process: int, work_dir: str | Path | None = None
                 ) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="cuelens-parse-", dir=work_dir))
        job = {"features": features, "texts": texts, "premises": premises,
               "cache_dir": str(cache_dir), "n_process": n_process, "parent": os.getpid()}
        try:
            (self.directory / "job.json").write_text(json.dumps(job), encoding="utf-8")
            self.process = subprocess.Popen(
                [PYTHON, "-c", f"from {__name__} import main; main()", str(self.directory)],
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},  # this cuelens
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def fraction(self) -> float:
        """The fraction of the texts parsed so far."""
        try:
            return float((self.directory / "progress").read_text())
        except (OSError, ValueError):
            return 0.0

    def wait(self, progress: Callable[[str, float], None] | None = None) -> None:
        """Wait for the process to end (``progress("parse", fraction)`` meanwhile); one that
        failed leaves its texts to the feature audit."""
        while self.process.poll() is None:
            if progress is not None:
                progress("parse", self.fraction())
            time.sleep(0.2)
        self.stop()

    def stop(self) -> None:
        """End the process (if still running) and remove its files."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def parse_ahead(features: Sequence[Feature], instances: Iterable[Instances],
                cache_dir: str | Path, work_dir: str | Path | None = None) -> ParseAhead | None:
    """A :class:`ParseAhead` of the texts of ``instances`` that the spaCy ``features`` miss in
    the cache under ``cache_dir``, with as many worker processes as there are idle CPUs
    (:func:`~.annotate.default_n_process`), its job files under ``work_dir`` (the scan's; else
    the system's temporary directory); ``None`` below :data:`AHEAD_MIN_TEXTS` texts or with
    fewer than two idle CPUs (a busy machine parses in the scan's own process, the least CPU
    time)."""
    docs = [f for f in features if isinstance(f, DocFeature)]
    if not docs or getattr(sys, "frozen", False):  # a frozen app's executable runs no ``-c``
        return None
    paired = any(f.uses_premise for f in docs)
    texts: list[str] = []
    premises: list[str] = []
    for part in instances:
        texts += part.texts
        premises += part.premises if paired else []
    bound = len(texts) + len(premises)  # no fewer than the distinct texts to parse
    processes = default_n_process(bound)
    if bound < AHEAD_MIN_TEXTS or processes < 2:  # decided before hashing texts for the cache
        return None
    misses = uncached(docs, texts, premises if paired else None, ParseCache(cache_dir))
    if misses < AHEAD_MIN_TEXTS:
        return None
    try:
        return ParseAhead([f.name for f in docs], texts, premises if paired else None, cache_dir,
                          processes, work_dir)
    except OSError:  # no room for the job, no Python to run: the feature audit parses
        return None


def main() -> None:
    """The process's side: parse the job in the directory ``sys.argv[1]`` into the cache,
    writing the progress there."""
    directory = sys.argv[1]
    job = json.loads(Path(directory, "job.json").read_text(encoding="utf-8"))
    annotate(get_features(job["features"]), job["texts"], job["premises"],
             ParseCache(job["cache_dir"]), progress_writer(Path(directory, "progress"),
                                                           job["parent"]), job["n_process"])


def progress_writer(path: Path, parent: int) -> Callable[[str, float], None]:
    """The process's progress: each fraction written to ``path``; a scan killed without
    stopping it (its ``parent`` process gone) ends it at the next report."""
    def report(stage: str, fraction: float) -> None:
        if os.getppid() != parent:
            raise SystemExit("the scan that started this parse has ended")
        atomic_write_text(path, f"{fraction:.4f}")
    return report
