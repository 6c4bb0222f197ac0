"""`audit card` and `audit compare` on real data (docs/mitigation.md, docs/data-hygiene.md): what
a dataset author reads says no more than the scan — its conclusion, chance for multiple choice,
no easy/hard claim the scan did not find, no absolute path — and untrusted text cannot become
Markdown or HTML in card.md."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from cuelens.audit.compare import compare_scans
from cuelens.audit.conclusion import conclusion_of
from cuelens.audit.config import ScanConfig
from cuelens.audit.results import CONCLUSION_TEXT
from cuelens.audit.pipeline import scan_dataset
from cuelens.data.loading import load_dataset
from cuelens.data.synthetic import make_nli
from cuelens.mitigate.card import card_markdown, croissant_rai, portable_path, reproduce_command
from tests.conftest import SHARED_DATA

SNLI_ITEMS = 1000  # the SNLI stand-in: the first items of dev (as train) and test


def _scan(data: Path, out: Path, argv: list[str]) -> Path:
    """Scan ``data`` (no ICQ features: seconds) into ``out`` with ``argv`` as run.json's."""
    scan_dataset(load_dataset(str(data)), ScanConfig(iterations=1)).write(out)
    (out / "run.json").write_text(json.dumps({"argv": argv}))
    return out


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict[str, Path]:
    """Scans of COPA, Balanced COPA and a z-filtered SNLI stand-in (before/after)."""
    from cuelens.mitigate.subset import filter_dataset, write_subset

    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    shared_data = SHARED_DATA
    root = tmp_path_factory.mktemp("real")
    audit = "/opt/venv/bin/audit"
    out = {name: _scan(shared_data / name, root / name,
                       [audit, "scan", str(shared_data / name), "--out", str(root / name)])
           for name in ("copa", "balanced_copa")}
    snli = root / "snli"
    snli.mkdir()
    for role, source in (("train", "dev"), ("test", "test")):
        lines = (shared_data / "snli" / f"{source}.jsonl").read_text().splitlines()
        (snli / f"{role}.jsonl").write_text("\n".join(lines[:SNLI_ITEMS]) + "\n")
    out["snli"] = _scan(snli, root / "snli-scan", [audit, "scan", str(snli)])
    dataset = load_dataset(str(snli))
    write_subset(root / "snli-z", dataset, filter_dataset(dataset, "z", ScanConfig()))
    out["snli-z"] = _scan(root / "snli-z", root / "snli-z-scan", [audit, "scan", "snli-z"])
    return out


def invoke(cwd: Path, *args) -> tuple[int, str]:
    from tests.test_hostile_inputs import invoke as invoke_in

    return invoke_in(cwd, list(args))


def flat(text: str) -> str:
    """Terminal text with rich's line wrapping undone."""
    return " ".join(text.split())


def write_card(scan: Path, cwd: Path) -> tuple[str, dict]:
    code, output = invoke(cwd, "card", scan, "--out", cwd / "card")
    assert code == 0, output
    return ((cwd / "card" / "card.md").read_text(),
            json.loads((cwd / "card" / "croissant-rai.json").read_text()))


def results_of(scan: Path) -> dict:
    return json.loads((scan / "results.json").read_text())


# ------------------------------------------------------------------------------ card, real data
@pytest.mark.slow  # the real-data scans: over 10 s on a loaded 2-core machine
def test_copa_card_is_inconclusive_against_chance_with_no_easy_hard_claim(real, tmp_path):
    card, rai = write_card(real["copa"], tmp_path)
    conclusion = conclusion_of(results_of(real["copa"]))
    assert conclusion.status == "inconclusive"  # D +5.5 (95% CI -1.5 to +12.5) on 500 questions
    assert "**Inconclusive:** 500 evaluated questions cannot rule out leakage up to +9.1 " \
        "points" in card
    assert "against chance (1 in 2, 50.0%): cue leakage D = +5.5 points (95% CI -1.5 to " \
        "+12.5)" in card
    for claim in ("majority", "indistinguishable from chance", "solved from word cues",
                  "Easy and hard", "items are hard", "No cue leakage"):
        assert claim not in card and claim not in json.dumps(rai)
    # the reproduce line names the data as given relative to here, or by name
    assert "\naudit scan copa --out copa\n" in card and "/" not in card.split("```")[1]


