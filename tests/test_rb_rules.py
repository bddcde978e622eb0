"""A test for every Royal Battles rule and option."""

import pytest

from engines.errors import IllegalActionError
from engines.royal_battles import (
    CARDS,
    Options,
    Phase,
    Side,
    Style,
    parse_action,
    parse_card,
    parse_cell,
)
from engines.royal_battles.board import DigitCorners, Orientation, Symmetry, symmetry
from engines.royal_battles.combat import resolve_attack
from engines.royal_battles.state import GameState
from engines.royal_battles.units import trumps_needed
from tests.rb_helpers import position

C = parse_cell


def moves_of(state, cell):
    return {(str(a.card), a.to) for a in state.legal_actions()
            if a.verb.value == "move" and a.frm == C(cell)}


# ---------------------------------------------------------------- cards and board

def test_card_codes_colours_and_trump_classes():
    assert str(parse_card("10h")) == "10H" and parse_card("JK").is_joker
    assert parse_card("QD").colour.value == "red" and parse_card("KC").colour.value == "black"
    assert parse_card("JK").colour is None
    styles = {code: CARDS[code].trump_style for code in ("2S", "10D", "3H", "9C", "JD", "KS",
                                                         "AS", "JK")}
    assert styles == {"2S": Style.EASY, "10D": Style.EASY, "3H": Style.OPTIMAL,
                      "9C": Style.OPTIMAL, "JD": Style.RISKY, "KS": Style.RISKY,
                      "AS": Style.ADVANTAGE, "JK": Style.ADVANTAGE}
    for bad in ("1H", "11S", "ZZ", "", "10X"):
        with pytest.raises(ValueError):
            parse_card(bad)


def test_initiative_order_rank_then_suit():
    order = ["2S", "3C", "KS", "AC", "AD", "AH", "AS", "JK"]
    keys = [CARDS[c].initiative_key() for c in order]
    assert keys == sorted(keys)
    assert CARDS["5C"].initiative_key() < CARDS["5D"].initiative_key() < \
        CARDS["5H"].initiative_key() < CARDS["5S"].initiative_key()


def test_symmetrical_positions_portrait_and_landscape_d3():
    d3 = C("d3")
    P, L = Orientation.PORTRAIT, Orientation.LANDSCAPE
    nwse, nesw = DigitCorners.NW_SE, DigitCorners.NE_SW
    expect_portrait = {"c3": "side-to-side", "e3": "side-to-side", "d2": "head-to-head",
                       "d4": "head-to-head", "c4": "digit-diagonal", "e2": "digit-diagonal",
                       "c2": "clear-diagonal", "e4": "clear-diagonal"}
    for cell, name in expect_portrait.items():
        assert symmetry(d3, C(cell), P, nwse).value == name
    expect_landscape = {"d2": "side-to-side", "d4": "side-to-side", "c3": "head-to-head",
                        "e3": "head-to-head", "c2": "digit-diagonal", "e4": "digit-diagonal",
                        "c4": "clear-diagonal", "e2": "clear-diagonal"}
    for cell, name in expect_landscape.items():
        assert symmetry(d3, C(cell), L, nesw).value == name
    # a portrait card whose index sits on the other diagonal
    assert symmetry(d3, C("c2"), P, nesw) is Symmetry.DIGIT_DIAGONAL


def test_trumps_needed_table():
    assert trumps_needed(4, 3) == 1
    assert trumps_needed(4, 4) == 2 and trumps_needed(4, 5) == 2
    assert trumps_needed(2, 4) == 3 and trumps_needed(2, 6) == 3


# ---------------------------------------------------------------- movement

def test_movement_card_must_differ_from_standing_card_colour():
    state = position({"c1": ("2C", "white pawn"), "e1": ("10D", "white knight"),
                      "d5": ("3S", "black king")}, hands={"white": ["3H"], "black": []})
    assert moves_of(state, "e1") == set()
    assert len(moves_of(state, "c1")) == 6  # five neighbours and its own card


