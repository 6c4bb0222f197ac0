"""Loading and schema detection (docs/methods.md §1): aliases, formats, split roles, real datasets."""

from __future__ import annotations

import gzip
import json
import re
import unicodedata

import numpy as np
import pytest

from cuelens.data import load_dataset
from cuelens.data.schema import FieldMap
from cuelens.errors import UserError
from tests.conftest import write_jsonl


def test_nli_single_file_is_cross_validated(tmp_path, nli_rows):
    ds = load_dataset(str(write_jsonl(tmp_path / "all.jsonl", nli_rows)))
    assert ds.task == "nli" and ds.train is None and len(ds.test) == 30
    assert ds.label_names == ["contradiction", "entailment", "neutral"]
    inst = ds.test.instances(ds.label_names)
    assert inst.labels[:3].tolist() == [0, 1, 2]


@pytest.mark.parametrize("extra", ["train.aug.jsonl", "train.csv"])
def test_a_directory_with_two_files_for_one_split_is_one_error(tmp_path, nli_rows, extra):
    """An output named like a split beside the data (augment --out data/train.aug.jsonl) is
    never read in place of the split it sorts before."""
    write_jsonl(tmp_path / "train.jsonl", nli_rows)
    write_jsonl(tmp_path / "test.jsonl", nli_rows)
    (tmp_path / extra).write_text("" if extra.endswith("csv") else "{}\n")
    with pytest.raises(UserError, match=rf"2 files could be the train split \({extra}, train"):
        load_dataset(str(tmp_path))
    (tmp_path / extra).unlink()
    assert len(load_dataset(str(tmp_path)).train) == len(nli_rows)


def test_a_relative_directory_names_the_dataset_by_the_folder_it_leads_to(tmp_path, nli_rows,
                                                                          monkeypatch):
    """`audit scan .` named the dataset '' and `audit scan ../train.jsonl` (or `..`) named it
    '..': results.json said so, and the default output directory audit-results/<name> was
    audit-results itself, or the working directory."""
    from cuelens.data.preference import load_preferences
    from cuelens.engine.streaming import resolve_sources

    data = tmp_path / "snli"
    write_jsonl(data / "train.jsonl", nli_rows)
    write_jsonl(data / "test.jsonl", nli_rows)
    pairs = [{"prompt": f"p {i}", "chosen": "a", "rejected": "b"} for i in range(4)]
    write_jsonl(tmp_path / "prefs" / "train.jsonl", pairs)
    write_jsonl(tmp_path / "prefs" / "test.jsonl", pairs)
    (data / "sub").mkdir()
    monkeypatch.chdir(data / "sub")
    for given in ("..", "../", "../train.jsonl"):
        assert load_dataset(given).name == "snli"
        assert resolve_sources(given)[1] == "snli"  # the streaming engines' name
    assert resolve_sources("../*.jsonl")[1] == "snli"
    (tmp_path / "prefs" / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "prefs" / "sub")
    assert load_preferences(train="../train.jsonl", test="../test.jsonl").name == "prefs"
    monkeypatch.chdir(data)
    assert load_dataset(".").name == "snli"
    assert load_dataset("train.jsonl").name == "train"  # as before: no folder written


def test_files_named_like_splits_of_no_role_are_one_error(tmp_path, nli_rows):
    """GLUE's MNLI folder (train.tsv, dev_matched.tsv, …) was scanned as its train split alone,
    cross-validated, and a folder of the Hub's shards (train-00000-of-00001.jsonl, …) as one
    split of train, validation and test mixed (the streaming reader), silently."""
    from cuelens.engine.streaming import resolve_sources

    glue, hub, kept = tmp_path / "glue", tmp_path / "hub", tmp_path / "kept"
    for name in ("train", "dev_matched", "dev_mismatched"):
        write_jsonl(glue / f"{name}.jsonl", nli_rows)
    for name in ("train", "validation", "test"):
        write_jsonl(hub / f"{name}-00000-of-00001.jsonl", nli_rows)
    for name in ("train", "test", "test_predictions"):
        write_jsonl(kept / f"{name}.jsonl", nli_rows)
    for folder, names in ((glue, "dev_matched.jsonl, dev_mismatched.jsonl"),
                          (hub, "test-00000-of-00001.jsonl, train-00000-of-00001.jsonl, "
                                "validation-00000-of-00001.jsonl")):
        for load in (load_dataset, resolve_sources):
            with pytest.raises(UserError, match=f"^{re.escape(f'{folder}: {names}: named like')}"
                                                r" split files, .* name the files with train= "
                                                r"and test= \(--train/--test"):
                load(str(folder))
    assert len(load_dataset(str(kept)).train) == len(nli_rows)  # test has its file: as before