@pytest.mark.slow  # the real-data scans: over 10 s on a loaded 2-core machine
def test_balanced_copa_ties_are_neither_easy_nor_hard(real, tmp_path):
    card, _ = write_card(real["balanced_copa"], tmp_path)
    conclusion = conclusion_of(results_of(real["balanced_copa"]))
    assert f"**{CONCLUSION_TEXT[conclusion.status]}:**" in card
    assert "1000 of 1000" not in card and "are hard" not in card and "Easy and hard" not in card
    assert "tie on every cue score" in card and "D = +0.0 points" in card
    assert "500 mirrored pairs" in card  # the construction, from the hygiene findings


@pytest.mark.slow  # the real-data scans: over 10 s on a loaded 2-core machine
def test_croissant_rai_is_valid_for_mlcroissant_and_written_in_sentences(real, tmp_path):
    mlc = pytest.importorskip("mlcroissant")
    from mlcroissant._src.core.rdf import make_context

    _, rai = write_card(real["copa"], tmp_path)
    for field in ("rai:dataBiases", "rai:dataLimitations"):
        assert rai[field] and all(re.fullmatch(r"[A-Z0-9].*[.]", s, re.S) for s in rai[field])
    document = {"@context": {**make_context(), **rai["@context"]}, "@type": "sc:Dataset",
                "name": rai["name"], "description": "COPA", "url": "https://example.org",
                "conformsTo": "http://mlcommons.org/croissant/1.0", "license": "MIT",
                "citeAs": "COPA", "datePublished": "2011-01-01", "version": "1.0.0",
                "distribution": [], **{k: v for k, v in rai.items() if k.startswith("rai:")}}
    metadata = mlc.Metadata.from_json(ctx=mlc.Context(), json_=document)
    assert metadata.data_biases == rai["rai:dataBiases"]
    assert metadata.data_limitations == rai["rai:dataLimitations"]
    with pytest.raises(mlc.ValidationError, match="data_biases"):  # the check can fail
        mlc.Metadata.from_json(ctx=mlc.Context(), json_={**document, "rai:dataBiases": 3})


def test_reproduce_line_never_shows_an_absolute_path(tmp_path):
    argv = ["/usr/bin/audit", "scan", str(tmp_path / "data" / "snli"), "--out=/elsewhere/x",
            "--metric", "cp"]
    assert reproduce_command(argv, tmp_path) == "audit scan data/snli --out=x --metric cp"
    assert reproduce_command(None, tmp_path) == "audit scan DATA"
    assert portable_path("/a/b/../c/copa", tmp_path) == "copa"
    assert portable_path("relative/copa", tmp_path) == "relative/copa"
    # a prefixed path (--segmenter hf:PATH) too; a dataset name with a colon stays as it is
    argv = ["audit", "scan", "data", "--segmenter", "hf:/home/me/models/bert",
            f"--segmenter=hf:{tmp_path / 'tok'}", "--hf", "super_glue:copa"]
    assert reproduce_command(argv, tmp_path) == ("audit scan data --segmenter hf:bert "
                                                 "--segmenter=hf:tok --hf super_glue:copa")


# ------------------------------------------------------------------------------ Markdown safety
HOSTILE = {"name": "<img src=x onerror=alert(1)>", "token": "[x](javascript:alert(1))",
           "label": "## heading\n<script>alert(2)</script>",
           "example": "a `code` ![i](http://x/i.png) *b*"}


