"""Crossover/mutation augmentation (docs/methods.md §8) and the stress/augment commands."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
from typer.testing import CliRunner

from cuelens.augment.augmentation import augment
from cuelens.augment.operators.text import normalise
from cuelens.cli import app
from cuelens.data.dataset import Split
from cuelens.errors import UserError

SUBJECTS = ["the cat", "a farmer", "my aunt", "the old dog", "a small child", "the pilot"]
VERBS = ["opened the window", "ate some bread", "left the house", "fell asleep early",
         "found a coin", "sang a song", "lost the keys"]


def mcq_split(n: int = 30, k: int = 2) -> Split:
    split = Split(name="train", path="train.jsonl", task="mcq")
    for i in range(n):
        choices = [f"{SUBJECTS[(i + j) % 6].capitalize()} {VERBS[(i * 3 + j) % 7]} {i}."
                   for j in range(k)]
        split.append({"id": f"q{i}", "premise": f"Premise number {i}.", "choices": choices,
                      "label": i % k}, raw="", line=i + 1)
    return split


def swapped(new: str, old: str) -> bool:
    """``new`` is ``old`` with exactly two adjacent words exchanged (case and punctuation aside)."""
    a, b = re.findall(r"\w+", old.lower()), re.findall(r"\w+", new.lower())
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return len(a) == len(b) and len(diff) == 2 and diff[1] == diff[0] + 1 \
        and (a[diff[0]], a[diff[1]]) == (b[diff[1]], b[diff[0]])


@pytest.mark.parametrize("k", [2, 3])
def test_augmented_items_are_labelled_and_traced(k):
    split = mcq_split(30, k)
    result = augment(split, ["crossover", "mutation", "mutation2"], ratio=1.0, seed=3)
    originals, generated = result.rows[:30], result.rows[30:]
    assert [r["id"] for r in originals] == split.ids
    assert len(generated) == 30 == sum(result.counts.values())
    assert result.counts == {"crossover": 10, "mutation": 10, "mutation2": 10}
    correct_of = {i: split.choices[i][split.labels[i]] for i in range(30)}
    all_correct = set(correct_of.values())
    keys, mutated = set(), set()
    for row in generated:
        src = split.ids.index(row["source_id"])
        assert row["premise"] == split.premises[src] and row["label"] == split.labels[src]
        assert row["choices"][row["label"]] == correct_of[src]  # label still points at the truth
        norm = [normalise(c) for c in row["choices"]]
        assert len(set(norm)) == k  # no wrong choice equals the correct one (or another)
        key = frozenset(norm)
        assert key not in keys and key != frozenset(normalise(c) for c in split.choices[src])
        keys.add(key)
        wrong = [c for j, c in enumerate(row["choices"]) if j != row["label"]]
        if row["op"] == "crossover":
            assert all(w in all_correct - {correct_of[src]} for w in wrong)
        elif row["op"] == "mutation" or row["op"] == "mutation2" and \
                any(swapped(w, correct_of[src]) for w in wrong):
            assert sum(swapped(w, correct_of[src]) for w in wrong) == 1
            mutated.add(row["op"])
        else:  # mutation2's second question: each original wrong choice mutated
            originals_wrong = [c for j, c in enumerate(split.choices[src]) if j != row["label"]]
            assert all(swapped(w, o) for w, o in zip(wrong, originals_wrong))
            mutated.add("mutation2-second")
    assert mutated == {"mutation", "mutation2", "mutation2-second"}
    assert len({r["id"] for r in result.rows}) == len(result.rows)


def test_augmentation_is_seeded():
    split = mcq_split(20)
    first = augment(split, ["crossover", "mutation"], ratio=1.0, seed=1).rows
    assert first == augment(split, ["crossover", "mutation"], ratio=1.0, seed=1).rows
    assert first != augment(split, ["crossover", "mutation"], ratio=1.0, seed=2).rows


def test_ratio_sets_the_number_of_generated_items():
    split = mcq_split(20)
    assert len(augment(split, ["mutation"], ratio=0.5, seed=0).rows) == 30
    assert len(augment(split, ["crossover"], ratio=0.0, seed=0).rows) == 20
    with pytest.raises(UserError):
        augment(split, ["mutation"], ratio=-1.0)


def test_no_duplicate_of_an_existing_question():
    split = mcq_split(6)
    # question 1 already is question 0 with its wrong choice crossed over from question 2
    split.append({"id": "dup", "premise": split.premises[0],
                  "choices": [split.choices[0][0], split.choices[2][0]], "label": 0},
                 raw="", line=99)
    rows = augment(split, ["crossover"], ratio=5.0, seed=0).rows
    keys = [(r["premise"], frozenset(map(normalise, r["choices"]))) for r in rows]
    assert len(keys) == len(set(keys))


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_augment_command(tmp_path):
    split = mcq_split(12)
    data = _write(tmp_path / "train.jsonl",
                  [{"id": i, "premise": p, "choices": c, "label": lab}
                   for i, p, c, lab in zip(split.ids, split.premises, split.choices,
                                           split.labels)])
    before = data.read_bytes()
    runner = CliRunner()
    out = tmp_path / "aug.jsonl"
    result = runner.invoke(app, ["augment", str(data), "--out", str(out), "--seed", "4"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 24 and {r.get("op") for r in rows[12:]} == {"crossover", "mutation"}
    refused = runner.invoke(app, ["augment", str(data), "--out", str(data)])
    assert refused.exit_code == 2 and data.read_bytes() == before
    bad = runner.invoke(app, ["augment", str(data), "--ops", "swap", "--out", str(out)])
    assert bad.exit_code == 2 and "unknown augmentation op" in bad.output


@pytest.mark.parametrize("command", ["augment", "stress"])
@pytest.mark.parametrize("name", ["aug.csv", "aug.parquet", "aug", "aug.json"])
def test_augment_and_stress_write_only_jsonl_names(tmp_path, command, name):
    """Their output is JSON Lines: a .csv name held JSON that `audit scan aug.csv` failed on."""
    split = mcq_split(6)
    data = _write(tmp_path / "test.jsonl",
                  [{"id": i, "premise": p, "choices": c, "label": lab}
                   for i, p, c, lab in zip(split.ids, split.premises, split.choices,
                                           split.labels)])
    result = CliRunner().invoke(app, [command, str(data), "--out", str(tmp_path / name)])
    assert result.exit_code == 2 and "give a name ending in .jsonl or .jsonl.gz" in result.output
    assert not (tmp_path / name).exists()
    gz = tmp_path / "aug.jsonl.gz"
    assert CliRunner().invoke(app, [command, str(data), "--out", str(gz)]).exit_code == 0


def test_stress_command(tmp_path):
    rows = [{"id": "a", "premise": "The glass fell.", "choices": ["It broke.", "It sang."],
             "label": 0},
            {"id": "b", "premise": "Tom was hungry.", "choices": ["He slept.", "He ate."],
             "label": 1}]
    data = _write(tmp_path / "test.jsonl", rows)
    out = tmp_path / "stress.jsonl"
    result = CliRunner().invoke(app, ["stress", str(data), "--ops", "co,neg+,pr,ner",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    made = [json.loads(line) for line in out.read_text().splitlines()]
    by_id = {r["id"]: r for r in made}
    assert by_id["a:neg+"]["choices"] == ["It broke.", "It did not break."]
    assert by_id["b:pr"]["choices"] == ["She slept.", "He ate."] or \
        by_id["b:pr"]["choices"] == ["She ate.", "He ate."]
    assert by_id["a:co"]["constructed"] == "He ate."
    for row in made:
        src = next(r for r in rows if r["id"] == row["source_id"])
        assert row["premise"] == src["premise"] and row["label"] == src["label"]
        assert row["choices"][row["label"]] == src["choices"][src["label"]]
    counts = json.loads((tmp_path / "stress.summary.json").read_text())["ops"]
    assert counts["ner"] == {"generated": 0, "skipped": 2}
    assert counts["neg+"]["generated"] == 2 and counts["co"]["generated"] == 2



def test_choices_in_two_unicode_forms_are_one_choice():
    """A correct choice written precomposed in one question and decomposed (NFD) in another is
    the same text: crossover gave each question the other's copy as its "wrong" choice, two
    identical choices with one labelled wrong; augmentation did the same."""
    from cuelens.augment.operators import parse_ops
    from cuelens.augment.stress import build_stress

    split = Split(name="test", path="test.jsonl", task="mcq")
    cafe = "Il a bu un café."
    for i, choices in enumerate([[cafe, "Il a dormi."],
                                 ["Elle a couru.", unicodedata.normalize("NFD", cafe)]]):
        split.append({"id": f"q{i}", "premise": f"Premise {i}.", "choices": choices,
                      "label": i}, raw="", line=i + 1)
    assert normalise(cafe) == normalise(unicodedata.normalize("NFD", cafe.upper()))
    stress = build_stress(split, parse_ops("co"))
    assert stress.rows == [] and stress.counts["co"] == {"generated": 0, "skipped": 2}
    for row in augment(split, ["crossover"], ratio=5.0, seed=0).rows:
        keys = [normalise(c) for c in row["choices"]]
        assert len(set(keys)) == len(keys), row

def test_stress_and_augmentation_refuse_other_tasks_alike_from_cli_and_api(tmp_path):
    """One check each, in the library (build_stress, augment): the CLI and the API say the same."""
    import cuelens
    from cuelens.data.synthetic import make_nli

    rows = make_nli(20, seed=0)
    data = _write(tmp_path / "nli.jsonl", rows)
    for command, api, said in (
            ("stress", cuelens.stress, "stress tests need a multiple-choice dataset"),
            ("augment", cuelens.augment_dataset,
             "augmentation needs a multiple-choice dataset with k ≥ 2 choices")):
        with pytest.raises(UserError, match=said):
            api(rows)
        refused = CliRunner().invoke(app, [command, str(data), "--out",
                                           str(tmp_path / f"{command}.jsonl")])
        assert refused.exit_code == 2 and said in refused.output


def test_questions_with_different_numbers_of_choices_are_augmented(tmp_path):
    """Every question has two choices or more, their number varies (docs/methods.md §1): it
    was refused as 'needs a multiple-choice dataset with k ≥ 2 choices'."""
    rows = [{"id": f"q{i}", "premise": f"Premise number {i}.", "label": i % k,
             "choices": [f"{SUBJECTS[(i + j) % 6].capitalize()} {VERBS[(i * 3 + j) % 7]} {i}."
                         for j in range(k)]}
            for i, k in enumerate([2, 3, 4] * 10)]
    out = tmp_path / "aug.jsonl"
    done = CliRunner().invoke(app, ["augment", str(_write(tmp_path / "train.jsonl", rows)),
                                    "--ops", "crossover,mutation,mutation2", "--out", str(out)])
    assert done.exit_code == 0, done.output
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert "30 original + 30 generated" in done.output and len(written) == 60
    source = {r["id"]: r for r in rows}
    for row in written[30:]:
        original = source[row["source_id"]]
        assert len(row["choices"]) == len(original["choices"])
        assert row["choices"][row["label"]] == original["choices"][original["label"]]


def test_stress_of_decomposed_text_is_that_of_composed_text():
    """spaCy cut and tagged an NFD accent apart from its letter: voice wrote "The café. opened
    José" and ner found no name in "Renée called her mother."; now the same questions as NFC
    text, each constructed choice in the source's decomposed form."""
    from cuelens.augment.operators import parse_ops
    from cuelens.augment.stress import build_stress

    sentences = [("José opened the café.", "José closed the door."),
                 ("Renée called her mother.", "Renée wrote a letter."),
                 ("Chloé found the résumé.", "Chloé lost the résumé.")]
    made = {}
    for form in ("NFC", "NFD"):
        split = Split(name="test", path="test.jsonl", task="mcq")
        for i, choices in enumerate(sentences):
            split.append({"id": f"q{i}", "premise": f"Premise {i}.", "label": 0,
                          "choices": [unicodedata.normalize(form, c) for c in choices]},
                         raw="", line=i + 1)
        made[form] = build_stress(split, parse_ops("voice,ner")).rows
    assert [r["id"] for r in made["NFD"]] == [r["id"] for r in made["NFC"]]
    assert {r["id"] for r in made["NFC"]} >= {"q0:voice", "q1:ner"}
    for nfc, nfd in zip(made["NFC"], made["NFD"]):
        assert nfd["constructed"] == unicodedata.normalize("NFD", nfc["constructed"])


