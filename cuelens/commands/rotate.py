"""``audit rotate``: write every cyclic rotation of a multiple-choice test split (docs/methods.md §6)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from cuelens.commands.common import (DataSource, SeedOpt, console, data_options, user_errors)
from cuelens.data.dataset import Task
from cuelens.errors import UserError
from cuelens.wording import plural


@user_errors
@data_options(without=("hypothesis_field",))
def rotate(
    source: DataSource,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for rotation_<r>.jsonl.")]
    = Path("rotations"),
    seed: SeedOpt = 0,
) -> None:
    """Write the evaluated split once per rotation of its choices, for a model run elsewhere;
    give its predictions back to `audit probe --position-predictions` with the same --seed.

    rotations.json, written beside them, holds the seed and a hash of the items: the probe
    refuses predictions kept in --out that are of other items or of another --seed.

    Example: audit rotate data/copa/ --out rotations/ && audit probe data/copa/ -p preds.jsonl
    --position-predictions rotations/preds_0.jsonl --position-predictions rotations/preds_1.jsonl
    """
    from cuelens.atomic import output_set
    from cuelens.jsonio import write_json, write_jsonl
    from cuelens.outputs import check_outputs
    from cuelens.probes.position import (MANIFEST, rotated_splits, rotation_manifest,
                                         rotation_records)

    dataset = source.load(alone="test")
    if dataset.task != Task.MCQ:
        raise UserError("rotations are for multiple-choice datasets")
    splits = rotated_splits(dataset.test, seed)
    paths = [out / f"rotation_{r}.jsonl" for r in range(len(splits))]
    check_outputs([*paths, out / MANIFEST], dataset.input_paths)
    with output_set():
        for path, split in zip(paths, splits):
            write_jsonl(path, rotation_records(split))
        write_json(out / MANIFEST, rotation_manifest(dataset.test, seed,
                                                     [path.name for path in paths]))
    console.print(f"wrote {plural(len(paths), 'rotation')} of {plural(len(dataset.test), 'item')} to "
                  f"{escape(str(out))}")
    stale = sorted(set(out.glob("rotation_*.jsonl")) - set(paths))
    if stale:
        names = ", ".join(path.name for path in stale[:3]) + (", …" if len(stale) > 3 else "")
        console.print(f"[yellow]warning:[/] {escape(str(out))} also holds {escape(names)} "
                      f"from an earlier run: not rotations of this data (give "
                      f"--position-predictions the {len(paths)} written now)")
