"""Write docs/examples/fastchat-gpt-4_pair.jsonl with FastChat's own MT-Bench judge code.

FastChat (PyPI ``fschat``) writes pairwise judgments in ``play_a_match_pair``: it judges every
pair twice (answers in order, then swapped) and maps both verdicts back to ``model_1``/``model_2``.
Here the OpenAI call is replaced by a scripted judge with known behaviour, so the file is the real
tool's output with a planted position bias (tests/test_judge.py checks cuelens' reading of it):
of 40 questions, for ``question_id % 10`` in 0–6 the judge prefers model_1's answer wherever it
is shown (consistent), in 7–8 it always answers ``[[A]]`` (a flip toward the first position), and
in 9 it answers ``[[A]]`` in the first order and ``[[C]]`` (tie) in the swapped one.

Run in a separate venv (never the project's):
  python3 -m venv /work/venvs/fastchat && /work/venvs/fastchat/bin/pip install fschat
  /work/venvs/fastchat/bin/python benchmarks/fastchat_judgments.py
"""

from __future__ import annotations

import os
from pathlib import Path

from fastchat.llm_judge import common

OUT = Path(__file__).resolve().parent.parent / "docs" / "examples" / "fastchat-gpt-4_pair.jsonl"
PAIR_V2 = {  # the shape of FastChat's data/judge_prompts.jsonl "pair-v2" entry
    "name": "pair-v2", "type": "pairwise", "category": "general", "output_format": "[[A]]",
    "system_prompt": "Please act as an impartial judge and evaluate the quality of the responses "
                     "provided by two AI assistants to the user question displayed below. Output "
                     "your final verdict: \"[[A]]\" if assistant A is better, \"[[B]]\" if "
                     "assistant B is better, and \"[[C]]\" for a tie.",
    "prompt_template": "[User Question]\n{question}\n\n[The Start of Assistant A's Answer]\n"
                       "{answer_a}\n[The End of Assistant A's Answer]\n\n[The Start of Assistant "
                       "B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]",
}


def scripted_judge(model, conv, temperature, max_tokens):
    """The verdict of the planted judge for the prompt in ``conv``."""
    prompt = conv.messages[0][1]
    question = int(prompt.split("question ")[1].split(":")[0])
    first_is_model_1 = prompt.index("answer of model one") < prompt.index("answer of model two")
    kind = question % 10
    if kind <= 6:
        return "model one is better: [[A]]" if first_is_model_1 else "[[B]]"
    if kind <= 8:
        return "[[A]]"
    return "[[A]]" if first_is_model_1 else "[[C]]"


def main() -> None:
    common.chat_completion_openai = scripted_judge
    judge = common.Judge("gpt-4", PAIR_V2)
    if OUT.exists():
        os.remove(OUT)
    for q in range(40):
        question = {"question_id": 81 + q, "category": ["writing", "math"][q % 2],
                    "turns": [f"question {q}: explain something"]}
        answers = [{"choices": [{"turns": [f"the answer of model {name} to question {q}"]}]}
                   for name in ("one", "two")]
        match = common.MatchPair(question, "model-one", "model-two", answers[0], answers[1],
                                 judge)
        common.play_a_match_pair(match, output_file=str(OUT))


if __name__ == "__main__":
    main()