def test_dev_and_validation_files_are_two_candidates_for_dev(tmp_path, nli_rows):
    for name in ("train.jsonl", "dev.jsonl", "validation.jsonl"):
        write_jsonl(tmp_path / name, nli_rows)
    with pytest.raises(UserError, match=r"2 files could be the dev split \(dev.jsonl, "
                                        r"validation.jsonl\)"):
        load_dataset(str(tmp_path))


def test_a_streamed_scan_of_such_a_directory_is_the_same_error(tmp_path, nli_rows):
    from cuelens.engine.streaming import resolve_sources

    for name in ("train.jsonl", "train.aug.jsonl", "test.jsonl"):
        write_jsonl(tmp_path / name, nli_rows)
    with pytest.raises(UserError, match=r"2 files could be the train split"):
        resolve_sources(str(tmp_path))


def test_snli_aliases_and_missing_label_skipped(tmp_path):
    rows = [{"pairID": "a", "sentence1": "P one.", "sentence2": "H one.", "gold_label": "neutral"},
            {"pairID": "b", "sentence1": "P two.", "sentence2": "H two.", "gold_label": "-"},
            {"pairID": "c", "sentence1": "P three.", "sentence2": "H three.",
             "gold_label": "entailment"}]
    ds = load_dataset(str(write_jsonl(tmp_path / "snli.jsonl", rows)))
    assert ds.test.ids == ["a", "c"] and ds.test.hypotheses == ["H one.", "H three."]
    assert ds.test.skipped == {"missing label": 1}


def test_qnli_question_sentence(tmp_path):
    rows = [{"idx": 1, "question": "Who?", "sentence": "Him.", "label": "entailment"},
            {"idx": 2, "question": "What?", "sentence": "That.", "label": "not_entailment"}]
    ds = load_dataset(str(write_jsonl(tmp_path / "qnli.jsonl", rows)))
    assert ds.task == "nli" and ds.test.premises == ["Who?", "What?"]
    assert ds.test.hypotheses == ["Him.", "That."]


def test_commonsenseqa_original_format(tmp_path):
    row = {"id": "x", "answerKey": "C", "question": {"stem": "Where?", "choices": [
        {"label": "A", "text": "bank"}, {"label": "B", "text": "park"},
        {"label": "C", "text": "home"}]}}
    ds = load_dataset(str(write_jsonl(tmp_path / "csqa.jsonl", [row])))
    assert ds.task == "mcq" and ds.test.choices == [["bank", "park", "home"]]
    assert ds.test.labels == [2] and ds.test.premises == ["Where?"]


def test_hf_style_choices_dict(tmp_path):
    row = {"id": "x", "question": "Q?", "choices": {"label": ["A", "B"], "text": ["no", "yes"]},
           "answerKey": "B"}
    ds = load_dataset(str(write_jsonl(tmp_path / "arc.jsonl", [row])))
    assert ds.test.choices == [["no", "yes"]] and ds.test.labels == [1]


def test_swag_endings(tmp_path):
    row = {"video-id": "v", "sent1": "He opens", "sent2": "the door and", "ending0": "a",
           "ending1": "b", "ending2": "c", "ending3": "d", "label": 3}
    ds = load_dataset(str(write_jsonl(tmp_path / "swag.jsonl", [row])))
    assert ds.test.premises == ["He opens the door and"] and ds.test.labels == [3]
    assert ds.n_choices == 4


def test_copa_question_appended_to_premise(tmp_path):
    row = {"id": "1", "premise": "It rained.", "choices": ["Wet.", "Dry."], "label": 0,
           "question": "effect"}
    ds = load_dataset(str(write_jsonl(tmp_path / "copa.jsonl", [row])))
    assert ds.test.premise_context(0) == "It rained. effect"
    inst = ds.test.instances(ds.label_names)
    assert inst.texts == ["Wet.", "Dry."] and inst.labels.tolist() == [0, 1]
    assert inst.item.tolist() == [0, 0]


