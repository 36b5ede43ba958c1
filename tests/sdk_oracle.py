"""Checks wire payloads against the official provider SDKs' own types, for the adapters' tests
(tests/tests/adapters/sdk_oracle.rs).

Reads {"checks": [{"type": "<module>.<Name>", "value": ...}]} on stdin and writes
{"results": [{"ok": bool, "error": str | null, "parsed": ...}]}: one per check, in order.

- A `TypedDict` (a request parameter of the SDK) is checked key by key: a key the type does not
  declare is an error (the SDKs' TypedDicts would let it through silently), and the value is
  validated by pydantic against the declared types (literals included).
- A pydantic model (a response type of the SDK) is validated with `model_validate`.

`parsed` is the validated value as JSON, so the caller can see what the SDK made of it (which
member of a union a `caller` became, say).
"""

import importlib
import json
import sys

from pydantic import BaseModel, TypeAdapter


def resolve(path):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def check(path, value):
    kind = resolve(path)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return kind.model_validate(value).model_dump(mode="json", exclude_none=True, by_alias=True)
    declared = kind.__required_keys__ | kind.__optional_keys__
    unknown = sorted(set(value) - declared)
    if unknown:
        raise ValueError(f"{kind.__name__} declares no {unknown}")
    missing = sorted(kind.__required_keys__ - set(value))
    if missing:
        raise ValueError(f"{kind.__name__} requires {missing}")
    adapter = TypeAdapter(kind)
    return adapter.dump_python(adapter.validate_python(value), mode="json")


def main():
    checks = json.load(sys.stdin)["checks"]
    results = []
    for item in checks:
        try:
            results.append({"ok": True, "error": None, "parsed": check(item["type"], item["value"])})
        except Exception as error:  # every failure is a result the test reads
            results.append({"ok": False, "error": f"{type(error).__name__}: {error}", "parsed": None})
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
