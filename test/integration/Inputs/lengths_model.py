"""Writes a small encoder model.json for the length tests:
lengths_model.py OUT PROJECTION SHARING [KEY=VALUE ...]."""
import json
import sys

out, projection, sharing = sys.argv[1:4]
model = {"layers": 2, "d_model": 64, "heads": 4, "max_seq_len": 128,
         "k": 32, "ffn_dim": 128, "batch": 3, "dtype": "f32",
         "projection": projection, "sharing": sharing,
         "padding": "lengths", "bias": True}
for item in sys.argv[4:]:
    key, value = item.split("=", 1)
    model[key] = json.loads(value)
with open(out, "w") as f:
    json.dump(model, f)