def test_covering_needs_a_different_colour_from_the_covered_card():
    state = position({"c2": ("2C", "white pawn"), "c3": "5D", "d3": "6S",
                      "d5": ("3S", "black king")}, hands={"white": ["3H"], "black": []})
    reachable = {to for _, to in moves_of(state, "c2")}
    assert C("d3") in reachable  # red 3H may cover black 6S
    assert C("c3") not in reachable  # but not red 5D


def test_staying_in_place_counts_as_the_move():
    state = position({"c2": ("2C", "white pawn"), "d3": ("5S", "black king")},
                     hands={"white": ["3H"], "black": []})
    state.apply(parse_action("white move c2-c2 3H"))
    assert state.moved == C("c2") and [p.card.code for p in state.stacks[C("c2")]] == ["2C", "3H"]
    assert state.phase is Phase.ATTACK  # the king is diagonal: only the pawn's Extended Reach


def test_cannot_move_onto_another_unit_by_default():
    board = {"c2": ("2C", "white pawn"), "c3": ("5S", "black king"), "a5": ("4S", "black pawn")}
    state = position(board, hands={"white": ["3S", "9H"], "black": []})
    assert C("c3") not in {to for _, to in moves_of(state, "c2")}
    with pytest.raises(IllegalActionError, match="another unit"):
        state.apply(parse_action("white move c2-c3 9H"))
    allowed = position(board, hands={"white": ["9H"], "black": []},
                       options={"allow_move_onto_unit": True})
    # option: the card may cover a black card under another unit; the mover stays put
    allowed.apply(parse_action("white move c2-c3 9H"))
    assert allowed.units[C("c2")].kind == "pawn" and allowed.moved == C("c2")
    assert allowed.units[C("c3")].kind == "king" and allowed.top(C("c3")).card.code == "9H"


def test_joker_in_hand_counts_as_both_colours():
    state = position({"c2": ("2H", "white pawn"), "c3": "5D", "a5": ("4S", "black pawn")},
                     hands={"white": ["JK"], "black": []})
    assert C("c3") in {to for _, to in moves_of(state, "c2")}  # red on red is fine for a joker


def test_joker_on_the_board_has_no_colour():
    state = position({"c2": ("JK", "white pawn"), "c3": "JK", "a5": ("4S", "black pawn"),
                      "d2": ("7H", "white bishop")},
                     hands={"white": ["5D", "6S"], "black": []})
    pawn_moves = moves_of(state, "c2")
    assert ("5D", C("c3")) in pawn_moves and ("6S", C("c3")) in pawn_moves
    # Mystic Blast / Healing: a joker matches no colour
    healer = position({"b1": ("5S", "white bishop"), "c2": ("JK", "white pawn", 4),
                       "a3": ("JC", "white king", 3), "g5": ("4D", "black pawn")},
                      initiative=("AS", "AH"), hands={"white": [], "black": []}, phase="attack",
                      moved="b1")
    r = resolve_attack(healer, C("b1"), C("c2"), Style.ADVANTAGE)
    assert [e.cell for e in r.effects] == [C("c2")]


def test_joker_declared_colour_option():
    opts = {"joker_declared_colour": True}
    state = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")},
                     hands={"white": ["JK"], "black": []}, options=opts)
    moves = [a for a in state.legal_actions() if a.verb.value == "move"]
    assert {a.declared.value for a in moves} == {"red", "black"}
    state.apply(parse_action("white move c2-c3 JK as-red"))
    assert state.top(C("c3")).colour.value == "red"
    # now a red card can't move the pawn off it, a black one can
    state2 = position({"c3": ("JK", "white pawn", 0, {"declared": "red"}),
                       "a5": ("4S", "black pawn")},
                      hands={"white": ["5D", "6S"], "black": []}, options=opts)
    assert {card for card, _ in moves_of(state2, "c3")} == {"6S"}
    with pytest.raises(IllegalActionError):
        position({"c3": ("JK", "white pawn", 0, {"declared": "red"}),
                  "a5": ("4S", "black pawn")}).apply(parse_action("white move c3-c4 JK as-red"))


