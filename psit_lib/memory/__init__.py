"""Private working memory of the memory agents and the tools that edit it (SPEC §2-§3).

Only the working-memory names are re-exported here; other modules of this package (for
example the BASIS cortex) are imported from their own module paths.
"""

from psit_lib.memory.matching import ToolResult
from psit_lib.memory.patch import patch_memory
from psit_lib.memory.replace import replace_in_memory
from psit_lib.memory.tool_schemas import STRATEGIES, UnknownStrategyError, tool_schemas
from psit_lib.memory.tools import (
    append_in_memory,
    apply_tool_call,
    delete_from_memory,
    overwrite_memory,
)
from psit_lib.memory.working_memory import (
    SECTION_TITLES,
    MemoryToolError,
    Section,
    extract_secret,
    find_section,
    initial_memory,
    parse_sections,
    wrap_for_prompt,
)

__all__ = [
    "SECTION_TITLES",
    "STRATEGIES",
    "MemoryToolError",
    "Section",
    "ToolResult",
    "UnknownStrategyError",
    "append_in_memory",
    "apply_tool_call",
    "delete_from_memory",
    "extract_secret",
    "find_section",
    "initial_memory",
    "overwrite_memory",
    "parse_sections",
    "patch_memory",
    "replace_in_memory",
    "tool_schemas",
    "wrap_for_prompt",
]
