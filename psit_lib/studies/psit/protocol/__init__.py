"""The fork-test protocol: play, fork from a checkpoint, ask, classify."""