def test_field_overrides(tmp_path):
    rows = [{"ctx": "c", "claim": "h", "y": "yes"}, {"ctx": "d", "claim": "i", "y": "no"}]
    ds = load_dataset(str(write_jsonl(tmp_path / "x.jsonl", rows)),
                      fields=FieldMap(premise="ctx", hypothesis="claim", label="y"))
    assert ds.test.hypotheses == ["h", "i"] and ds.label_names == ["no", "yes"]


@pytest.mark.parametrize("header, fields, message", [
    ("premise,hypothesis,étiquette", FieldMap(label="étiquette"),
     "missing label field (étiquette); fields present: "),
    ("prémisse,hypothesis,label", FieldMap(premise="prémisse"),
     "missing premise field (prémisse); fields present: ")])
def test_a_field_named_in_another_unicode_form_is_said_to_be(tmp_path, header, fields, message):
    """A CSV header written in NFD (macOS) and --label-field typed in NFC: the error listed the
    field as present ('missing label field (étiquette); fields present: étiquette, …')."""
    (tmp_path / "d.csv").write_text(f"{unicodedata.normalize('NFD', header)}\na,b,x\nc,d,y\n",
                                    encoding="utf-8")
    with pytest.raises(UserError) as error:
        load_dataset(str(tmp_path / "d.csv"), fields=fields)
    assert message in str(error.value)
    wanted = fields.label or fields.premise
    assert str(error.value).endswith(
        f"; the field {unicodedata.normalize('NFD', wanted)!r} has that name in another Unicode "
        "form (NFD; the name given: NFC): write it as the data does")
    mcq = tmp_path / "m.jsonl"
    choices = unicodedata.normalize("NFD", "réponses")
    mcq.write_text(json.dumps({"premise": "p", choices: ["a", "b"], "label": 0},
                              ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="missing choices field 'réponses'; the field .* has that "
                                        "name in another Unicode form"):
        load_dataset(str(mcq), fields=FieldMap(choices="réponses"))


def test_choices_written_as_one_text_say_how_to_give_them(tmp_path):
    """A CSV of MCQ items with the choices as one cell: 'must be a list of choices' did not say
    that a cell holds one text, nor how a CSV gives choices."""
    (tmp_path / "d.csv").write_text('premise,choices,label\np,"[""a"", ""b""]",0\n')
    with pytest.raises(UserError, match=r"d.csv, line 2: field 'choices' is one text, not a list "
                                        r"of choices \(a CSV or TSV cell holds one text: give each "
                                        r"choice its own column, choice1, choice2"):
        load_dataset(str(tmp_path / "d.csv"))
    (tmp_path / "d.csv").write_text("premise,choice1,choice2,label\np,a,b,1\n")
    assert load_dataset(str(tmp_path / "d.csv")).test.choices == [["a", "b"]]


def test_csv_tsv_and_gzip(tmp_path):
    (tmp_path / "d.csv").write_text('premise,hypothesis,label\n"A, b",c,x\nd,e,y\n')
    ds = load_dataset(str(tmp_path / "d.csv"))
    assert ds.test.premises == ["A, b", "d"] and json.loads(ds.test.raw[0])["premise"] == "A, b"
    (tmp_path / "d.tsv").write_text("premise\thypothesis\tlabel\np\th\tx\n")
    assert load_dataset(str(tmp_path / "d.tsv")).test.hypotheses == ["h"]
    with gzip.open(tmp_path / "g.jsonl.gz", "wt") as handle:
        handle.write(json.dumps({"premise": "p", "hypothesis": "h", "label": "x"}) + "\n")
    assert len(load_dataset(str(tmp_path / "g.jsonl.gz")).test) == 1


def test_bom_crlf_and_extra_fields_load(tmp_path):
    text = '\ufeff{"premise": "p", "hypothesis": "h", "label": "a", "extra": 1}\r\n' \
           '{"premise": "q", "hypothesis": "i", "label": "b"}\r\n'
    (tmp_path / "d.jsonl").write_bytes(text.encode("utf-8"))
    ds = load_dataset(str(tmp_path / "d.jsonl"))
    assert ds.test.premises == ["p", "q"] and ds.label_names == ["a", "b"]
    assert ds.test.raw[1] == '{"premise": "q", "hypothesis": "i", "label": "b"}\r'


def test_directory_roles(tmp_path, nli_rows):
    write_jsonl(tmp_path / "train.jsonl", nli_rows[:20])
    write_jsonl(tmp_path / "dev.jsonl", nli_rows[20:25])
    write_jsonl(tmp_path / "test.jsonl", nli_rows[25:])
    ds = load_dataset(str(tmp_path))
    assert (len(ds.train), len(ds.test), list(ds.other)) == (20, 5, ["dev"])
    only = tmp_path / "two"
    write_jsonl(only / "dev.jsonl", nli_rows[:20])
    write_jsonl(only / "test.jsonl", nli_rows[20:])
    ds = load_dataset(str(only))
    assert ds.train.path.endswith("dev.jsonl") and ds.test.path.endswith("test.jsonl")


def test_inferred_split_roles_are_recorded(tmp_path, nli_rows):
    """A role given to a file whose name does not say it is recorded (results.json
    dataset.split_roles); roles the names give, or --train/--test, record nothing."""
    from cuelens.data.dataset import roles_note
    from cuelens.data.summary import dataset_summary

    def directory(name, *files):
        for i, file in enumerate(files):
            write_jsonl(tmp_path / name / file, nli_rows[15 * i:15 * (i + 1)])
        return load_dataset(str(tmp_path / name))

    no_train = directory("a", "dev.jsonl", "test.jsonl")
    assert no_train.split_roles == {"train": "dev.jsonl", "why": "no train file"}
    assert roles_note(no_train.split_roles) == "dev.jsonl used as train: no train file"
    assert dataset_summary(no_train)["split_roles"] == no_train.split_roles
    no_test = directory("b", "train.jsonl", "dev.jsonl")
    assert no_test.split_roles == {"test": "dev.jsonl", "why": "no test file"}
    assert directory("c", "train.jsonl", "test.jsonl").split_roles is None
    assert directory("d", "dev.jsonl").split_roles is None  # cross-validated
    assert "split_roles" not in dataset_summary(directory("e", "train.jsonl", "test.jsonl"))
    given = load_dataset(train=str(tmp_path / "a" / "dev.jsonl"),
                         test=str(tmp_path / "a" / "test.jsonl"))
    assert given.split_roles is None  # --train/--test say the roles


def test_shared_snli_dev_is_used_as_train(shared_data):
    assert load_dataset(str(shared_data / "snli")).split_roles == \
        {"train": "dev.jsonl", "why": "no train file"}


def test_train_test_options(tmp_path, mcq_rows):
    ds = load_dataset(train=str(write_jsonl(tmp_path / "a.jsonl", mcq_rows[:10])),
                      test=str(write_jsonl(tmp_path / "b.jsonl", mcq_rows[10:])))
    assert ds.task == "mcq" and len(ds.train) == 10 and ds.label_names == ["right", "wrong"]
    np.testing.assert_array_equal(ds.test.item_labels(ds.label_names), [0, 1] * 5)


@pytest.mark.parametrize("name,task,sizes", [
    ("copa", "mcq", (500, 500)), ("arct", "mcq", (1210, 444)), ("arct_adv", "mcq", (2420, 888)),
    ("roc_story_cloze", "mcq", (1871, 1871)), ("snli", "nli", (9842, 9824)),
    ("commonsenseqa", "mcq", (9741, 1221)), ("mnli", "nli", (None, 9815)),
    ("snli_hard", "nli", (None, 3261)), ("balanced_copa", "mcq", (None, 1000))])
def test_every_shared_dataset_loads_without_options(shared_data, name, task, sizes):
    ds = load_dataset(str(shared_data / name))
    assert ds.task == task
    assert (None if ds.train is None else len(ds.train), len(ds.test)) == sizes


def test_hf_without_datasets_package_is_a_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "datasets":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(UserError, match=r"pip install 'cuelens\[hf\]'"):
        load_dataset(hf="snli")


def test_hf_directory_of_one_dataset_saved_to_disk(tmp_path):
    """`--hf DIR` of one `Dataset.save_to_disk`: read as one cross-validated split, like its
    JSONL (it failed with datasets' "Please use `load_from_disk` instead", which --hf cannot)."""
    datasets = pytest.importorskip("datasets")
    rows = [{"id": str(i), "premise": "A man sleeps.", "hypothesis": f"A man {w}.",
             "label": label} for i, (w, label) in
            enumerate([("sleeps", "entailment"), ("runs", "contradiction"),
                       ("dreams", "neutral")] * 4)]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "saved"))
    write_jsonl(tmp_path / "d.jsonl", rows)
    from_disk = load_dataset(hf=str(tmp_path / "saved"))
    jsonl = load_dataset(str(tmp_path / "d.jsonl"))
    assert from_disk.train is None and from_disk.format == "huggingface"
    assert from_disk.test.ids == jsonl.test.ids and from_disk.test.labels == jsonl.test.labels
    assert from_disk.test.hypotheses == jsonl.test.hypotheses


