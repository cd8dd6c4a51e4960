"""Pure Pai Gow Poker: cards, hand values, splits, house ways, settlement, bonus, shuffle.

Nothing in this package does I/O, reads a clock or uses global randomness: every
function is a plain function of its arguments (docs/DESIGN.md, "A pure core and a thin
shell").
"""
