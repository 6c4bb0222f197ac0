"""The typed results.json sections (cuelens/audit/results/): a real scan's results.json read
into them and written back is the same bytes, and its parts are typed (docs/results-schema.md).
SNLI dev, the larger one, is checked by benchmarks/typed_sections_identity.py."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from cuelens.audit.config import ScanConfig
from cuelens.audit.pipeline import scan_dataset
from cuelens.audit.results import (Conclusion, ConfigSection, CueFinding, CueRow, CueStats,
                                   DatasetSummary, ExamplesSection, FeatureRow, FeaturesSection,
                                   GoldPositionTest, HygieneSection, LengthsSection,
                                   LengthSummary, McqBaselinesSection, McqRuleRow, OverlapRow,
                                   ScanSections, SegmentationSection, SplitHygiene,
                                   SplitSummary, typed_reads)
from cuelens.data import load_dataset
from cuelens.errors import UserError
from cuelens.jsonio import dumps_json
from tests.conftest import SHARED_DATA

REAL = {"copa": ("word", "negation"), "arct": ()}  # data set → the ICQ features scanned


@pytest.fixture(scope="module", params=sorted(REAL))
def real_scan(request) -> tuple[str, str]:
    """(name, results.json text) of a default scan of a real data set, with tests/conftest.py's
    small SGD budget: its tests read sections back and check their types and counts, never
    SGD's accuracies."""
    if not (SHARED_DATA / request.param).is_dir():
        pytest.skip("../shared/data is not present")
    scan = scan_dataset(load_dataset(str(SHARED_DATA / request.param)), ScanConfig(),
                        features=REAL[request.param])
    return request.param, dumps_json(scan.results)


def test_a_real_scan_reads_and_writes_back_byte_for_byte(real_scan):
    _, text = real_scan
    sections = ScanSections.from_json(json.loads(text))
    assert dumps_json(sections.to_json()) == text


def test_the_sections_of_a_real_scan_are_typed_with_its_numbers(real_scan):
    name, text = real_scan
    sections = ScanSections.from_json(json.loads(text))
    data = sections.dataset
    assert isinstance(data, DatasetSummary) and data.task == "mcq" and data.n_choices == 2
    assert all(isinstance(s, SplitSummary) for s in data.splits.values())
    test_items = {"copa": 500, "arct": 444}[name]  # the test files' lines
    assert data.evaluated_role == "test" and data.evaluated_items == test_items
    assert data.splits["test"].label_counts == {"right": test_items, "wrong": test_items}
    hygiene = sections.hygiene
    assert isinstance(hygiene, HygieneSection)
    assert all(isinstance(s, SplitHygiene) for s in hygiene.splits.values())
    assert all(isinstance(row, OverlapRow) for row in hygiene.overlap)
    assert hygiene.splits["test"].constructed_pairs[0] == "mirrored_pairs"
    mcq = sections.mcq_baselines
    assert isinstance(mcq, McqBaselinesSection) and mcq.n_items == test_items
    assert mcq.chance == 0.5 and all(isinstance(r, McqRuleRow) for r in mcq.rows)
    assert all(isinstance(t, GoldPositionTest) for t in mcq.gold_position.values())
    assert sum(mcq.gold_position["test"].counts) == test_items
    cues = sections.cues or []
    assert cues and all(isinstance(c, CueRow) for c in cues)
    assert isinstance(sections.cue_stats, CueStats) and isinstance(sections.cue_finding,
                                                                     CueFinding)
    assert sections.cue_finding.n_significant == sum(c.significant for c in cues)
    assert isinstance(sections.conclusion, Conclusion)
    seg = sections.segmentation
    assert isinstance(seg, SegmentationSection) and seg.name == "unicode"
    assert seg.language == "en" and seg.unsegmented is None  # English, the guard silent
    assert sections.conclusion.status in ("leakage", "no_meaningful_leakage", "inconclusive")
    assert sections.config == ConfigSection.from_json(asdict(ScanConfig()))  # the defaults
    lengths = sections.lengths
    assert isinstance(lengths, LengthsSection) and lengths.unit == "words per choice"
    assert lengths.baseline is None and set(lengths.by_label) == {"correct choice",
                                                                  "other choices"}
    assert all(isinstance(s, LengthSummary) and s.n == test_items and
               sum(s.histogram) == test_items for s in lengths.by_label.values())
    examples = sections.examples
    assert isinstance(examples, ExamplesSection) and examples.items
    listed = {i for rows in examples.by_cue.values() for i in rows}
    assert listed | set(examples.easy) | set(examples.hard) == set(range(len(examples.items)))
    if REAL[name]:
        assert isinstance(sections.features_config, FeaturesSection)
        assert sections.features_config.features == list(REAL[name])
        assert sections.features and all(isinstance(f, FeatureRow) for f in sections.features)
    else:
        assert sections.features is None and sections.features_config is None


def test_a_sections_repr_is_one_line_per_field(real_scan):
    sections = ScanSections.from_json(json.loads(real_scan[1]))
    text = repr(sections)
    assert len(text.splitlines()) <= 2 + len(vars(sections)) and len(text) < 3000
    assert f"cues=[{len(sections.cues or [])} items]," in text
    assert "hygiene=HygieneSection(…)," in text


def test_nullable_fields_are_written_as_null_and_absent_ones_stay_absent():
    split = SplitSummary(items=2, label_counts={"a": 1, "b": 1})
    data = DatasetSummary(task="nli", label_names=["a", "b"], splits={"all": split})
    assert data.to_json() == {"task": "nli", "n_choices": None, "label_names": ["a", "b"],
                              "splits": {"all": {"file": None, "items": 2,
                                                 "label_counts": {"a": 1, "b": 1},
                                                 "answer_position_counts": None}}}
    assert DatasetSummary.from_json(data.to_json()) == data