def test_must_move_unless_allow_pass_and_skip_when_no_move():
    board = {"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")}
    state = position(board, hands={"white": ["3H"], "black": []})
    assert "white pass" not in {str(a) for a in state.legal_actions()}
    with pytest.raises(IllegalActionError, match="must"):
        state.apply(parse_action("white pass"))
    free = position(board, hands={"white": ["3H"], "black": []}, options={"allow_pass": True})
    assert "white pass" in {str(a) for a in free.legal_actions()}
    stuck = position(board, hands={"white": ["3S"], "black": []})
    assert [str(a) for a in stuck.legal_actions()] == ["white pass"]
    stuck.apply(parse_action("white pass"))
    assert stuck.phase is Phase.POST_TURN  # straight to the post-turn draw


def test_identical_cards_from_the_two_decks():
    state = position({"c2": ("8D", "white pawn"), "d3": ("8D", "black king")},
                     decks={"white": 20, "black": 20})
    assert state.top(C("c2")).card is state.top(C("d3")).card
    assert {state.top(C("c2")).owner, state.top(C("d3")).owner} == {Side.WHITE, Side.BLACK}
    with pytest.raises(ValueError, match="3 copies of 8D"):
        position({"c2": ("8D", "white pawn"), "d3": ("8D", "black king")},
                 hands={"white": ["8D"], "black": []})
    with pytest.raises(ValueError, match="5 copies of JK"):
        position({"c2": ("JK JK JK", "white pawn"), "d3": ("JK JK", "black king")})


# ---------------------------------------------------------------- attacks and damage

def _attack_position(attacker, target, a_card="8S", t_card="9D", init=("4C", "6S"),
                     extra=None, to_move="white", **kw):
    board = {"d3": (a_card, attacker), **({"d4": (t_card, target)} if target else {})}
    board.update(extra or {})
    return position(board, to_move=to_move, initiative=init, phase="attack", moved="d3", **kw)


def test_melee_units_attack_orthogonally_ranged_diagonally():
    melee = position({"d3": ("8S", "white king"), "d4": ("9D", "black pawn"),
                      "e4": ("9H", "black rook")}, phase="attack", moved="d3")
    targets = {(a.to, a.style.value) for a in melee.attack_actions()}
    assert (C("d4"), "easy") in targets and (C("e4"), "easy") not in targets
    ranged = position({"d3": ("8S", "white rook"), "d4": ("9D", "black pawn"),
                       "e4": ("9H", "black king")}, phase="attack", moved="d3")
    targets = {(a.to, a.style.value) for a in ranged.attack_actions()}
    assert (C("e4"), "optimal") in targets and (C("d4"), "optimal") not in targets
    assert (C("e4"), "advantage") in targets  # Deadly Aim is ranged


def test_only_the_moved_unit_attacks_and_attacking_is_optional():
    state = position({"c2": ("2C", "white pawn"), "d3": ("9D", "black pawn"),
                      "d2": ("6H", "white king")}, hands={"white": ["3H", "4D"], "black": []})
    state.apply(parse_action("white move c2-b1 3H"))
    # the king stands next to the enemy but did not move: no attack is offered
    assert state.phase is Phase.POST_TURN
    state2 = position({"c2": ("2C", "white pawn"), "d3": ("9S", "black pawn"),
                       "a5": ("6H", "black king")}, hands={"white": ["3H"], "black": []})
    state2.apply(parse_action("white move c2-c3 3H"))
    assert "white no-attack" in map(str, state2.legal_actions())
    state2.apply(parse_action("white no-attack"))
    assert state2.units[C("d3")].injury == 0


def test_extended_reach_pawn_ranged_for_8():
    state = _attack_position("white pawn", None, extra={"e4": ("AD", "black rook")})
    r = resolve_attack(state, C("d3"), C("e4"), Style.ADVANTAGE)
    assert r.needed == 1 and len(r.trumps) == 1 and r.hit  # accuracy 3 vs evasion 2
    state = _attack_position("white pawn", None, init=("AC", "4S"),
                             extra={"e4": ("AD", "black rook")})
    r = resolve_attack(state, C("d3"), C("e4"), Style.ADVANTAGE)
    assert r.hit and [e.damage for e in r.effects] == [8 - 2]


