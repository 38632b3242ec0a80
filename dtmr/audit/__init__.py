"""`dtmr audit`: how re-identifiable one release is, under a suite of attackers (worst case counts).

See docs/privacy.md for what the audit measures and what it cannot promise.
"""
