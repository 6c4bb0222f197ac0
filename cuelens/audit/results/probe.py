"""A probe's sections (docs/methods.md §6–7, docs/llm-probe.md): ``probe``, ``llm_probe`` and
the probe's whole results.json, :class:`ProbeSections`."""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from cuelens.audit.results.scan import ScanSections
from cuelens.audit.results.section import Section, typed_reads


@dataclass(frozen=True, kw_only=True, repr=False)
class ProbeSection(Section):
    """``probe`` (docs/methods.md §6–7): the model, its accuracy and the cue tests, built by
    :func:`cuelens.probes.sections.probe_section` (``None``: not computed, or a file of an
    older version)."""

    key: typing.ClassVar[str] = "probe"

    model: dict = field(default_factory=dict)
    accuracy: float | None = None
    sanity: dict | None = None
    cue_selection: dict | None = None
    accuracy_test: dict | None = None
    distribution_test: dict | None = None
    easy_hard: dict | None = None
    data_map: dict | None = None
    short_circuit: dict | None = None
    position_bias: dict | None = None

    @property
    def tested_cues(self) -> list[dict]:
        """The rows of the accuracy test (ΔAcc per cue)."""
        return (self.accuracy_test or {}).get("cues", [])


@dataclass(frozen=True, kw_only=True, repr=False)
class LLMProbeSection(Section):
    """``llm_probe`` (docs/llm-probe.md): the language model, one entry per prompt template
    (:class:`cuelens.probes.llm.pipeline.TemplateSection` as results.json holds it) and the
    verdict, the least cue-reliant template."""

    key: typing.ClassVar[str] = "llm_probe"

    model: dict = field(default_factory=dict)
    templates: list[dict] = field(default_factory=list)
    verdict: dict | None = None

    @property
    def least_cue_reliant(self) -> str | None:
        """The verdict's template (None: no template was tested)."""
        return (self.verdict or {}).get("least_cue_reliant")


@dataclass(frozen=True, kw_only=True, repr=False)
class ProbeSections(ScanSections):
    """A probe's whole results.json: the scan's sections, the probe's own (``probe``: a
    model's; ``llm_probe``: a language model's through prompt templates), then ``next_steps``,
    about the model."""

    probe: ProbeSection | None = None
    llm_probe: LLMProbeSection | None = None

    @classmethod
    def of(cls, scan: ScanSections, next_steps: Callable[[dict], list], *,
           probe: ProbeSection | None = None,
           llm_probe: LLMProbeSection | None = None) -> ProbeSections:
        """``scan``'s sections with the probe's and the ``next_steps`` computed from them all
        (:func:`~cuelens.audit.advice.next_steps`; the scan's own are about the data)."""
        sections = cls(**{**vars(scan), "next_steps": None}, probe=probe, llm_probe=llm_probe)
        with typed_reads():
            return replace(sections, next_steps=next_steps(sections.to_json()))

    def to_json(self) -> dict:
        """The results.json content: the scan's keys, the probe's, ``next_steps`` last."""
        results = super().to_json()
        steps = results.pop("next_steps", None)
        return results if steps is None else {**results, "next_steps": steps}


def model_name(results: dict) -> str:
    """The probed model's name in a probe's results.json content (``the model`` without
    one)."""
    section = ProbeSection.in_results(results) or LLMProbeSection.in_results(results)
    return (section.model.get("name") if section is not None else None) or "the model"


def about_a_model(results: dict) -> bool:
    """Whether a results.json content is a probe's (its next steps are about the model)."""
    return any(kind.key in results for kind in (ProbeSection, LLMProbeSection))
