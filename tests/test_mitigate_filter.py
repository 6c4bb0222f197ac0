"""z-filtering and AFLite against planted cues with hand-computed answers, and the per-item bias
outputs of a scan (docs/mitigation.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import norm

import cuelens
from cuelens.mitigate.aflite import AFLiteOptions, aflite, cue_features
from cuelens.mitigate.subset import filter_dataset, fitting_chunk
from cuelens.mitigate.zfilter import Incidence, z_filter
from cuelens.audit.config import ScanConfig


def planted(n_cue: int = 40) -> list[dict]:
    """100 items per label A / B, all "someone sleeps"; ``n_cue`` A items also hold "nobody"."""
    rows = []
    for i in range(200):
        label = "A" if i < 100 else "B"
        text = "someone nobody sleeps" if i < n_cue else "someone sleeps"
        rows.append({"id": str(i), "premise": "a room", "hypothesis": text, "label": label})
    return rows


def test_z_filter_removes_a_planted_cue_with_the_fewest_items():
    # Words someone, sleeps, nobody (min_count 1): 3 × 2 tests, threshold Φ⁻¹(1 − 0.05/6).
    # With shares kept 50/50 (p0 = 0.5) removing r "nobody" A items and r B items leaves
    # z = (1 − 0.5)/sqrt(0.25/(40 − r)) = sqrt(40 − r): the fewest is the smallest r with
    # sqrt(40 − r) ≤ threshold.
    threshold = norm.isf(0.05 / 6)
    r = next(r for r in range(41) if np.sqrt(40 - r) <= threshold)
    assert r == 35
    dataset = cuelens.load_dataset(planted())
    subset = filter_dataset(dataset, "z", ScanConfig(min_count=1))
    assert subset.weight.sum() == 200 - 2 * r
    assert subset.report["per_label"]["A"] == {"before": 100, "after": 100 - r, "removed": r,
                                               "added": 0}
    assert subset.report["cues"][0]["token"] == "nobody"
    assert subset.report["cues"][0]["removed"] == r
    kept = [row for row, w in zip(planted(), subset.weight) if w]
    assert sum("nobody" in row["hypothesis"] for row in kept) == 40 - r
    rescan = cuelens.scan(kept, features="none", min_count=1, folds=3, iterations=1)
    assert not rescan.cues["significant"].any()
    before = cuelens.scan(planted(), features="none", min_count=1, folds=3, iterations=1)
    assert before.cues.query("token == 'nobody' and label == 'A'")["significant"].item()


def test_z_filter_balance_keeps_size_with_copies():
    dataset = cuelens.load_dataset(planted())
    subset = filter_dataset(dataset, "z", ScanConfig(min_count=1), balance=True)
    shares = subset.report["per_label"]
    assert shares["A"]["after"] == shares["B"]["after"]  # shares restored by copies
    assert shares["A"]["added"] + shares["B"]["added"] > 0
    assert not subset.report["cues"][0]["added"]  # the cue itself is removed, not copied


def _three_cues(seed: int = 0) -> list[dict]:
    """300 items of labels A / B / C (50/30/20%) over random words, with three planted cues."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(300):
        label = ["A", "B", "C"][rng.choice(3, p=[.5, .3, .2])]
        words = [f"w{rng.integers(0, 12)}" for _ in range(4)]
        words += ["nobody"] if label == "A" and rng.random() < .5 else []
        words += ["sleeps"] if label == "B" and rng.random() < .4 else []
        words += ["w3"] if label == "C" and rng.random() < .3 else []
        rows.append({"id": str(i), "premise": "p", "hypothesis": " ".join(words), "label": label})
    return rows


def test_z_filter_balance_counts_items_removed_and_copies_kept():
    """An item given copies by --balance and removed in a later round counted its copies as
    removed for the cue, and they stayed 'added' for the label shares: the cues said 121
    removed and 88 added where the labels (and train.jsonl) had 115 and 82."""
    subset = filter_dataset(cuelens.load_dataset(_three_cues()), "z", ScanConfig(min_count=1),
                            balance=True)
    per_label, cues = subset.report["per_label"].values(), subset.report["cues"]
    removed = sum(v["removed"] for v in per_label)
    added = sum(v["added"] for v in per_label)
    assert removed == (subset.weight == 0).sum() == sum(c["removed"] for c in cues)
    assert added == subset.weight.sum() - (subset.weight > 0).sum() == sum(c["added"] for c in cues)
    assert added > 0