def hostile_results(results: dict) -> dict:
    out = copy.deepcopy(results)
    out["dataset"]["name"] = HOSTILE["name"]
    out["cues"] = [{"token": HOSTILE["token"], "label": HOSTILE["label"], "count": 9,
                    "label_count": 9, "metrics": {"z": 9.0}, "significant": True}]
    out["examples"] = {"items": [{"premise": "1. ", "text": HOSTILE["example"]}],
                       "by_cue": {HOSTILE["token"]: [0]}}
    out.pop("cue_finding", None)
    return out


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """A scan of 300 synthetic NLI items with planted cues (seconds), for the card's rendering
    and refusals, not SGD's accuracies: tests/conftest.py's small budget."""
    root = tmp_path_factory.mktemp("planted")
    data = root / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in make_nli(300)))
    return _scan(data, root / "scan", ["audit", "scan", "data.jsonl", "--out", "scan"])


def test_untrusted_text_renders_as_text_never_as_markdown_or_html(planted):
    from markdown_it import MarkdownIt

    card = card_markdown(hostile_results(results_of(planted)), "audit scan ```x`\n# y <b>")
    tokens = MarkdownIt("commonmark").enable("table").parse(card)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    assert not kinds & {"html_block", "html_inline", "link_open", "image", "code_inline",
                        "em_open"}
    bold = [c for t in tokens for c in t.children or [] if c.type == "strong_open"]
    assert len(bold) == 1  # the conclusion's first word, none from the data
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["Bias, Risks and Limitations", "Conclusion", "Cue leakage",
                        "Easy and hard items", "Strongest cues", "Data hygiene",
                        "How to reproduce"]  # the card's own; none from the data
    html = MarkdownIt("commonmark").enable("table").render(card)
    assert "<img" not in html and "<script" not in html and 'href="javascript' not in html
    # the texts are all there, as text, on one line each
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "[x](javascript:alert(1))" in html
    assert "## heading &lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert "a `code` ![i](http://x/i.png) *b*" in html
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1 and fences[0].markup == "````"  # longer than the text's backticks
    assert fences[0].content == "audit scan ```x` # y <b>\n"  # the command as it is, one line


# ------------------------------------------------------------------------------ compare, real data
def compared(before: Path, after: Path, cwd: Path) -> tuple[dict, dict, str]:
    """``audit compare`` of two scans: the result, its dimensions by name and the terminal
    text — the terminal and compare.html open with the result's headline."""
    code, output = invoke(cwd, "compare", before, after, "-o", cwd / "c.html")
    assert code == 0, output
    result = compare_scans(results_of(before), results_of(after))
    assert flat(output).startswith(result["headline"])
    assert result["headline"] in (cwd / "c.html").read_text()
    return result, {d["name"]: d for d in result["dimensions"]}, output


@pytest.mark.slow  # the real-data scans: over 10 s on a loaded 2-core machine
def test_copa_to_balanced_copa_is_not_worse(real, tmp_path):
    result, dims, output = compared(real["copa"], real["balanced_copa"], tmp_path)
    assert dims["cue leakage D"]["status"] == "better"  # +5.5 (up to +12.5) → exactly 0
    assert "now lies below the 3-point margin" in dims["cue leakage D"]["text"]
    # B-COPA's one conflicting pair, 0 → 2 items: within the noise (it was "worse", the
    # counts compared rather than their rates; docs/methods.md §18)
    assert dims["data hygiene"]["status"] == "same"
    assert "label conflict items 0 → 2 (within the noise)" in dims["data hygiene"]["text"]
    assert dims["training items lost"]["status"] == "not compared"  # train → cross-validated
    assert result["status"] in ("mixed", "improved") and "nothing improved" not in output


@pytest.mark.slow  # the real-data scans: over 10 s on a loaded 2-core machine
def test_snli_z_filtered_still_leaks_and_lost_training_items(real, tmp_path):
    result, dims, _ = compared(real["snli"], real["snli-z"], tmp_path)
    assert dims["conclusion"]["before"] == dims["conclusion"]["after"] == "leakage"
    lost = SNLI_ITEMS - result["after"]["fitting"]["items"]
    assert lost > 0 and dims["training items lost"]["status"] == "worse"
    assert f"({lost:,} dropped)" in dims["training items lost"]["text"]
    assert result["status"] != "improved" and "nothing got worse" not in result["headline"]
    # the filter's 3 → 0 significant cues is no change beyond the noise (53 of 1,000 items
    # dropped; docs/methods.md §18): nothing measured got better, items were lost
    assert dims["significant cues"]["status"] == "same"
    assert "0 weakened" in dims["significant cues"]["text"]
    assert result["headline"].startswith("Worse: the conclusion stays leakage")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["copa", "balanced_copa", "snli", "snli-z"])
