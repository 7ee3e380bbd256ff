"""What the simulated model "knows" about the world, written in its own code.

A real model brings general knowledge to a conversation: the rules of Hangman, English words
and how common they are, medical conditions and their symptoms. The simulator's knowledge
lives here, built from public sources (``wordfreq``, the DDXPlus release files) and never
imported from the harness, so the harness and the simulated model can disagree — as a real
model and a harness can.
"""
