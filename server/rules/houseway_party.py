"""The house way of the PartyCasino rules (PartyBets' online table, 2014).

docs/RULES.md, "House way", describes it. The rules page says '"En avant" désigne la
main de deux cartes et "en arrière" la main de cinq cartes': *en avant* is the 2-card
low hand (front), *en arrière* the 5-card high hand (back). Each clause below quotes
the phrase it implements. Where the text is silent or contradicts itself, the comment
starting ``Decision:`` says what this server does;
``tests/server/rules/test_houseway_party.py`` holds a case for each.

Ranks are 2..14; the joker counts as an ace in every pair, three, four or single-card
clause (the PartyCasino rules: "Le joker remplace toujours un As, à moins qu'il ne soit
utilisé pour compléter une quinte, une couleur, une quinte flush ou une quinte royale").
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
from server.rules.values import Category, WheelRank, category_of

__all__ = ["set_hand"]

_KING = 13
_JACK = 11
_TEN = 10


def set_hand(cards: Sequence[int], wheel: WheelRank = WheelRank.SECOND) -> Split:
    """The PartyCasino house way: the split of seven distinct cards; never a foul.

    The result depends only on the set of cards, not on their order. Raises
    :class:`ValueError` unless ``cards`` are seven distinct card codes.
    """
    shape = analyse(cards)
    return checked(shape, _decide(shape, wheel), wheel)


def _decide(shape: HandShape, wheel: WheelRank) -> Split:
    singles, pairs, threes = shape.singles, shape.pairs, shape.threes
    if shape.fives:
        # "Cinq As : La combinaison de cinq As sera toujours jouée en arrière."
        if pairs:
            return split_by_ranks(shape, pairs[0], pairs[0], wheel)
        return split_by_ranks(shape, singles[0], singles[1], wheel)
    if shape.fours:
        return _four_of_a_kind(shape, wheel)
    if len(threes) == 2:
        # "Deux brelans - Place une paire issue du brelan le plus élevé, en avant."
        return split_by_ranks(shape, threes[0], threes[0], wheel)
    if threes and pairs:
        return _full_house(shape, wheel)
    # Decision: the straight-and-flush clauses apply only below a full house. The
    # text writes their exceptions for two pair, and gives the full house, four of
    # a kind and five aces clauses of their own; with seven cards a full house or a
    # four of a kind holds a straight or flush only through the joker (Ah Ac JK Kd Ks
    # Qh Jh); when aces go in front, split_by_ranks still leaves the joker behind
    # wherever it completes something there.
    made = _straight_or_flush(shape, wheel)
    if made is not None:
        return made_split(made)
    if len(pairs) == 3:
        # "Trois paires - Place la paire la plus haute, en avant."
        return split_by_ranks(shape, pairs[0], pairs[0], wheel)
    if len(pairs) == 2:
        return _two_pair(shape, wheel)
    if threes:
        # "Brelan - Place le brelan en arrière. S'il s'agit de trois As, met en deux en
        # arrière et un en avant." The ace goes in front with the best single card.
        if threes[0] == ACE:
            return split_by_ranks(shape, ACE, singles[0], wheel)
        return split_by_ranks(shape, singles[0], singles[1], wheel)
    if pairs:
        # "Une paire - Place la paire en arrière et les deux cartes uniques les plus
        # hautes, en avant."
        return split_by_ranks(shape, singles[0], singles[1], wheel)
    # "Pas de paire - Place la seconde et la troisième carte la plus haute, en avant."
    # Decision: a joker that completes no straight or flush is an ace, so as the
    # highest card it stays in the back.
    return split_by_ranks(shape, singles[1], singles[2], wheel)


def _two_pair(shape: HandShape, wheel: WheelRank) -> Split:
    """The rules page: "Double paire - Sépare les deux paires à l'exception des situations
    suivantes"."""
    high, low = shape.pairs
    singles = shape.singles
    ace_single = singles[0] == ACE  # Decision: a lone joker is "un As en carte unique"
    together = (
        # "Les deux paires sont des 6 ou plus faibles."
        high <= 6
        # "Les deux paires sont des 10 ou moins et vous avez un As en carte unique.
        # Cet As doit être mis en avant."
        or (high <= _TEN and ace_single)
        # "Une paire de cartes avec des personnages, une paire de 5 ou moins et un As
        # en carte unique. Cet As doit être mis en avant."
        or (_JACK <= high <= _KING and low <= 5 and ace_single)
    )
    if together:
        # Both pairs and the lowest single stay in the back, so the ace (when there
        # is one) and the next single go in front.
        return split_by_ranks(shape, singles[0], singles[1], wheel)
    # "Sépare": the lower pair goes in front (the higher one there would foul).
    return split_by_ranks(shape, low, low, wheel)


