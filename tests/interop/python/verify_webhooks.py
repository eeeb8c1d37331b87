"""Verifies webhook deliveries with the Standard Webhooks reference library for Python
(PyPI `standardwebhooks`), which no one on this project wrote.

Reads JSON lines {"secret", "headers", "body"} on stdin; exits non-zero at the first
delivery whose signature does not verify, and prints "verified N" otherwise.
"""
import json
import sys

from standardwebhooks.webhooks import Webhook

count = 0
for line in sys.stdin:
    if not line.strip():
        continue
    d = json.loads(line)
    payload = Webhook(d["secret"]).verify(d["body"], d["headers"])
    assert payload == json.loads(d["body"]), "verify answered another payload"
    count += 1
print(f"verified {count}")
