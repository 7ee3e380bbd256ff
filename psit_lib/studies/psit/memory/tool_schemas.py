"""What the model sees of the memory tools: the pydantic argument models are both what calls are
validated with and what the advertised JSON schemas come from, so the two cannot disagree.
"""

from __future__ import annotations

import copy
import functools
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr

STRATEGIES: dict[str, tuple[str, ...]] = {
    "overwrite": ("overwrite_memory",),
    "append_delete": ("append_in_memory", "delete_from_memory"),
    "patch_replace": ("patch_memory", "replace_in_memory"),
}


def _whole_number(value: Any) -> Any:
    """A count a model wrote as "1" or 1.0 is the count 1; true/false and 1.5 are not counts."""
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Count = Annotated[StrictInt, BeforeValidator(_whole_number)]
"""A whole number, also when written as a numeric string or an integral float."""


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    tool_description: ClassVar[str]


_SECTION_TITLE = Field(
    description="Title of the target section, e.g. 'Active Notes' (the number and letter case do not matter)."
)
_CASE_SENSITIVE = Field(default=None, description="Default true. When false, letter case is ignored when matching.")


class OverwriteArgs(_Arguments):
    tool_description: ClassVar[str] = (
        "Replace your entire private working memory with new text. Keep the three numbered "
        "section headers and the <secret>...</secret> entry unless you mean to drop them."
    )
    new_memory: StrictStr = Field(description="The complete new content of the working memory.")


class AppendArgs(_Arguments):
    tool_description: ClassVar[str] = (
        "Add lines at the end of one section of your private working memory. Section "
        "headers cannot be added."
    )
    section_title: StrictStr = _SECTION_TITLE
    lines: list[StrictStr] | StrictStr = Field(
        description="Lines to add: a list of strings, or one string with one line per row."
    )


class DeleteArgs(_Arguments):
    tool_description: ClassVar[str] = (
        "Remove lines from one section of your private working memory. Matching ignores "
        "spacing, letter case and bullet markers; a target shorter than 8 characters must "
        "equal a whole line, a longer one removes every line containing it. Fails if a "
        "target matches nothing."
    )
    section_title: StrictStr = _SECTION_TITLE
    lines: list[StrictStr] | StrictStr = Field(
        description="Lines (or distinctive parts of lines) to remove: a list, or one string with one per row."
    )


class PatchOptions(_Arguments):
    tool_description: ClassVar[str] = "Matching options for patch_memory."
    strict_context: StrictBool | None = Field(
        default=None,
        description="Default false. When true, context and '-' lines must match consecutive lines exactly.",
    )
    normalize_whitespace: StrictBool | None = Field(
        default=None, description="Default true. Ignore differences in spacing when matching lines."
    )
    case_sensitive: StrictBool | None = _CASE_SENSITIVE


class ReplaceOptions(_Arguments):
    tool_description: ClassVar[str] = "Matching options for replace_in_memory."
    strict_context: StrictBool | None = Field(
        default=None,
        description="Default true: pre_context/post_context must touch the replaced text. "
        "When false they may be up to 3 lines away.",
    )
    normalize_whitespace: StrictBool | None = Field(
        default=None, description="Default false. When true, any run of spaces/newlines matches any other."
    )
    case_sensitive: StrictBool | None = _CASE_SENSITIVE


class PatchArgs(_Arguments):
    tool_description: ClassVar[str] = (
        "Edit your private working memory with a small diff. Format:\n"
        "*** Begin Patch\n*** Update Memory\n@@ section: <Section Title>\n"
        " a context line (leading space) that identifies the place\n-a line to remove\n+a line to add\n"
        "*** End Patch\n"
        "Use 1-3 context lines; a hunk with only '+' lines and no context is added at the end "
        "of its section. Each hunk must match exactly one place, otherwise nothing is changed "
        "and you get an error. Section headers cannot be edited."
    )
    patch: StrictStr = Field(description="The patch text, envelope lines included.")
    explanation: StrictStr = Field(description="One sentence on why you make this change.")
    expected_hunks: Count | None = Field(
        default=None, ge=1, description="Optional check: number of '@@ section:' hunks in the patch."
    )
    expected_changes: Count | None = Field(
        default=None, ge=1, description="Optional check: total number of '+' and '-' lines in the patch."
    )
    options: PatchOptions | None = Field(default=None, description="Optional matching options.")


