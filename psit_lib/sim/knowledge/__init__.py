"""What the simulated model "knows" about the world, in its own code (README.md, "Its own knowledge")."""
