"""The parse cache's bounds (issue 13): variable-width storage, LRU size limit, unreadable
shards as misses, and `audit cache info|clear`."""

from __future__ import annotations

import os
import time

from typer.testing import CliRunner

from cuelens.audit.features import Annotations
from cuelens.audit.parse_cache import ParseCache, cache_info, evict, text_keys
from cuelens.cli import app


def _store(cache: ParseCache, namespace: str, texts: list[str], values: list[str]) -> None:
    cache.store(namespace, text_keys(texts), Annotations.from_lists([(v,) for v in values]))


def test_one_long_value_costs_its_length_not_length_times_vocabulary(tmp_path):
    cache = ParseCache(tmp_path)
    long_value = "x" * 100_000
    values = [long_value] + [f"v{i}" for i in range(2000)]
    _store(cache, "pipe/feat", [f"t{i}" for i in range(len(values))], values)
    size = cache_info(tmp_path)["bytes"]
    # fixed-width unicode storage would take 2001 × 100,000 × 4 bytes = 800 MB
    assert size < 200_000
    ParseCache.clear_memory()
    found, ann = ParseCache(tmp_path).lookup("pipe/feat", text_keys(["t0", "t7"]))
    assert found.tolist() == [True, True]
    assert [ann.vocab[j] for j in ann.matrix.tocsr()[0].indices] == [long_value]
    assert [ann.vocab[j] for j in ann.matrix.tocsr()[1].indices] == ["v6"]


def test_size_limit_evicts_least_recently_used_shards(tmp_path):
    big = ParseCache(tmp_path, max_bytes=10**9)
    for name in ("a", "b", "c"):
        _store(big, f"pipe/{name}", [f"{name}{i}" for i in range(300)],
               [f"{name}-value-{i}" for i in range(300)])
    shards = {p.parent.name: p for p in tmp_path.rglob("shard-*.npz")}
    now = time.time()
    for age, name in ((300, "a"), (200, "b"), (100, "c")):
        os.utime(shards[name], (now - age, now - age))
    ParseCache.clear_memory()
    ParseCache(tmp_path).lookup("pipe/a", text_keys(["a1"]))  # a read makes "a" recent
    one = shards["a"].stat().st_size
    freed = evict(tmp_path, max_bytes=2 * one + 100)
    assert freed > 0
    assert sorted(p.parent.name for p in tmp_path.rglob("shard-*.npz")) == ["a", "c"]


def test_store_keeps_the_cache_under_its_limit(tmp_path):
    cache = ParseCache(tmp_path, max_bytes=5_000)
    for k in range(6):
        _store(cache, f"pipe/n{k}", [f"{k}-{i}" for i in range(100)],
               [f"value {k} {i}" for i in range(100)])
    assert cache_info(tmp_path)["bytes"] <= 5_000


def test_truncated_shard_is_a_miss_and_removed(tmp_path):
    _store(ParseCache(tmp_path), "pipe/feat", ["a", "b"], ["x", "y"])
    (shard,) = tmp_path.rglob("shard-*.npz")
    shard.write_bytes(shard.read_bytes()[:-40])
    ParseCache.clear_memory()
    found, _ = ParseCache(tmp_path).lookup("pipe/feat", text_keys(["a", "b"]))
    assert found.tolist() == [False, False] and not shard.exists()


def test_cache_info_and_clear_commands(tmp_path):
    _store(ParseCache(tmp_path / "c"), "pipe/feat", ["a"], ["x"])
    (tmp_path / "c" / "keep.txt").write_text("not ours")
    runner = CliRunner()
    info = runner.invoke(app, ["cache", "info", "--cache-dir", str(tmp_path / "c")])
    assert info.exit_code == 0 and "1 shard, 1 namespace" in info.output
    assert "limit: 2,048.0 MiB" in info.output
    cleared = runner.invoke(app, ["cache", "clear", "--cache-dir", str(tmp_path / "c")])
    assert cleared.exit_code == 0, cleared.output
    assert not list((tmp_path / "c").rglob("*.npz"))
    assert (tmp_path / "c" / "keep.txt").exists()
    typo = runner.invoke(app, ["cache", "info", "--cache-dir", str(tmp_path / "d")])
    assert typo.exit_code == 0 and "(not created yet: no scan has cached a parse here)" in \
        typo.output and not (tmp_path / "d").exists()


def test_unusable_max_bytes_is_one_error_line_not_ignored(tmp_path, monkeypatch):
    runner = CliRunner()
    for value in ("abc", "-5", "1e9"):
        monkeypatch.setenv("CUELENS_CACHE_MAX_BYTES", value)
        info = runner.invoke(app, ["cache", "info", "--cache-dir", str(tmp_path)])
        assert info.exit_code == 2 and "Traceback" not in info.output
        assert "$CUELENS_CACHE_MAX_BYTES" in info.output and repr(value) in info.output
        assert "limit:" not in info.output
    monkeypatch.setenv("CUELENS_CACHE_MAX_BYTES", "0")
    info = runner.invoke(app, ["cache", "info", "--cache-dir", str(tmp_path)])
    assert info.exit_code == 0 and "limit: 0.0 MiB" in info.output


def test_scan_with_features_refuses_unusable_max_bytes_before_any_work(tmp_path, monkeypatch):
    from cuelens.audit.pipeline import check_scan_outputs
    from cuelens.errors import UserError

    monkeypatch.setenv("CUELENS_CACHE_MAX_BYTES", "abc")
    try:
        check_scan_outputs([], 10, tmp_path / "out", cache_dir=tmp_path / "c")
    except UserError as error:
        assert "$CUELENS_CACHE_MAX_BYTES" in str(error)
    else:
        raise AssertionError("an unusable limit was accepted")
    check_scan_outputs([], 10, tmp_path / "out", cache_dir=tmp_path / "c", uses_cache=False)


def test_cache_commands_refuse_a_file_as_the_cache_directory(tmp_path, monkeypatch):
    """A file (or a path under one) was reported as an empty cache, and 'freed 0.0 MiB'."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    runner = CliRunner()
    for command in ("info", "clear"):
        for root in (blocker, blocker / "sub"):
            result = runner.invoke(app, ["cache", command, "--cache-dir", str(root)])
            assert result.exit_code == 2 and "Traceback" not in result.output
            assert f"{blocker} is not a directory" in result.output
        monkeypatch.setenv("CUELENS_CACHE_DIR", str(blocker))
        result = runner.invoke(app, ["cache", command])
        assert result.exit_code == 2 and "not a parse cache" in result.output
        monkeypatch.delenv("CUELENS_CACHE_DIR")
    assert blocker.read_text() == "a file, not a directory"


def test_cache_clear_of_a_read_only_cache_is_one_error_line(tmp_path, monkeypatch):
    """A shard that cannot be deleted (read-only cache; simulated: root ignores modes) was
    PermissionError's traceback."""
    from pathlib import Path

    _store(ParseCache(tmp_path / "c"), "pipe/feat", ["a"], ["x"])
    (shard,) = (tmp_path / "c").rglob("shard-*.npz")

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    result = CliRunner().invoke(app, ["cache", "clear", "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{shard}: cannot delete this shard: Permission denied" in " ".join(
        result.output.split())
