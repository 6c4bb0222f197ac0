"""The scan's loaders by engine name (``audit scan --engine``; docs/large-datasets.md): each
gives the same :class:`~cuelens.data.Dataset` (:mod:`cuelens.engine`)."""

from __future__ import annotations

from collections.abc import Callable

from cuelens.data.schema import FieldMap
from cuelens.engine.options import EngineOptions, Loaded
from cuelens.registry import Registry


def _memory(data, train, test, fields, skip_bad, options) -> Loaded:
    from cuelens.data.loading import load_dataset

    return Loaded(load_dataset(data, train=train, test=test, fields=fields, skip_bad=skip_bad))


def _local(data, train, test, fields, skip_bad, options) -> Loaded:
    from cuelens.engine.streaming import load_streaming

    return Loaded(load_streaming(data, train=train, test=test, fields=fields, skip_bad=skip_bad))


def _ray(data, train, test, fields, skip_bad, options) -> Loaded:
    from cuelens.audit.ray_passes import load_ray

    return load_ray(data, train=train, test=test, fields=fields, skip_bad=skip_bad,
                    options=options)


ENGINES: Registry[Callable[..., Loaded]] = Registry(
    "engine", {"local": _local, "memory": _memory, "ray": _ray}, option="--engine")


def load_for_scan(engine: str, data: str | None = None, *, train: str | None = None,
                  test: str | None = None, hf: str | None = None, fields: FieldMap = FieldMap(),
                  skip_bad: bool = False, options: EngineOptions = EngineOptions()) -> Loaded:
    """Load the data arguments with ``engine`` (:mod:`cuelens.engine`; a Hugging Face dataset
    is always in memory)."""
    load = ENGINES.get(engine)
    if hf:  # load_dataset refuses DATA or --train/--test beside --hf
        from cuelens.data.loading import load_dataset

        return Loaded(load_dataset(data, train=train, test=test, hf=hf, fields=fields,
                                   skip_bad=skip_bad))
    return load(data, train, test, fields, skip_bad, options)
