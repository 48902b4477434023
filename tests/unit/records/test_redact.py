"""Secret-shaped values never reach the evidence, and redacted JSON lines still parse."""

from __future__ import annotations

import json

from evalkit.records.kept.redact import redact, redact_jsonl

SECRETS = [
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "ya29.a0AfH6SMBx3kL9vQ2nR7tY1uP4wZ8cE5jD",
    "1//0gLq3xT7bK2mN9pR4sV6wY8zA1cE3fH5jL7nP9rT",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
]


def test_each_secret_shape_is_removed() -> None:
    for secret in SECRETS:
        assert secret not in redact(f"before {secret} after")
    assert "tok3n-value-123" not in redact("Authorization: Bearer tok3n-value-123")
    assert "hunter2hunter2" not in redact('password="hunter2hunter2"')


def test_a_gemini_key_printed_by_env_is_removed() -> None:
    printed = "PATH=/usr/bin\nGEMINI_API_KEY=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q\n"
    line = json.dumps({"type": "tool_result", "output": printed})
    assert "AIzaSy" not in redact_jsonl(line)


def test_ordinary_text_is_left_alone() -> None:
    text = "Finch returns 100 records per page; see ADR 0002 for UTC."
    assert redact(text) == text


def test_redacted_transcript_lines_still_parse() -> None:
    lines = [json.dumps({"type": "user", "message": {"content": s}}) for s in SECRETS]
    lines.append('{"type": "resu')
    out = redact_jsonl("\n".join(lines)).splitlines()
    for kept in out[:-1]:
        json.loads(kept)
    assert all(s not in "\n".join(out) for s in SECRETS)
