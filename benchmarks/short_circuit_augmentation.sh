#!/usr/bin/env bash
# docs/methods.md §7–8 real run: minilm fine-tuned on COPA (dev as train) and ARCT (train), with and without
# crossover+mutation augmentation (same budget: the augmented set is twice as large, so it gets
# half the epochs = the same number of optimiser steps), then probed on the test sets:
# accuracy, AW (calibrated thresholds, with CI and null rate; AW_THRESHOLDS=fixed for the paper's),
# CO and every operator's pass rate. CPU; runtime is printed per step.
#   usage: bash benchmarks/short_circuit_augmentation.sh [copa arct]   (OUT=dir to change output)
set -euo pipefail
AUDIT=${AUDIT:-.venv/bin/audit}
DATA=${DATA:-../shared/data}
OUT=${OUT:-bench-out/short-circuit}
EPOCHS=${EPOCHS:-4}
mkdir -p "$OUT"
step() { local t0=$SECONDS; "$@"; echo "[$(( SECONDS - t0 ))s] $*" | tee -a "$OUT/timings.txt"; }
datasets=("$@")
[ ${#datasets[@]} -gt 0 ] || datasets=(copa arct)
for ds in "${datasets[@]}"; do
  case $ds in
    copa) train=$DATA/copa/dev.jsonl; test=$DATA/copa/test.jsonl ;;
    arct) train=$DATA/arct/train.jsonl; test=$DATA/arct/test.jsonl ;;
    *) echo "unknown dataset $ds" >&2; exit 2 ;;
  esac
  step $AUDIT augment "$train" --ops crossover,mutation --ratio 1.0 --seed 0 --out "$OUT/$ds-aug.jsonl"
  step $AUDIT train --train "$train" --test "$test" --model minilm --epochs "$EPOCHS" --device cpu \
    --seed 0 --out "$OUT/$ds-plain"
  step $AUDIT train --train "$OUT/$ds-aug.jsonl" --test "$test" --model minilm \
    --epochs $(( EPOCHS / 2 )) --device cpu --seed 0 --out "$OUT/$ds-aug"
  for variant in plain aug; do
    step $AUDIT probe --train "$train" --test "$test" --model "$OUT/$ds-$variant" --device cpu \
      --short-circuit --aw-thresholds "${AW_THRESHOLDS:-calibrated}" --seed 0 --out "$OUT/$ds-$variant-probe"
  done
done
.venv/bin/python - "$OUT" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
for path in sorted(out.glob("*-probe/results.json")):
    probe = json.loads(path.read_text())["probe"]
    sc = probe.get("short_circuit", {})
    ops = " ".join(f"{op}={row['pass_rate'] * 100:.1f}(n={row['n']})"
                   for op, row in sc.get("per_op", {}).items())
    aw = "n/a" if sc.get("aw") is None else f"{sc['aw'] * 100:.1f}"
    if sc.get("aw_ci"):
        th = sc["aw_thresholds"]
        aw += (f" [{sc['aw_ci'][0] * 100:.1f}, {sc['aw_ci'][1] * 100:.1f}] ({th['mode']} "
               f"t1={th['t1']:.4f} t2={th['t2']:.4f} null rate {th['null_rate'] * 100:.1f}% "
               f"of {th['n_null']})")
    print(f"{path.parent.name}: acc={probe['accuracy'] * 100:.1f} AW={aw} {ops}")
PY