def test_deadly_aim_ignores_armor():
    state = _attack_position("white rook", None, init=("AC", "4S"),
                             extra={"e4": ("AD", "black knight")})
    r = resolve_attack(state, C("d3"), C("e4"), Style.ADVANTAGE)
    assert r.needed == 2 and r.hit and [e.damage for e in r.effects] == [6]  # knight armor 4


def test_smite_counts_the_owners_units_on_the_board():
    extra = {"a1": ("2C", "white pawn"), "b1": ("3C", "white pawn"), "g5": ("5S", "black rook")}
    state = _attack_position("white knight", "black rook", t_card="AD", init=("AC", "AS"),
                             extra=extra)
    r = resolve_attack(state, C("d3"), C("d4"), Style.ADVANTAGE)
    assert r.needed == 2 and r.hit  # 3 aces: accuracy 2 vs evasion 2
    assert [e.damage for e in r.effects] == [6 + 3 - 2]


def test_strategy_draws_two_on_a_hit_only():
    state = _attack_position("white king", "black pawn", t_card="AD", init=("AC", "4S"),
                             hands={"white": [], "black": []})
    r = resolve_attack(state, C("d3"), C("d4"), Style.ADVANTAGE)
    assert r.hit and r.effects[0].damage == 6 - 3 and r.draws == 2  # spade? no: clubs key only
    miss = _attack_position("white king", "black knight", t_card="5D", init=("4C", "4S"),
                            hands={"white": [], "black": []})
    r = resolve_attack(miss, C("d3"), C("d4"), Style.ADVANTAGE)
    assert not r.hit and r.draws == 0
    state.apply(parse_action("white attack d4 advantage"))
    assert [p.side for p in state.pending] == [Side.WHITE, Side.WHITE]


def test_healing_capped_at_starting_life_and_same_colour_units():
    state = position({"d3": ("AS", "white bishop"), "e4": ("AD", "white king", 9),
                      "a1": ("5H", "white pawn", 2), "a3": ("5C", "white rook", 5),
                      "g5": ("5S", "black pawn", 3)},
                     initiative=("AC", "AH"), phase="attack", moved="d3")
    r = resolve_attack(state, C("d3"), C("e4"), Style.ADVANTAGE)
    assert r.needed == 0 and r.hit and r.critical  # four aces
    healed = {state.units[e.cell].kind: e.healed for e in r.effects}
    assert healed == {"king": 9, "pawn": 2}  # 24 each, capped at life; black rook card left out
    state.apply(parse_action("white attack e4 advantage"))
    assert state.units[C("e4")].injury == 0 and state.units[C("a3")].injury == 5


def test_healing_always_hits_even_with_no_trumps():
    state = position({"d3": ("5S", "white bishop"), "e4": ("6D", "white king", 4),
                      "g5": ("5C", "black pawn")}, phase="attack", moved="d3")
    r = resolve_attack(state, C("d3"), C("e4"), Style.ADVANTAGE)
    assert r.hit and r.needed == 0 and r.effects[0].healed == 0


def test_critical_doubles_weapon_damage_and_advantages_by_default():
    state = _attack_position("white queen", None, a_card="8S", init=("2C", "4S"),
                             extra={"e4": ("6D", "black king")})
    r = resolve_attack(state, C("d3"), C("e4"), Style.EASY)
    assert r.critical and r.effects[0].damage == 2 * 4 - 1
    blast = _attack_position("white queen", None, a_card="AS", init=("AC", "JK"),
                             extra={"e4": ("AD", "black king")})
    r = resolve_attack(blast, C("d3"), C("e4"), Style.ADVANTAGE)
    assert r.critical and r.effects[0].damage == 2 * 12 - 1
    off = _attack_position("white queen", None, a_card="AS", init=("AC", "JK"),
                           extra={"e4": ("AD", "black king")},
                           options={"critical_doubles_advantages": False})
    r = resolve_attack(off, C("d3"), C("e4"), Style.ADVANTAGE)
    assert r.critical and r.effects[0].damage == 12 - 1
    for kind, target in (("white pawn", "e4"), ("white rook", "e4"), ("white knight", "d4"),
                         ("white king", "d4")):
        s = _attack_position(kind, None, a_card="AS", init=("AC", "JK"),
                             extra={target: ("AD", "black bishop")})
        r = resolve_attack(s, C("d3"), C(target), Style.ADVANTAGE)
        assert r.critical and r.effects[0].damage >= 10, kind


