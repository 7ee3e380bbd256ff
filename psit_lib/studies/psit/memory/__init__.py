"""Private working memory of the memory agents and the tools that edit it (SPEC §2-§3).

The working memory and its five editing tools are used only by this study's agents; the
package's public names are re-exported here.
"""

from psit_lib.studies.psit.memory.matching import ToolResult
from psit_lib.studies.psit.memory.patch import patch_memory
from psit_lib.studies.psit.memory.replace import replace_in_memory
from psit_lib.studies.psit.memory.tool_schemas import STRATEGIES, UnknownStrategyError, tool_schemas
from psit_lib.studies.psit.memory.tools import (
    append_in_memory,
    apply_tool_call,
    delete_from_memory,
    overwrite_memory,
)
from psit_lib.studies.psit.memory.working_memory import (
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
