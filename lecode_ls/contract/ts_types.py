"""JSON schema nodes (pydantic's) as TypeScript types, for the generated extension files."""

from __future__ import annotations

import json
from typing import Any


def ts_type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in node:
        return " | ".join(ts_type(option) for option in node["anyOf"])
    if "enum" in node:
        return " | ".join(json.dumps(value) for value in node["enum"])
    if "const" in node:
        return json.dumps(node["const"])
    kind = node.get("type")
    if kind == "array":
        inner = ts_type(node.get("items", {}))
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        keys = ts_type(node["propertyNames"]) if "propertyNames" in node else "string"
        return f"Partial<Record<{keys}, {ts_type(node['additionalProperties'])}>>"
    return {
        "string": "string",
        "integer": "number",
        "number": "number",
        "boolean": "boolean",
        "null": "null",
        "object": "Record<string, unknown>",
    }.get(str(kind), "unknown")