def test_filter_balance_says_items_kept_and_copies_added(tmp_path):
    from typer.testing import CliRunner
    from cuelens.cli import app
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _three_cues()))
    result = CliRunner().invoke(app, ["filter", str(data), "--method", "z", "--balance",
                                      "--min-count", "1", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "out" / "train.jsonl").read_text().splitlines()
    ids = {json.loads(line)["id"] for line in lines}
    assert (f"kept {len(ids)} of 300 items and added {len(lines) - len(ids)} copies "
            f"({len(lines)} lines)") in " ".join(result.output.split())


def test_z_filter_cuts_chinese_into_words_as_the_scan_does():
    """Text without spaces was never segmented for the filter: each hypothesis was one "word",
    so on OCNLI the scan found 11 significant cues and the filter removed nothing."""
    rows = [{"id": str(i), "premise": "房间", "label": "A" if i < 100 else "B",
             "hypothesis": f"第{i}个人{'从不' if i < 40 else ''}睡觉"} for i in range(200)]
    dataset = cuelens.load_dataset(rows)
    subset = filter_dataset(dataset, "z", ScanConfig(min_count=1))
    assert (subset.weight == 0).sum() > 0
    assert any("从" in str(cue["token"]) for cue in subset.report["cues"])


def test_z_filter_on_clean_data_changes_nothing():
    rows = planted(0)
    inc = Incidence.of(*_data(rows))
    assert z_filter(inc, 1).weight.tolist() == [1.0] * 200


def _data(rows):
    """The arguments of Incidence.of: the items as the scan encodes them, strata, labels."""
    dataset = cuelens.load_dataset(rows)
    return (fitting_chunk(dataset, ScanConfig()), dataset.test.item_labels(dataset.label_names),
            dataset.label_names)


def test_aflite_removes_the_planted_easy_items_first():
    rng = np.random.default_rng(0)
    labels = ["contradiction", "entailment", "neutral"]
    words = ["red", "blue", "green", "small", "tall", "old", "new", "wet"]
    rows = []
    for i in range(400):
        easy = i < 60  # "nobody" always with contradiction
        label = "contradiction" if easy else labels[rng.integers(3)]
        text = " ".join(rng.choice(words, 3)) + (" nobody" if easy else "")
        rows.append({"id": str(i), "premise": "p", "hypothesis": text, "label": label})
    chunk, _, _ = _data(rows)
    gold = np.array([labels.index(r["label"]) for r in rows])
    result = aflite(cue_features(chunk.seqs, 5), gold, 1,
                    AFLiteOptions(train_size=200, seed=0))
    removed = np.flatnonzero(~result.kept)
    assert len(removed) >= 20
    first_round = np.flatnonzero(result.removed_round == 1)
    assert len(first_round) == 20  # k = 5% of 400
    assert (first_round < 60).all()  # only planted items in the first round
    assert (~result.kept[:60]).sum() >= 57  # (nearly) every planted item goes
    later = result.removed_round[60:][result.removed_round[60:] > 0]
    assert result.removed_round[:60].mean() < later.mean()  # ... before the others


def test_scan_items_table(tmp_path):
    from cuelens.data.synthetic import make_nli

    result = cuelens.scan(make_nli(300, seed=0), features="none", folds=3, iterations=1)
    items = result.items
    assert len(items) == 300 and items["id"].is_unique
    p = items[["p_bias_contradiction", "p_bias_entailment", "p_bias_neutral"]].to_numpy()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)
    # the out-of-fold predictions are the headline model's: same accuracy as leakage.best
    assert items["bias_correct"].mean() == pytest.approx(
        result.results["leakage"]["best"]["accuracy"], abs=1e-6)
    assert items["easy"].sum() == result.results["easy_hard"]["easy"]
    files = result.save(tmp_path)
    lines = [json.loads(x) for x in files["items"].read_text().splitlines()]
    assert [x["id"] for x in lines] == items["id"].tolist()
    if "items_parquet" in files:
        import pandas as pd

        table = pd.read_parquet(files["items_parquet"])
        assert table["p_bias_gold"].tolist() == items["p_bias_gold"].tolist()


def test_bias_probabilities_of_train_test_data():
    from tests.scan_helpers import bias_probabilities
    from tests.tiny_models import nli_planted

    train, test = nli_planted()
    nobody_test = np.array(["nobody" in row["hypothesis"] for row in test])
    nobody = np.array(["nobody" in row["hypothesis"] for row in train])
    leaning, margin, train_margin = [], [], []
    for seed in range(6):  # 60 training items: one seed's folds can tip a 3-fold fit either way
        probs = bias_probabilities(cuelens.load_dataset(train=train, test=test),
                                   ScanConfig(folds=3, seed=seed), ("cp", "lr"))
        assert probs.shape == (len(train) + len(test), 3)
        # the test items are predicted by the model fitted on train: "nobody" → contradiction
        tested = probs[len(train):]
        leaning.append((tested[nobody_test].argmax(axis=1) == 0).mean())
        margin.append(tested[nobody_test, 0].mean() - tested[~nobody_test, 0].mean())
        # a train item is predicted by the folds without it: "nobody" items lean to contradiction
        train_margin.append(probs[:len(train)][nobody, 0].mean()
                            - probs[:len(train)][~nobody, 0].mean())
    assert np.mean(leaning) >= 0.75 and np.mean(margin) > 0 and np.mean(train_margin) > 0