def test_hf_directory_of_a_dataset_dict_saved_to_disk_keeps_its_splits(tmp_path):
    """`--hf DIR` of a `DatasetDict.save_to_disk`: its splits as saved. datasets' load_dataset
    read the folders by name and merged dev and validation into one validation split, silently;
    two splits of one role are now the error a dict of splits gives."""
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list([{"id": str(i), "premise": f"p {i}", "hypothesis": f"h {i}",
                                        "label": "ab"[i % 2]} for i in range(30)])
    datasets.DatasetDict({"train": rows.select(range(20)), "dev": rows.select(range(20, 25)),
                          "validation": rows.select(range(25, 30))}).save_to_disk(
        str(tmp_path / "both"))
    with pytest.raises(UserError, match="split names 'dev' and 'validation' both name the dev "
                                        "split"):
        load_dataset(hf=str(tmp_path / "both"))
    datasets.DatasetDict({"train": rows.select(range(20)), "dev": rows.select(range(20, 25))}) \
        .save_to_disk(str(tmp_path / "dev"))
    loaded = load_dataset(hf=str(tmp_path / "dev"))
    assert loaded.test.ids == ["20", "21", "22", "23", "24"] and len(loaded.train) == 20
    with pytest.raises(UserError, match=r"dev: a Hugging Face dataset saved with save_to_disk, not "
                                        r"data files: give it as --hf \(hf= in the Python API\)$"):
        load_dataset(str(tmp_path / "dev"))  # it read 'no train/dev/test .jsonl/… files'


