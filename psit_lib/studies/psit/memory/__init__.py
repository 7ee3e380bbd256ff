"""Private working memory of the memory agents and the tools that edit it (SPEC §2-§3); import from its modules."""
