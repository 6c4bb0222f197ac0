"""Plain-language meaning of every abbreviation the report shows (docs/methods.md §2–7).

Table headers and stat labels carry these as hover titles (``<abbr title>``), chart hovers repeat
them, and the page's "Key" section lists the terms a page uses.
"""

from __future__ import annotations

GLOSSARY: dict[str, str] = {
    "z": "z statistic of a word's label rate against the label prior: "
         "(p̂ − p0) / √(p0(1 − p0)/#(w)); above the Bonferroni threshold = statistically "
         "significant cue",
    "cp": "conditional probability #(w,l)/#(w): share of the instances with the word that have "
          "the label",
    "freq": "#(w,l): instances with both the word and the label",
    "pmi": "pointwise mutual information log p(w,l)/(p(w)p(l)): association beyond chance",
    "npmi": "PMI normalised to [−1, 1] by −log p(w,l)",
    "lmi": "local mutual information p(w,l)·PMI(w,l): PMI weighted by how common the pair is",
    "rd": "ratio difference |#(w,l)/#(w,L′) − #(l)/#(L′)|: how far the odds of the label with the "
          "word differ from its base odds",
    "ad": "angle difference: the ratio difference on a bounded angular (arctan) scale",
    "cos": "cosine of the word's and the label's count vectors (1 = uninformative)",
    "wp": "weighted power (1 − cos)·#(w)^cos: frequent and informative words",
    "average": "aggregator: the label whose mean word score is largest",
    "max": "aggregator: the label whose largest word score is largest",
    "sgd": "aggregator: a linear classifier trained by stochastic gradient descent on the "
           "instance's word scores",
    "lr": "aggregator: a logistic-regression classifier on the instance's word scores",
    "D": "leakage D: cue-only accuracy minus the baseline (majority label, or 1/k for multiple "
         "choice), in percentage points",
    "CI": "95% confidence interval",
    "ΔAcc": "the model's accuracy on test items with the cue minus its accuracy on items without "
            "it",
    "Σ|ΔAcc|": "sum of |ΔAcc| over the tested cues, in points: how much the model's accuracy "
               "depends on cues (lower is better)",
    "score": "distribution-test score: how far the model's predicted labels on a label-balanced "
             "set lean the way the cue leans in the training data (0 = not at all)",
    "support": "#(w): instances whose text contains the word",
    "with label": "#(w,l): of those, instances with the label",
    "BoW": "bag of words: a classifier on word counts of the hypothesis or choice alone",
    "cueness": "how sharp a feature's label distribution is in train and how well it carries "
               "over to test",
    "AW": "attention to the premise: share of items whose answer changes when the premise is "
          "removed",
    "CO": "crossover: stress test replacing a wrong answer with a tricky one",
    "easy": "an item the cue-only classifier gets right in more than half of the repetitions",
    "hard": "an item the cue-only classifier does not get right in most repetitions",
    "p_fdr": "p-value after Benjamini–Hochberg correction over all tests of the table",
    "words": "word tokens (lower-cased, punctuation split off) of a hypothesis or choice",
}