def test_a_nested_section_of_the_wrong_kind_is_one_user_error():
    with pytest.raises(UserError, match="the splits section of this results.json is not an "
                                        "object"):
        HygieneSection.from_json({"splits": [], "overlap": [], "examples": {}, "warnings": []})
    with pytest.raises(UserError, match="this results.json has no dataset section"):
        DatasetSummary.required_in({"schema_version": "1.0"})


def _cue(token: str, significant: bool) -> dict:
    return {"token": token, "label": "a", "count": 9, "label_count": 6,
            "metrics": {"z": 3.0}, "significant": significant}


def test_inside_typed_reads_each_section_is_read_once_and_edits_between_reads_are_seen():
    results = {"cues": [_cue("tall", True)], "dataset": {"task": "nli", "label_names": ["a"],
                                                         "splits": {"all": {"items": 1}}}}
    with typed_reads():
        rows = CueRow.rows_in(results)
        assert CueRow.rows_in(results) is rows  # read once, the same rows
        assert DatasetSummary.in_results(results) is DatasetSummary.in_results(results)
    assert CueRow.rows_in(results) is not rows  # outside: read again
    results["cues"][0]["significant"] = False  # an edit between two readers' calls
    with typed_reads():
        assert [c.significant for c in CueRow.rows_in(results)] == [False]


def test_sections_written_inside_typed_reads_read_back_as_themselves():
    rows = [CueRow.from_json(_cue("tall", True)), CueRow.from_json(_cue("first", False))]
    data = DatasetSummary(task="nli", label_names=["a"], splits={"all": SplitSummary(items=1)})
    sections = ScanSections(config=ConfigSection(), dataset=data, cues=rows)
    with typed_reads():
        written = sections.to_json()
        assert CueRow.rows_in(written) is rows and DatasetSummary.required_in(written) is data
    assert CueRow.rows_in(sections.to_json()) == rows  # outside: equal, read anew


def test_the_config_section_is_the_scan_config_and_older_files_read_its_defaults():
    config = ScanConfig(metric="z", folds=3, margin=0.05)
    section = ConfigSection(**asdict(config), statistics="streaming")
    assert section.to_json() == {**asdict(config), "statistics": "streaming"}
    assert ConfigSection(**asdict(ScanConfig())) == ConfigSection(max_fit_items=55_000)
    older = ConfigSection.of({"config": {"metric": "z", "folds": 3}})  # before margin, …
    assert (older.metric, older.folds, older.margin, older.flag_threshold) == ("z", 3, 0.03, 0.1)
    assert older.max_fit_items is None and older.statistics is None
    assert ConfigSection.of({"dataset": {}}) == ConfigSection()  # a hand-made file


def test_lengths_and_examples_of_an_older_file_read_without_their_later_fields():
    lengths = LengthsSection.from_json({"unit": "words per choice", "max_words": 40, "by_label": {
        "correct choice": {"n": 0, "histogram": [0] * 41, "mean": None, "median": None}}})
    assert lengths.baseline is None and lengths.by_label["correct choice"].mean is None
    assert lengths.to_json()["by_label"]["correct choice"]["median"] is None  # written as null
    examples = ExamplesSection.from_json({"items": [{"id": "a"}]})
    assert (examples.by_cue, examples.easy, examples.hard) == ({}, [], [])


def counted_builds_and_cue_parses(monkeypatch) -> tuple[list, list]:
    """(one entry per :meth:`ScanSections.to_json` call, the cue rows parsed back) from now."""
    built, parsed = [], []
    to_json, read = ScanSections.to_json, CueRow.from_json
    monkeypatch.setattr(ScanSections, "to_json", lambda self: built.append(1) or to_json(self))
    monkeypatch.setattr(CueRow, "from_json",
                        classmethod(lambda cls, data: parsed.append(data) or read(data)))
    return built, parsed


def test_a_scan_builds_its_results_dict_once_to_advise_and_never_parses_its_cue_rows_back(
        tmp_path, monkeypatch):
    import cuelens
    from cuelens.commands import scan as command
    from cuelens.data.synthetic import make_nli
    from cuelens.reports.options import ReportOptions

    built, parsed = counted_builds_and_cue_parses(monkeypatch)
    scan = scan_dataset(cuelens.load_dataset(make_nli(120, seed=0)),
                        ScanConfig(folds=3, iterations=1))
    assert built == [1]  # the conclusion and the next steps read one dict
    command.save_scan(scan, tmp_path / "out", (None, ReportOptions()), 5)
    assert parsed == [] and built == [1]  # that dict written, read as typed
    again = scan.advised()  # advising again builds again, once
    assert again.results == scan.results and again.results is again.results and built == [1, 1]
    assert "nobody" in (tmp_path / "out" / "report.html").read_text()  # the planted cue listed


def test_the_api_save_writes_the_advised_dict_and_never_parses_its_cue_rows_back(
        tmp_path, monkeypatch):
    import cuelens
    from cuelens.data.synthetic import make_nli

    built, parsed = counted_builds_and_cue_parses(monkeypatch)
    result = cuelens.scan(make_nli(120, seed=0), folds=3, iterations=1)
    files = result.save(tmp_path / "out")
    assert parsed == [] and built == [1]  # built once to advise, read as typed by the report
    assert json.loads(files["results"].read_text()) == json.loads(dumps_json(result.results))
    assert "nobody" in files["report"].read_text()  # the planted cue listed
