"""The PSIT study's agents, each a LangGraph graph behind ``GraphAgent``: vanilla, private CoT, workflow
and autonomous memory, the retrieval baselines, and the adapter for a researcher's own graph."""
