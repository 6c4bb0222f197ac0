"""Word-cue audit (docs/methods.md §2–4): cue metrics, aggregators, leakage table and easy/hard
split."""