def test_card_and_compare_state_the_scans_conclusion(real, tmp_path, name):
    """Conformance: card and compare say what the scan concluded, in its words."""
    results = results_of(real[name])
    conclusion = conclusion_of(results)
    card, rai = write_card(real[name], tmp_path)
    assert f"**{CONCLUSION_TEXT[conclusion.status]}:**" in card
    assert rai["rai:dataBiases"][0].startswith(CONCLUSION_TEXT[conclusion.status] + ": ")
    side = compare_scans(results, results)["before"]
    assert side["conclusion"]["status"] == conclusion.status


# ------------------------------------------------------------------------------ hostile inputs
def _edited(results: dict, path: str, value=None) -> dict:
    """``results`` with the field at ``path`` ("leakage.best.D") set to ``value`` (None: removed)."""
    out = copy.deepcopy(results)
    *parents, key = path.split(".")
    node = out
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    if value is None:
        del node[int(key) if key.isdigit() else key]
    else:
        node[int(key) if key.isdigit() else key] = value
    return out


@pytest.fixture
def workdir(tmp_path, planted) -> Path:
    import shutil

    shutil.copytree(planted, tmp_path / "scan")
    return tmp_path


@pytest.mark.parametrize("file, content, where, message", [
    ("results.json", "{not json", "results.json, line 1", "not valid JSON"),
    ("results.json", lambda r: _edited(r, "leakage.best"), "results.json", "$.leakage"),
    ("results.json", lambda r: _edited(r, "leakage.best.D", "0.2"), "results.json",
     "$.leakage.best.D: must be number"),
    ("results.json", lambda r: _edited(r, "cues.0.metrics"), "results.json", "$.cues[0]"),
    ("results.json", lambda r: _edited(r, "easy_hard", "all"), "results.json", "$.easy_hard"),
    ("results.json", lambda r: {**r, "probe": {"accuracy": 0.5}}, "results.json",
     "this is the output of `audit probe`; `audit card` takes the output of `audit scan`"),
    ("run.json", "{not json", "run.json, line 1", "not valid JSON"),
    ("run.json", {"started": "x"}, "run.json", "$.argv must be a list of strings"),
    ("run.json", {"argv": "audit scan x"}, "run.json", "$.argv must be a list of strings"),
])
def test_card_refuses_edited_results_and_run_files(workdir, file, content, where, message):
    from tests.test_hostile_inputs import assert_refused

    path = workdir / "scan" / file
    if callable(content):
        content = content(json.loads(path.read_text()))
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    assert_refused(workdir, ["card", "scan"], where, message)


def test_card_without_an_easy_hard_section_makes_no_easy_hard_claim(workdir):
    path = workdir / "scan" / "results.json"
    path.write_text(json.dumps(_edited(json.loads(path.read_text()), "easy_hard")))
    code, output = invoke(workdir, "card", "scan")
    assert code == 0, output
    card = (workdir / "scan" / "card.md").read_text()
    assert "Easy and hard" not in card and "easy" not in card.lower()


