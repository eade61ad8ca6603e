"""The settings the environment gives: ``PETSTORE_<NAME>`` for a top-level setting, ``__`` between the levels of a
nested one (``PETSTORE_HTTP__TIMEOUT``, ``PETSTORE_BOT__MATRIX__HOMESERVER``), names in any case.

The same rules pydantic-settings applied (``env_prefix``, ``env_nested_delimiter="__"``, case-insensitive), read
here without its machinery (its import alone, every source it has, cost a one-shot command ~25 ms): the model
validates the values as it validates the config file's. A value for a setting that holds a structure (a section, a
list, a table) is JSON (``PETSTORE_BOT__APPROVALS='["production"]'``); a setting that may be either takes JSON when
the value is JSON and the text otherwise.
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from petstore_api.errors import ConfigError

__all__ = ["environment_settings", "merged"]

DELIMITER = "__"
_STRUCTURES = (list, tuple, set, frozenset, dict)


def environment_settings(model: type[BaseModel], environ: Mapping[str, str], *, prefix: str) -> dict[str, Any]:
    """The values ``environ`` gives the settings of ``model`` (variables named ``prefix`` + the setting's path)."""
    found: dict[str, Any] = {}
    start = prefix.lower()
    for name, value in environ.items():
        lowered = name.lower()
        if lowered.startswith(start) and len(lowered) > len(start):
            path = lowered[len(start) :].split(DELIMITER)
            if path[0] in model.model_fields and all(path):
                _put(found, path, _decoded(model, path, value, name))
    return found


def merged(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """``layers`` merged, a later one's value over an earlier one's, sections merged key by key."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
                out[key] = merged(out[key], value)
            else:
                out[key] = value
    return out


def _put(found: dict[str, Any], path: list[str], value: Any) -> None:
    node = found
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    leaf = node.get(path[-1])
    node[path[-1]] = merged(leaf, value) if isinstance(leaf, dict) and isinstance(value, Mapping) else value


def _decoded(model: type[BaseModel], path: list[str], value: str, name: str) -> Any:
    """``value`` as the setting at ``path`` takes it: JSON for a structure, else the text."""
    field = _field(model, path)
    kind = _kind(field.annotation) if field is not None else "text"
    if kind == "text":
        return value
    try:
        return json.loads(value)
    except ValueError:
        if kind == "maybe":
            return value
        raise ConfigError(f"invalid setting {name}: not JSON (a structure is given as JSON here)") from None


def _field(model: type[BaseModel], path: list[str]) -> FieldInfo | None:
    """The field at ``path`` of ``model`` (None: no such setting; the model says so when it validates)."""
    field: FieldInfo | None = None
    current: Any = model
    for part in path:
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        field = current.model_fields[part]
        current = _section(field.annotation)
    return field


def _section(annotation: Any) -> Any:
    """The model class ``annotation`` is (or is with None), if any."""
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _kind(annotation: Any) -> Literal["text", "json", "maybe"]:
    """How a setting of this type is given in the environment: ``text``, ``json`` or ``maybe`` (either)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _kind(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        kinds = {_kind(arg) for arg in get_args(annotation) if arg is not type(None)}
        if kinds == {"json"}:
            return "json"
        return "maybe" if kinds - {"text"} else "text"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "json"
    return "json" if (origin or annotation) in _STRUCTURES else "text"