def _full_house(shape: HandShape, wheel: WheelRank) -> Split:
    pairs, singles = shape.pairs, shape.singles
    if len(pairs) == 2:
        # "Full comprenant un brelan et deux paires - Joue la paire la plus forte, en
        # avant."
        return split_by_ranks(shape, pairs[0], pairs[0], wheel)
    # "Full - Le divise à moins qu'il n'y ait une paire de 2 et un As (ou un Roi) qui
    # pourraient être joués en avant." Kept whole, the two single cards go in front.
    if pairs[0] == 2 and singles[0] >= _KING:
        return split_by_ranks(shape, singles[0], singles[1], wheel)
    # Split: the pair in front, the three of a kind in the back.
    return split_by_ranks(shape, pairs[0], pairs[0], wheel)


def _four_of_a_kind(shape: HandShape, wheel: WheelRank) -> Split:
    """The PartyCasino rules: "Carré - Joue en prenant en compte la valeur du carré"."""
    four = shape.fours[0]
    singles = shape.singles
    # Decision: with four of a kind the other three cards may hold a pair or a three
    # of a kind; a three of a kind counts as "une paire" (two of it go in front).
    other_pair = shape.threes[0] if shape.threes else (shape.pairs[0] if shape.pairs else 0)
    keep: bool
    if four <= 6:
        # "De 2 à 6 : les laisse toujours ensemble."
        keep = True
    elif four <= _TEN:
        # "De 7 à 10 : le divise à moins qu'il n'y ait un As et une carte avec un
        # personnage à mettre en avant."
        # Decision: with another pair (four of a kind + pair), keep them together and
        # play that pair in front: any pair beats the ace and face card the clause
        # would settle for, and the "donneur" page says so outright ("Quatre cartes
        # identiques et une paire: jouez la paire à l'endroit").
        keep = bool(other_pair) or (singles[0] == ACE and _JACK <= singles[1] <= _KING)
    elif four <= _KING:
        # "De Valet à Roi : le divise à moins que la main ne contienne aussi une paire
        # de 10 ou plus."
        keep = other_pair >= _TEN
    else:
        # "As : le divise à moins qu'une paire de 7 ou plus puisse être jouée en avant."
        keep = other_pair >= 7
    if not keep:
        # Split: two of the four in front, two in the back with the rest.
        return split_by_ranks(shape, four, four, wheel)
    if other_pair:
        return split_by_ranks(shape, other_pair, other_pair, wheel)
    return split_by_ranks(shape, singles[0], singles[1], wheel)


def _straight_or_flush(shape: HandShape, wheel: WheelRank) -> Made | None:
    """The straight, flush or straight flush to keep in the back, if the text says so.

    "Joue toujours les quintes et les couleurs en arrière, ne les joue en tant que
    double paire que dans les circonstances suivantes" (exceptions below).
    "Si la main comprend un joker, le système essaiera tout d'abord d'utiliser le
    joker pour compléter une quinte flush, une quinte, une couleur et ensuite
    seulement, il essaiera d'autres combinaisons."
    """
    pairs = shape.pairs
    if not shape.may_make or len(pairs) == 3:
        # Decision: three pair with a straight or flush is played by the three-pair
        # clause. Seven cards hold both only when the joker pairs an ace (JK Ah 5c 5d
        # 4c 4d 3s), so "Une paire d'As et n'importe quelle autre paire" applies.
        return None
    made = made_hands(shape, wheel)
    # "Une quinte flush aura la préférence sur une quinte ou sur une couleur, et sera
    # jouée en arrière."
    # Decision: among several straights, flushes or straight flushes of the preferred
    # kind, keep the one that leaves the best low hand (the "donneur" page: "jouez la
    # catégorie qui vous permettra de retourner les cartes les plus fortes à
    # l'endroit"), then the best high hand. So a straight and a flush both possible:
    # the one leaving the better front.
    chosen = best_made(made, Category.STRAIGHT_FLUSH) or best_made(made)
    if chosen is None:  # pragma: no cover - made is not empty
        return None
    if len(pairs) == 2 and _play_two_pair(shape, category_of(chosen.high_value)):
        return None
    return chosen


def _play_two_pair(shape: HandShape, category: Category) -> bool:
    """Whether two pair with this straight/flush category is played as two pair."""
    high, low = shape.pairs
    # Decision: a pair made of an ace and the joker is "une paire d'As", and a lone
    # joker is "un As en carte unique": when these exceptions send the hand to the
    # two-pair clause the joker no longer completes anything, so it is an ace.
    aces = high == ACE
    # "Une paire d'As et n'importe quelle autre paire." / "Deux paires de 10 ou plus."
    if aces or low >= _TEN:
        return True
    if category is Category.ROYAL_FLUSH:
        # "Quinte royale : ... Si les critères sus-cités ne sont pas atteints, une
        # quinte royale sera toujours jouée en arrière."
        return False
    # "Les deux paires sont en dessous du 10 mais possède un As en carte unique. Joue
    # selon la règle pour une double paire (... met la plus basse en arrière et les
    # deux autres en avant. L'As unique ne devra pas être mis en avant)."
    # Decision: the text contradicts itself on where the ace goes; the two-pair clause
    # it refers to says "Cet As doit être mis en avant" and "les deux autres en avant"
    # puts it there too, so the ace goes in front.
    # Decision: two pair where none of these exceptions fits keeps the straight or
    # flush in the back ("Joue toujours les quintes et les couleurs en arrière").
    return high < _TEN and shape.singles[0] == ACE