def test_the_scans_warnings_stand_under_its_conclusion(planted):
    # the conclusion of an unsegmented scan says "see the warnings": the card shows them
    results = copy.deepcopy(results_of(planted))
    results["warnings"] = ["words look unsegmented <b>", "another"]
    card = card_markdown(results, "audit scan data.jsonl")
    conclusion = card.split("### Conclusion")[1].split("###")[0]
    assert "The scan's warnings:\n\n- Words look unsegmented &lt;b&gt;.\n- Another.\n" \
        in conclusion
    limitations = croissant_rai(results)["rai:dataLimitations"]
    assert limitations[:2] == ["Words look unsegmented <b>.", "Another."]
    del results["warnings"]
    assert "warnings" not in card_markdown(results, "audit scan data.jsonl")


def test_card_of_a_scan_without_word_cue_statistics_says_what_was_measured(tmp_path):
    """MCQ items with 2 and 3 choices: the scan writes the MCQ baselines only (no leakage or
    cues section, no per-item table); the card states that instead of refusing a scan's own
    output as "not an audit scan result", and compare says why it cannot compare."""
    from tests.test_hostile_inputs import jsonl

    rows = [{"premise": f"The man walked {i}.", "label": i % 2,
             "choices": [f"He ran {i}.", "He sat down."] + (["He left."] if i % 3 else [])}
            for i in range(60)]
    (tmp_path / "mixed.jsonl").write_text(jsonl(rows))
    code, output = invoke(tmp_path, "scan", "mixed.jsonl", "--out", "scan", "--features",
                          "none", "--iterations", "1")
    assert code == 0, output
    assert "leakage" not in results_of(tmp_path / "scan")
    card, rai = write_card(tmp_path / "scan", tmp_path)
    assert "no cue leakage D was measured" in card and "Items have different numbers" in card
    assert "Cue words were not tested" in card and "No word is a significant cue" not in card
    assert "items.jsonl" not in card and not (tmp_path / "scan" / "items.jsonl").exists()
    assert any("no cue leakage D was measured" in s for s in rai["rai:dataBiases"])
    code, output = invoke(tmp_path, "compare", "scan", "scan", "-o", "c.html")
    assert code == 2 and "this scan has no word-cue statistics" in flat(output)
    assert "not an audit scan result" not in output


def test_compare_refuses_a_string_d(workdir):
    from tests.test_hostile_inputs import assert_refused

    path = workdir / "scan" / "results.json"
    results = json.loads(path.read_text())
    (workdir / "after").mkdir()
    (workdir / "after" / "results.json").write_text(
        json.dumps(_edited(results, "leakage.best.D", "0.2")))
    assert_refused(workdir, ["compare", "scan", "after", "-o", "c.html"],
                   "after/results.json", "$.leakage.best.D: must be number")


def test_compare_with_a_copy_lacking_cues_says_not_compared(workdir):
    results = json.loads((workdir / "scan" / "results.json").read_text())
    (workdir / "after").mkdir()
    copy_ = {k: v for k, v in results.items() if k not in ("cues", "cue_finding")}
    (workdir / "after" / "results.json").write_text(json.dumps(copy_))
    code, output = invoke(workdir, "compare", "scan", "after", "-o", "c.html")
    assert code == 0, output
    assert "cues gained" not in output and "cues lost" not in output
    assert "not compared: significant cues: the after scan has no cues section" in flat(output)
    result = compare_scans(results, copy_)
    assert result["cues_compared"] is False and result["n_cues_gained"] == 0
    assert result["status"] == "unchanged"
    assert "Significant cues: not compared" in (workdir / "c.html").read_text()


def test_preference_card_speaks_of_responses(tmp_path):
    import cuelens
    from tests.planted_preference import make_preference

    rows = [{k: v for k, v in r.items() if k != "subset"} for r in make_preference(40)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = cuelens.scan(str(tmp_path / "pairs.jsonl"), folds=3, iterations=1).results
    card = card_markdown(results, "audit scan pairs.jsonl")
    assert "sees only the hypotheses" not in card and "hypothes" not in card
    assert "A classifier that sees only the responses" in card
    assert "of the evaluated responses chosen or rejected correctly" in card
