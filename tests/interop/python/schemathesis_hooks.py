"""Schemathesis hooks for tests/it/schemathesis.rs: realistic names where the document
cannot say exactly what is valid.

A slug may hold letters of any script that are lower-case or have no case (docs/api.md, "Pages");
an OpenAPI `pattern` cannot say that portably (JSON Schema's ECMA-262 and Python's `re`
disagree on `\\p{…}`), so the document leaves slugs unconstrained and these hooks turn
the slugs that creations and renames generate into valid ones. Without them nearly every
generated page is refused and the stateful phase never walks create → get → update →
rename → history → restore → delete. Each hook offers the generated body and its mended
twin side by side (Hypothesis draws either), so invalid slugs are still sent and must
still answer 400.
"""

from hypothesis import strategies as st

import itertools

import schemathesis

MAX_TITLE_CHARS = 300

# A numbered suffix keeps mended slugs apart: the run's data persists, and a creation
# that collides (409) yields nothing for the next step to follow.
SERIAL = itertools.count(1)


def slug_of(value, fallback):
    """A valid, fresh slug made from whatever was generated (ASCII keeps it predictable)."""
    if not isinstance(value, str):
        return fallback
    kept = "".join(c for c in value.lower() if c.isascii() and (c.isalnum() or c in "-_."))
    kept = kept.lstrip(".-")[:100] or fallback
    return f"{kept}-{next(SERIAL)}"


def clean(value):
    """Text without NUL (which PostgreSQL cannot store, so the API refuses it)."""
    return value.replace("\x00", "") if isinstance(value, str) else value


def offers_mended(path):
    """Registers `mend` as a body hook of `POST path`: Hypothesis draws either the
    generated body or its mended twin (a copy without NUL, passed to `mend`)."""

    def register(mend):
        @schemathesis.hook("flatmap_body").apply_to(method="POST", path=path)
        def hook(ctx, body):
            if not isinstance(body, dict):
                return st.just(body)
            return st.sampled_from([mend({key: clean(value) for key, value in body.items()}), body])

        return mend

    return register


@offers_mended("/api/pages")
def valid_new_page(body):
    body["slug"] = slug_of(body.get("slug") or body.get("title"), "page")
    if isinstance(body.get("title"), str):
        body["title"] = body["title"][:MAX_TITLE_CHARS]
    # A parent must be a live page; generated ones never are.
    body.pop("parent", None)
    return body


@offers_mended("/api/pages/{slug}/rename")
def valid_rename(body):
    body["new_slug"] = slug_of(body.get("new_slug"), "renamed")
    if isinstance(body.get("title"), str):
        body["title"] = body["title"][:MAX_TITLE_CHARS]
    return body


@offers_mended("/api/workspaces")
def valid_new_workspace(body):
    body["slug"] = slug_of(body.get("slug") or body.get("name"), "space")
    if not isinstance(body.get("name"), str) or not body["name"].strip():
        body["name"] = body["slug"]
    body["name"] = body["name"][:200]
    return body


@offers_mended("/api/webhooks")
def valid_new_webhook(body):
    # A public address written as an IP (TEST-NET-3 is reserved, so refused; this one is
    # public and unreachable from the test machine): creation needs no DNS, and the
    # deliveries that follow fail in the background without touching the run.
    body["url"] = f"https://8.8.8.8/cairn-hook-{next(SERIAL)}"
    body.pop("secret", None)
    body.pop("events", None)
    return body