@pytest.mark.parametrize("field", ["options", "endings", "answers"])
def test_hf_multiple_choice_class_label_is_the_choice_index(tmp_path, field):
    """A multiple-choice dataset whose choices are under another alias than 'choices' and whose
    label is a ClassLabel: the label is the correct choice's index (it was turned into its class
    name, e.g. 'second': 'label 'second' in field 'label' is not a choice index')."""
    datasets = pytest.importorskip("datasets")
    rows = [{"id": str(i), "premise": f"Premise {i}.", field: [f"yes {i}", f"no {i}"],
             "label": i % 2} for i in range(6)]
    names = datasets.ClassLabel(names=["first", "second"])
    datasets.Dataset.from_list(rows).cast_column("label", names) \
        .save_to_disk(str(tmp_path / "saved"))
    loaded = load_dataset(hf=str(tmp_path / "saved")).test
    assert loaded.task == "mcq" and loaded.labels == [i % 2 for i in range(6)]


def test_hf_test_split_without_labels_is_dropped(tmp_path):
    """The hub's test splits carry label -1 everywhere (SuperGLUE COPA, GLUE): such a split is
    dropped and validation is evaluated (the whole load failed: '…/test: no usable items')."""
    datasets = pytest.importorskip("datasets")
    rows = [{"idx": i, "premise": f"Premise {i}.", "choice1": f"yes {i}", "choice2": f"no {i}",
             "label": i % 2} for i in range(12)]
    saved = datasets.DatasetDict({
        "train": datasets.Dataset.from_list(rows[:6]),
        "validation": datasets.Dataset.from_list(rows[6:]),
        "test": datasets.Dataset.from_list([{**r, "label": -1} for r in rows[:4]])})
    saved.save_to_disk(str(tmp_path / "saved"))
    loaded = load_dataset(hf=str(tmp_path / "saved"))
    assert len(loaded.train) == 6 and len(loaded.test) == 6
    assert loaded.test.ids == [str(i) for i in range(6, 12)]
    only = datasets.DatasetDict({"test": datasets.Dataset.from_list(
        [{**r, "label": -1} for r in rows])})
    only.save_to_disk(str(tmp_path / "unlabelled"))
    with pytest.raises(UserError, match="has no labelled train/validation/test split"):
        load_dataset(hf=str(tmp_path / "unlabelled"))


