"""A validator for the JSON Schema subset docs/event.schema.json uses (type,
const, enum, pattern, minimum, required, properties, additionalProperties,
items, $ref, oneOf), so every JSON line the e2e tests read is checked
against the documented schema with nothing but the standard library."""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_PATH = os.path.join(HERE, "..", "..", "docs", "event.schema.json")

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class SchemaError(Exception):
    pass


def _resolve(root, ref):
    node = root
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def _check_object(root, schema, value, path):
    for key in schema.get("required", []):
        if key not in value:
            raise SchemaError(f"{path}: missing required '{key}'")
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, v in value.items():
        if key in props:
            validate(root, props[key], v, f"{path}.{key}")
        elif extra is False:
            raise SchemaError(f"{path}: unexpected property '{key}'")
        elif isinstance(extra, dict):
            validate(root, extra, v, f"{path}.{key}")


def validate(root, schema, value, path="$"):
    if "$ref" in schema:
        return validate(root, _resolve(root, schema["$ref"]), value, path)
    if "oneOf" in schema:
        ok = 0
        for sub in schema["oneOf"]:
            try:
                validate(root, sub, value, path)
                ok += 1
            except SchemaError:
                pass
        if ok != 1:
            raise SchemaError(f"{path}: matches {ok} of the oneOf branches, not 1")
    t = schema.get("type")
    if t is not None:
        names = t if isinstance(t, list) else [t]
        if not any(TYPES[n](value) for n in names):
            raise SchemaError(f"{path}: {value!r} is not {t}")
    if "const" in schema and value != schema["const"]:
        raise SchemaError(f"{path}: {value!r} != {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{path}: {value!r} not in {schema['enum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        raise SchemaError(f"{path}: {value!r} does not match {schema['pattern']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        raise SchemaError(f"{path}: {value} < {schema['minimum']}")
    if isinstance(value, dict):
        _check_object(root, schema, value, path)
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            validate(root, schema["items"], v, f"{path}[{i}]")


_SCHEMA = None


def check_line(obj):
    """Raises SchemaError when obj does not follow docs/event.schema.json."""
    global _SCHEMA
    if _SCHEMA is None:
        with open(SCHEMA_PATH) as f:
            _SCHEMA = json.load(f)
    validate(_SCHEMA, _SCHEMA, obj)
