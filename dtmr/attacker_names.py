"""The audit's attacker names, torch-free, so that the command line can list and check them without loading
the attackers (dtmr/attackers/ holds the attackers themselves)."""

from __future__ import annotations

#: the attackers that learn from the motion (the audit's ensemble averages their probabilities)
LEARNED = ("sgn", "tcn", "stgcn")
#: what a file says besides the body and the motion (dtmr/attackers/side_channels.py)
SIDE_CHANNELS = ("first-root", "placement", "length", "dropouts", "clip-stats")
#: every attacker, in the order of the audit's tables; all of them run by default
ATTACKER_NAMES = (*LEARNED, "bone-lengths", *SIDE_CHANNELS)
#: attackers without epochs
UNTRAINED = ("bone-lengths", *SIDE_CHANNELS)