def test_mystic_blast_must_hit():
    state = _attack_position("white queen", None, a_card="5S", init=("2C", "4S"),
                             extra={"e4": ("AD", "black king"), "a5": ("3H", "black pawn")})
    r = resolve_attack(state, C("d3"), C("e4"), Style.ADVANTAGE)
    assert r.needed == 2 and not r.hit and r.effects == ()


def test_unit_removed_when_injury_reaches_life_card_stays():
    state = _attack_position("white king", "black pawn", t_card="8D", init=("4C", "6S"),
                             extra={"a5": ("2S", "black rook")})
    state.units[C("d4")] = state.units[C("d4")].__class__(Side.BLACK, "pawn", 7)
    state.apply(parse_action("white attack d4 easy"))
    assert C("d4") not in state.units and state.top(C("d4")).card.code == "8D"


def test_last_unit_removed_loses_at_once():
    state = _attack_position("white king", "black pawn", t_card="8D", init=("4C", "6S"))
    state.units[C("d4")] = state.units[C("d4")].__class__(Side.BLACK, "pawn", 7)
    state.apply(parse_action("white attack d4 easy"))
    assert state.is_terminal() and state.outcome.winner is Side.WHITE
    assert state.outcome.reason == "annihilation"


# ---------------------------------------------------------------- key positions and draws

@pytest.mark.parametrize("suit,target,key", [
    ("S", "c3", True), ("S", "d4", False), ("H", "d4", True), ("H", "c3", False),
    ("D", "c4", True), ("D", "e2", True), ("D", "c2", False),
    ("C", "c2", True), ("C", "e4", True), ("C", "c4", False),
])
def test_key_position_from_each_initiative_suit(suit, target, key):
    kind = "white rook" if target in ("c4", "e2", "c2", "e4") else "white king"
    state = position({"d3": ("8S", kind), target: ("9D", "black pawn")},
                     initiative=(f"4{suit}", "6C"), phase="attack", moved="d3")
    r = resolve_attack(state, C("d3"), C(target), Style.EASY)
    assert r.key is key and r.draws == (2 if key else 0)


def test_joker_initiative_makes_every_position_key():
    for target in ("c3", "d4", "c4", "c2"):
        kind = "white rook" if target in ("c4", "c2") else "white king"
        state = position({"d3": ("8S", kind), target: ("9D", "black pawn")},
                         initiative=("JK", "6C"), phase="attack", moved="d3")
        assert resolve_attack(state, C("d3"), C(target), Style.EASY).key


def test_landscape_standing_card_swaps_positions():
    # spades key side to side: for a landscape card the sides face the ranks
    state = position({"d3": ("8S", "white king", 0, {"orientation": "landscape"}),
                      "d4": ("9D", "black pawn"), "c3": ("9H", "black rook")},
                     initiative=("4S", "6C"), phase="attack", moved="d3")
    assert resolve_attack(state, C("d3"), C("d4"), Style.EASY).key
    assert not resolve_attack(state, C("d3"), C("c3"), Style.EASY).key
    # and a landscape movement card reported by the table lies landscape
    s2 = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")},
                  hands={"white": ["3H"], "black": []})
    s2.apply(parse_action("white move c2-c3 3H landscape"))
    assert s2.top(C("c3")).orientation is Orientation.LANDSCAPE
    assert s2.top(C("c3")).corners is DigitCorners.NE_SW


def test_a_miss_from_a_key_position_still_draws_two():
    state = position({"d3": ("8S", "white knight"), "c3": ("9D", "black knight")},
                     initiative=("4S", "6C"), phase="attack", moved="d3",
                     hands={"white": [], "black": []})
    r = resolve_attack(state, C("d3"), C("c3"), Style.RISKY)
    assert not r.hit and r.key and r.draws == 2


