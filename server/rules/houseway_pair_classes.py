"""The house way of the "donneur" page: pairs sorted into classes.

docs/RULES.md, "House way", describes it. The page (the one that calls the dealer *le
donneur*) says *à l'endroit* for the 2-card low hand (front) and *à l'envers* for the
5-card high hand (back). Its no-pair clause fixes which is which: "placez la carte la
plus forte à l'envers et les deux autres cartes les plus fortes à l'endroit" only
leaves a legal hand if the strongest card is in the 5-card hand, and "jouez 3 As à
l'envers et 2 As à l'endroit" only fits if *à l'endroit* holds two cards.

Each clause below quotes the phrase it implements. Where the text is silent, the
comment starting ``Decision:`` says what this server does;
``tests/server/rules/test_houseway_pair_classes.py`` holds a case for each.

Decision: the joker counts as an ace in every pair, three, four or single-card
clause, also when it has no ace to pair with. The page says "Le joker peut uniquement
être utilisé pour compléter une suite, une couleur ... Le joker a une valeur
considérée équivalente à celle de l'As, s'il est utilisé avec d'autres As", but
docs/RULES.md, "The joker", makes the joker an ace in both hands, so a lone joker is an
ace here too ("un As", "un Roi ou une carte plus forte").
"""

from __future__ import annotations

from collections.abc import Sequence

from server.rules.cards import ACE
from server.rules.handshape import (
    HandShape,
    Made,
    analyse,
    best_made,
    checked,
    made_hands,
    made_split,
    split_by_ranks,
)
from server.rules.splits import Split
from server.rules.values import Category, WheelRank, pack

__all__ = ["ACES", "HIGH", "LOW", "MEDIUM", "pair_class", "set_hand"]

_KING = 13

# "De 2 à 6: paires basses", "De 7 à 10: paires moyennes", "De Valet à Roi: paires
# fortes"; aces are a class of their own ("Paire d'As et une autre paire").
LOW, MEDIUM, HIGH, ACES = 0, 1, 2, 3
_CLASS = (0, 0, LOW, LOW, LOW, LOW, LOW, MEDIUM, MEDIUM, MEDIUM, MEDIUM, HIGH, HIGH, HIGH, ACES)
_PAIR_FLOOR = pack(Category.PAIR)


def pair_class(rank: int) -> int:
    """The class of a pair of ``rank``: LOW (2-6), MEDIUM (7-10), HIGH (J-K) or ACES."""
    return _CLASS[rank]


def set_hand(cards: Sequence[int], wheel: WheelRank = WheelRank.SECOND) -> Split:
    """The "donneur" page's house way: the split of seven distinct cards; never a foul.

    The result depends only on the set of cards, not on their order. Raises
    :class:`ValueError` unless ``cards`` are seven distinct card codes.
    """
    shape = analyse(cards)
    return checked(shape, _decide(shape, wheel), wheel)


def _decide(shape: HandShape, wheel: WheelRank) -> Split:
    singles, pairs, threes = shape.singles, shape.pairs, shape.threes
    if shape.fives:
        # "5 As: séparez les As, jouez 3 As à l'envers et 2 As à l'endroit à moins
        # que vous ayez une paire de Rois, alors jouez les 5 As à l'envers et les 2
        # Rois à l'endroit."
        if pairs and pairs[0] == _KING:
            return split_by_ranks(shape, _KING, _KING, wheel)
        return split_by_ranks(shape, ACE, ACE, wheel)
    if shape.fours:
        return _four_of_a_kind(shape, wheel)
    if len(threes) == 2:
        # "Deux fois trois cartes identiques: toujours jouer la paire la plus forte à
        # l'endroit" and "« Full House » avec deux fois 3 cartes identiques: toujours
        # jouer la paire la plus forte à l'endroit": a pair from the higher three.
        return split_by_ranks(shape, threes[0], threes[0], wheel)
    if threes and len(pairs) == 2:
        # "« Full House » avec 3 cartes identiques et 2 paires: jouez la paire la plus
        # forte à l'endroit"
        return split_by_ranks(shape, pairs[0], pairs[0], wheel)
    if threes and pairs:
        # "« Full House »: toujours séparé à moins que ce soit une paire de 2 et que
        # vous aviez un « As » et un « Roi » à jouer à l'endroit". "Avec un « Full
        # House »: règle du « Full House »", so no straight or flush is looked for.
        if pairs[0] == 2 and singles[0] == ACE and singles[1] == _KING:
            return split_by_ranks(shape, ACE, _KING, wheel)
        return split_by_ranks(shape, pairs[0], pairs[0], wheel)
    if len(pairs) == 3:
        # "3 paires: jouez toujours la paire la plus forte à l'endroit."
        # "Avec trois paires: règle des trois paires" (a straight or flush is ignored).
        return split_by_ranks(shape, pairs[0], pairs[0], wheel)
    if len(pairs) == 2:
        # "Avec 2 paires: règle des 2 paires" (a straight or flush is ignored).
        return _two_pair(shape, wheel)
    made = _straight_or_flush(shape, wheel)
    if made is not None:
        return made_split(made)
    if threes:
        # "Trois cartes identiques : toujours jouez les trois cartes identiques à
        # l'envers sauf si se sont des « As », alors jouez une paire « d'As » à
        # l'envers et l'autre à l'endroit." The ace's partner in front is the best
        # single card.
        if threes[0] == ACE:
            return split_by_ranks(shape, ACE, singles[0], wheel)
        return split_by_ranks(shape, singles[0], singles[1], wheel)
    if pairs:
        # "Une paire: placez la paire à l'envers et les deux autres cartes les plus
        # fortes à l'endroit."
        return split_by_ranks(shape, singles[0], singles[1], wheel)
    # "Pas de paire: placez la carte la plus forte à l'envers et les deux autres cartes
    # les plus fortes à l'endroit." (A lone joker is the strongest card, an ace.)
    return split_by_ranks(shape, singles[1], singles[2], wheel)