def test_items_table_of_train_test_data():
    from tests.tiny_models import nli_planted

    train, test = nli_planted()
    items = cuelens.scan(train=train, test=test, features="none", folds=3, iterations=1).items
    assert items["split"].tolist() == ["train"] * len(train) + ["test"] * len(test)
    assert items.loc[items["split"] == "test", "overlap"].notna().all()
    assert items.loc[items["split"] == "train", "easy"].isna().all()
    assert items.loc[items["split"] == "test", "cue"].eq("nobody").sum() == 32


def test_filter_rescans_input_with_its_own_field_names(tmp_path):
    """JSONL input keeps its lines, so the rescan of the subset reads them with the input's
    --premise-field/--hypothesis-field/--label-field (it failed on the missing label field,
    naming a temporary file, after all the work)."""
    from typer.testing import CliRunner

    from cuelens.cli import app

    rows = [{"s1": r["premise"], "s2": r["hypothesis"], "gold": r["label"]} for r in planted()]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, [
        "filter", str(tmp_path / "d.jsonl"), "--out", str(tmp_path / "o"), "--min-count", "1",
        "--premise-field", "s1", "--hypothesis-field", "s2", "--label-field", "gold"])
    assert result.exit_code == 0, result.output
    kept = (tmp_path / "o" / "train.jsonl").read_text().splitlines()
    assert 0 < len(kept) < len(rows) and all('"gold"' in line for line in kept)
    after = json.loads((tmp_path / "o" / "scan-after" / "results.json").read_text())
    assert after["dataset"]["splits"]["all"]["items"] == len(kept)


@pytest.mark.parametrize("options, message", [
    (["--cutoff", "3"], "--cutoff applies to --method aflite"),
    (["--ensemble", "2", "--target", "10"], "--ensemble, --target apply to --method aflite")])
def test_aflite_options_under_the_z_method_are_refused(tmp_path, options, message):
    # they were accepted and silently ignored
    from typer.testing import CliRunner

    from cuelens.cli import app

    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in planted()))
    result = CliRunner().invoke(app, ["filter", str(tmp_path / "d.jsonl"), "--out",
                                      str(tmp_path / "o"), *options])
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("model, message", [("no-such-model", "cannot load model 'no-such-model'"),
                                            (".", "not a Hugging Face model directory")])
def test_aflite_refuses_an_unknown_model_before_reading_and_scanning(tmp_path, monkeypatch,
                                                                     model, message):
    """`audit filter --method aflite --model NAME`: an unknown model was reported after the
    scan of the data before filtering (minutes on real data)."""
    from typer.testing import CliRunner

    import cuelens.audit.pipeline
    from cuelens.cli import app

    def no_scan(*args, **kwargs):
        raise AssertionError("the data was scanned before the model was loaded")

    monkeypatch.setattr(cuelens.audit.pipeline, "scan_dataset", no_scan)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in planted()))
    result = CliRunner().invoke(app, ["filter", "d.jsonl", "--method", "aflite", "--model",
                                      model, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert said.startswith("error: ") and message in said and "Traceback" not in said
    assert not (tmp_path / "o").exists()


def test_aflite_refuses_a_target_that_leaves_nothing_to_remove(tmp_path):
    """`--target 99999` on 200 items ran both scans and wrote a 'filtered' copy of every item
    (AFLite stopped at once: 0 rounds, 0 removed), with no word on why."""
    from typer.testing import CliRunner

    from cuelens.cli import app

    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in planted()))
    for target in ("200", "99999"):
        result = CliRunner().invoke(app, ["filter", str(tmp_path / "d.jsonl"), "--method",
                                          "aflite", "--target", target, "--out",
                                          str(tmp_path / "o")])
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and said.startswith("error: "), result.output
        assert f"--target {int(target):,} is not below the 200 items to filter" in said
        assert not (tmp_path / "o").exists()
    with pytest.raises(cuelens.errors.UserError, match="AFLite would remove none"):
        AFLiteOptions(target=5).check_items(5)
    AFLiteOptions(target=4).check_items(5)