def test_outputs_named_gz_are_gzipped(tmp_path):
    """`--out stress.jsonl.gz` wrote plain text under a .gz name, which every reader of
    .jsonl.gz data then refused as 'corrupt or truncated gzip file'."""
    import gzip

    from cuelens.data.loading import load_dataset

    split = mcq_split(12)
    data = _write(tmp_path / "train.jsonl",
                  [{"id": i, "premise": p, "choices": c, "label": lab}
                   for i, p, c, lab in zip(split.ids, split.premises, split.choices,
                                           split.labels)])
    for command, extra in (("augment", []), ("stress", ["--ops", "co,mt"])):
        out = tmp_path / f"{command}.jsonl.gz"
        done = CliRunner().invoke(app, [command, str(data), "--out", str(out), *extra])
        assert done.exit_code == 0, done.output
        lines = gzip.decompress(out.read_bytes()).decode().splitlines()
        assert len(load_dataset(str(out)).test) == len(lines) > 12


def test_fewer_items_than_asked_for_are_a_warning(tmp_path):
    """--ratio 10 on 30 questions asks for 300 items; crossover and mutation run out of new
    questions well before: the terminal said '30 original + N generated' and nothing else."""
    split = mcq_split(30)
    data = [{"id": i, "premise": p, "choices": c, "label": lab}
            for i, p, c, lab in zip(split.ids, split.premises, split.choices, split.labels)]
    result = augment(split, ["mutation"], ratio=10.0, seed=0)
    made = result.counts["mutation"]
    assert result.asked == 300 and made < 300
    assert result.shortfall.startswith(f"generated {made} of the 300 asked for")
    assert augment(split, ["mutation"], ratio=0.5, seed=0).shortfall is None
    done = CliRunner().invoke(app, ["augment", str(_write(tmp_path / "train.jsonl", data)),
                                    "--ops", "mutation", "--ratio", "10", "--out",
                                    str(tmp_path / "aug.jsonl")])
    assert done.exit_code == 0, done.output
    assert f"generated {made} of the 300 asked for" in " ".join(done.output.split())