def _two_pair(shape: HandShape, wheel: WheelRank) -> Split:
    """The page: "2 paires: utilisez les groupes suivants pour savoir comment jouer"."""
    high, low = shape.pairs
    best_single = shape.singles[0]
    high_class, low_class = _CLASS[high], _CLASS[low]
    if high_class == ACES:
        # "Paire « d'As » et une autre paire: séparez toujours"
        together = False
    elif high_class == LOW or (high_class == MEDIUM and low_class == LOW):
        # "Deux paires basses: séparez à moins que vous ayez un Roi ou une carte plus
        # forte et jouez vos deux paires à l'envers."
        # "Une paire basse et une moyenne: séparez à moins que vous ayez un Roi ou
        # mieux puis jouez les deux paires à l'envers."
        together = best_single >= _KING
    elif high_class == HIGH and low_class == LOW:
        # "Une paire basse et une forte: séparez à moins que vous ayez un « As » puis
        # jouez les deux paires à l'envers."
        together = best_single == ACE
    elif high_class == MEDIUM:
        # "2 paires moyennes: séparez à moins que vous ayez un « As » puis jouez les 2
        # paires à l'envers."
        together = best_single == ACE
    else:
        # "Paire moyenne et paire forte: séparez toujours." / "2 paires fortes:
        # séparez toujours."
        together = False
    if together:
        # Both pairs and the lowest single in the back; the two best singles in front.
        return split_by_ranks(shape, best_single, shape.singles[1], wheel)
    # "séparez": the lower pair in front (the higher one there would foul).
    return split_by_ranks(shape, low, low, wheel)


def _four_of_a_kind(shape: HandShape, wheel: WheelRank) -> Split:
    """The page: "Quatre cartes identiques: jouez selon le rang des 4 cartes"."""
    four = shape.fours[0]
    singles = shape.singles
    if shape.threes:
        # "Quatre cartes identiques et trois autres identiques: jouez une paire à
        # l'endroit provenant des trois cartes identiques."
        return split_by_ranks(shape, shape.threes[0], shape.threes[0], wheel)
    if shape.pairs:
        # "Quatre cartes identiques et une paire: jouez la paire à l'endroit"
        # Decision: this clause wins over the rank clauses, even over "As: séparez
        # toujours" (four aces and a pair keep the aces in the back).
        return split_by_ranks(shape, shape.pairs[0], shape.pairs[0], wheel)
    if four <= 6:
        # "De 2 à 6: gardez tout ensemble"
        keep = True
    elif four <= 10:
        # "De 7 à 10: séparez à moins que vous puissiez jouer un Roi ou mieux à
        # l'endroit"
        keep = singles[0] >= _KING
    elif four <= _KING:
        # "De Valet à Roi: séparez à moins qu'un as puisse être joué à l'endroit."
        keep = singles[0] == ACE
    else:
        # "As: séparez toujours"
        keep = False
    if keep:
        return split_by_ranks(shape, singles[0], singles[1], wheel)
    return split_by_ranks(shape, four, four, wheel)


def _straight_or_flush(shape: HandShape, wheel: WheelRank) -> Made | None:
    """The page: "Suites, couleurs, suites avec couleur et suite royale avec couleur".

    Reached only when no earlier clause applies (five aces, four of a kind, full house,
    two or three pairs). "Sans paire: quand vous choisissez de jouer une suite, une
    couleur ou une suite avec couleur, jouez la catégorie qui vous permettra de
    retourner les cartes les plus fortes à l'endroit." "Avec la 6ème ou la 7ème: jouez
    la suite ou la couleur la plus basse à l'envers pour placer les cartes les plus
    fortes à l'endroit." Both are :func:`best_made`: the made hand leaving the best low
    hand, then the best high hand (Decision: so with a straight and a flush both
    possible, the one that leaves the better front wins, whatever its category).
    """
    if not shape.may_make:
        return None
    best = best_made(made_hands(shape, wheel))
    if best is None:
        return None
    if shape.threes:
        # "Avec trois cartes identiques: jouez une paire à l'endroit"
        # Decision: when no straight or flush leaves a pair of the three in front
        # (the joker is one of three aces and the straight needs it: Ah Ad JK Ks Qs
        # Jd 3c), the three-of-a-kind clause plays the hand.
        return best if best.low_value >= _PAIR_FLOOR else None
    # "Avec une paire: jouez la paire à l'endroit seulement si une suite ou une
    # couleur peut être jouée à l'envers." best_made puts the pair in front whenever
    # a straight or flush is left behind it, since a pair is the best low hand.
    # Decision: when none is (9 8 7 6 5 5 2), the straight or flush still goes in the
    # back with the best front it leaves: the clause sits under the heading for
    # playing straights and flushes and only limits when the pair goes in front.
    return best
