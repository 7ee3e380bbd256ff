"""PSIT agents with forkable checkpoints: vanilla, private CoT, workflow and autonomous memory."""