def test_hf_labelled_split_of_no_role_is_one_error_saying_how_to_choose(tmp_path):
    """MNLI's `validation_matched` / `validation_mismatched`: a labelled split whose name gives
    no role was dropped silently (train alone was cross-validated, in the API and with --hf);
    unlabelled ones (the hub's `test_matched`) are still dropped."""
    datasets = pytest.importorskip("datasets")
    import cuelens

    rows = [{"id": str(i), "premise": f"p {i}", "hypothesis": f"h {i}", "label": "ab"[i % 2]}
            for i in range(30)]
    splits = datasets.DatasetDict({
        "train": datasets.Dataset.from_list(rows[:20]),
        "validation_matched": datasets.Dataset.from_list(rows[20:25]),
        "validation_mismatched": datasets.Dataset.from_list(rows[25:]),
        "test_matched": datasets.Dataset.from_list([{**r, "label": None} for r in rows[:4]])})
    splits.save_to_disk(str(tmp_path / "mnli"))
    message = r"has labelled splits of no known role: 'validation_matched', " \
        r"'validation_mismatched' \(the roles: train, dev/validation, test\); choose the splits"
    for load in (lambda: cuelens.load_dataset(splits), lambda: load_dataset(hf=str(tmp_path /
                                                                                  "mnli"))):
        with pytest.raises(UserError, match=message):
            load()
    chosen = cuelens.load_dataset({"train": splits["train"],
                                   "test": splits["validation_matched"]})  # as the error says
    assert len(chosen.train) == 20 and chosen.test.ids == ["20", "21", "22", "23", "24"]


def test_a_blank_id_counts_as_none(tmp_path):
    """A CSV file's empty id cell (and a JSON "" or " " id) was the id '' (or ' '): several
    items shared it, so predictions could not be matched to them, and the same CSV read with
    pandas (NaN) gave the default id instead."""
    import cuelens
    import pandas as pd

    path = tmp_path / "data.csv"
    path.write_text("id,premise,hypothesis,label\n1,a b,c d,x\n,e f,g h,y\n3,i j,k l,x\n"
                    " ,m n,o p,y\n", encoding="utf-8")
    assert load_dataset(str(path)).test.ids == ["1", "data.csv:3", "3", "data.csv:5"]
    assert cuelens.load_dataset(pd.read_csv(path)).test.ids == ["1", "all:2", "3", "all:4"]
    lines = [{"id": given, "premise": "a", "hypothesis": "b", "label": "xy"[i % 2]}
             for i, given in enumerate(["", None, "\u3000", "z"])]
    jsonl = write_jsonl(tmp_path / "data.jsonl", lines)
    assert load_dataset(str(jsonl)).test.ids == ["data.jsonl:1", "data.jsonl:2", "data.jsonl:3",
                                                 "z"]