class ReplaceArgs(_Arguments):
    tool_description: ClassVar[str] = (
        "Replace an exact piece of text in your private working memory. The number of "
        "occurrences found must equal expected_replacements (default 1), otherwise nothing "
        "is changed and you get an error; narrow the search with section_title, pre_context "
        "or post_context. Section headers cannot be edited."
    )
    old_string: StrictStr = Field(description="The exact text to replace (not empty).")
    new_string: StrictStr = Field(description="The text to put in its place (may be empty to delete).")
    explanation: StrictStr = Field(description="One sentence on why you make this change.")
    section_title: StrictStr | None = Field(
        default=None, description="Optional: only search this section, e.g. 'Facts and Knowledge'."
    )
    expected_replacements: Count = Field(
        default=1, ge=1, description="How many occurrences you expect to replace (default 1)."
    )
    pre_context: StrictStr | None = Field(
        default=None, description="Optional text that comes right before old_string."
    )
    post_context: StrictStr | None = Field(
        default=None, description="Optional text that comes right after old_string."
    )
    options: ReplaceOptions | None = Field(default=None, description="Optional matching options.")


TOOL_ARGUMENTS: dict[str, type[_Arguments]] = {
    "overwrite_memory": OverwriteArgs,
    "append_in_memory": AppendArgs,
    "delete_from_memory": DeleteArgs,
    "patch_memory": PatchArgs,
    "replace_in_memory": ReplaceArgs,
}


class UnknownStrategyError(ValueError):
    """Raised for a memory strategy name that is not one of STRATEGIES."""


def _resolve_refs(node: Any, definitions: dict[str, Any]) -> Any:
    """Inline `$ref`s: some OpenAI-compatible servers do not resolve `$defs` themselves."""
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            merged = {**definitions[name], **{k: v for k, v in node.items() if k != "$ref"}}
            return _resolve_refs(merged, definitions)
        return {key: _resolve_refs(value, definitions) for key, value in node.items() if key != "$defs"}
    if isinstance(node, list):
        return [_resolve_refs(item, definitions) for item in node]
    return node


def _simplify(node: Any) -> Any:
    """Drop pydantic noise (titles, null defaults) and show optional fields as their plain type:
    `anyOf [X, null]` only confuses smaller models."""
    if isinstance(node, list):
        return [_simplify(item) for item in node]
    if not isinstance(node, dict):
        return node
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "default" and value is None):
            continue
        if key == "properties":
            cleaned[key] = {name: _simplify(schema) for name, schema in value.items()}
        else:
            cleaned[key] = _simplify(value)
    options = cleaned.get("anyOf")
    if isinstance(options, list):
        non_null = [option for option in options if option != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(options):
            del cleaned["anyOf"]
            cleaned = {**non_null[0], **cleaned}
    return cleaned


@functools.cache
def parameters_schema(tool_name: str) -> dict[str, Any]:
    """JSON schema of one tool's arguments, derived from its pydantic model; built once per
    process (building it took more CPU than the rest of a model call; never mutated)."""
    raw = TOOL_ARGUMENTS[tool_name].model_json_schema()
    return _simplify(_resolve_refs(raw, copy.deepcopy(raw.get("$defs", {}))))


def tool_schemas(strategy: str) -> list[dict[str, Any]]:
    """OpenAI chat-completions tool definitions for one memory update strategy."""
    if strategy not in STRATEGIES:
        raise UnknownStrategyError(
            f"Unknown memory strategy {strategy!r}; known strategies: {', '.join(STRATEGIES)}."
        )
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": TOOL_ARGUMENTS[name].tool_description,
                "parameters": parameters_schema(name),
            },
        }
        for name in STRATEGIES[strategy]
    ]
