"""How to play, and the ranking of hands: the page ``g`` opens.

A short telling of docs/RULES.md, "The round"; docs/RULES.md, "Setting the hands";
docs/RULES.md, "The joker"; docs/RULES.md, "Ranking" and docs/RULES.md, "Outcome".
"""

from __future__ import annotations

GUIDE = """\
[b]How to play Pai Gow Poker[/b]
You play your seven cards against the dealer's seven. A round:
 1 [b]Betting[/b]: add chips with the keys 1-9 (the chip row shows what
   each key is worth at this table), enter places the bet. b puts
   the chips on the bonus bet instead, paid on your seven cards alone
   (i: this table's pay table).
 2 [b]Dealing[/b]: seven cards to you, seven to the dealer.
 3 [b]Setting[/b]: split your cards into a high hand of five and a low
   hand of two: pick the two low cards (1-7), enter sets them. The
   high hand must outrank the low one, or the split fouls: refused at
   most tables, a lost bet at some (i says which). s suggests the
   house way's split, w lets the house way set it. Not set in time:
   the house way sets it for you.
 4 [b]Reveal[/b]: every hand is shown; the dealer's is set the house way.
 5 [b]Settling[/b]: high against high, low against low. Both won: you
   win even money, less the commission. One won: a push, the bet
   comes back. None won: the bet is lost. Equal hands (a copy) go to
   the dealer.

[b]Ranking of high hands[/b], best first
  five aces        four aces and the joker
  royal flush      A K Q J 10 of one suit
  straight flush   five in a row of one suit
  four of a kind
  full house       three of a kind and a pair
  flush            five of one suit
  straight         five in a row (A-2-3-4-5 second best, by default)
  three of a kind
  two pair
  one pair
  high card
The joker is an ace, unless it completes a straight or a flush.
[b]Low hands[/b]: a pair beats two different cards; then the higher card.

The shuffle is committed before the bets and its seed revealed after
the round: the client re-deals the cards from it and marks the round
✓ verified (or ✗ with the reason).
"""