def test_empty_in_memory_data_says_so_not_that_a_file_is_empty():
    """An empty DataFrame, list of dicts or Hugging Face split read 'no usable items (the file is
    empty or every item was skipped)': there is no file."""
    datasets = pytest.importorskip("datasets")
    import cuelens
    import pandas as pd

    empty_split = datasets.Dataset.from_dict({"premise": [], "hypothesis": [], "label": []})
    cases = [(pd.DataFrame(), "data/all: no items: the DataFrame has no rows"),
             (pd.DataFrame(columns=["premise", "hypothesis", "label"]),
              "data/all: no items: the DataFrame has no rows"),
             ([], "data/all: no items: the list of records is empty"),
             ({"train": [{"premise": "a", "hypothesis": "b", "label": "x"}], "test": []},
              "data/test: no items: the list of records is empty"),
             (empty_split, "data/all: no items: the Hugging Face dataset split has no rows"),
             (datasets.DatasetDict({"train": empty_split}),
              "data/train: no items: the Hugging Face dataset split has no rows"),
             (datasets.DatasetDict(), "Hugging Face dataset 'data' has no splits"),
             ([{"premise": "a", "hypothesis": "b", "label": "-"}],
              "data/all: no usable items (every record was skipped)")]
    for source, message in cases:
        with pytest.raises(UserError, match=f"^{re.escape(message)}$"):
            cuelens.load_dataset(source)
    streamed = datasets.Dataset.from_list([{"premise": "a", "hypothesis": "b", "label": label}
                                           for label in "xy"]).to_iterable_dataset()
    assert len(cuelens.load_dataset(streamed).test) == 2  # no row count, not refused


def test_hf_path_under_the_home_directory_from_python(tmp_path, monkeypatch):
    """hf="~/saved" (Python expands no '~') passed the existence check but was then looked up on
    the hub: 'Repo id must use alphanumeric chars …: '~/saved''."""
    datasets = pytest.importorskip("datasets")
    rows = [{"premise": f"p {i}", "hypothesis": f"h {i}", "label": "ab"[i % 2]} for i in range(6)]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "saved"))
    monkeypatch.setenv("HOME", str(tmp_path))
    loaded = load_dataset(hf="~/saved")
    assert loaded.name == "saved" and len(loaded.test) == 6


def test_a_dataframe_with_two_columns_of_one_name_is_refused():
    """pandas' to_dict kept one of two 'label' columns (with a UserWarning on stderr), and the
    scan ran on it, as a CSV file's header naming one column twice did."""
    import cuelens
    import pandas as pd

    frame = pd.DataFrame([["a b", "c d", "x", "y"], ["e f", "g h", "y", "x"]],
                         columns=["premise", "hypothesis", "label", "label"])
    with pytest.raises(UserError, match=r"^data/all: the DataFrame has two columns named "
                                        r"'label': rename one$"):
        cuelens.load_dataset(frame)
    assert cuelens.load_dataset(frame.iloc[:, :3]).test.labels == ["x", "y"]


def test_a_record_that_is_not_a_dict_is_a_bad_line_that_skip_bad_skips():
    """A list of records with a number in it stopped the load even with skip_bad=True (a file's
    line that is no JSON object is skipped and counted), and its error named no split."""
    import cuelens

    records = [{"premise": "a", "hypothesis": "b", "label": label} for label in "xyx"] + [5]
    with pytest.raises(UserError, match=r"^data/all, line 4: record 4 is of type int, not a "
                                        r"dict$"):
        cuelens.load_dataset(records)
    loaded = cuelens.load_dataset(records, skip_bad=True)
    assert len(loaded.test) == 3 and loaded.test.skipped == {"malformed line": 1}


def test_hf_local_path_that_does_not_exist_is_one_error(tmp_path):
    """A mistyped `--hf ./saved` was looked up on the Hub: a minute of 'Retrying in 8s' lines
    offline before 'Couldn't reach … on the Hub'."""
    pytest.importorskip("datasets")
    for spec in (str(tmp_path / "missing"), "./missing_saved_dataset", "../missing:config"):
        with pytest.raises(UserError, match="no such directory"):
            load_dataset(hf=spec)


def test_hf_config_of_a_dataset_saved_to_disk_is_one_error(tmp_path):
    """`--hf ./saved:cfg`: a saved dataset has no configs, and ':cfg' was ignored silently."""
    datasets = pytest.importorskip("datasets")
    from cuelens.data.synthetic import make_nli

    datasets.Dataset.from_list(make_nli(12, seed=0)).save_to_disk(str(tmp_path / "saved"))
    with pytest.raises(UserError, match=r"hf \(--hf\): .*saved with save_to_disk, which has no "
                                        r"configs: drop ':cfg'"):
        load_dataset(hf=f"{tmp_path / 'saved'}:cfg")
    assert len(load_dataset(hf=str(tmp_path / "saved")).test) == 12
