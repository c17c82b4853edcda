"""Dispatch a model's tool call: find the tool, check the input, run it safely.

The model's input is untrusted JSON, so it is checked against the tool's own
schema (required fields and basic JSON types) before the tool sees it; every
problem becomes an `is_error` result the model can correct, never an exception.
"""

from __future__ import annotations

from evo_agent.session import INVALID_ARGUMENTS_KEY, INVALID_TOOL_NAME_PREFIX

from ._common import error
from .base import Tool, ToolContext, ToolResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

# JSON schema type -> Python types. bool is excluded from the numbers below
# because in Python it is an int subclass, and `true` is not a number in JSON.
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _type_ok(value: object, json_type: str | list[str] | None) -> bool:
    if json_type is None:
        return True
    if isinstance(json_type, list):
        return any(_type_ok(value, t) for t in json_type)
    if json_type == "null":
        return value is None
    types = _JSON_TYPES.get(json_type)
    if types is None:
        return True  # a type this checker does not know: let the tool decide
    if isinstance(value, bool) and json_type != "boolean":
        return False
    if json_type == "integer" and isinstance(value, float) and value.is_integer():
        return False
    return isinstance(value, types)


def validate_input(tool: Tool, tool_input: object) -> tuple[dict[str, Any] | None, str | None]:
    """Check input against the tool's schema; return (cleaned input, error message).

    Optional fields given as null are dropped (some OpenAI-compatible models
    send them); unknown extra fields are ignored rather than refused.
    """
    if not isinstance(tool_input, dict):
        return None, f"input for {tool.name} must be a JSON object, got {type(tool_input).__name__}"
    schema = tool.input_schema
    props: dict[str, Any] = schema.get("properties", {})
    required: list[str] = schema.get("required", [])
    cleaned = {k: v for k, v in tool_input.items() if not (v is None and k not in required)}
    missing = [k for k in required if k not in cleaned]
    if missing:
        return None, f"{tool.name}: missing required field(s): {', '.join(missing)}"
    for key, value in cleaned.items():
        spec = props.get(key)
        if spec is None:
            continue
        if not _type_ok(value, spec.get("type")):
            return None, f"{tool.name}: field {key!r} must be of type {spec.get('type')}, got {type(value).__name__}"
        if not tool.name.startswith("mcp__") and not _holdable(value):
            return None, (f"{tool.name}: field {key!r} holds a NUL character or a lone surrogate, which no path or "
                          "command can hold; nothing was run")
    return cleaned, None


def _holdable(value: object) -> bool:
    """Whether every string in `value` can be a path or a command word: no NUL, and every character encodable
    the way paths are (UTF-8; `\\udc80`-`\\udcff` stand for bytes that are not UTF-8, as the tools print them).

    Checked before anyone is asked: the permission check resolves a file tool's path first, and a NUL (os.stat's
    ValueError) or `\\ud800` (UnicodeEncodeError) there ended the whole run with an internal error."""
    if isinstance(value, str):
        if "\0" in value:
            return False
        try:
            value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, list):
        return all(_holdable(v) for v in value)
    if isinstance(value, dict):
        return all(_holdable(k) and _holdable(v) for k, v in value.items())
    return True




def run_tool(tools: list[Tool], name: str, input: dict[str, Any], ctx: ToolContext) -> ToolResult:  # noqa: A002
    """Run the named tool from `tools`; every failure is an `is_error` result."""
    if isinstance(input, dict) and isinstance(input.get(INVALID_ARGUMENTS_KEY), str):
        return error(f"the arguments of this {name} call were not one JSON object; nothing was run. "
                     f"Call {name} again with valid JSON arguments. Received: {input[INVALID_ARGUMENTS_KEY][:200]}")
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        known = ", ".join(t.name for t in tools) or "none"
        if name.startswith(INVALID_TOOL_NAME_PREFIX):
            return error(f"unknown tool {name!r}: the name you sent is not a tool's (a tool name is 1 to 64 letters, "
                         f"digits, _ or -), so it is sent back as this one; nothing was run. Available tools: {known}")
        return error(f"unknown tool {name!r}; available tools: {known}")
    cleaned, problem = validate_input(tool, input)
    if problem is not None or cleaned is None:
        return error(problem or "invalid input")
    try:
        result = tool.run(cleaned, ctx)
    except Exception as exc:  # noqa: BLE001 - a tool bug must not end the loop
        return error(f"{name} failed: {type(exc).__name__}: {exc}")
    if not isinstance(result, ToolResult):
        return error(f"{name} returned {type(result).__name__} instead of a ToolResult")
    from evo_agent.session import mask_own_secrets  # the agent's own credentials never reach the model (SPEC §9)

    masked = mask_own_secrets(result.content) if isinstance(result.content, str) else result.content
    if masked is not result.content:
        result = ToolResult(masked, result.is_error, result.blocks)
    return result
