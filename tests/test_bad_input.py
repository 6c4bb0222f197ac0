"""Bad input gives one clear message naming file and line, exit code 2, no traceback and no
results directory; ``--skip-bad`` turns per-line errors into counted warnings."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.data import load_dataset
from cuelens.errors import UserError

GOOD = {"premise": "A man sleeps.", "hypothesis": "A man rests.", "label": "entailment"}


def line(**changes) -> str:
    return json.dumps({**GOOD, **changes})


CASES = {
    "malformed JSON": ([line(), '{"premise": "x", ', line()], 2, "malformed JSON"),
    "missing field": ([line(), json.dumps({"premise": "p", "label": "x"})], 2,
                      "missing hypothesis field"),
    "empty text": ([line(), line(hypothesis="   ")], 2, "empty text"),
    "not an object": ([line(), "[1, 2]"], 2, "JSON object"),
}


def run_scan(*args):
    result = CliRunner().invoke(app, ["scan", *map(str, args)])
    return result.exit_code, result.output


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_line_names_file_and_line(tmp_path, case):
    lines, bad_line, message = CASES[case]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    code, output = run_scan(path, "--out", out)
    assert code == 2
    assert f"data.jsonl, line {bad_line}" in output and message in output
    assert "Traceback" not in output and not out.exists()


def test_skip_bad_counts_and_warns(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join([line(), "{oops", line(hypothesis=""), line(label="-")]) + "\n")
    ds = load_dataset(str(path), skip_bad=True)
    assert len(ds.test) == 1
    assert ds.test.skipped == {"malformed line": 1, "bad record": 1, "missing label": 1}


def test_skip_bad_warning_names_a_file_with_brackets_as_it_is(tmp_path):
    """A path is text, not rich markup: '[red]' and '[/]' are printed, not eaten."""
    from cuelens.commands.common import console, warn_skipped

    path = tmp_path / "[red]data[bold].jsonl"
    path.write_text("\n".join([line(), "{oops", line()]) + "\n")
    with console.capture() as captured:
        warn_skipped(load_dataset(str(path), skip_bad=True))
    assert f"{path}: skipped 1 item: malformed line" in captured.get().replace("\n", "")


def test_missing_file_and_directory(tmp_path):
    code, output = run_scan(tmp_path / "nope.jsonl")
    assert code == 2 and "nope.jsonl: file or directory not found" in output
    (tmp_path / "empty_dir").mkdir()
    code, output = run_scan(tmp_path / "empty_dir")
    assert code == 2 and "no train/dev/test" in output


@pytest.mark.parametrize("command", ["scan", "probe"])
def test_a_blank_hf_name_is_refused_naming_the_option(tmp_path, command):
    # it read as no --hf at all: "give exactly one of DATA or --train/--test"
    result = CliRunner().invoke(app, [command, "--hf", " ", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "Invalid value for '--hf': give a dataset name or path" in result.output


@pytest.mark.parametrize("role", ["premise", "hypothesis", "label", "choices", "group"])
def test_an_empty_field_override_is_refused_naming_the_option(tmp_path, role):
    """`--premise-field ""` / `premise_field=""` read as not given (the field was detected and
    the scan ran) or as a field named "" (missing choices field '')."""
    import cuelens

    path = tmp_path / "data.jsonl"
    path.write_text("\n".join([line(), line(label="neutral")]) + "\n")
    message = f"{role}_field (--{role}-field) is empty: give a field name"
    with pytest.raises(UserError, match=re.escape(message)):
        cuelens.load_dataset([GOOD, GOOD], **{f"{role}_field": ""})
    code, output = run_scan(path, f"--{role}-field", "", "--out", tmp_path / "out")
    assert code == 2 and message in output and not (tmp_path / "out").exists()


def test_one_field_for_two_parts_of_an_item_is_refused(tmp_path):
    """`--premise-field hypothesis` read the hypothesis as the premise too, and `--label-field
    premise` the premises as labels: the scan ran on them, silently."""
    import cuelens

    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(line(premise=f"p {i}", label="xy"[i % 2]) for i in range(40)) + "\n")
    with pytest.raises(UserError, match=r"^premise_field \(--premise-field\) and hypothesis_field "
                                        r"\(--hypothesis-field\) both name the field 'h'"):
        cuelens.load_dataset(str(path), premise_field="h", hypothesis_field="h")
    for option, field, parts in (("--premise-field", "hypothesis", "premise and the hypothesis"),
                                 ("--label-field", "premise", "premise and the label")):
        code, output = run_scan(path, option, field, "--out", tmp_path / "out")
        said = " ".join(output.split())
        assert code == 2 and "data.jsonl, line 1: the " + parts + " would both be read from " \
            f"field '{field}'" in said, output
        with pytest.raises(UserError, match=f"the {parts} would both be read"):
            cuelens.load_dataset(str(path), **{option[2:].replace("-", "_"): field})


def test_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    code, output = run_scan(path, "--out", tmp_path / "out")
    assert code == 2 and "empty.jsonl: no usable items" in output


def test_non_utf8_byte_names_the_line(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes((line() + "\n").encode() + b'{"premise": "caf\xe9", "hypothesis": "h", '
                     b'"label": "x"}\n')
    code, output = run_scan(path)
    assert code == 2 and "latin.jsonl, line 2" in output and "UTF-8" in output


def test_label_absent_from_train(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text(line() + "\n" + line(label="neutral") + "\n")
    test = tmp_path / "test.jsonl"
    test.write_text(line() + "\n" + line(label="contradiction") + "\n")
    code, output = run_scan("--train", train, "--test", test)
    assert code == 2 and "test.jsonl, line 2" in output and "'contradiction'" in output
    ds = load_dataset(train=str(train), test=str(test), skip_bad=True)
    assert len(ds.test) == 1 and ds.test.skipped == {"label absent from train": 1}


def test_varying_choice_counts_give_the_mcq_baselines_only(tmp_path):
    path = tmp_path / "mcq.jsonl"
    # enough separate premises for the grouped cross-validation folds (docs/methods.md §11)
    rows = [{"premise": f"premise {i}", "choices": ["a", "b", "c"][: 2 + i % 2], "label": i % 2}
            for i in range(20)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, output = run_scan(path, "--out", tmp_path / "out")
    assert code == 0 and "different numbers of choices" in output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["dataset"]["n_choices"] is None and "mcq_baselines" in results


def test_unknown_format(tmp_path):
    path = tmp_path / "data.xml"
    path.write_text("<x/>")
    with pytest.raises(UserError, match="unknown file format"):
        load_dataset(str(path))