@pytest.mark.parametrize("seed", ["-1", "4294967296"])
def test_stress_and_augment_refuse_a_seed_out_of_range(tmp_path, seed):
    """As audit scan, rotate and probe: -1 and 2³² were taken modulo 2³² (--seed 4294967296
    wrote what --seed 0 writes)."""
    split = mcq_split(12)
    data = _write(tmp_path / "train.jsonl",
                  [{"id": i, "premise": p, "choices": c, "label": lab}
                   for i, p, c, lab in zip(split.ids, split.premises, split.choices,
                                           split.labels)])
    for command in ("stress", "augment"):
        out = tmp_path / f"{command}.jsonl"
        done = CliRunner().invoke(app, [command, str(data), "--seed", seed, "--out", str(out)])
        assert done.exit_code == 2 and not out.exists(), done.output
        assert "seed (--seed) must be between 0 and 4294967295" in done.output
    with pytest.raises(UserError, match="must be between 0 and"):
        augment(split, ["mutation"], seed=int(seed))


@pytest.mark.parametrize("command, option", [("stress", "--test"), ("augment", "--train"),
                                             ("rotate", "--test")])
def test_the_one_split_option_of_a_command_is_enough(tmp_path, command, option):
    """`audit stress --test FILE` (stress has no --train) and `audit augment --train FILE`
    (augment has no --test) stopped with '--train and --test must be given together'."""
    split = mcq_split(12)
    data = _write(tmp_path / "split.jsonl",
                  [{"id": i, "premise": p, "choices": c, "label": lab}
                   for i, p, c, lab in zip(split.ids, split.premises, split.choices,
                                           split.labels)])
    out = tmp_path / ("rot" if command == "rotate" else f"{command}.jsonl")
    done = CliRunner().invoke(app, [command, option, str(data), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert out.exists()
    if command != "rotate":  # the lone file is still an input: never overwritten
        refused = CliRunner().invoke(app, [command, option, str(data), "--out", str(data)])
        assert refused.exit_code == 2 and "same as an input file" in refused.output


@pytest.mark.parametrize("command", ["augment", "stress"])
def test_written_questions_keep_their_source_records_other_fields(tmp_path, command):
    """Ids, metadata and groups of the source record are in its original and generated questions
    (both commands wrote only id, premise, choices, label and question); the fields the item was
    read from (an alias such as 'options', or --label-field) are not repeated beside them."""
    rows = [{"id": f"q{i}", "premise": f"Premise number {i}.", "gold": i % 2,
             "options": [f"{SUBJECTS[(i + j) % 6].capitalize()} {VERBS[(i * 3 + j) % 7]} {i}."
                         for j in range(2)],
             "meta": {"annotator": i % 3, "source": "x"}, "video-id": f"v{i}"}
            for i in range(12)]
    out = tmp_path / f"{command}.jsonl"
    done = CliRunner().invoke(app, [command, str(_write(tmp_path / "train.jsonl", rows)),
                                    "--label-field", "gold", "--ops",
                                    "crossover" if command == "augment" else "co",
                                    "--out", str(out)])
    assert done.exit_code == 0, done.output
    written = [json.loads(line) for line in out.read_text().splitlines()]
    source = {r["id"]: r for r in rows}
    assert any("source_id" in row for row in written)
    for row in written:
        original = source[row.get("source_id", row["id"])]
        assert row["meta"] == original["meta"] and row["video-id"] == original["video-id"]
        assert "options" not in row and "gold" not in row and "choices" in row


def test_two_stress_runs_named_apart_keep_two_summaries(tmp_path):
    """--out run.co.jsonl and --out run.mt.jsonl both wrote run.summary.json: the second run's
    counts replaced the first's, which then described the other file."""
    split = mcq_split(12)
    data = _write(tmp_path / "test.jsonl",
                  [{"id": i, "premise": p, "choices": c, "label": lab}
                   for i, p, c, lab in zip(split.ids, split.premises, split.choices, split.labels)])
    for op in ("co", "mt"):
        out = tmp_path / f"run.{op}.jsonl"
        done = CliRunner().invoke(app, ["stress", str(data), "--ops", op, "--out", str(out)])
        assert done.exit_code == 0, done.output
    for op in ("co", "mt"):
        summary = json.loads((tmp_path / f"run.{op}.summary.json").read_text())
        assert list(summary["ops"]) == [op]
    assert not (tmp_path / "run.summary.json").exists()


@pytest.mark.parametrize("command", ["augment", "stress"])
def test_source_items_sharing_an_id_are_one_error(tmp_path, command):
    """Stress wrote three questions with the id 'same:co' (and augment three 'same' originals),
    whose source_id could not tell their source items apart."""
    split = mcq_split(12)
    data = _write(tmp_path / "data.jsonl",
                  [{"id": "same" if i < 3 else i, "premise": p, "choices": c, "label": lab}
                   for i, p, c, lab in zip(range(12), split.premises, split.choices,
                                           split.labels)])
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(app, [command, str(data), "--ops",
                                    "crossover" if command == "augment" else "co",
                                    "--out", str(out)])
    assert done.exit_code == 2 and "id 'same' is given to two items (lines 1 and 2)" in \
        done.output and "source_id" in done.output
    assert not out.exists()


def test_a_stress_id_is_never_a_source_items_id():
    """Item '1''s co question was '1:co', the id of another source item: a stress file joined
    with its source (predictions by id) mixed the two up."""
    from cuelens.augment.operators import parse_ops
    from cuelens.augment.stress import build_stress

    split = Split(name="test", path="test.jsonl", task="mcq")
    for i, item_id in enumerate(["1", "1:co", "2"]):
        split.append({"id": item_id, "premise": f"Premise {i}.", "label": 0,
                      "choices": [f"{SUBJECTS[i].capitalize()} {VERBS[i]}.", f"No {i}."]},
                     raw="", line=i + 1)
    rows = build_stress(split, parse_ops("co"), seed=0).rows
    ids = [row["id"] for row in rows]
    assert ids == ["1:co'", "1:co:co", "2:co"]
    assert not set(ids) & set(split.ids)
    assert [row["source_id"] for row in rows] == ["1", "1:co", "2"]


@pytest.mark.parametrize("a, b", [("是的。", "是的"), ("はい！", "はい"), ("हाँ।", "हाँ"),
                                  ("نعم؟", "نعم")])
def test_choices_differing_in_final_punctuation_of_other_scripts_are_one_choice(tmp_path, a, b):
    """'是的。' and '是的' were two different choices: a crossover question could offer the
    correct answer again as a wrong one, the full stop aside (only ASCII marks were dropped)."""
    from cuelens.augment.perturb import is_valid

    assert not is_valid([a, b])
    rows = [{"id": f"q{i}", "premise": f"问题 {i}", "label": 0,
             "choices": [a if i % 2 else b, f"别的 {i}"]} for i in range(8)]
    out = tmp_path / "stress.jsonl"
    done = CliRunner().invoke(app, ["stress", str(_write(tmp_path / "t.jsonl", rows)), "--ops",
                                    "co", "--out", str(out)])
    assert done.exit_code == 0, done.output
    for row in map(json.loads, out.read_text(encoding="utf-8").splitlines()):
        assert normalise(row["constructed"]) != normalise(row["choices"][row["label"]])
