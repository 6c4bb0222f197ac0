"""Word-cue audit (SPEC §2–4): cue metrics, aggregators, leakage table and easy/hard split."""