def test_post_turn_discard_whole_hand():
    state = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")},
                     hands={"white": ["3H", "5D", "9C"], "black": []})
    state.apply(parse_action("white move c2-c3 3H"))
    assert state.phase is Phase.POST_TURN
    state.apply(parse_action("white discard"))
    assert state.players[Side.WHITE].hand == []
    assert [c.code for c in state.players[Side.WHITE].discards] == ["5D", "9C"]
    assert state.to_move is Side.BLACK


def test_pre_turn_draw_only_with_an_empty_hand():
    state = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")},
                     hands={"white": ["3H"], "black": []}, phase="pre-turn-draw")
    state._advance()
    assert state.phase is Phase.MOVEMENT
    empty = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")},
                     hands={"white": [], "black": []}, phase="pre-turn-draw")
    assert {str(a) for a in empty.legal_actions()} == {"white take-draw", "white skip-draw"}


# ---------------------------------------------------------------- set-up, initiative, end

def test_setup_never_lays_aces_or_jokers():
    state = GameState.new()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 48 and not any(a.card.rank >= 14 for a, _ in outcomes)
    assert abs(sum(p for _, p in outcomes) - 1) < 1e-9
    with pytest.raises(IllegalActionError, match="shuffled back"):
        state.apply(parse_action("white setup a1 AS"))
    with pytest.raises(IllegalActionError, match="a1"):
        state.apply(parse_action("white setup b1 5S"))


def _setup_done():
    state = GameState.new()
    for i, cell in enumerate(["a1", "c1", "e1", "g1"]):
        state.apply_text(f"white setup {cell} {i + 2}S")
    for i, cell in enumerate(["a5", "c5", "e5", "g5"]):
        state.apply_text(f"black setup {cell} {i + 2}D")
    while state.phase is Phase.PLACE:
        state.apply(state.legal_actions()[0])
    return state


def test_initiative_redraw_on_the_same_card_or_two_jokers():
    state = _setup_done()
    state.apply_text("white initiative 9H")
    state.apply_text("black initiative 9H")  # the same card from the other deck
    assert state.phase is Phase.INITIATIVE and state.is_chance_node()
    state.apply_text("white initiative JK")
    state.apply_text("black initiative JK")
    assert state.phase is Phase.INITIATIVE
    state.apply_text("white initiative 2C")
    state.apply_text("black initiative 2H")
    assert state.first is Side.BLACK
    assert [c.code for c in state.players[Side.WHITE].initiative_pile] == ["9H", "JK", "2C"]


def test_end_when_no_initiative_card_more_units_wins():
    state = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn"),
                      "b5": ("5S", "black rook")}, hands={"white": [], "black": []},
                     decks={"white": 0, "black": 5}, phase="post-turn", first="black")
    state._advance()
    assert state.outcome.winner is Side.BLACK and state.outcome.reason == "more-units"


def test_end_equal_units_playable_cards_then_tie():
    board = {"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")}
    state = position(board, hands={"white": [], "black": ["5H"]}, decks={"white": 0, "black": 5},
                     phase="post-turn", first="black")
    state._advance()
    assert state.outcome.winner is Side.BLACK and state.outcome.reason == "playable-cards"
    tie = position(board, hands={"white": ["5S"], "black": ["5C"]},
                   decks={"white": 0, "black": 0}, phase="post-turn", first="black",
                   to_move="white")
    tie.apply(parse_action("white keep"))
    assert tie.outcome.winner is None and tie.outcome.reason == "tie"


def test_illegal_actions_leave_the_state_unchanged():
    from engines.royal_battles.position import to_json
    state = position({"c2": ("2C", "white pawn"), "a5": ("4S", "black pawn")},
                     hands={"white": ["3H"], "black": []})
    before = to_json(state)
    for text in ("white move c2-c4 3H", "white move c2-c3 5H", "black move a5-a4 3H",
                 "white attack a5 easy", "white initiative 5S"):
        with pytest.raises(IllegalActionError):
            state.apply(parse_action(text))
    assert to_json(state) == before


def test_options_defaults_match_the_rules_page():
    assert Options() == Options(allow_pass=False, allow_move_onto_unit=False,
                                joker_declared_colour=False, critical_doubles_advantages=True)
