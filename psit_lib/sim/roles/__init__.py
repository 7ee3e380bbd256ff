"""Simulated roles; importing this package registers them all."""
